"""The budget gate on a real daemon: a reached cap opens one decision, turns wait on it,
Continue raises the cap, Stop blocks the tasks under it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import protocol as p
from foreman.budget import BudgetGate
from foreman.config import resolve
from foreman.daemon import Daemon
from tests.conductor.test_daemon_edges import NoTeam

T0 = 1_767_225_600.0


def spend(daemon: Daemon, usd: float, task: str | None = None, goal: str | None = None) -> None:
    daemon.act(lambda c, now: c.record_usage(p.Usage(cost_usd=usd, turns=1), now, agent="kit", task=task, goal=goal))


@asynccontextmanager
async def gated(tmp_path: Path, **options: Any) -> AsyncIterator[tuple[Daemon, BudgetGate]]:
    """A started daemon (sim settings plus ``options``, no team, a fixed clock) and its gate."""
    settings = resolve({"home": str(tmp_path / "home"), "port": 0, "backend": "sim", **options}, env={})
    daemon = Daemon(settings, backend=NoTeam(), clock=lambda: T0)
    await daemon.start()
    try:
        yield daemon, BudgetGate(daemon, settings)
    finally:
        await daemon.stop()


async def open_question(daemon: Daemon) -> p.Decision:
    for _ in range(200):
        open_ = [d for d in daemon.core.world.decisions.values() if d.status == "open"]
        if open_:
            return open_[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no decision opened")


async def test_goal_cap_continue_then_stop(tmp_path: Path) -> None:
    async with gated(tmp_path, budget_goal="5") as (daemon, gate):
        g = daemon.act(lambda c, now: c.submit_goal("tags", now))
        t1 = daemon.act(lambda c, now: c.create_task("a", now, goal=g.id))
        t2 = daemon.act(lambda c, now: c.create_task("b", now, goal=g.id))
        spend(daemon, 4.8, task=t1.id)
        assert await gate.admit("kit", t1.id, None)  # under the cap: no decision
        assert not daemon.core.world.decisions
        spend(daemon, 0.3, task=t1.id)
        first = asyncio.ensure_future(gate.admit("kit", t1.id, None))
        second = asyncio.ensure_future(gate.admit("kit", None, g.id))  # a lead turn for the goal
        d = await open_question(daemon)
        assert d.prompt == "Goal g1 has used $5.10 of $5.00: continue with $5.00 more, or stop here?"
        assert d.options == ["Continue with $5.00 more", "Stop here"] and d.goal == g.id and d.asked_by == "foreman"
        await asyncio.sleep(0.05)
        assert not first.done() and not second.done()  # both wait on the one decision
        assert len(daemon.core.world.decisions) == 1
        assert daemon.core.agent("kit").state == "waiting_user"
        daemon.act(lambda c, now: c.answer_decision(d.id, 0, now))
        assert await first and await second
        assert daemon.core.goal(g.id).budget_usd == 10.1
        # past the raised cap: Stop blocks the unfinished tasks of the goal
        daemon.act(lambda c, now: c.start_task(t1.id, "kit", now))
        spend(daemon, 5.0, task=t1.id)
        third = asyncio.ensure_future(gate.admit("kit", t1.id, None))
        d2 = await open_question(daemon)
        daemon.act(lambda c, now: c.answer_decision(d2.id, 1, now))
        assert await third is False
        for tid in (t1.id, t2.id):
            t = daemon.core.task(tid)
            assert t.status == "blocked" and t.blocked_reason.startswith("budget: goal g1 used $10.10 of $10.10")


async def test_task_and_day_caps(tmp_path: Path) -> None:
    async with gated(tmp_path, budget_task="1", budget_day="3") as (daemon, gate):
        t = daemon.act(lambda c, now: c.create_task("a", now))
        spend(daemon, 1.0, task=t.id)
        waiting = asyncio.ensure_future(gate.admit("kit", t.id, None))
        d = await open_question(daemon)
        assert d.prompt.startswith("Task t1 has used $1.00 of $1.00") and d.task == t.id
        daemon.act(lambda c, now: c.answer_decision(d.id, 0, now))
        assert await waiting and daemon.core.task(t.id).budget_usd == 2.0
        spend(daemon, 2.0)  # no task: only the day
        waiting = asyncio.ensure_future(gate.admit("kit", None, None))
        d = await open_question(daemon)
        assert d.prompt == "Today (2026-01-01 UTC) the team has used $3.00 of $3.00: continue with $3.00 more, or stop here?"
        daemon.act(lambda c, now: c.answer_decision(d.id, 0, now))
        assert await waiting
        assert daemon.core.world.meta["budget_day_caps"] == {"2026-01-01": 6.0}
        assert gate.hit(None, None) is None
        # a withdrawn decision does not start the turn
        spend(daemon, 3.5)
        waiting = asyncio.ensure_future(gate.admit("kit", None, None))
        d = await open_question(daemon)
        daemon.act(lambda c, now: c.cancel_decision(d.id, now))
        assert await waiting is False


async def test_a_budget_decision_is_never_auto_answered(tmp_path: Path) -> None:
    async with gated(tmp_path, budget_day="1", auto_answer=["question"]) as (daemon, gate):
        spend(daemon, 1.0)
        waiting = asyncio.ensure_future(gate.admit("kit", None, None))
        d = await open_question(daemon)
        other = daemon.act(lambda c, now: c.open_decision("question", "Tabs?", ["Yes", "No"], now, asked_by="kit"))
        answered = await asyncio.wait_for(daemon.wait_decision(other.id), 5)
        assert answered.answer is not None and answered.answer.by == "auto"
        await asyncio.sleep(0.05)
        assert daemon.core.decision(d.id).status == "open" and not waiting.done()
        daemon.act(lambda c, now: c.answer_decision(d.id, 1, now))
        assert await waiting is False


async def test_a_tiny_cap_reads_as_its_amount_not_as_zero(tmp_path: Path) -> None:
    """A cap of a fraction of a cent (a cheap local model's prices) keeps its significant digits
    in the decision, so Continue is not offered as "$0.00 more"."""
    async with gated(tmp_path, budget_goal="0.0005") as (daemon, gate):
        g = daemon.act(lambda c, now: c.submit_goal("tags", now))
        t1 = daemon.act(lambda c, now: c.create_task("a", now, goal=g.id))
        spend(daemon, 0.00052, task=t1.id)
        waiting = asyncio.ensure_future(gate.admit("kit", t1.id, None))
        d = await open_question(daemon)
        assert d.prompt == "Goal g1 has used $0.00052 of $0.0005: continue with $0.0005 more, or stop here?"
        assert d.options[0] == "Continue with $0.0005 more"
        daemon.act(lambda c, now: c.answer_decision(d.id, 1, now))
        assert await waiting is False
