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
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
from websockets.asyncio.client import ClientConnection, connect

from foreman.config import resolve
from foreman.daemon import Daemon
from foreman.tui.discovery import Locator

from ..claude.fake_claude import FakeClaude

ROOT = Path(__file__).resolve().parents[2]
FAST_CLEANUP = {"abort_grace": 0.6, "eof_grace": 0.5, "kill_grace": 0.5}
"""Short clean-up timings for the runner (the defaults are a few seconds each)."""


# ---------------------------------------------------------------------- repositories
def make_repo(root: Path, name: str = "proj") -> Path:
    """A git repository on ``main`` whose test command is stdlib unittest (``tests/``)."""
    repo = root / name
    (repo / "tests").mkdir(parents=True)
    (repo / "proj.py").write_text("def hello():\n    return 'hello'\n")
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "test_proj.py").write_text(
        "import unittest\nimport proj\n\n\nclass T(unittest.TestCase):\n    def test_hello(self):\n"
        "        self.assertEqual(proj.hello(), 'hello')\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "config", "user.name", "User One"],
                ["git", "config", "user.email", "one@example.com"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=repo, check=True)
    return repo


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; return stdout."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


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


# ---------------------------------------------------------------------- the protocol client
class Client:
    """A protocol client over a real WebSocket: a mirror of the world plus every frame received.

    Attributes:
        frames: every state frame received after the snapshot, oldest first.
        agents / tasks / goals / decisions / repos: the mirrored entities (wire JSON) by name or id.
    """

    _ids = itertools.count(1)

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self.agents: dict[str, dict[str, Any]] = {}
        self.tasks: dict[str, dict[str, Any]] = {}
        self.goals: dict[str, dict[str, Any]] = {}
        self.decisions: dict[str, dict[str, Any]] = {}
        self.repos: dict[str, dict[str, Any]] = {}
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def connect(cls, port: int, token: str | None = None) -> Client:
        """Connect, say hello with ``token``, read the snapshot and keep reading in the background."""
        client = cls(await connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None, open_timeout=10))
        await client.ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "claude-e2e-tests", "token": token}))
        first = json.loads(await asyncio.wait_for(client.ws.recv(), 10))
        assert first["type"] == "snapshot", first
        for field, store, key in (("agents", client.agents, "name"), ("tasks", client.tasks, "id"),
                                  ("goals", client.goals, "id"), ("decisions", client.decisions, "id"),
                                  ("repos", client.repos, "id")):
            for item in first[field]:
                store[item[key]] = item
        client._reader = asyncio.ensure_future(client._read())
        return client

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for raw in self.ws:
                data = json.loads(raw)
                rid = data.get("id")
                if data["type"] in ("ack", "error", "diff", "memory") and rid in self._replies:
                    self._replies.pop(rid).set_result(data)
                    continue
                self.frames.append(data)
                kind = data["type"]
                if kind == "agent.upsert":
                    self.agents[data["agent"]["name"]] = data["agent"]
                elif kind in ("task.upsert", "goal.upsert", "decision.upsert", "repo.upsert"):
                    entity = kind.split(".")[0]
                    getattr(self, entity + "s")[data[entity]["id"]] = data[entity]

    async def send(self, intent: dict[str, Any], timeout: float = 15.0) -> dict[str, Any]:
        """Send an intent with a fresh id; return its reply (``ack``, ``error`` ...)."""
        rid = f"e{next(self._ids)}"
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[rid] = fut
        await self.ws.send(json.dumps({**intent, "id": rid}))
        return await asyncio.wait_for(fut, timeout)

    async def ok(self, intent: dict[str, Any]) -> dict[str, Any]:
        """Send an intent that must be acknowledged; return the ack."""
        reply = await self.send(intent)
        assert reply["type"] == "ack", reply
        return reply

    async def answer(self, decision: dict[str, Any], option: int, text: str | None = None) -> None:
        """Answer a decision as the user."""
        await self.ok({"type": "decision.answer", "decision": decision["id"], "option": option,
                       **({"text": text} if text else {})})

    def open_decisions(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        """Open decisions of ``kind`` whose fields equal ``match``."""
        return [d for d in self.decisions.values() if d["kind"] == kind and d["status"] == "open"
                and all(d.get(k) == v for k, v in match.items())]

    def upserts(self, agent: str) -> list[dict[str, Any]]:
        """Every ``agent.upsert`` of ``agent`` received, oldest first."""
        return [f["agent"] for f in self.frames if f["type"] == "agent.upsert" and f["agent"]["name"] == agent]

    def log_lines(self, agent: str) -> list[dict[str, Any]]:
        """Every ``log.append`` line of ``agent`` received."""
        return [f["line"] for f in self.frames if f["type"] == "log.append" and f["line"]["agent"] == agent]

    def feed(self) -> list[str]:
        """The texts of the feed items received."""
        return [f["item"]["text"] for f in self.frames if f["type"] == "feed.append"]

    async def close(self) -> None:
        """Close the connection and stop reading."""
        await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


async def wait_for(pred: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    """Poll ``pred`` until it returns something truthy; return it. Raises AssertionError on timeout."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = pred()
        if value:
            return value
        if loop.time() > end:
            raise AssertionError(f"{what} not reached in {timeout} s")
        await asyncio.sleep(0.02)


# ---------------------------------------------------------------------- in process
class Rig:
    """An in-process daemon on the claude backend (``make_backend``) with the fake CLI.

    Args:
        tmp: a temporary folder (repository, home, fake).
        fake: the fake CLI (its scenario is written by the test).
        monkeypatch: to put the fake's scenario and a dummy API key into ``os.environ``
            (``make_backend`` hands the daemon's environment to the runner).
        **flags: settings flags (``workers``, ``lead_review`` ...).
    """

    def __init__(self, tmp: Path, fake: FakeClaude, monkeypatch: Any, **flags: Any) -> None:
        self.tmp = tmp
        self.fake = fake
        self.repo = make_repo(tmp)
        for key, value in {"ANTHROPIC_API_KEY": "sk-ant-offline-test", **fake.env}.items():
            monkeypatch.setenv(key, value)
        self.flags = {"home": str(tmp / "home"), "port": 0, "backend": "claude", "claude_cli": str(fake.cli),
                      "workers": ["juniper", "kit"], "repo_poll_ms": 600_000, "notify": False, **flags}
        self.settings = resolve(self.flags, env={})
        self.daemon: Daemon | None = None
        self.client: Client | None = None

    @property
    def d(self) -> Daemon:
        assert self.daemon is not None
        return self.daemon

    @property
    def c(self) -> Client:
        assert self.client is not None
        return self.client

    @property
    def world(self) -> Any:
        return self.d.core.world

    async def start(self) -> Client:
        """Start the daemon (its backend from the settings), register the repository, connect."""
        self.daemon = Daemon(self.settings)
        await self.daemon.start()
        for runner in {id(r): r for r in self.daemon.backend.runners.values()}.values():
            for key, value in FAST_CLEANUP.items():
                setattr(runner, key, value)
        if "proj" not in self.daemon.core.world.repos:
            await self.daemon.add_repo(str(self.repo))
        self.client = await Client.connect(self.daemon.port, Locator(self.settings.home, self.settings.profile).token())
        return self.client

    async def stop(self) -> None:
        """Disconnect and stop the daemon cleanly."""
        if self.client is not None:
            await self.client.close()
            self.client = None
        if self.daemon is not None:
            await self.daemon.stop()
            self.daemon = None

    def task(self, title: str, **kw: Any) -> str:
        """Create a task on ``proj`` (as the lead would); return its id."""
        return self.d.act(lambda c, now: c.create_task(title, now, repo="proj", **kw)).id

    def worktree(self, agent: str, task: str) -> Path:
        return Path(self.world.meta["worktrees"][f"{agent}-{task}"]["path"])


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
