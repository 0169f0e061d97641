"""The daemon: owns the core, the store, the WebSocket server and the backend.

One writer: every state change runs on this loop through :meth:`Daemon.act` (or an intent
handler), then :meth:`Daemon.commit` writes the changes to the store, and only then
broadcasts them and runs their effects (durable before visible).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import secrets
import shutil
import socket
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import protocol
from protocol import Decision, Hello, Repo

from . import __version__, daemon_repos, private, runtime
from .announce import Announcer, auto_answerable
from .config import Settings
from .core.core import Core
from .core.records import Worktree
from .core.world import RECENT_LOGS, Effect
from .errors import ConfigError, ForemanError, StateError
from .executors import preflight as executor_preflight
from .flow.assemble import make_backend
from .memory import Memory
from .notifier import Notifier
from .server import WebSocketServer
from .store import Store
from .usage import usage_status
from .web.gate import WebGate

logger = logging.getLogger(__name__)

T = TypeVar("T")

RING_SIZE = 20_000
"""State frames kept for clients that reconnect with ``since``; a client further behind gets a
snapshot, then live frames."""

CHECKPOINT_INTERVAL = 1.0
"""Seconds between WAL checkpoints (run off the loop)."""

_APPEND_TYPES = {"feed": ("feed.append", "item"), "message": ("message.append", "message"), "log": ("log.append", "line")}
_SNAPSHOT_FIELDS = (("agent", "agents"), ("goal", "goals"), ("task", "tasks"), ("decision", "decisions"), ("repo", "repos"))


class Daemon:
    """One running Foreman profile.

    Args:
        settings: the resolved settings.
        clock: returns Unix time in seconds (tests pass a fake).
        backend: the backend to use (default: the one ``settings.backend`` names).
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.time, backend: Any = None) -> None:
        self.settings = settings
        self.clock = clock
        self.profile_dir = settings.profile_dir
        self.store = Store(self.profile_dir)
        self.memory = Memory(self.profile_dir / "memory")
        self.core = Core()
        self.seq = 0
        self.ring: deque[tuple[int, str]] = deque(maxlen=RING_SIZE)
        self.encoded: dict[str, dict[str, str]] = {kind: {} for kind, _ in _SNAPSHOT_FIELDS}
        """The wire JSON of every entity by kind and id, in creation order (the snapshot joins them)."""
        self._recent: dict[str, deque[str]] = {}
        self._waiters: dict[str, list[asyncio.Future[Decision]]] = {}
        token = secrets.token_urlsafe(32) if settings.auth else None
        self.server = WebSocketServer(
            on_hello=self.on_hello, on_intent=self.on_intent, snapshot=self.snapshot_frame,
            allow_browser_origins=settings.allow_browser_origins, token=token,
            web=WebGate(token, self.profile_dir / "web.key", lan=settings.web_lan),
        )
        self.notifier = Notifier(enabled=settings.notify, silent=settings.toast_silent)
        self.backend: Any = backend
        self.port = 0
        self.stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.auth = ("none", "")
        self.usage_base = protocol.Usage()
        self.say = Announcer(settings)
        """What the daemon says on its terminal (decisions waiting, goals finished, a summary at stop)."""

    # ------------------------------------------------------------------ state plumbing
    def now(self) -> float:
        """Return the daemon clock's time (Unix seconds)."""
        return self.clock()

    def load(self) -> None:
        """Open the store and load the world (resetting the profile first with ``--reset``)."""
        if self.settings.reset:
            self.wipe_profile()
        world, self.seq = self.store.open()
        self.core = Core(world)
        self.say.load(world)
        self.usage_base = protocol.Usage.model_validate(world.meta.get("usage_total", {}))
        """The running usage total at start: the session's usage is the total minus this."""
        self.encoded = {kind: {} for kind, _ in _SNAPSHOT_FIELDS}
        for (kind, key), text in self.store.encoded.items():
            self.encoded.setdefault(kind, {})[key] = text
        for kind, items in (("feed", world.feed), ("message", world.messages)):
            self._recent[kind] = deque((i.model_dump_json(by_alias=True) for i in items), maxlen=items.maxlen)
        for agent, lines in world.logs.items():
            self._recent[f"log:{agent}"] = deque((ln.model_dump_json(by_alias=True) for ln in lines), maxlen=RECENT_LOGS)

    def wipe_profile(self) -> None:
        """Delete this profile's state (database, logs, memory, worktrees); keep config.json."""
        self.store.close()
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            (self.profile_dir / name).unlink(missing_ok=True)
        for sub in ("logs", "memory", "worktrees", "traces"):
            shutil.rmtree(self.profile_dir / sub, ignore_errors=True)
        self.store = Store(self.profile_dir)
        self.memory = Memory(self.profile_dir / "memory")

    def act(self, fn: Callable[[Core, float], T]) -> T:
        """Run one core input and commit it: ``fn(core, now)``; returns its result.

        Raises:
            ForemanError: whatever the core raised; nothing changed (the core validates before it
                mutates). Any other exception (a bug in ``fn``) is raised too, after the changes
                it made are committed, so the store never lags the world in memory.
        """
        try:
            result = fn(self.core, self.now())
        except Exception:
            changes, _ = self.core.take()
            if changes:  # the world in memory has them: the store must too (a bug worth a loud log)
                logger.error("an input raised after %d changes; committing them anyway", len(changes))
                self.core._changes = changes
                self.commit()
            raise
        self.commit()
        return result

    def commit(self) -> int:
        """Write the core's pending changes, then broadcast them and run their effects.

        Returns:
            The last ``seq`` handed out.
        """
        changes, effects = self.core.take()
        if not changes and not effects:
            return self.seq
        rows: list[tuple[Any, str | None]] = []
        frames: list[tuple[int, str]] = []
        seq = self.seq
        for ch in changes:
            if ch.op in ("meta", "record"):  # (not on the wire)
                rows.append((ch, None))
                continue
            text = ch.value.model_dump_json(by_alias=True)
            rows.append((ch, text))
            seq += 1
            if ch.op == "upsert":
                key = ch.value.name if ch.kind == "agent" else ch.value.id
                self.encoded[ch.kind][key] = text
                frames.append((seq, f'{{"type":"{ch.kind}.upsert","seq":{seq},"{ch.kind}":{text}}}'))
            else:
                tag, field = _APPEND_TYPES[ch.kind]
                recent_key = f"log:{ch.value.agent}" if ch.kind == "log" else ch.kind
                self._recent.setdefault(recent_key, deque(maxlen=RECENT_LOGS if ch.kind == "log" else 500)).append(text)
                frames.append((seq, f'{{"type":"{tag}","seq":{seq},"{field}":{text}}}'))
        self.store.commit(rows, seq)
        self.seq = seq
        self.ring.extend(frames)
        self.server.broadcast([f for _, f in frames])
        for effect in effects:
            self._run_effect(effect)
        if self.say.committed(changes, self.core.world):  # --exit-on-goal-done: every goal is finished
            self.stopping.set()
        return self.seq

    def publish_status(self) -> None:
        """Broadcast a ``foreman.status`` (a state message with its own ``seq``)."""
        self.seq += 1
        msg = protocol.StatusMessage(seq=self.seq, **self.status().model_dump())
        frame = protocol.encode(msg)
        self.store.commit([], self.seq)
        self.ring.append((self.seq, frame))
        self.server.broadcast([frame])

    def status(self) -> protocol.Status:
        """Return the status banner."""
        auth = self.auth[0] if not self.auth[1] else f"{self.auth[0]}: {self.auth[1]}"
        return protocol.Status(
            backend=self.settings.backend, auth=auth, version=__version__, user_name=self.settings.user_name,
            profile=self.settings.profile, **usage_status(self.core.world.meta, self.usage_base, self.now(), self.settings),
        )

    def snapshot_frame(self) -> str:
        """Return the snapshot frame of the current state (joined from cached entity JSON)."""
        w = self.core.world
        parts = [f'{{"type":"snapshot","seq":{self.seq},"status":{self.status().model_dump_json(by_alias=True)}']
        for kind, field in _SNAPSHOT_FIELDS:
            # encoded[kind] holds exactly the world's entities of that kind, in the same order
            parts.append(f',"{field}":[' + ",".join(self.encoded[kind].values()) + "]")
        parts.append(',"messages":[' + ",".join(self._recent.get("message", ())) + "]")
        parts.append(',"feed":[' + ",".join(self._recent.get("feed", ())) + "]")
        logs = ",".join(
            f'"{name}":[' + ",".join(self._recent.get(f"log:{name}", ())) + "]" for name in w.agents
        )
        parts.append(',"logs":{' + logs + "}}")
        return "".join(parts)

    # ------------------------------------------------------------------ clients
    def on_hello(self, hello: Hello) -> list[str]:
        """Return what a client needs: the missed frames after ``since`` if held, else a snapshot."""
        since = hello.since
        if since is not None:
            if since == self.seq:
                return []
            if self.ring and since < self.seq and self.ring[0][0] <= since + 1:
                return [f for s, f in self.ring if s > since]
        return [self.snapshot_frame()]

    def _ack(self, intent: Any, result: str | None = None) -> list[str]:
        return [protocol.encode(protocol.Ack(id=intent.id, seq=self.seq, result=result))]

    async def on_intent(self, intent: Any) -> list[str]:
        """Apply one client intent; return the reply frames (``ack``, ``diff``, ``memory``).

        Raises:
            ForemanError: the intent was refused; the server turns it into an ``error`` reply.
        """
        kind = intent.type
        if kind == "goal.submit":
            goal = self.act(lambda c, now: c.submit_goal(intent.text, now, repo=intent.repo))
            return self._ack(intent, goal.id)
        if kind == "decision.answer":
            self.act(lambda c, now: c.answer_decision(intent.decision, intent.option, now, text=intent.text,
                                                      by=intent.by or "user"))
            return self._ack(intent)
        if kind == "message.send":
            msg = self.act(lambda c, now: c.send_message("user", intent.to, intent.text, now))
            return self._ack(intent, str(msg.id))
        simple: dict[str, Callable[[Core, float], Any]] = {
            "agent.pause": lambda c, now: c.pause_agent(intent.agent, now),
            "agent.resume": lambda c, now: c.resume_agent(intent.agent, now),
            "agent.stop": lambda c, now: c.stop_agent(intent.agent, now),
            "agent.spawn": lambda c, now: c.spawn_agent(intent.agent, now, task=getattr(intent, "task", None)),
            "task.cancel": lambda c, now: c.cancel_task(intent.task, now),
            "task.retry": lambda c, now: c.retry_task(intent.task, now),
            "task.prioritize": lambda c, now: c.prioritize_task(intent.task, now, priority=intent.priority),
            "task.reassign": lambda c, now: c.reassign_task(intent.task, intent.agent, now),
        }
        if kind in simple:
            self.act(simple[kind])
            return self._ack(intent)
        if kind == "repo.add":
            repo = await self.add_repo(intent.path)
            return self._ack(intent, repo.id)
        if kind == "diff.request":
            target = intent.worktree or intent.decision
            diff = await self.diff_for(worktree=intent.worktree, decision=intent.decision)
            return [protocol.encode(protocol.DiffResult(id=intent.id, target=target, diff=diff))]
        if kind == "memory.read":
            if intent.note:
                notes = [protocol.MemoryNote(note=intent.note, text=self.memory.read(intent.note))]
            else:
                notes = [protocol.MemoryNote(note=n) for n in self.memory.index()]
            return [protocol.encode(protocol.MemoryResult(id=intent.id, notes=notes))]
        raise StateError(f"{kind} is not handled by this Foreman")

    # ------------------------------------------------------------------ decisions
    def wait_decision(self, decision_id: str) -> "asyncio.Future[Decision]":
        """Return a future resolved with the decision once it is answered or withdrawn.

        Raises NotFound for an unknown decision.
        """
        d = self.core.decision(decision_id)
        fut: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        if d.status != "open":
            fut.set_result(d)
        else:
            self._waiters.setdefault(decision_id, []).append(fut)
        return fut

    async def ask(self, kind: str, prompt: str, options: list[str], *, asked_by: str,
                  on_open: Callable[[Decision], Any] | None = None, **kw: Any) -> Decision:
        """Open a decision and wait for the user's answer (or its withdrawal); ``on_open`` is
        called with the decision as soon as it is open (before the wait)."""
        d = self.act(lambda c, now: c.open_decision(kind, prompt, options, now, asked_by=asked_by, **kw))
        if on_open is not None:
            on_open(d)
        try:
            return await self.wait_decision(d.id)
        except asyncio.CancelledError:
            # the asking turn was aborted: nobody waits for this decision any more
            if self.core.world.decisions[d.id].status == "open":
                self.act(lambda c, now: c.cancel_decision(d.id, now, reason="the asking turn ended"))
            raise

    def _run_effect(self, effect: Effect) -> None:
        if effect.kind == "wake":
            d = self.core.world.decisions.get(effect.ref)
            for fut in self._waiters.pop(effect.ref, []):
                if not fut.done() and d is not None:
                    fut.set_result(d)
            return
        if effect.kind == "notify":
            d = self.core.world.decisions.get(effect.ref)
            if d is None or d.status != "open":
                return
            if d.kind in self.settings.auto_answer:
                asyncio.get_running_loop().call_soon(self._auto_answer, d.id)
            else:
                self.notifier.notify(f"{d.asked_by} needs you", d.prompt)
        if self.backend is not None:
            self.backend.on_effect(effect)

    def _auto_answer(self, decision_id: str) -> None:
        d = self.core.world.decisions.get(decision_id)
        if d is None or d.status != "open":
            return
        if not auto_answerable(d, self.settings.auto_answer):
            logger.warning("not auto-answering %s: a critical merge risk or a budget is the user's call", decision_id)
            self.notifier.notify(f"{d.asked_by} needs you", f"{d.prompt} (critical risk: review it yourself)")
            return
        try:
            self.act(lambda c, now: c.answer_decision(decision_id, 0, now, by="auto"))
        except ForemanError as exc:
            logger.warning("auto-answer of %s failed: %s", decision_id, exc)

    # ------------------------------------------------------------------ repositories (foreman/daemon_repos.py)
    async def add_repo(self, path: str) -> Repo:
        """Register a repository root (``repo.add``); returns its entity (:func:`.daemon_repos.add_repo`)."""
        return await daemon_repos.add_repo(self.core, self.act, path)

    async def refresh_repo(self, repo_id: str) -> Repo:
        """Re-read a repository's head and dirty flag; upsert it when it changed."""
        return await daemon_repos.refresh_repo(self.core, self.act, repo_id)

    async def _poll_repos(self) -> None:
        interval = max(0.1, self.settings.repo_poll_ms / 1000)
        while True:
            await asyncio.sleep(interval)
            for rid in list(self.core.world.repos):
                try:
                    await self.refresh_repo(rid)
                except ForemanError as exc:
                    logger.warning("repository %s: %s", rid, exc)

    async def _checkpoints(self) -> None:
        while True:
            await asyncio.sleep(CHECKPOINT_INTERVAL)
            await asyncio.to_thread(self.store.checkpoint)

    def worktree_info(self, worktree_id: str) -> Worktree:
        """Return the record of worktree ``worktree_id`` (``kit-t2``). Raises NotFound."""
        return daemon_repos.worktree_info(self.core, worktree_id)

    async def diff_for(self, *, worktree: str | None = None, decision: str | None = None) -> protocol.Diff:
        """Return the structured diff of a worktree or a merge decision (:func:`.daemon_repos.diff_for`)."""
        return await daemon_repos.diff_for(self.core, worktree=worktree, decision=decision)

    # ------------------------------------------------------------------ lifecycle
    def spawn(self, coro: Any, name: str) -> "asyncio.Task[Any]":
        """Start a named background task owned by the daemon (cancelled at shutdown)."""
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: "asyncio.Task[Any]") -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def start(self) -> int:
        """Load state, start serving and start the backend; return the bound port.

        Raises:
            ConfigError: the profile is in use, or the port is taken (the message says what to do).
        """
        home, profile = self.settings.home, self.settings.profile
        runtime.claim_profile(home, profile)
        private.tighten_home(home)  # a home made before, or loosened by hand: folders 0700, files 0600
        try:
            await self._preflight()  # before any state is written: a start that cannot run leaves none
            self.load()
            self.port = await self._serve()
        except BaseException:
            runtime.unclaim(home, profile)  # (the store, if it opened, is closed by stop())
            raise
        record: dict[str, Any] = {
            "port": self.port, "host": "127.0.0.1", "backend": self.settings.backend,
            "version": __version__, "startedAt": self.now(), **({"lan": True} if self.settings.web_lan else {}),
        }
        if self.server.token is not None:
            record["token"] = self.server.token
        else:
            logger.warning("--no-auth: any local process, including code an agent runs, can connect to port %d "
                           "and answer decisions; use it only for clients that cannot send a token", self.port)
        runtime.record(home, profile, record)
        self.auth = self.backend.status()
        self.publish_status()
        for path in self.settings.repo:
            await self.add_repo(path)
        await self.backend.start(self)
        private.tighten_home(home)  # and what the backend made at its start (the sim's sandbox folder)
        for d in list(self.core.world.decisions.values()):  # auto-answers missed by a crash
            if d.status == "open" and d.kind in self.settings.auto_answer:
                asyncio.get_running_loop().call_soon(self._auto_answer, d.id)
        if self.settings.goal:
            self.act(lambda c, now: c.submit_goal(self.settings.goal, now))
        self.spawn(self._poll_repos(), "repo-poll")
        self.spawn(self._checkpoints(), "wal-checkpoint")
        logger.info("Foreman %s (%s) listening on ws://127.0.0.1:%d", profile, self.settings.backend, self.port)
        self.say.say_waiting()  # decisions left open by the previous run
        if self.say.should_exit(self.core.world):  # --exit-on-goal-done on a profile whose goals are finished
            self.stopping.set()
        return self.port

    async def _serve(self) -> int:
        """Start the WebSocket server; return its port.

        Raises:
            ConfigError: the port is taken (says what to do).
        """
        try:
            return await self.server.start(self.settings.port, "0.0.0.0" if self.settings.web_lan else "127.0.0.1")
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(runtime.port_in_use(self.settings.home, self.settings.port)) from None
            raise

    async def _preflight(self) -> None:
        """Check what needs no state: the port is free and the backend can run (its ``preflight``).

        Raises:
            ConfigError: the port is taken. BackendError: the backend's own check failed.
        """
        if self.settings.port:
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
                try:
                    probe.bind(("127.0.0.1", self.settings.port))
                except OSError:
                    raise ConfigError(runtime.port_in_use(self.settings.home, self.settings.port)) from None

        await asyncio.to_thread(executor_preflight, self.settings)  # (--executor ray: the head answers)
        if self.backend is None:
            self.backend = make_backend(self.settings)
        check = getattr(self.backend, "preflight", None)
        if check is not None:
            await check()

    async def stop(self) -> None:
        """Shut down: stop accepting, stop the backend, cancel background work, close the store."""
        await self.server.close()
        if self.backend is not None:
            try:
                await asyncio.wait_for(self.backend.stop(), timeout=15)
            except (asyncio.TimeoutError, ForemanError) as exc:
                logger.warning("backend did not stop cleanly: %s", exc)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.port:  # (it served: a start that failed has nothing to sum up)
            self.say.summary(self.core.world)
        self.store.close()
        runtime.release(self.settings.home, self.settings.profile)

    async def run(self) -> None:
        """Start, serve until :attr:`stopping` is set, then shut down cleanly."""
        await self.start()
        try:
            await self.stopping.wait()
        finally:
            await self.stop()


if TYPE_CHECKING:  # (mypy checks that the daemon is what the flow needs of its host)
    from .flow.host import FlowHost

    _HOST: type[FlowHost] = Daemon
