"""The one test rig for flows through the daemon: a real repository, an in-process daemon on a
real WebSocket port, a protocol client that mirrors the world, and small helpers.

A suite's rig subclasses :class:`DaemonRig` and says how its backend is built
(:meth:`DaemonRig.make_daemon`); everything else - start, restart on the same home, stop,
creating tasks, finding worktrees, waiting - is here, so a new flow test is a few lines::

    rig = ScriptedRig(tmp_path, pick)
    await rig.start()
    task = rig.task("Add greet")
    await wait_for(lambda: rig.world.tasks[task].status == "review")
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from foreman.config import resolve
from foreman.daemon import Daemon
from foreman.tui.discovery import Locator

NOTES = {"notes.txt": "first line\n"}
"""A repository with one text file and no test command."""

PYPROJECT = {
    "proj.py": "def hello():\n    return 'hello'\n",
    "tests/__init__.py": "",
    "tests/test_proj.py": "import unittest\nimport proj\n\n\nclass T(unittest.TestCase):\n    def test_hello(self):\n"
                          "        self.assertEqual(proj.hello(), 'hello')\n",
}
"""A Python repository whose test command is stdlib unittest (``tests/``)."""


# ---------------------------------------------------------------------- git and processes
def make_repo(root: Path, name: str = "proj", files: Mapping[str, str] = NOTES) -> Path:
    """A git repository ``root/name`` on ``main`` with ``files`` in one commit by "User One"."""
    repo = root / name
    repo.mkdir(parents=True)
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "config", "user.name", "User One"],
                ["git", "config", "user.email", "one@example.com"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=repo, check=True)
    return repo


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; return stdout (raises CalledProcessError on failure)."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


async def start_process(*args: str | os.PathLike[str], cwd: str | os.PathLike[str],
                        env: Mapping[str, str] | None = None, stdout: Any = asyncio.subprocess.PIPE,
                        stderr: Any = asyncio.subprocess.PIPE) -> asyncio.subprocess.Process:
    """Start a real command in its own session and process group (as the daemon starts agents'
    processes), as an asyncio process the test can read from."""
    return await asyncio.create_subprocess_exec(
        *args, cwd=os.fspath(cwd), env=dict(env) if env is not None else None, stdin=asyncio.subprocess.DEVNULL,
        stdout=stdout, stderr=stderr, start_new_session=True)


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


def retiring(rig: DaemonRig) -> dict[str, float]:
    """The rig's retired worktrees whose folders are still to be removed: id -> when retired."""
    from foreman.core.records import Worktree

    return {w.id: w.retired_at or 0.0 for w in rig.d.core.records(Worktree).values() if w.state == "retiring"}


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
    async def connect(cls, port: int, token: str | None = None, name: str = "rig-tests") -> Client:
        """Connect, say hello with ``token`` (read from the run file, as the TUI does), read the
        snapshot and keep reading in the background."""
        client = cls(await connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None, open_timeout=10))
        await client.ws.send(json.dumps({"type": "hello", "protocol": 1, "client": name, "token": token}))
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
                if rid is not None and rid in self._replies:  # a reply to one of our intents
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
        """Send an intent with a fresh id; return its reply (``ack``, ``error``, ``diff`` ...)."""
        rid = f"r{next(self._ids)}"
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[rid] = fut
        await self.ws.send(json.dumps({**intent, "id": rid}))
        return await asyncio.wait_for(fut, timeout)

    async def ok(self, intent: dict[str, Any]) -> dict[str, Any]:
        """Send an intent that must be acknowledged; return the ack."""
        reply = await self.send(intent)
        assert reply["type"] == "ack", reply
        return reply

    async def answer(self, decision: dict[str, Any] | str, option: int, text: str | None = None) -> None:
        """Answer a decision (wire JSON or id) as the user."""
        did = decision if isinstance(decision, str) else decision["id"]
        await self.ok({"type": "decision.answer", "decision": did, "option": option, **({"text": text} if text else {})})

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


