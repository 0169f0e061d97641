"""The sim backend: a deterministic scripted team doing real git work.

The scenario (:mod:`.scenario`) is one coroutine of beats. Everything it does to the
repository is real: worktrees, commits, test runs, merge commits. Its progress is persisted
per step in the store (meta ``sim``), so a restarted daemon resumes where it was: a step whose
marker is stored is not done again, and the git work of a step is idempotent, so a step
interrupted between its git work and its marker is simply redone.
"""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path
from typing import Any, Callable

from ...config import Settings
from ...config_team import team_of
from ...core.core import Core
from ...core.roster import title
from ...core.world import Effect
from ...errors import ForemanError
from ...flow.team import follow_team
from ...sandbox import from_settings
from .demo_repo import create_demo_repo
from .plan import SECOND, idle_extras
from .scenario import Scenario
from .scenario_base import PLAN_MARK
from .team import DEMO_GOAL, LEAD, WORKERS, demo_repo_path, ensure_identity

logger = logging.getLogger(__name__)

TITLES = {"marlow": "Marlow", "juniper": "Juniper", "kit": "Kit", "wren": "Wren", "rowan": "Rowan", "tove": "Tove"}


class SimBackend:
    """Runs the sim scenario against the daemon.

    Args:
        settings: ``speed`` (time multiplier), ``seed``, ``autostart``, ``ambient``,
            ``showcase`` (``busy``/``late``: fast-forward to a hold point and stay there).
    """

    name = "sim"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.d: Any = None
        self.repo_id = ""
        self.repo_path = Path()
        self.wake = asyncio.Event()
        self._director: asyncio.Task[Any] | None = None
        self.rng = random.Random(settings.seed)
        self.finished = asyncio.Event()

        self.sandbox = from_settings(settings)
        """The OS sandbox the sim's CI runs in, like the flow's CI (None: off or unavailable)."""

    def status(self) -> tuple[str, str]:
        """The sim needs no authentication."""
        return ("none", "")

    # ------------------------------------------------------------------ lifecycle
    async def start(self, daemon: Any) -> None:
        """Create the team and the demo repository; start the scenario (or wait for a goal)."""
        self.d = daemon
        daemon.act(lambda c, now: c.add_agent(LEAD, now, role="lead", title=TITLES[LEAD], backend="sim"))
        for name in WORKERS:
            daemon.act(lambda c, now, name=name: c.add_agent(name, now, title=TITLES[name], backend="sim"))
        self._add_extra_workers()
        path = demo_repo_path(self.settings)
        fresh = self.settings.reset or not (path / ".git").exists()
        if fresh:
            await asyncio.to_thread(create_demo_repo, path, force=True)
        await ensure_identity(path)
        repo = await daemon.add_repo(str(path))
        self.repo_id, self.repo_path = repo.id, Path(repo.path)
        state = self.state()
        if state.get("goal") is None and self.settings.autostart and not state.get("finished"):
            goal = daemon.act(lambda c, now: c.submit_goal(DEMO_GOAL, now, repo=self.repo_id))
            self.set_state(goal=goal.id)
        if self.state().get("goal") is not None and not self.state().get("finished"):
            self._launch()

    def _add_extra_workers(self) -> None:
        """Add the workers ``--workers N`` asks for beyond the scripted five (generated names, see
        :mod:`foreman.core.roster`), and say once what they do. The lead's plan (beat 0,
        :mod:`.plan`) deals the script's second tasks to them; those it gives none, and those who
        join after the plan was made, wait in the lounge (on shift: they chat between beats and
        answer messages). ``--workers`` up to 5 changes nothing here: the script always uses all
        five. Extras of an earlier start that this start's team leaves out go off shift (a feed
        line says so) and come back when a later start has them again."""
        extra = [n for n in team_of(self.settings).workers if n not in WORKERS]
        for name in extra:
            self.d.act(lambda c, now, name=name: c.add_agent(name, now, title=title(name), backend="sim"))
        follow_team(self.d, extra, lambda a: a.name not in WORKERS, name_of=title)
        said = set(self.state().get("extras_said", []))
        if not extra or set(extra) <= said:
            return
        plan = self.marks().get(PLAN_MARK)
        if plan is None:  # the lead has not planned yet: say what its plan will do
            n, given = len(extra), min(len(extra), len(SECOND))
            text = (f"The sim's script has nine tasks for Juniper, Kit, Wren, Rowan, Tove and the {n} other "
                    f"worker{'' if n == 1 else 's'} ({', '.join(title(w) for w in extra)}): the lead's plan gives "
                    + ("each of them tasks" if given == n else
                       f"{given} of them tasks, and the other {n - given} wait in the lounge"))
        else:
            late = [w for w in idle_extras(plan, extra) if w not in said]
            if not late:
                self.set_state(extras_said=sorted(said | set(extra)))
                return
            text = (f"{', '.join(title(w) for w in late)} joined after the lead's plan was made (for the team it had "
                    f"then): {'it waits' if len(late) == 1 else 'they wait'} in the lounge")
        self.d.act(lambda c, now: c.feed(text, now, kind="agent"))
        self.set_state(extras_said=sorted(said | set(extra)))

    def _launch(self) -> None:
        if self._director is None or self._director.done():
            self._director = self.d.spawn(self._run(), "sim-scenario")

    async def _run(self) -> None:
        try:
            await Scenario(self).run()
        except asyncio.CancelledError:
            raise
        except ForemanError as exc:
            logger.error("sim scenario stopped: %s", exc)
            text = f"The sim scenario stopped: {exc.message}"
            self.d.act(lambda c, now: c.feed(text, now, kind="error"))

    def on_effect(self, effect: Effect) -> None:
        """Start the scenario on the first goal (without ``--autostart``); wake waits on steering."""
        if effect.kind == "goal" and self.state().get("goal") is None and self.d is not None:
            self.set_state(goal=effect.ref)
            self._launch()
        elif effect.kind == "goal" and self.d is not None and effect.ref != self.state().get("goal"):
            asyncio.get_running_loop().call_soon(self._decline_goal, effect.ref)
        if effect.kind == "deliver" and self.d is not None and self.settings.ambient:
            asyncio.get_running_loop().call_soon(self._answer_messages, effect.ref)
        self.wake.set()

    def _decline_goal(self, goal_id: str) -> None:
        """A goal after the scenario's own: the sim plans nothing else, so it says so and cancels
        the goal (it would otherwise wait in ``planning`` for ever)."""
        d = self.d
        goal = d.core.world.goals.get(goal_id)
        if goal is None or goal.status != "planning":
            return
        text = (f"The sim plays one scripted scenario (goal {self.state().get('goal')}) and cannot plan {goal_id}: "
                "start the Foreman with --backend claude or --backend local for your own goals, or with --reset "
                "to play the scenario again.")
        d.act(lambda c, now: c.feed(text, now, kind="error"))
        d.act(lambda c, now: c.set_goal_status(goal_id, "cancelled", now))

    def _answer_messages(self, agent: str) -> None:
        """A sim agent reads its messages and acknowledges the user's (off-shift agents wait).

        Part of the ambient life of the team: ``--no-ambient`` turns it off."""
        a = self.d.core.world.agents.get(agent)
        if a is None or not a.active or a.paused or not self.d.core.peek_unread(agent):
            return
        msgs = self.d.act(lambda c, now: c.take_unread(agent))
        for m in msgs:
            if m.sender == "user":
                reply = f"Got it, {self.settings.user_name}: I'll keep \"{m.text[:80]}\" in mind."
                self.d.act(lambda c, now: c.send_message(agent, "user", reply, now))

    async def stop(self) -> None:
        """Cancel the scenario (its progress is already durable) and wait for it."""
        if self._director is not None:
            self._director.cancel()
            try:
                await self._director
            except (asyncio.CancelledError, Exception):
                pass

    # ------------------------------------------------------------------ durable scenario state
    def state(self) -> dict[str, Any]:
        """The scenario's persisted state: ``goal``, ``marks`` (step -> result), ``finished``."""
        return dict(self.d.core.world.meta.get("sim", {})) if self.d else {}

    def set_state(self, **update: Any) -> None:
        """Persist scenario state keys (one commit)."""
        new = {**self.state(), **update}
        self.d.act(lambda c, now: c.set_meta("sim", new))

    def marks(self) -> dict[str, Any]:
        return dict(self.state().get("marks", {}))

    def once(self, key: str, fn: Callable[[Core, float], Any]) -> Any:
        """Run ``fn(core, now)`` once across restarts: its changes and the step marker land in
        one commit; a stored marker returns the stored result instead."""
        marks = self.marks()
        if key in marks:
            return marks[key]

        def step(c: Core, now: float) -> Any:
            result = fn(c, now)
            value = result if isinstance(result, (str, int, float, bool, type(None), list, dict)) else getattr(result, "id", True)
            state = dict(c.world.meta.get("sim", {}))
            state["marks"] = {**state.get("marks", {}), key: value}
            c.set_meta("sim", state)
            return value

        return self.d.act(step)

