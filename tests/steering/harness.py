"""An in-process daemon with the conductor and a puppet model edge, driven over its real port.

The :class:`Puppet` runner hands every turn to a script the test chose for ``(agent, job)``;
the default script blocks until the turn is aborted, so a turn is in flight when the test
steers. Scripts may start real commands in the worktree (:func:`start_command`); like a real
runner, the puppet kills their process trees when the turn is cancelled.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from websockets.asyncio.client import ClientConnection, connect

from foreman import procs
from foreman.backends.conductor import ALL_WORKERS, LEAD, Conductor
from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.config import resolve
from foreman.daemon import Daemon
from foreman.tui.discovery import Locator

Script = Callable[["Turn"], Awaitable[TurnResult]]


@dataclass
class Turn:
    """One turn the puppet runs: the request, its tools, and what the script started."""

    req: TurnRequest
    tools: AgentTools
    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False
    procs: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def start_command(self, *args: str) -> asyncio.subprocess.Process:
        """Start a real command in the worktree in its own session (killed when the turn is aborted)."""
        proc = await procs.start_process(*args, cwd=self.req.cwd, env=self.req.env,
                                         stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        self.procs.append(proc)
        track = getattr(self.tools, "track_process", None)
        if track is not None:
            track(proc.pid)
        return proc


async def block(turn: Turn) -> TurnResult:
    """The default script: wait until the turn is aborted."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


class Puppet:
    """A TurnRunner whose turns run scripts chosen by the test.

    Attributes:
        scripts: ``(agent, job)`` or ``agent`` -> a list of scripts used in order (the last one
            repeats); a missing key runs :func:`block`.
        turns: every turn run, in start order.
    """

    name = "puppet"

    def __init__(self) -> None:
        self.scripts: dict[Any, list[Script]] = {}
        self.turns: list[Turn] = []

    def status(self) -> tuple[str, str]:
        return ("test", "")

    async def preflight(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def on(self, key: Any, *scripts: Script) -> None:
        """Queue scripts for ``(agent, job)`` or for every job of ``agent``."""
        self.scripts.setdefault(key, []).extend(scripts)

    def _pick(self, req: TurnRequest) -> Script:
        for key in ((req.agent, req.job), req.agent):
            queue = self.scripts.get(key)
            if queue:
                return queue.pop(0) if len(queue) > 1 else queue[0]
        return block

    async def run_turn(self, request: TurnRequest, tools: AgentTools) -> TurnResult:
        turn = Turn(request, tools)
        self.turns.append(turn)
        turn.started.set()
        try:
            return await self._pick(request)(turn)
        except asyncio.CancelledError:
            turn.cancelled = True
            raise
        finally:
            for proc in turn.procs:  # a real runner kills the process trees it started
                await procs.abort(proc, grace=0.5)

    def of(self, agent: str) -> list[Turn]:
        """The turns ``agent`` ran, oldest first."""
        return [t for t in self.turns if t.req.agent == agent]


def make_repo(root: Path, name: str = "proj") -> Path:
    """A git repository on ``main`` with one commit and no test command."""
    repo = root / name
    repo.mkdir(parents=True)
    (repo / "notes.txt").write_text("first line\n")
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "config", "user.name", "User One"],
                ["git", "config", "user.email", "one@example.com"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=repo, check=True)
    return repo


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; return stdout."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


async def wait_for(pred: Callable[[], Any], timeout: float = 15.0, what: str = "condition") -> Any:
    """Poll ``pred`` until it returns a truthy value; return it. Raises AssertionError on timeout."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = pred()
        if value:
            return value
        if loop.time() > end:
            raise AssertionError(f"{what} not reached in {timeout} s")
        await asyncio.sleep(0.02)


class Client:
    """A protocol client over a real WebSocket to the daemon's port."""

    _ids = itertools.count(1)

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def connect(cls, port: int, token: str | None = None) -> "Client":
        """Connect and say hello with ``token`` (the snapshot reply is read and dropped)."""
        client = cls(await connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None))
        await client.ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "steering-tests", "token": token}))
        first = json.loads(await asyncio.wait_for(client.ws.recv(), 5))
        assert first["type"] == "snapshot", first
        return client

    async def send(self, intent: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send an intent with a fresh id; return its ``ack`` or ``error`` reply."""
        rid = f"s{next(self._ids)}"
        await self.ws.send(json.dumps({**intent, "id": rid}))
        while True:
            data = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
            if data.get("id") == rid:
                return data

    async def ok(self, intent: dict[str, Any]) -> dict[str, Any]:
        """Send an intent that must be acknowledged."""
        reply = await self.send(intent)
        assert reply["type"] == "ack", reply
        return reply

    async def close(self) -> None:
        await self.ws.close()


class Rig:
    """A daemon + conductor + puppet on a real repository, restartable on the same home.

    Args:
        tmp: a temporary folder (the repository and the home go there).
        **flags: settings flags (``workers``, ``max_concurrent`` ...).
    """

    def __init__(self, tmp: Path, *, repo: Path | None = None, **flags: Any) -> None:
        self.tmp = tmp
        self.repo = repo or make_repo(tmp)
        self.flags = {"home": str(tmp / "home"), "port": 0, "backend": "sim", "workers": ["3"],
                      "repo_poll_ms": 600_000, "lead_review": False, **flags}
        self.settings = resolve(self.flags, env={})
        self.daemon: Daemon | None = None
        self.puppet = Puppet()
        self.client: Client | None = None

    @property
    def d(self) -> Daemon:
        assert self.daemon is not None
        return self.daemon

    @property
    def world(self) -> Any:
        return self.d.core.world

    async def start(self, *, clock: Callable[[], float] | None = None, sleep: Any = asyncio.sleep) -> Client:
        """Start (or restart) the daemon with a fresh conductor; keep the puppet's scripts."""
        conductor = Conductor(self.settings, {n: self.puppet for n in (LEAD, *ALL_WORKERS)},
                              backend_name="puppet", sleep=sleep)
        kw = {"clock": clock} if clock is not None else {}
        self.daemon = Daemon(self.settings, backend=conductor, **kw)
        await self.daemon.start()
        if "proj" not in self.daemon.core.world.repos:
            await self.daemon.add_repo(str(self.repo))
        self.client = await Client.connect(self.daemon.port, Locator(self.settings.home, self.settings.profile).token())
        return self.client

    async def stop(self) -> None:
        """Stop the daemon cleanly (turns are aborted, sessions stay resumable)."""
        if self.client is not None:
            await self.client.close()
            self.client = None
        if self.daemon is not None:
            await self.daemon.stop()
            self.daemon = None

    def task(self, title: str, **kw: Any) -> str:
        """Create a task on ``proj``; return its id."""
        return self.d.act(lambda c, now: c.create_task(title, now, repo="proj", **kw)).id

    def worktree(self, agent: str, task: str) -> Path:
        """The path of ``agent``'s worktree for ``task``."""
        return Path(self.world.meta["worktrees"][f"{agent}-{task}"]["path"])

    async def turn(self, agent: str, n: int = 1, timeout: float = 15.0) -> Turn:
        """Wait until ``agent`` started its ``n``-th turn; return it."""
        turns = await wait_for(lambda: len(self.puppet.of(agent)) >= n and self.puppet.of(agent), timeout,
                               f"turn {n} of {agent}")
        return turns[n - 1]
