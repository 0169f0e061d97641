"""A turn aborted by pause or stop keeps the usage its runner reported before the abort (the
``turn_cancelled`` hook): it lands on the agent, the task, the goal and the status totals, over
the protocol, like a finished turn's. A runner that hands nothing over still counts the turn."""

from __future__ import annotations

import asyncio

import pytest

from foreman.backends.turns import TurnResult

from .harness import Rig, Turn, wait_for

SPENT = TurnResult(ok=False, aborted=True, error="the turn was aborted", input_tokens=1200, output_tokens=300,
                   cache_read_tokens=50, cost_usd=0.0042)


async def spend_then_block(turn: Turn) -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        turn.tools.turn_cancelled(SPENT)  # what a real runner hands over before re-raising
        raise


@pytest.mark.parametrize("intent", ["agent.pause", "agent.stop"])
async def test_an_aborted_turn_keeps_the_usage_it_reported(rig: Rig, intent: str) -> None:
    rig.puppet.on(("kit", "work"), spend_then_block)
    client = await rig.start()
    t1 = rig.task("Tidy notes", assignee="kit")
    first = await rig.turn("kit")
    assert rig.world.agents["kit"].usage.turns == 0
    await client.ok({"type": intent, "agent": "kit"})
    await wait_for(lambda: first.cancelled, what="the aborted turn")
    kit = await wait_for(lambda: (a := rig.world.agents["kit"]).usage.turns and a, what="kit's usage")
    assert (kit.usage.input_tokens, kit.usage.output_tokens, kit.usage.cache_read_tokens) == (1200, 300, 50)
    assert kit.usage.cost_usd == pytest.approx(0.0042) and kit.usage.turns == 1 and kit.usage.wall_seconds > 0
    task = rig.world.tasks[t1]
    assert task.usage.input_tokens == 1200 and task.usage.cost_usd == pytest.approx(0.0042)
    # the clients see it: the task as the client mirrors it and the status totals
    await wait_for(lambda: client.tasks[t1]["usage"]["inputTokens"] == 1200, what="the task upsert")
    status = await wait_for(lambda: next((f for f in reversed(client.frames) if f["type"] == "foreman.status"
                                          and f["usageSession"]["turns"]), None), what="the status totals")
    assert status["usageSession"]["inputTokens"] == 1200

async def test_an_aborted_turn_that_reported_nothing_still_counts_as_a_turn(rig: Rig) -> None:
    async def block(turn: Turn) -> None:
        await asyncio.Event().wait()

    rig.puppet.on(("kit", "work"), block)
    client = await rig.start()
    rig.task("Tidy notes", assignee="kit")
    first = await rig.turn("kit")
    await client.ok({"type": "agent.pause", "agent": "kit"})
    await wait_for(lambda: first.cancelled, what="the aborted turn")
    kit = await wait_for(lambda: (a := rig.world.agents["kit"]).usage.turns and a, what="kit's usage")
    assert kit.usage.turns == 1 and kit.usage.input_tokens == 0 and kit.usage.cost_usd == 0


async def test_a_timed_out_turn_keeps_the_usage_it_reported(tmp_path) -> None:
    rig = Rig(tmp_path, turn_timeout=1.0)
    try:
        rig.puppet.on(("kit", "work"), spend_then_block)
        await rig.start()
        t1 = rig.task("Tidy notes", assignee="kit")
        await rig.turn("kit")
        kit = await wait_for(lambda: (a := rig.world.agents["kit"]).usage.turns and a, what="kit's usage")
        assert (kit.usage.input_tokens, kit.usage.output_tokens, kit.usage.turns) == (1200, 300, 1)
        assert rig.world.tasks[t1].usage.cost_usd == pytest.approx(0.0042)
    finally:
        await rig.stop()
