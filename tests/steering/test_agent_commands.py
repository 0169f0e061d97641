"""Agent steering through the protocol: agent.pause / resume / stop / spawn and message.send."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from foreman.errors import Conflict, PolicyError

from .harness import Rig, Turn, wait_for


async def ask_then_block(turn: Turn) -> None:
    turn.tools.session_started(f"sess-{turn.req.agent}")
    await turn.tools.call("ask_user", {"question": "Tabs or spaces?", "options": ["Tabs", "Spaces"]})
    await asyncio.Event().wait()


async def ask_and_request_permission(turn: Turn) -> None:
    """Two prompts open at once: a question and a permission to run a network command."""
    await asyncio.gather(
        turn.tools.call("ask_user", {"question": "Which port?", "options": ["80", "8080"]}),
        turn.tools.permit("Bash", {"command": "curl https://example.com"}),
    )
    await asyncio.Event().wait()


def open_decisions(rig: Rig, agent: str) -> list:
    return [d for d in rig.world.decisions.values() if d.asked_by == agent and d.status == "open"]


async def test_pause_aborts_turn_keeps_task_withdraws_question_and_resume_continues_session(rig: Rig) -> None:
    rig.puppet.on(("kit", "work"), ask_then_block)
    client = await rig.start()
    t1 = rig.task("Tidy notes", assignee="kit")
    first = await rig.turn("kit")
    question = (await wait_for(lambda: open_decisions(rig, "kit"), what="kit's question"))[0]

    await client.ok({"type": "agent.pause", "agent": "kit"})

    await wait_for(lambda: first.cancelled, what="the aborted turn")
    kit, task = rig.world.agents["kit"], rig.world.tasks[t1]
    assert kit.paused and kit.active
    assert task.status == "doing" and task.assignee == "kit"
    assert rig.world.decisions[question.id].status == "cancelled"
    with pytest.raises(PolicyError):  # the lingering turn's tools are dead
        await first.tools.call("send_message", {"to": "user", "text": "still here"})
    await asyncio.sleep(0.3)
    assert len(rig.puppet.of("kit")) == 1, "a paused agent gets no new turn"
    reply = await client.send({"type": "agent.pause", "agent": "kit"})
    assert reply["type"] == "error" and reply["code"] == Conflict.code

    rig.puppet.on(("kit", "work"), ask_then_block)
    await client.ok({"type": "agent.resume", "agent": "kit"})
    second = await rig.turn("kit", 2)
    assert second.req.session_id == "sess-kit"
    assert second.req.task == t1 and second.req.job == "work"
    assert second.req.turn_id != first.req.turn_id
    assert not rig.world.agents["kit"].paused


async def test_stop_is_immediate_and_off_shift_survives_restart_until_spawn(rig: Rig) -> None:
    rig.puppet.on(("kit", "work"), ask_and_request_permission)
    client = await rig.start()
    t1 = rig.task("Tidy notes", assignee="kit")
    first = await rig.turn("kit")
    opened = await wait_for(lambda: len(open_decisions(rig, "kit")) == 2 and open_decisions(rig, "kit"),
                            what="a question and a permission prompt")
    assert {d.kind for d in opened} == {"question", "permission"}

    await client.ok({"type": "agent.stop", "agent": "kit"})

    kit = rig.world.agents["kit"]
    assert not kit.active and kit.task is None
    assert all(rig.world.decisions[d.id].status == "cancelled" for d in opened)
    task = rig.world.tasks[t1]
    assert task.status == "todo" and task.assignee is None
    await wait_for(lambda: first.cancelled, what="the aborted turn")
    # stop is immediate: whatever the lingering session still tries is refused
    with pytest.raises(PolicyError):
        await first.tools.call("send_message", {"to": "wren", "text": "psst"})
    allowed, why = await first.tools.permit("Bash", {"command": "curl https://example.com"})
    assert not allowed and "refused" in why
    with pytest.raises(Conflict):
        rig.d.act(lambda c, now: c.send_message("kit", "user", "one more thing", now))
    with pytest.raises(Conflict):
        rig.d.act(lambda c, now: c.open_decision("question", "?", ["a"], now, asked_by="kit"))
    assert not open_decisions(rig, "kit")

    # the task goes to someone on shift; kit is never scheduled, not even for its own task
    other = await wait_for(lambda: rig.world.tasks[t1].status == "doing" and rig.world.tasks[t1].assignee,
                           what="t1 restarted by another worker")
    assert other != "kit"
    t2 = rig.task("Kit's own", assignee="kit")
    await asyncio.sleep(0.3)
    assert len(rig.puppet.of("kit")) == 1 and rig.world.tasks[t2].status == "todo"

    await rig.stop()
    client = await rig.start()
    assert not rig.world.agents["kit"].active
    await asyncio.sleep(0.3)
    assert len(rig.puppet.of("kit")) == 1 and rig.world.tasks[t2].status == "todo"
    reply = await client.send({"type": "agent.pause", "agent": "kit"})
    assert reply["type"] == "error" and reply["code"] == Conflict.code

    await client.ok({"type": "agent.spawn", "agent": "kit"})
    second = await rig.turn("kit", 2)
    assert second.req.task == t2 and rig.world.tasks[t2].status == "doing"


async def test_spawn_with_a_task_and_refusals(tmp_path: Path) -> None:
    rig = Rig(tmp_path, max_concurrent=5)
    try:
        await _spawn_with_a_task_and_refusals(rig)
    finally:
        await rig.stop()


async def _spawn_with_a_task_and_refusals(rig: Rig) -> None:
    client = await rig.start()
    assert not rig.world.agents["rowan"].active  # --workers 3: juniper, kit, wren
    t1 = rig.task("Keeps juniper busy")
    busy = await rig.turn("juniper")
    assert busy.req.task == t1
    t2 = rig.task("For rowan")
    await wait_for(lambda: rig.world.tasks[t2].status == "doing", what="t2 picked by a free worker")
    t3 = rig.task("Also for rowan")
    await wait_for(lambda: rig.world.tasks[t3].status == "doing", what="t3 picked by the third worker")
    t4 = rig.task("Waits for a worker")
    await asyncio.sleep(0.2)
    assert rig.world.tasks[t4].status == "todo"

    await client.ok({"type": "agent.spawn", "agent": "rowan", "task": t4})
    turn = await rig.turn("rowan")
    assert turn.req.task == t4 and rig.world.tasks[t4].assignee == "rowan"
    assert rig.world.agents["rowan"].active

    reply = await client.send({"type": "agent.spawn", "agent": "rowan"})
    assert reply["type"] == "error" and reply["code"] == Conflict.code
    reply = await client.send({"type": "agent.spawn", "agent": "tove", "task": t1})
    assert reply["type"] == "error" and "doing" in reply["message"]
    assert not rig.world.agents["tove"].active
    reply = await client.send({"type": "agent.spawn", "agent": "nobody"})
    assert reply["type"] == "error" and reply["code"] == "not_found"


async def test_message_to_off_shift_agent_is_delivered_when_resumed(rig: Rig) -> None:
    client = await rig.start()
    await client.ok({"type": "agent.stop", "agent": "kit"})
    await client.ok({"type": "message.send", "to": "kit", "text": "please look at the README when you are back"})
    await asyncio.sleep(0.3)
    assert rig.puppet.of("kit") == []
    assert rig.d.core.peek_unread("kit") == 1

    await client.ok({"type": "agent.resume", "agent": "kit"})
    turn = await rig.turn("kit")
    assert "please look at the README" in turn.req.prompt
    assert turn.req.job == "followup"
    assert rig.d.core.peek_unread("kit") == 0


async def test_message_to_paused_agent_waits_for_resume(rig: Rig) -> None:
    client = await rig.start()
    t1 = rig.task("Tidy notes", assignee="kit")
    first = await rig.turn("kit")
    await client.ok({"type": "agent.pause", "agent": "kit"})
    await wait_for(lambda: first.cancelled)
    await client.ok({"type": "message.send", "to": "kit", "text": "use British spelling"})
    await asyncio.sleep(0.3)
    assert len(rig.puppet.of("kit")) == 1
    await client.ok({"type": "agent.resume", "agent": "kit"})
    second = await rig.turn("kit", 2)
    assert "use British spelling" in second.req.prompt and second.req.task == t1
