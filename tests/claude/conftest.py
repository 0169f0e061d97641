"""Fixtures for the claude backend: the fake CLI, a recording AgentTools, a runner factory."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import claude_agent_sdk  # noqa: F401 - the first import takes ~1 s; keep it out of the timed tests
import psutil
import pytest

from foreman.backends.claude import ClaudeRunner
from foreman.backends.turns import TurnRequest
from foreman.errors import ForemanError

from .fake_claude import FakeClaude

FAST = {"abort_grace": 0.6, "eof_grace": 0.4, "kill_grace": 0.4}
"""Short clean-up timings so abort tests stay quick (the defaults are a few seconds each)."""


class RecordingTools:
    """An AgentTools that records everything and answers from a script.

    Args:
        agent: the agent's name.
        deny: tool name -> reason; those permits are refused.
        fail: Foreman tool name -> ForemanError raised by ``call``.
    """

    def __init__(self, agent: str = "kit", *, deny: dict[str, str] | None = None,
                 fail: dict[str, ForemanError] | None = None) -> None:
        self.agent = agent
        self.turn_id = f"{agent}:1"
        self.deny = deny or {}
        self.fail = fail or {}
        self.permits: list[tuple[str, dict[str, Any]]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.activities: list[tuple[str, str]] = []
        self.logs: list[tuple[str, str]] = []

    async def call(self, name: str, args: dict[str, Any]) -> str:
        self.calls.append((name, args))
        if name in self.fail:
            raise self.fail[name]
        return f"{name} done"

    async def permit(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        self.permits.append((tool, args))
        if tool in self.deny:
            return False, self.deny[tool]
        return True, "allowed by test"

    def activity(self, state: str, activity: str, *, station: str | None = None) -> None:
        self.activities.append((state, activity))

    def log(self, text: str, *, kind: str = "text") -> None:
        self.logs.append((kind, text))

    def unread(self) -> list[str]:
        return []


@pytest.fixture
def fake(tmp_path: Path):
    """A fresh fake CLI in its own scratch directory; anything it recorded and left running is killed."""
    fake = FakeClaude(tmp_path / "fake")
    started = time.time()
    yield fake
    for pid in {*fake.pids(), *fake_processes(fake)}:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if pid != os.getpid() and proc.create_time() >= started - 1:
                proc.kill()


def runner_for(made: list[ClaudeRunner], cli: Path, base_env: dict[str, str], timings: dict[str, float],
               **kw: Any) -> ClaudeRunner:
    """A ClaudeRunner on ``cli`` with ``base_env`` (``env=`` in ``kw`` adds to it), appended to ``made``."""
    options = {"cli_path": str(cli), "use_claude_login": False, "effort": None, "max_budget_usd": None,
               **timings, **kw}
    runner = ClaudeRunner(env={**base_env, **options.pop("env", {})}, **options)
    made.append(runner)
    return runner


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The agent's working directory."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
async def make_runner(fake: FakeClaude):
    """Build ClaudeRunners pointed at the fake (closed after the test)."""
    made: list[ClaudeRunner] = []

    def build(**kw: Any) -> ClaudeRunner:
        return runner_for(made, fake.cli, {"ANTHROPIC_API_KEY": "test-key", **fake.env}, FAST, **kw)

    yield build
    for runner in made:
        await runner.close()


@pytest.fixture
def request_for(workdir: Path) -> Callable[..., TurnRequest]:
    """Build a TurnRequest with sensible defaults."""
    counter = iter(range(1, 1000))

    def build(agent: str = "kit", **kw: Any) -> TurnRequest:
        fields: dict[str, Any] = {"turn_id": f"{agent}:t1:{next(counter)}", "agent": agent, "lead": agent == "lead",
                                  "job": "work", "prompt": "Do the task.", "system": "You are a test agent.",
                                  "cwd": workdir, **kw}
        return TurnRequest(**fields)

    return build


def alive(pids: list[int]) -> list[int]:
    """The pids among ``pids`` that still run (zombies count as gone)."""
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def fake_processes(fake: FakeClaude) -> list[int]:
    """Live processes whose environment points at ``fake``'s scenario (the CLI and all it started)."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get("FAKE_CLAUDE_SCENARIO") == str(fake.scenario_path) and \
                    proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
    return found
