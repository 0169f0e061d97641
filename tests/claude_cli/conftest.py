"""The real claude CLI (bundled with claude-agent-sdk), offline, against a scripted Messages API.

One helper, :func:`cli_env` / the ``claude_cli`` fixture, starts the scripted API
(:mod:`.scripted_api`) and gives the environment that points the real CLI at it: the API's URL,
a dummy key, no non-essential traffic, and a HOME / CLAUDE_CONFIG_DIR of the test's own so the
user's settings, sessions and login never leak in. The whole directory is skipped, with the
reason, when the SDK's bundled CLI is absent. The CLI version is written to the test output
(``tests/conftest.py``, from the tests' ``claude_cli_version`` property).

After every test, every model request an agent made is checked against the agent's explicit
tool set (:mod:`foreman.backends.claude.toolset`): a tool outside it fails the test.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from foreman.backends.claude import ClaudeRunner
from foreman.backends.claude.cliproc import bundled_cli, cli_version
from foreman.backends.claude.toolset import allowed_tools
from foreman.backends.turns import TurnRequest

from ..claude.conftest import RecordingTools, runner_for  # noqa: F401 - RecordingTools re-exported
from .scripted_api import ScriptedAPI

BUNDLED = bundled_cli()
VERSION = cli_version(str(BUNDLED)) if BUNDLED is not None else None
FAST = {"abort_grace": 1.0, "eof_grace": 1.0, "kill_grace": 1.0}
LEADS = {"marlow"}

if BUNDLED is None:
    pytest.skip("claude-agent-sdk's bundled claude CLI is absent (claude_agent_sdk/_bundled/claude): "
                "the real-CLI suite needs the platform wheel (pip install -e '.[test]')", allow_module_level=True)


@dataclass
class RealCLI:
    """The real CLI and its offline environment (duck-types the fake's ``cli`` / ``env``).

    Attributes:
        cli: the bundled executable.
        version: its version (``2.1.332``).
        env: the environment pointing it at ``api`` with a private HOME.
        api: the scripted API server.
        home: the private HOME (``.claude`` in it holds the sessions).
    """

    cli: Path
    version: str
    env: dict[str, str]
    api: ScriptedAPI
    home: Path


def cli_env(api: ScriptedAPI, home: Path) -> dict[str, str]:
    """The environment that runs the real CLI offline against ``api`` with ``home`` as HOME."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    return {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-offline-test",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
            "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CLAUDE_CODE_MAX_RETRIES": "2"}


@pytest.fixture
def claude_cli(tmp_path: Path, request: pytest.FixtureRequest):
    """The scripted API started and the real CLI pointed at it; any CLI left running is killed."""
    api = ScriptedAPI().start()
    home = tmp_path / "cli-home"
    real = RealCLI(BUNDLED, VERSION or "?", cli_env(api, home), api, home)
    # tests/conftest.py names the CLI in the summary from this (it reaches pytest-xdist's controller)
    request.node.user_properties.append(("claude_cli_version", f"{real.version} ({BUNDLED})"))
    started = time.time()
    yield real
    api.stop()
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.create_time() >= started - 1 and proc.environ().get("ANTHROPIC_BASE_URL") == real.env[
                    "ANTHROPIC_BASE_URL"] and proc.pid != os.getpid():
                proc.kill()
    outside = tools_outside_the_set(api)
    assert not outside, f"tools outside the explicit set were offered: {outside}"


def running(argument: str, inside: Path) -> list[psutil.Process]:
    """Live processes with ``argument`` among their command-line words (e.g. ``slow_job.py``)
    whose working directory is ``inside`` (the test's own folder) or below it.

    The folder keeps another test's processes out (pytest-xdist runs two tests at once, and
    other runs of the suite may share the machine). A sandboxed command's working directory
    reads as its worktree from outside too (bwrap binds the worktree at its own path).
    """
    root = str(inside.resolve())
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            cwd = proc.cwd()
            if argument in proc.cmdline() and (cwd == root or cwd.startswith(root + os.sep)) and \
                    proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


def tools_outside_the_set(api: ScriptedAPI) -> dict[str, list[str]]:
    """Agent -> tool names it was offered that are not in its role's explicit set."""
    found: dict[str, set[str]] = {}
    for r in api.requests:
        if r.is_messages and r.agent is not None:
            extra = set(r.tool_names) - allowed_tools(lead=r.agent in LEADS)
            if extra:
                found.setdefault(r.agent, set()).update(extra)
    return {agent: sorted(names) for agent, names in found.items()}


@pytest.fixture
async def make_runner(claude_cli: RealCLI):
    """Build ClaudeRunners on the real CLI (closed after the test)."""
    made: list[ClaudeRunner] = []

    def build(**kw: Any) -> ClaudeRunner:
        return runner_for(made, claude_cli.cli, claude_cli.env, FAST, **kw)

    yield build
    for runner in made:
        await runner.close()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The agent's working directory (a plain folder with one file)."""
    path = tmp_path / "work"
    path.mkdir()
    (path / "app.py").write_text("def answer():\n    return 41\n")
    return path


@pytest.fixture
def request_for(workdir: Path) -> Callable[..., TurnRequest]:
    """Build a TurnRequest whose system prompt names the agent as the Foreman's does."""
    counter = iter(range(1, 1000))

    def build(agent: str = "kit", **kw: Any) -> TurnRequest:
        lead = agent in LEADS
        role = "the lead of a small team" if lead else "a worker on a small team"
        fields: dict[str, Any] = {"turn_id": f"{agent}:t1:{next(counter)}", "agent": agent, "lead": lead,
                                  "job": "plan" if lead else "work", "prompt": "Do the task.",
                                  "system": f"You are {agent.title()}, {role} of coding agents.", "cwd": workdir,
                                  "model": "claude-sonnet-4-5", **kw}
        return TurnRequest(**fields)

    return build