# ---------------------------------------------------------------------- the daemon
def conductor_daemon(settings: Any, runner: Any, *, name: str, clock: Callable[[], float] | None = None,
                     sleep: Any = asyncio.sleep) -> Daemon:
    """A daemon whose backend is the conductor with ``runner`` for the whole team."""
    from foreman.flow.conductor import ALL_WORKERS, LEAD, Conductor

    conductor = Conductor(settings, {n: runner for n in (LEAD, *ALL_WORKERS)}, backend_name=name, sleep=sleep)
    return Daemon(settings, backend=conductor, **({"clock": clock} if clock is not None else {}))


class DaemonRig:
    """An in-process daemon on a real repository (registered as ``proj``), restartable on the
    same home, with a connected :class:`Client`.

    Args:
        tmp: a temporary folder (the repository and the home go there).
        repo: the repository (default: :func:`make_repo` with :attr:`files`).
        **flags: settings flags over :attr:`flags_default` (``workers``, ``lead_review`` ...).
    """

    files: Mapping[str, str] = NOTES
    flags_default: dict[str, Any] = {"port": 0, "backend": "sim", "workers": ["3"], "repo_poll_ms": 600_000}

    def __init__(self, tmp: Path, *, repo: Path | None = None, **flags: Any) -> None:
        self.tmp = tmp
        self.repo = repo or make_repo(tmp, files=self.files)
        self.flags = {"home": str(tmp / "home"), **self.flags_default, **flags}
        self.settings = resolve(self.flags, env={})
        self.daemon: Daemon | None = None
        self.client: Client | None = None

    def make_daemon(self, **kw: Any) -> Daemon:
        """Build the daemon for :meth:`start` (each suite says how its backend is made)."""
        return Daemon(self.settings)

    async def ready(self) -> None:
        """Called once the daemon runs, before the repository is registered (tune runners here)."""

    @property
    def d(self) -> Daemon:
        assert self.daemon is not None
        return self.daemon

    @property
    def c(self) -> Client:
        assert self.client is not None
        return self.client

    @property
    def backend(self) -> Any:
        return self.d.backend

    @property
    def world(self) -> Any:
        return self.d.core.world

    async def start(self, **kw: Any) -> Client:
        """Start (or restart) the daemon, register the repository if needed, connect."""
        self.daemon = self.make_daemon(**kw)
        await self.daemon.start()
        await self.ready()
        if "proj" not in self.daemon.core.world.repos:
            await self.daemon.add_repo(str(self.repo))
        self.client = await Client.connect(self.daemon.port,
                                           Locator(self.daemon.settings.home, self.daemon.settings.profile).token())
        return self.client

    async def stop(self) -> None:
        """Disconnect and stop the daemon cleanly (turns are aborted, sessions stay resumable)."""
        if self.client is not None:
            await self.client.close()
            self.client = None
        if self.daemon is not None:
            await self.daemon.stop()
            self.daemon = None

    async def __aenter__(self) -> DaemonRig:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    def task(self, title: str, **kw: Any) -> str:
        """Create a task on ``proj`` (as the lead would); return its id."""
        return self.d.act(lambda c, now: c.create_task(title, now, repo="proj", **kw)).id

    def worktree(self, agent: str, task: str) -> Path:
        """The path of ``agent``'s worktree for ``task``."""
        return Path(self.d.worktree_info(f"{agent}-{task}").path)

    def status(self, task: str) -> str:
        """The task's status in the daemon's world."""
        return self.world.tasks[task].status

    async def wait_status(self, task: str, *statuses: str, timeout: float = 30.0) -> str:
        """Wait until ``task`` reaches one of ``statuses``; return it."""
        return await wait_for(lambda: self.status(task) if self.status(task) in statuses else None, timeout,
                              f"{task} {'/'.join(statuses)}")

    def open_decision(self, task: str, kind: str = "merge") -> Any:
        """The open decision of ``kind`` about ``task`` in the daemon's world, or None."""
        return next((x for x in self.world.decisions.values()
                     if x.task == task and x.kind == kind and x.status == "open"), None)
