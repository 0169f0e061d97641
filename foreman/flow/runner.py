"""The one effect runner: inputs in, :func:`~foreman.flow.step.step` once per input, effects out.

:meth:`FlowRunner.submit` queues an input and, unless it is already doing so, applies the queue
one input at a time: the step runs inside the daemon's ``act`` (its changes are committed before
anything else happens), then each effect is started in order by its executor. An executor is a
plain function of the effect: it may do its work at once (and return the next input, or nothing)
or return an awaitable, which the runner runs in the background and whose result (the next input)
it submits when it is done. An executor that raises feeds :class:`~.model.StepFailed` back: the
task of the effect is blocked with the step named, and the flow goes on.

Every applied input asks for a scheduling pass (:meth:`kick`); the pass itself is an input
(:class:`~.model.Tick`) submitted by :meth:`schedule_loop`, also when a failed start's backoff is due.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from ..config import Settings
from ..core.backoff import Backoff
from .context import Ctx
from .host import FlowHost
from .model import Effect, Input, Live, StepFailed, Tick
from .step import step

logger = logging.getLogger(__name__)

Executor = Callable[[Any], "Awaitable[Input | None] | Input | None"]
"""Carries out one effect (see the module doc)."""

_JOB = {"PrepareTask": "start", "CheckWork": "check", "RunCi": "ci", "PrepareReview": "review", "PrepareMerge": "request",
        "LandMerge": "merge", "Speculate": "merge-train", "AwaitCheckout": "merge-wait", "CommitLeftovers": "commit", "HandOff": "handoff", "RemoveWorktree": "retire",
        "CleanStale": "clean", "AskUser": "ask"}
"""The names of background jobs by effect (``merge d3``, ``retire kit-t1``: logs and task names)."""

WAITING = frozenset({"AskUser", "RemoveWorktree", "AwaitCheckout"})
"""Effects that wait (for the user; for a busy folder to free) and do not keep the flow busy."""

SERIAL = frozenset({"PrepareTask", "CommitLeftovers", "HandOff", "CheckWork", "RunCi", "PrepareReview", "PrepareMerge",
                    "LandMerge", "CleanStale"})
"""The effects a serial runner carries out one at a time, in the order the rules emitted them."""

_WHAT = {"RunTurn": "the turn", "PrepareTask": "starting the task", "CheckWork": "reading its worktree",
         "RunCi": "CI", "PrepareReview": "preparing the review", "PrepareMerge": "preparing the merge",
         "LandMerge": "the merge", "Speculate": "the merge's speculative test", "CommitLeftovers": "committing its leftovers", "HandOff": "the hand-off",
         "RemoveWorktree": "removing a worktree", "CleanStale": "cleaning stale worktrees",
         "ReapLeftovers": "killing leftover processes", "AskUser": "asking the user"}
"""How the feed names each effect's step when it fails."""


