"""What the daemon says on its terminal: a decision waits, a goal is finished, a summary at stop.

The daemon's terminal is its log (``foreman start`` sends the log to stderr and to
``<profile>/foreman.log``; :mod:`foreman.logs`). A user who started the daemon and looks at that
terminal learns from it when they are needed (``1 decision waiting: run `foreman tui```, said
again only when the number of open decisions rises), when a goal is done, and at stop what the
run did. :class:`Announcer` also decides when ``--exit-on-goal-done`` stops the daemon: once
every goal is finished (done or cancelled) and there is at least one.
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Iterable
from typing import Any

from protocol import Decision, Goal

from . import runtime
from .budget import is_budget_decision
from .config import Settings
from .core.rules import merge_choice
from .core.world import World

logger = logging.getLogger(__name__)

FINISHED = ("done", "cancelled")
"""Goal statuses that end a goal (``--exit-on-goal-done`` waits for every goal to reach one)."""


def auto_answerable(d: Decision, kinds: Iterable[str]) -> bool:
    """True when the daemon's ``--auto-answer`` answers ``d`` itself: its kind is listed, and it
    is neither a merge with a critical risk finding nor a budget cap (both stay the user's call)."""
    if d.kind not in kinds or is_budget_decision(d):
        return False
    return not (d.kind == "merge" and any(r.severity == "critical" for r in d.risks))


def tui_command(settings: Settings, port: int | None = None) -> str:
    """The ``foreman tui`` command line that reaches this daemon from another terminal: with
    ``--port`` when given, ``--home`` unless the home is the default one, and ``--profile`` unless
    this daemon is the one ``<home>/foreman.json`` names (the client's default)."""
    words = ["foreman", "tui"] + (["--port", str(port)] if port is not None else [])
    if settings.sources.get("home", "default") != "default":
        words += ["--home", str(settings.home)]
    first = runtime.read_run_file(settings.home / runtime.RUN_FILE)
    if first is None or first.get("pid") != os.getpid():
        words += ["--profile", settings.profile]
    return shlex.join(words)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class Announcer:
    """Says what the daemon is doing, from the changes it commits.

    Args:
        settings: the daemon's settings (``auto_answer``, ``exit_on_goal_done``, the home).
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.open: set[str] = set()
        """The open decisions that wait for the user (not the daemon's to auto-answer)."""
        self.waiting = 0
        """How many of them there were when last counted (a line is said when there are more)."""
        self.goals: dict[str, str] = {}
        """Each goal's status as last seen (a goal's line is said when it changes to finished)."""
        self.finished: str | None = None
        """Set by ``--exit-on-goal-done`` when it stops the daemon: ``done`` (every goal done) or
        ``cancelled`` (every goal finished, one at least cancelled)."""

    def load(self, world: World) -> None:
        """Take the state of a loaded world: a restart does not repeat its goals' lines, and says
        at its start what decisions wait (:meth:`say_waiting`)."""
        self.goals = {g.id: g.status for g in world.goals.values()}
        self.open = {d.id for d in world.decisions.values() if self._waits(d)}
        self.waiting = 0

    def _waits(self, d: Decision) -> bool:
        return d.status == "open" and not auto_answerable(d, self.settings.auto_answer)

    def committed(self, changes: Iterable[Any], world: World) -> bool:
        """Say what one commit changed; return True when ``--exit-on-goal-done`` should stop now."""
        goals = False
        for ch in changes:
            if ch.op == "upsert" and ch.kind == "decision":
                (self.open.add if self._waits(ch.value) else self.open.discard)(ch.value.id)
            elif ch.op == "upsert" and ch.kind == "goal":
                goals = True
                self._goal(ch.value, world)
        self.say_waiting()
        return goals and self.should_exit(world)

    def _goal(self, goal: Goal, world: World) -> None:
        before, self.goals[goal.id] = self.goals.get(goal.id), goal.status
        if goal.status in FINISHED and before != goal.status:
            tasks = [t for t in world.tasks.values() if t.goal == goal.id]
            done = sum(1 for t in tasks if t.status == "done")
            logger.info("goal %s %s: %s (%d of %s done)", goal.id, goal.status, goal.text, done, _plural(len(tasks), "task"))

    def say_waiting(self) -> None:
        """Say how many decisions wait for the user when there are more than when last counted."""
        if len(self.open) > self.waiting:
            logger.info("%s waiting: run `%s`", _plural(len(self.open), "decision"), tui_command(self.settings))
        self.waiting = len(self.open)

    def should_exit(self, world: World) -> bool:
        """True once ``--exit-on-goal-done`` is on, there is a goal and every goal is finished
        (:attr:`finished` then says how); said once, on the daemon's terminal."""
        goals = list(world.goals.values())
        if not self.settings.exit_on_goal_done or self.finished is not None or not goals:
            return False
        if any(g.status not in FINISHED for g in goals):
            return False
        self.finished = "done" if all(g.status == "done" for g in goals) else "cancelled"
        logger.info("every goal is finished (%s): stopping (--exit-on-goal-done)",
                    "done" if self.finished == "done" else "one at least cancelled")
        return True

    def summary(self, world: World) -> None:
        """Say at stop what the state holds: goals, tasks, merges and decisions (one line)."""
        goals, tasks, decisions = world.goals.values(), world.tasks.values(), world.decisions.values()
        done = {t.id for t in tasks if t.status == "done"}
        merged = {d.task for d in decisions if d.kind == "merge" and d.status == "answered" and d.answer is not None
                  and merge_choice(d.answer.label) == "merge" and d.task in done}
        answered = [d for d in decisions if d.status == "answered"]
        auto = sum(1 for d in answered if d.answer is not None and d.answer.by == "auto")
        open_goals = sum(1 for g in goals if g.status not in FINISHED)
        cancelled = sum(1 for g in goals if g.status == "cancelled")
        logger.info(
            "summary: goals %d done, %d open%s · tasks %d of %d done · %s · %s answered (%d auto), %d open",
            sum(1 for g in goals if g.status == "done"), open_goals, f", {cancelled} cancelled" if cancelled else "",
            len(done), len(tasks), _plural(len(merged), "merge"), _plural(len(answered), "decision"), auto,
            sum(1 for d in decisions if d.status == "open"))
