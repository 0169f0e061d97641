"""The whole daemon on the claude backend, offline: the fake CLI behind the real claude-agent-sdk.

Two ways to run it:

* :class:`Rig` - an in-process :class:`~foreman.daemon.Daemon` whose backend comes from
  :func:`foreman.backends.make_backend` (the conductor and one :class:`ClaudeRunner` pointed at
  the fake through ``claude_cli``), driven over its real WebSocket port by a :class:`Client`.
* :class:`DaemonProcess` - ``python -m foreman start --backend claude --claude-cli <fake>`` in a
  subprocess (SIGKILL-able), for the restart tests.

Scenario helpers build per-agent queues for the fake (``queues``: a CLI process whose git
identity names ``kit`` plays the next run of ``kit``'s queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from foreman.tui.discovery import Locator

from .. import rig
from ..claude.fake_claude import FakeClaude
from ..rig import Client, git, wait_for

__all__ = ["Client", "DaemonProcess", "Rig", "bash", "cli_runs", "commit", "edit", "events_of", "git", "live",
           "make_repo", "mcp", "prompts_of", "read", "run", "wait_for", "write"]

ROOT = Path(__file__).resolve().parents[2]
PROJECT = {**rig.PYPROJECT, ".gitignore": "__pycache__/\n"}
"""The Python project, ignoring ``__pycache__``."""
FAST_CLEANUP = {"abort_grace": 0.6, "eof_grace": 0.5, "kill_grace": 0.5}
"""Short clean-up timings for the runner (the defaults are a few seconds each)."""


def make_repo(root: Path, name: str = "proj") -> Path:
    """A git repository on ``main`` whose test command is stdlib unittest (``tests/``)."""
    return rig.make_repo(root, name, files=PROJECT)


# ---------------------------------------------------------------------- scenario steps
def mcp(tool: str, **args: Any) -> dict[str, Any]:
    """A step calling one of the Foreman's tools (``mcp__agentcraft__<tool>``)."""
    return {"mcp": tool, "args": args}


def bash(command: str, output: str = "ok") -> dict[str, Any]:
    """A Bash step (really run when the run has ``real_tools``)."""
    return {"tool": "Bash", "input": {"command": command}, "output": output}


def write(path: str, content: str) -> dict[str, Any]:
    """A Write step (really written when the run has ``real_tools``)."""
    return {"tool": "Write", "input": {"file_path": path, "content": content}}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    """An Edit step (really applied when the run has ``real_tools``)."""
    return {"tool": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}


def read(path: str) -> dict[str, Any]:
    """A Read step."""
    return {"tool": "Read", "input": {"file_path": path}, "output": "..."}


def commit(message: str) -> dict[str, Any]:
    """Commit everything in the worktree (a Bash step)."""
    return bash(f"git add -A && git commit -q -m '{message}'")


def run(*turns: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """One CLI process: its turns (one list of steps per prompt) and RUN fields."""
    return {"real_tools": True, **fields, "turns": [list(t) for t in turns]}


# ---------------------------------------------------------------------- in process
class Rig(rig.DaemonRig):
    """An in-process daemon on the claude backend (``make_backend``) with the fake CLI.

    Args:
        tmp: a temporary folder (repository, home, fake).
        fake: the fake CLI (its scenario is written by the test).
        monkeypatch: to put the fake's scenario and a dummy API key into ``os.environ``
            (``make_backend`` hands the daemon's environment to the runner).
        **flags: settings flags (``workers``, ``lead_review`` ...).
    """

    files = PROJECT

    def __init__(self, tmp: Path, fake: FakeClaude, monkeypatch: Any, **flags: Any) -> None:
        self.fake = fake
        for key, value in {"ANTHROPIC_API_KEY": "sk-ant-offline-test", **fake.env}.items():
            monkeypatch.setenv(key, value)
        super().__init__(tmp, **{"backend": "claude", "claude_cli": str(fake.cli), "workers": ["juniper", "kit"],
                                 "notify": False, **flags})

    async def ready(self) -> None:
        """Short clean-up timings for each runner."""
        for runner in {id(r): r for r in self.d.backend.runners.values()}.values():
            for key, value in FAST_CLEANUP.items():
                setattr(runner, key, value)


# ---------------------------------------------------------------------- a daemon process
class DaemonProcess:
    """``python -m foreman start --backend claude --claude-cli <fake>`` as a subprocess.

    Args:
        tmp: a temporary folder (the home goes there).
        fake: the fake CLI.
        repo: the repository to register (``--repo``).
        *extra: more command-line flags.
    """

    def __init__(self, tmp: Path, fake: FakeClaude, repo: Path, *extra: str) -> None:
        self.home = tmp / "home"
        self.fake = fake
        self.args = [sys.executable, "-m", "foreman", "start", "--backend", "claude", "--claude-cli", str(fake.cli),
                     "--home", str(self.home), "--port", "0", "--repo", str(repo), "--repo-poll-ms", "600000",
                     "--no-notify", "--log-level", "DEBUG", *extra]
        self.env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-offline-test", **fake.env}
        self.env.pop("AGENTCRAFT_HOME", None)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    async def start(self, timeout: float = 30.0) -> Client:
        """Start the daemon, wait for its run file with a fresh pid, connect."""
        self.proc = self._spawn()
        run_file = self.home / "claude" / "foreman.json"

        def port() -> int | None:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"the daemon exited with {self.proc.returncode}: {self.stderr()[-2000:]}")
            with contextlib.suppress(OSError, ValueError, KeyError):
                data = json.loads(run_file.read_text())
                if data["pid"] == self.proc.pid:
                    return int(data["port"])
            return None

        found = await wait_for(port, timeout, "the daemon's run file")
        client = await Client.connect(found, Locator(self.home, "claude").token())
        await wait_for(lambda: client.repos, timeout, "the repository registered")
        return client

    def _spawn(self) -> subprocess.Popen[bytes]:
        self.starts += 1
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home.parent / f"daemon-{self.starts}.err", "wb") as err:
            return subprocess.Popen(self.args, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err)

    def stderr(self) -> str:
        path = self.home.parent / f"daemon-{self.starts}.err"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL the daemon (no clean-up of any kind) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    async def stop(self) -> None:
        """SIGTERM (a clean stop), then SIGKILL after 15 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        end = time.monotonic() + 15
        while self.proc.poll() is None and time.monotonic() < end:
            await asyncio.sleep(0.05)
        self.kill()


def cli_runs(fake: FakeClaude, queue: str) -> list[dict[str, Any]]:
    """The CLI processes that played ``queue``'s runs: ``{argv, pid, run, t ...}`` in start order."""
    return [s for s in fake.starts() if s.get("queue") == queue]


def events_of(fake: FakeClaude, pid: int, key: str) -> list[dict[str, Any]]:
    """The fake's events holding ``key`` logged by the CLI process ``pid``."""
    return [r["data"] for r in fake.entries("event") if r["pid"] == pid and key in r["data"]]


def prompts_of(fake: FakeClaude, pid: int) -> list[str]:
    """The prompt texts a CLI process received."""
    out = []
    for row in fake.entries("in"):
        data = row["data"]
        if row["pid"] == pid and data.get("type") == "user":
            content = data["message"]["content"]
            out.append(content if isinstance(content, str) else "".join(c.get("text", "") for c in content))
    return out


def live(pids: list[int]) -> list[int]:
    """The pids among ``pids`` that still run (zombies count as gone)."""
    out = []
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
    return out
