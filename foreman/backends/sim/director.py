"""The sim team's director: one scripted action at a time, in a fixed order, when the flow is quiet.

The sim's agents run as scripted turns through the real flow (:mod:`.scripts`); several of their
turns are in flight at once, as a model team's are. Left alone, which script acts first would
depend on how fast each one's git commands return, and so would the order of the decisions the
user sees. The director removes that race: a script asks for its cue before each action
(:meth:`Director.act`) with a rank, and the director grants cues one at a time, only when

- the flow is quiet (no input to apply, no effect in flight but turns and waits for the user:
  :meth:`foreman.flow.runner.FlowRunner.quiet`), so every consequence of the last action (CI, a
  review, a merge decision) has happened first; and
- every turn in flight is waiting for its cue, so the lowest rank among them is known (an agent
  waiting for the user's answer is not: it acts on the answer first);
- no decision waits for the user: the team waits for the answer, as the old scripted demo did, so
  when an answer comes never races with what the team does;

and then to the lowest rank. The order of actions is therefore a function of the flow's state, not
of timing.

A hold point (``--showcase``, :meth:`Director.hold_when`) stops the cues for good: once its
predicate holds when the next cue would be granted (the flow quiet), no cue is granted again and
the turns in flight wait where they are, so the state stays as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

POLL = 0.01
"""Seconds between looks at the turns in flight when nothing said they changed (:meth:`Director.poke`
says so: the sim's team calls it after each input the flow applies)."""


class Director:
    """Grants scripted agents their cues (see the module doc).

    Args:
        (none: :meth:`attach` connects it to the flow once the flow exists).
    """

    def __init__(self) -> None:
        self._quiet: Callable[[], Awaitable[None]] | None = None
        self._running: Callable[[], Iterable[str]] = lambda: ()
        self._user_waits: Callable[[], bool] = lambda: False
        self._waiting: dict[str, Any] = {}
        self._holder: str | None = None
        self._changed = asyncio.Event()
        self._hold_at: Callable[[set[str]], bool] = lambda waiting: False
        self._on_hold: Callable[[], None] = lambda: None
        self.held = False
        """True once a hold point was reached: no more cues."""
        self.cues: list[tuple[str, Any]] = []
        """Every cue granted, ``(agent, rank)``, in order (tests read it)."""

    def attach(self, quiet: Callable[[], Awaitable[None]], running: Callable[[], Iterable[str]],
               user_waits: Callable[[], bool]) -> None:
        """Connect the director to the flow: ``quiet()`` waits until the flow is quiet, ``running()``
        names the agents with a turn in flight, ``user_waits()`` is True while a decision is open."""
        self._quiet, self._running, self._user_waits = quiet, running, user_waits

    def hold_when(self, reached: Callable[[set[str]], bool], on_hold: Callable[[], None]) -> None:
        """Stop granting cues for good once ``reached(waiting)`` is True when a cue would be granted
        (the flow quiet; ``waiting``: the agents waiting for a cue); ``on_hold()`` is called once then."""
        self._hold_at, self._on_hold = reached, on_hold

    @contextlib.asynccontextmanager
    async def act(self, agent: str, rank: Any) -> AsyncIterator[None]:
        """Hold ``agent``'s cue for the body: wait until it is granted (lowest ``rank`` first, see
        the module doc), run the body, release. Ranks must be comparable with each other."""
        self._waiting[agent] = rank
        self.poke()
        try:
            while True:
                if self._holder is None and self._quiet is not None and self._lowest() == agent:
                    await self._quiet()
                    if self._grant(agent):  # (at once after the quiet wait: still quiet)
                        break
                await self._wait()
        except BaseException:
            self._waiting.pop(agent, None)
            self.poke()
            raise
        try:
            yield
        finally:
            self._holder = None
            self.poke()

    def _lowest(self) -> str | None:
        if not self._waiting:
            return None
        return min(self._waiting, key=lambda a: (self._waiting[a], a))

    def _grant(self, agent: str) -> bool:
        """Give ``agent`` the cue if it is its turn now (the flow already quiet), unless the hold point
        is reached."""
        if self.held or self._holder is not None or self._lowest() != agent:
            return False
        if self._hold_at(set(self._waiting)):
            self.held = True
            self._on_hold()
            return False
        if self._user_waits():
            return False
        if any(a not in self._waiting for a in self._running()):
            return False
        self._holder = agent
        rank = self._waiting.pop(agent)
        self.cues.append((agent, rank))
        return True

    def poke(self) -> None:
        """Look again at once: the turns in flight (or the decisions open) may have changed."""
        self._changed.set()

    async def _wait(self) -> None:
        """Wait for a change, or :data:`POLL` seconds. (Not ``asyncio.wait_for``: on Python 3.11 it
        can swallow a cancellation that comes as its timeout fires, and an aborted turn would then
        wait for its cue for ever.)"""
        self._changed.clear()
        waiter = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait({waiter}, timeout=POLL)
        finally:
            waiter.cancel()
