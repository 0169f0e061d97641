"""The sim's showcase states (``--showcase busy`` or ``late``): the team on the flow, fast-forwarded
to a hold point of its script and held there, for screenshots and the browser view's tests.

Until the hold point the sim answers every decision for the user with its first option (the
answer says ``by="showcase"``) and pauses for no time; the decisions the hold point leaves open
for the user are not answered, and the director does not wait for them. At the hold point (the
flow quiet, every turn in flight waiting for its cue or for the user) the
:class:`~.director.Director` grants no more cues: nothing more happens until the user acts, and
the feed says ``Showcase: holding the busy state`` (once per profile). A restarted daemon replays
its resumed turns to the same hold point (the scripts are idempotent: what was done is not done
again) and holds there; one started with another hold point goes on to that one.

- ``busy``: t1 merged; t5's merge decision and t2's product question open.
- ``late``: t1 .. t5 merged, t7 blocked on the user; t6's worker hit an API overload.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ...errors import ForemanError
from .director import Director

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HoldPoint:
    """One showcase state.

    Attributes:
        name: ``busy`` or ``late``.
        keep: ``(decision kind, plan id)`` of the decisions left open for the user (all open: reached).
        error_on: the plan id whose worker shows ``error`` at the hold (its turn's API overload).
    """

    name: str
    keep: tuple[tuple[str, str], ...] = ()
    error_on: str | None = None


HOLDS = {
    "busy": HoldPoint("busy", keep=(("merge", "t5"), ("question", "t2"))),
    "late": HoldPoint("late", error_on="t6"),
}
"""The hold points, by the ``--showcase`` value."""


def hold_text(point: str) -> str:
    """The feed line of a reached hold point."""
    return f"Showcase: holding the {point} state"


class Showcase:
    """Fast-forwards the sim team to a hold point and holds it there (see the module doc).

    Args:
        point: the ``--showcase`` value (``busy`` or ``late``).
        director: the team's director (held at the hold point).
        pid: the plan id (``t1`` .. ``t9``) of a task id, None for another task.
    """

    def __init__(self, point: str, director: Director, pid: Callable[[str | None], str | None]) -> None:
        self.point = HOLDS[point]
        self.director = director
        self.pid = pid
        self.d: Any = None
        self._running: Callable[[], Iterable[str]] = lambda: ()

    def attach(self, daemon: Any, running: Callable[[], Iterable[str]]) -> None:
        """Connect to the daemon and to the flow's turns in flight (``running()`` names their agents)."""
        self.d, self._running = daemon, running
        self.director.hold_when(self._reached, self._hold)

    # ------------------------------------------------------------------ answering for the user
    def kept(self, decision: Any) -> bool:
        """True for a decision the hold point leaves open for the user."""
        return (decision.kind, self.pid(decision.task)) in self.point.keep

    def user_waits(self) -> bool:
        """True while a decision the showcase answers is open (the director waits for its answer)."""
        return any(d.status == "open" and not self.kept(d) for d in self.d.core.world.decisions.values())

    def on_effect(self, effect: Any) -> None:
        """A decision opened (``notify``): answer it for the user, unless the hold point keeps it."""
        if effect.kind == "notify":
            asyncio.get_running_loop().call_soon(self.answer, effect.ref)

    def answer_open(self) -> None:
        """Answer the decisions left open by an earlier daemon (killed before it answered them)."""
        for d in sorted(self.d.core.world.decisions.values(), key=lambda d: int(d.id[1:]) if d.id[1:].isdigit() else 0):
            self.answer(d.id)

    def answer(self, decision_id: str) -> None:
        """Answer ``decision_id`` with its first option ``by="showcase"`` while fast-forwarding."""
        d = self.d.core.world.decisions.get(decision_id)
        if self.director.held or d is None or d.status != "open" or self.kept(d):
            return
        try:
            self.d.act(lambda c, now: c.answer_decision(decision_id, 0, now, by="showcase"))
        except ForemanError as exc:  # (withdrawn meanwhile)
            logger.warning("showcase: answering %s failed: %s", decision_id, exc)

    # ------------------------------------------------------------------ the hold
    def _reached(self, waiting: set[str]) -> bool:
        """The hold point's state is there and complete: every turn in flight waits for its cue or
        for the user's answer to its question (none is between two actions)."""
        world = self.d.core.world
        open_ = [d for d in world.decisions.values() if d.status == "open"]
        if self.point.keep and not all(any((d.kind, self.pid(d.task)) == k for d in open_) for k in self.point.keep):
            return False
        if self.point.error_on is not None:
            task = next((t for t in world.tasks.values() if self.pid(t.id) == self.point.error_on), None)
            agent = world.agents.get(task.assignee or "") if task is not None else None
            if agent is None or agent.state != "error":
                return False
        asking = {d.asked_by for d in open_}
        return all(a in waiting or a in asking for a in self._running())

    def _hold(self) -> None:
        """Say once per profile that the state is held, and remember it for a restart."""
        name = self.point.name
        logger.info("showcase: holding the %s state", name)

        def held(c: Any, now: float) -> None:
            sim = dict(c.world.meta.get("sim", {}))
            if sim.get("held") != name:
                c.feed(hold_text(name), now)
                c.set_meta("sim", {**sim, "held": name})

        self.d.act(held)


__all__ = ["HOLDS", "HoldPoint", "Showcase", "hold_text"]
