"""Task steering through the protocol: task.cancel / retry / prioritize / reassign."""

from __future__ import annotations

import asyncio
from pathlib import Path

from foreman.backends.turns import TurnResult
from foreman.errors import Conflict

from .harness import Rig, Turn, block, wait_for


async def give_up(turn: Turn) -> TurnResult:
    await turn.tools.call("update_task", {"status": "blocked", "note": "needs a decision first"})
    return TurnResult(ok=True, session_id="s-blocked")


async def fail(turn: Turn) -> TurnResult:
    return TurnResult(ok=False, error="the model service said 529 overloaded")


async def test_cancel_aborts_the_turn_and_frees_the_worker(rig: Rig) -> None:
    client = await rig.start()
    t1 = rig.task("Doomed", assignee="kit")
    first = await rig.turn("kit")
    await client.ok({"type": "task.cancel", "task": t1})
    await wait_for(lambda: first.cancelled, what="the aborted turn")
    assert rig.world.tasks[t1].status == "cancelled"
    assert rig.world.agents["kit"].task is None
    t2 = rig.task("Next one", assignee="kit")
    second = await rig.turn("kit", 2)
    assert second.req.task == t2
    reply = await client.send({"type": "task.cancel", "task": t1})
    assert reply["type"] == "error" and reply["code"] == Conflict.code
    reply = await client.send({"type": "task.cancel", "task": "t99"})
    assert reply["type"] == "error" and reply["code"] == "not_found"


async def test_retry_puts_a_failed_task_back_on_the_board(rig: Rig) -> None:
    rig.puppet.on(("kit", "work"), fail, block)
    client = await rig.start()
    t1 = rig.task("Flaky", assignee="kit")
    await wait_for(lambda: rig.world.tasks[t1].status == "blocked", what="t1 blocked by the failed turn")
    assert "529" in (rig.world.tasks[t1].blocked_reason or "")
    reply = await client.send({"type": "task.retry", "task": t1})
    assert reply["type"] == "ack"
    second = await rig.turn("kit", 2)
    assert second.req.task == t1 and rig.world.tasks[t1].status == "doing"
    reply = await client.send({"type": "task.retry", "task": t1})
    assert reply["type"] == "error" and reply["code"] == Conflict.code  # doing: nothing to retry

    await client.ok({"type": "task.cancel", "task": t1})
    await client.ok({"type": "task.retry", "task": t1})
    third = await rig.turn("kit", 3)
    assert third.req.task == t1


async def test_prioritize_changes_what_starts_next(tmp_path: Path) -> None:
    rig = Rig(tmp_path, max_concurrent=1)
    try:
        gate = asyncio.Event()

        async def wait_then_give_up(turn: Turn) -> TurnResult:
            await gate.wait()
            return await give_up(turn)

        rig.puppet.on(("juniper", "work"), wait_then_give_up, block)
        client = await rig.start()
        t1 = rig.task("Runs first", assignee="juniper")
        first = await rig.turn("juniper")
        assert first.req.task == t1
        t2 = rig.task("Older")
        t3 = rig.task("Urgent")
        t4 = rig.task("Fixed priority")
        await client.ok({"type": "task.prioritize", "task": t4, "priority": 5})
        assert rig.world.tasks[t4].priority == 5
        await client.ok({"type": "task.prioritize", "task": t3})  # no number: above the highest
        assert rig.world.tasks[t3].priority == 6
        await asyncio.sleep(0.2)
        assert [rig.world.tasks[t].status for t in (t2, t3, t4)] == ["todo"] * 3  # --max-concurrent 1
        gate.set()
        first_started = await wait_for(lambda: next((t for t in (t2, t3, t4) if rig.world.tasks[t].status == "doing"), None),
                                       what="the next task")
        assert first_started == t3
        assert rig.world.tasks[t1].status == "blocked"
        reply = await client.send({"type": "task.prioritize", "task": "t42"})
        assert reply["type"] == "error" and reply["code"] == "not_found"
    finally:
        await rig.stop()


async def test_reassign_a_todo_task(tmp_path: Path) -> None:
    rig = Rig(tmp_path, workers=["kit", "wren"])
    try:
        client = await rig.start()
        await client.ok({"type": "agent.stop", "agent": "kit"})
        t1 = rig.task("For kit", assignee="kit")
        await asyncio.sleep(0.2)
        assert rig.world.tasks[t1].status == "todo"  # kit is off shift: it waits
        await client.ok({"type": "task.reassign", "task": t1, "agent": "wren"})
        turn = await rig.turn("wren")
        assert turn.req.task == t1 and rig.world.tasks[t1].assignee == "wren"
        assert "take over" not in turn.req.prompt  # nobody worked on it before
        reply = await client.send({"type": "task.reassign", "task": t1, "agent": "wren"})
        assert reply["type"] == "error" and reply["code"] == Conflict.code
    finally:
        await rig.stop()


async def test_a_paused_agent_whose_task_moved_on_is_not_resumed_onto_it(rig: Rig) -> None:
    client = await rig.start()
    t1 = rig.task("Tidy notes", assignee="kit")
    first = await rig.turn("kit")
    await client.ok({"type": "agent.pause", "agent": "kit"})
    await wait_for(lambda: first.cancelled)
    await client.ok({"type": "task.reassign", "task": t1, "agent": "wren"})
    taken = await rig.turn("wren")
    assert taken.req.task == t1
    await client.ok({"type": "agent.resume", "agent": "kit"})
    await asyncio.sleep(0.4)
    assert [t.req.task for t in rig.puppet.of("kit")] == [t1], "kit was resumed onto wren's task"
    assert rig.world.tasks[t1].assignee == "wren"