class FlowRunner:
    """Applies inputs and carries out effects for one daemon.

    Args:
        host: the daemon. settings: the resolved settings. executors: effect class -> executor.
        backoff: the retry times of failed task starts (shared with the scheduling loop).
        sleep: injectable sleep for the scheduling loop (tests pass a fake).
    """

    def __init__(self, host: FlowHost, settings: Settings, executors: dict[type, Executor], *, backoff: Backoff,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, serial: bool = False) -> None:
        self.host = host
        self.settings = settings
        self.executors = executors
        self.backoff = backoff
        self.sleep = sleep
        self.live = Live()
        self.jobs: dict[asyncio.Task[Any], str] = {}
        """The effects running in the background: job -> its effect's class name."""
        self._busy: set[asyncio.Task[Any]] = set()
        self.watchers: list[Callable[[], None]] = []
        """Called after each input is applied: the flow's state (:attr:`live`, the world) changes only
        then (a scripted team's director looks at the turns in flight again, instead of polling)."""
        self.serial = serial
        """Carry out the :data:`SERIAL` effects one at a time, each after the last one's result was
        applied (a scripted team's run is then the same every time: two git jobs never race)."""
        self._pending: deque[Effect] = deque()
        self._serial_job: asyncio.Task[Any] | None = None
        self._queue: deque[Input] = deque()
        self._applying = False
        self._kick = asyncio.Event()
        self._quiet = asyncio.Event()
        self._quiet.set()

    # ------------------------------------------------------------------ inputs
    def submit(self, inp: Input) -> None:
        """Queue ``inp`` and apply the queue (one input at a time, each committed before its
        effects start). A rule that raises is logged with its input and skipped: its changes so far
        are committed with the next input (the core validates before it mutates)."""
        self._queue.append(inp)
        if self._applying:
            return
        self._applying = True
        self._quiet.clear()
        try:
            while self._queue:
                self._apply(self._queue.popleft())
                for watcher in self.watchers:
                    watcher()
        finally:
            self._applying = False
        self.kick()

    def _apply(self, inp: Input) -> None:
        try:
            effects = self.host.act(lambda core, now: step(Ctx(core, self.live, self.settings, now, self.backoff), inp))
        except Exception as exc:  # noqa: BLE001 - one input's bug must not stop the flow for everything else
            logger.exception("the flow's step failed on %r", inp)
            task = getattr(inp, "task", None)
            if task and not isinstance(inp, StepFailed):  # its task is blocked, naming the step
                message = getattr(exc, "message", None) or f"internal error: {type(exc).__name__}: {exc}"
                self._queue.append(StepFailed(f"the flow's {type(inp).__name__}", task, message))
            return
        for effect in effects:
            self.start(effect)

    # ------------------------------------------------------------------ effects
    def start(self, effect: Effect, *, its_turn: bool = False) -> None:
        """Carry out ``effect`` with its executor (at once, or in the background; a serial runner's
        :data:`SERIAL` effects wait for the ones before, unless ``its_turn``: it is the next)."""
        serial = self.serial and type(effect).__name__ in SERIAL
        if serial and not its_turn and (self._serial_job is not None or self._pending):
            self._pending.append(effect)
            self._quiet.clear()
            return
        try:
            result = self.executors[type(effect)](effect)
        except Exception as exc:  # noqa: BLE001 - see StepFailed
            self._failed(effect, exc)
            if serial:
                self._next_serial()
            return
        if inspect.isawaitable(result):
            name = type(effect).__name__
            job = self.host.spawn(self._finish(effect, result), f"{_JOB.get(name, name)} {_ref(effect)}")
            self.jobs[job] = name
            if name not in WAITING:
                self._busy.add(job)
                self._quiet.clear()
            if serial:
                self._serial_job = job
            job.add_done_callback(self._job_done)
            if inspect.iscoroutine(result):  # a job cancelled before it ran (a shutdown) never started its work
                work = result
                job.add_done_callback(lambda _: work.close())
        elif result is not None:
            self.submit(result)
        if serial and self._serial_job is None:
            self._next_serial()

    def _next_serial(self) -> None:
        if self._serial_job is None and self._pending:
            self.start(self._pending.popleft(), its_turn=True)

    def _job_done(self, job: asyncio.Task[Any]) -> None:
        self.jobs.pop(job, None)
        if job is self._serial_job:
            self._serial_job = None
            if not job.cancelled():  # (cancelled: the daemon stops; nothing more starts)
                self._next_serial()
        self._busy.discard(job)
        self._settle()

    def _settle(self) -> None:
        """Mark the runner quiet when nothing is left to apply or to carry out (but turns and
        waits for the user)."""
        if not self._busy and not self._queue and not self._pending and not self._applying and not self._kick.is_set():
            self._quiet.set()

    async def quiet(self) -> None:
        """Wait until the flow is quiet: no input to apply, no scheduling pass asked for, and no
        effect in flight but turns, questions to the user and worktree removals waiting to retry.
        (A scripted team acts only then, so its run is the same every time.)"""
        while True:
            await self._quiet.wait()
            await asyncio.sleep(0)  # (a job's done-callback and a kick run on the loop's next turn)
            if self._quiet.is_set():
                return

    def in_flight(self) -> list[str]:
        """The effects running in the background, by class name (``["RemoveWorktree", ...]``)."""
        return sorted(self.jobs.values())

    async def _finish(self, effect: Effect, work: Awaitable[Input | None]) -> None:
        try:
            result = await work
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - see StepFailed
            self._failed(effect, exc)
            return
        if result is not None:
            self.submit(result)

    async def perform(self, effect: Effect) -> Input | None:
        """Carry out ``effect`` now and wait for it (a tool call that waits for its outcome, such as
        the lead's ``request_merge``); its input is applied before this returns it."""
        result = self.executors[type(effect)](effect)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            self.submit(result)
        return result

    def _failed(self, effect: Effect, exc: BaseException) -> None:
        name = type(effect).__name__
        logger.error("%s failed", name, exc_info=exc)
        message = getattr(exc, "message", None) or f"internal error: {type(exc).__name__}: {exc}"
        self.submit(StepFailed(_WHAT.get(name, name), self._task_of(effect), message))

    def _task_of(self, effect: Effect) -> str | None:
        """The task an effect is about: its own, its decision's, or its worktree's."""
        if (task := getattr(effect, "task", None)) is not None:
            return str(task)
        world = self.host.core.world
        if (decision := world.decisions.get(getattr(effect, "decision", None) or "")) is not None:
            return decision.task
        record = world.records.get("worktree", {}).get(getattr(effect, "worktree", None) or "")
        return getattr(record, "task", None)

    # ------------------------------------------------------------------ scheduling
    def kick(self) -> None:
        """Ask for a scheduling pass."""
        self._kick.set()
        self._quiet.clear()

    async def schedule_loop(self) -> None:
        """Submit a :class:`~.model.Tick` whenever kicked, and when a failed start's backoff is due."""
        while True:
            self._kick.clear()  # before the pass: a kick during it (a new task ...) means another pass
            self.submit(Tick())
            self._kick.clear()  # (the pass's own kick)
            self._settle()
            due = self.backoff.next_due()
            await self._wait_kick(None if due is None else max(0.05, due - self.host.now()))

    async def _wait_kick(self, timeout: float | None) -> None:
        """Wait for a kick, or ``timeout`` seconds on the injected sleep (a fake clock in tests)."""
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(self._kick.wait())]
        if timeout is not None:
            waits.append(asyncio.ensure_future(self.sleep(timeout)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()


def _ref(effect: Effect) -> str:
    """A short name of what ``effect`` is about, for task names and logs."""
    for name in ("task", "agent", "decision", "worktree", "repo", "ref"):
        value = getattr(effect, name, None)
        if value:
            return str(value)
    return ""
