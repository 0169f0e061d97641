"""Shared helpers of the sim scenario tests: a real daemon subprocess and a protocol client.

:func:`start_daemon` runs ``python -m foreman start --backend sim`` in a temporary home and
waits for its run record. :class:`SimClient` speaks protocol v1 over a real WebSocket: it
keeps a mirror of the world (agents, goals, tasks, decisions, feed), records every state
message in order, and answers each open decision with an :data:`Answerer` (a pure function of
the decision and the mirror, so a client that reconnects after a restart answers the same way).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets

from foreman.tui.discovery import Locator

ROOT = Path(__file__).resolve().parents[2]
DONE_TEXT = "The sim scenario is complete"
"""The last feed line of a finished run (the team's wrap-up)."""
START_TIMEOUT = 30.0
MERGED_TASKS = ("t1", "t5", "t3", "t2", "t4", "t6", "t9")
"""Tasks the scenario opens merge decisions for, in order."""

Answerer = Callable[[dict[str, Any], "SimClient"], "int | None"]
"""Returns the 0-based option to answer a decision with, or None to leave it open."""


def first_option(decision: dict[str, Any], client: SimClient) -> int:
    """The answerer that moves the goal forward: option 0 everywhere."""
    return 0


_RECORDS: dict[int, tuple[Path, str]] = {}
"""Port -> (home, profile) of every daemon :func:`start_daemon` started (to find its token)."""


def token_for(port: int) -> str | None:
    """The client token of the daemon on ``port``, read from its ``foreman.json`` as the TUI reads it."""
    home, profile = _RECORDS.get(port, (None, None))
    return Locator(home, profile).token() if home is not None else None


@dataclass
class SimDaemon:
    """A running ``foreman start --backend sim`` process."""

    proc: subprocess.Popen[bytes]
    home: Path
    sandbox: Path
    profile: str
    port: int
    log: Path

    @property
    def repo(self) -> Path:
        """The profile's demo repository."""
        return self.sandbox / ("sim-demo" if self.profile == "sim" else f"sim-demo-{self.profile}")

    def kill(self, group: bool = False) -> None:
        """SIGKILL the daemon (no cleanup runs) and reap it.

        Args:
            group: kill its whole process group too (the git and test runs it started), as a
                service manager or a closed terminal does.
        """
        if self.proc.poll() is None:
            if group:
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM (clean shutdown), SIGKILL after 15 s."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


def start_daemon(home: Path, *extra: str, speed: float = 1000.0, reset: bool = True, profile: str = "sim",
                 timeout: float = START_TIMEOUT) -> SimDaemon:
    """Start the sim daemon on an OS-chosen port and wait for its run record.

    Args:
        home: the state root; the sandbox is ``home / "sb"``, the log ``home / "daemon-N.log"``.
        extra: more ``foreman start`` flags (``--auto-answer``, ``--seed``, ``--showcase`` ...).
        speed: the sim's time multiplier.
        reset: pass ``--reset`` (a fresh profile and demo repository).
        profile: the profile the daemon runs (the showcase flags do not change it by themselves).

    Raises:
        RuntimeError: the daemon exited or wrote no run record in time (with its log's tail).
    """
    home.mkdir(parents=True, exist_ok=True)
    sandbox = home / "sb"
    n = len(list(home.glob("daemon-*.log")))
    log = home / f"daemon-{n}.log"
    cmd = [sys.executable, "-m", "foreman", "start", "--backend", "sim", "--home", str(home), "--sandbox", str(sandbox),
           "--port", "0", "--speed", str(speed), "--no-notify", "--profile", profile, *extra]
    if reset:
        cmd.append("--reset")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    record = home / profile / "foreman.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(record.read_text())
            if data.get("pid") == proc.pid:
                _RECORDS[int(data["port"])] = (home, profile)
                return SimDaemon(proc, home, sandbox, profile, int(data["port"]), log)
        time.sleep(0.02)
    if proc.poll() is None:
        proc.kill()
        proc.wait(5)
    raise RuntimeError(f"the sim daemon did not start:\n{log.read_text(errors='replace')[-4000:]}")


@dataclass
class SimClient:
    """A protocol-v1 client with a world mirror that answers decisions.

    Attributes:
        answer: picks the option of each open decision (None: leave it open).
        messages: every state message received after the snapshot, in order (decoded JSON).
        answers: ``(decision id, option)`` in the order this client sent them.
        errors: ``error`` replies received.
    """

    answer: Answerer | None = first_option
    messages: list[dict[str, Any]] = field(default_factory=list)
    snapshot: dict[str, Any] = field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    goals: dict[str, dict[str, Any]] = field(default_factory=dict)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    feed: list[dict[str, Any]] = field(default_factory=list)
    answers: list[tuple[str, int]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    on_message: Callable[[dict[str, Any]], None] | None = None
    """Called after each state message is applied (tests use it to pick kill points)."""

    def __post_init__(self) -> None:
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._answered: set[tuple[str, int]] = set()
        self.closed = False

    # ------------------------------------------------------------------ connection
    async def connect(self, port: int, since: int | None = None, token: str | None = None) -> SimClient:
        """Connect, say hello, apply the snapshot and start reading.

        Args:
            since: hello's ``since``. ``0`` on a fresh daemon replays every state message
                from the first one (no snapshot), so :attr:`messages` is the run's whole history
                whenever the client connects.
            token: the client token; default: read from the ``foreman.json`` of the daemon
                :func:`start_daemon` started on ``port``.
        """
        self._ws = await websockets.connect(f"ws://127.0.0.1:{port}", max_size=None, open_timeout=10)
        hello: dict[str, Any] = {"type": "hello", "protocol": 1, "client": "sim-tests", "token": token or token_for(port)}
        if since is not None:
            hello["since"] = since
        await self._ws.send(json.dumps(hello))
        self.closed = False
        if since is None:
            first = json.loads(await asyncio.wait_for(self._ws.recv(), 10))
            assert first["type"] == "snapshot", first
            self._apply_snapshot(first)
        self._reader = asyncio.create_task(self._read())
        await self._answer_open()
        return self

    async def close(self) -> None:
        """Close the socket and stop reading."""
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def _read(self) -> None:
        try:
            async for frame in self._ws:
                msg = json.loads(frame)
                kind = msg["type"]
                if kind in ("ack", "error", "diff", "memory"):
                    if kind == "error":
                        self.errors.append(msg)
                    fut = self._replies.pop(str(msg.get("id")), None)
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
                    continue
                if kind == "snapshot":
                    self._apply_snapshot(msg)
                    await self._answer_open()
                    continue
                self.messages.append(msg)
                self._apply(msg)
                if self.on_message is not None:
                    self.on_message(msg)
                if kind == "decision.upsert":
                    await self._answer_open()
                async with self._changed:
                    self._changed.notify_all()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.closed = True
            async with self._changed:
                self._changed.notify_all()

    # ------------------------------------------------------------------ mirror
    def _apply_snapshot(self, snap: dict[str, Any]) -> None:
        self.snapshot = snap
        self.agents = {a["name"]: a for a in snap["agents"]}
        self.goals = {g["id"]: g for g in snap["goals"]}
        self.tasks = {t["id"]: t for t in snap["tasks"]}
        self.decisions = {d["id"]: d for d in snap["decisions"]}
        self.feed = list(snap["feed"])

    def _apply(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind == "agent.upsert":
            self.agents[msg["agent"]["name"]] = msg["agent"]
        elif kind == "goal.upsert":
            self.goals[msg["goal"]["id"]] = msg["goal"]
        elif kind == "task.upsert":
            self.tasks[msg["task"]["id"]] = msg["task"]
        elif kind == "decision.upsert":
            self.decisions[msg["decision"]["id"]] = msg["decision"]
        elif kind == "feed.append":
            self.feed.append(msg["item"])

    def goal(self) -> dict[str, Any]:
        """The (only) goal of the sim run."""
        assert len(self.goals) == 1, self.goals
        return next(iter(self.goals.values()))

    @property
    def finished(self) -> bool:
        """True once the scenario's last feed line arrived."""
        return any(item["text"] == DONE_TEXT for item in self.feed)

    def decisions_of(self, kind: str, task: str | None = None) -> list[dict[str, Any]]:
        """Decisions of ``kind`` (about ``task`` when given), oldest first."""
        found = [d for d in self.decisions.values() if d["kind"] == kind and (task is None or d.get("task") == task)]
        return sorted(found, key=lambda d: int(d["id"][1:]))

    # ------------------------------------------------------------------ intents
    async def request(self, intent: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send an intent with a fresh id; return its ``ack``/``error`` reply."""
        rid = f"r{next(self._ids)}"
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[rid] = fut
        await self._ws.send(json.dumps({**intent, "id": rid}))
        return await asyncio.wait_for(fut, timeout)

    async def _answer_open(self) -> None:
        if self.answer is None:
            return
        for d in sorted(self.decisions.values(), key=lambda d: int(d["id"][1:])):
            if d["status"] != "open":
                continue
            # a re-opened decision (merge refused) is a new round: key on its upsert count
            key = (d["id"], sum(1 for m in self.messages if m["type"] == "decision.upsert" and m["decision"]["id"] == d["id"]))
            if key in self._answered:
                continue
            option = self.answer(d, self)
            if option is None:
                continue
            self._answered.add(key)
            self.answers.append((d["id"], option))
            rid = f"a{next(self._ids)}"
            with contextlib.suppress(websockets.ConnectionClosed):
                await self._ws.send(json.dumps({"type": "decision.answer", "id": rid, "decision": d["id"], "option": option}))

    async def wait_for(self, predicate: Callable[[SimClient], bool], timeout: float, what: str = "") -> None:
        """Wait until ``predicate(self)`` holds.

        Raises:
            AssertionError: the timeout passed or the connection closed first (with the goal,
                the open decisions and the last feed lines, to see where the scenario was).
        """
        deadline = time.monotonic() + timeout
        async with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    tail = [f["text"] for f in self.feed[-8:]]
                    open_ = [(d["id"], d["kind"], d.get("task")) for d in self.decisions.values() if d["status"] == "open"]
                    raise AssertionError(f"{'closed' if self.closed else 'timed out'} waiting for {what or predicate}: "
                                         f"goals={list(self.goals.values())} open={open_} feed tail={tail}")
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), left)


async def run_to_end(home: Path, *extra: str, answer: Answerer | None = first_option, speed: float = 1000.0,
                     timeout: float = 60.0) -> tuple[SimDaemon, SimClient]:
    """Run a fresh scenario to its end with a client answering every decision; the daemon is stopped.

    The client connects with ``since=0``, so its :attr:`SimClient.messages` hold the run's
    every state message from ``seq`` 1.
    """
    daemon = start_daemon(home, *extra, speed=speed)
    client = SimClient(answer=answer)
    try:
        await client.connect(daemon.port, since=0)
        await client.wait_for(lambda c: c.finished, timeout, "the scenario's end")
    finally:
        await client.close()
        daemon.stop()
    return daemon, client


# ---------------------------------------------------------------------- git and normalising
def git(repo: Path, *args: str) -> str:
    """Run git in ``repo``; return stdout stripped (fails the test on error)."""
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def tree_hash(repo: Path, rev: str = "main") -> str:
    """``git rev-parse <rev>^{tree}``."""
    return git(repo, "rev-parse", f"{rev}^{{tree}}")


def main_files(repo: Path) -> set[str]:
    """Paths tracked on main."""
    return set(git(repo, "ls-tree", "-r", "--name-only", "main").splitlines())


def show_main(repo: Path, path: str) -> str:
    """A file's content on main."""
    return git(repo, "show", f"main:{path}")


_TIME_KEYS = frozenset({"at", "createdAt", "startedAt", "wallSeconds"})
_SHA = re.compile(r"\b[0-9a-f]{7,40}\b")


def normalise(messages: list[dict[str, Any]], *roots: Path) -> list[Any]:
    """Drop what differs between two runs by design.

    Timestamps (``at``, ``createdAt``, ``startedAt``) and turns' wall-clock times (``wallSeconds``), commit ids (they hash commit dates:
    repository ``head`` and hex ids inside text) and the runs' temporary directories (``roots``).
    ``seq`` is kept: equal sequences have equal seqs.
    """
    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<sha>" if k == "head" and v else scrub(v)) for k, v in value.items() if k not in _TIME_KEYS}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, str):
            for i, root in enumerate(roots):
                value = value.replace(str(root), f"<root{i}>")
            return _SHA.sub("<sha>", value)
        return value

    return [scrub(m) for m in messages]


def blobs(repo: Path, rev: str = "main") -> dict[str, str]:
    """``{path: blob id}`` of every file in ``rev``'s tree."""
    out: dict[str, str] = {}
    for line in git(repo, "ls-tree", "-r", rev).splitlines():
        meta, path = line.split("\t", 1)
        out[path] = meta.split()[2]
    return out


def blob_id(text: str) -> str:
    """The id git gives a blob holding ``text`` in UTF-8 (``git hash-object``)."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def expected_main(repo: Path, merged: dict[str, list[Any]]) -> dict[str, str]:
    """The ``{path: blob id}`` main must hold: the demo's base plus the merged tasks' steps.

    Args:
        merged: plan id -> the steps (``patches.Step``) whose work reached main. The sim's
            tasks write disjoint files (see :mod:`foreman.backends.sim.patches`), so the merge
            order does not matter.
    """
    base = git(repo, "rev-list", "--first-parent", "--no-merges", "-1", "main")
    files = blobs(repo, base)
    for steps in merged.values():
        for step in steps:
            files.update({path: blob_id(text) for path, text in step.writes.items()})
            for path in step.deletes:
                files.pop(path, None)
    return files
