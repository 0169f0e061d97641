"""Issue 15 item 1, local part: a turn's token usage, summed over every model call of the turn from
the streams' ``usage`` chunks, lands on the agent, task and goal through the real daemon and
LocalRunner, with the model behind the scripted HTTP server; a price per million tokens in the
profile gives a cost, no price gives 0, and a server that rejects ``stream_options`` (so reports
no usage) records turns without token figures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from foreman.flow.assemble import make_backend
from foreman.daemon import Daemon

from .fakeserver import FakeOpenAI, system_of
from .helpers import demo_daemon
from .test_flow_local import make_responder, wait_for

pytestmark = pytest.mark.timeout(120)


async def _run_to_merge(tmp_path: Path, server: FakeOpenAI, home: Path, profile: dict) -> Daemon:
    """Run the demo goal to its merge decision through a real daemon; return the stopped daemon."""
    assert home == tmp_path / "home"
    async with demo_daemon(tmp_path, server.url, profile=profile) as (daemon, _repo):
        world = daemon.core.world
        await wait_for(lambda: any(d.kind == "merge" and d.status == "open" for d in world.decisions.values()))
        # the review turn's usage is recorded when its turn ends, just after the decision opens
        await wait_for(lambda: world.agents["marlow"].usage.turns == 2)
    return daemon


def _sums(server: FakeOpenAI, lead: bool | None = None) -> tuple[int, int]:
    picked = [u for req, u in server.usage_sent if lead is None or ("Marlow" in system_of(req)) == lead]
    return sum(u["prompt_tokens"] for u in picked), sum(u["completion_tokens"] for u in picked)


async def test_usage_from_the_server_lands_on_agent_task_and_goal_with_a_price(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    home = tmp_path / "home"
    with FakeOpenAI(make_responder("text", {})) as server:
        daemon = await _run_to_merge(tmp_path, server, home, {"priceInPerMtok": 2.0, "priceOutPerMtok": 10.0})
        assert all(req.get("stream_options") == {"include_usage": True} for req in server.requests)
        world = daemon.core.world
        lead_in, lead_out = _sums(server, lead=True)
        work_in, work_out = _sums(server, lead=False)
        assert work_in == 400 and lead_in == 200  # 4 worker calls in one turn, plan + review calls
        juniper, marlow = world.agents["juniper"].usage, world.agents["marlow"].usage
        assert (juniper.turns, juniper.input_tokens, juniper.output_tokens) == (1, work_in, work_out)
        assert (marlow.turns, marlow.input_tokens, marlow.output_tokens) == (2, lead_in, lead_out)
        price = lambda i, o: (i * 2.0 + o * 10.0) / 1_000_000  # noqa: E731
        assert juniper.cost_usd == pytest.approx(price(work_in, work_out)) and juniper.cost_usd > 0
        goal = next(iter(world.goals.values())).usage
        assert (goal.turns, goal.input_tokens, goal.output_tokens) == (3, work_in + lead_in, work_out + lead_out)
        assert goal.cost_usd == pytest.approx(price(work_in + lead_in, work_out + lead_out))
        # the task holds the worker's turn and the lead's review, not the plan
        plan_in, plan_out = _sums(FakeOpenAIView(server.usage_sent[:1]))
        task = world.tasks["t1"].usage
        assert (task.turns, task.input_tokens, task.output_tokens) == (2, work_in + lead_in - plan_in,
                                                                      work_out + lead_out - plan_out)
        # durable: the store keeps the totals across a restart (the server still up for the preflight)
        again = Daemon(daemon.settings, backend=make_backend(daemon.settings))
        await again.start()
        try:
            assert again.core.world.agents["juniper"].usage.input_tokens == work_in
            assert again.core.world.tasks["t1"].usage.cost_usd == pytest.approx(task.cost_usd)
        finally:
            await again.stop()


class FakeOpenAIView:
    """Just the ``usage_sent`` of a server, sliced (the plan is the first call)."""

    def __init__(self, usage_sent: list) -> None:
        self.usage_sent = usage_sent


async def test_no_price_costs_zero_and_no_usage_reported_means_no_token_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    with FakeOpenAI(make_responder("text", {})) as server:
        daemon = await _run_to_merge(tmp_path / "a", server, tmp_path / "a" / "home", {})
    juniper = daemon.core.world.agents["juniper"].usage
    assert juniper.input_tokens == 400 and juniper.cost_usd == 0
    with FakeOpenAI(make_responder("text", {}), reject_stream_options=True) as server:
        daemon = await _run_to_merge(tmp_path / "b", server, tmp_path / "b" / "home", {"priceInPerMtok": 2.0})
    assert not server.usage_sent
    juniper = daemon.core.world.agents["juniper"].usage
    assert juniper.turns == 1 and juniper.input_tokens == 0 and juniper.cost_usd == 0
