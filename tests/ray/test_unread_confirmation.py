"""Marking read only what a remote turn's node confirms (``Core.mark_read``): the other unread
messages stay, in order, in the core and in the store after a restart."""

from __future__ import annotations

from pathlib import Path

from foreman.core.core import Core
from foreman.core.world import Change
from foreman.store import Store

from ..core.worlds import T0, team_core


def test_mark_read_takes_only_the_confirmed_messages_and_the_rest_survive_a_restart(tmp_path: Path) -> None:
    core = team_core()
    s = Store(tmp_path)
    s.open()
    s.commit([(Change("upsert", "agent", a), None) for a in core.world.agents.values()], 0)
    sent = [core.send_message("user", "kit", f"note {i}", T0 + i).id for i in range(5)]
    core.send_message("user", "all", "to everyone", T0 + 9)
    everyone = core.world.meta["unread"]["kit"][-1]["id"]
    core.mark_read("kit", [sent[1], sent[3], 999_999])  # (an id kit never had is ignored)
    core.mark_read("kit", [])
    s.commit([(c, None) for c in core.take()[0]], 1)
    left = [sent[0], sent[2], sent[4], everyone]
    assert [m["id"] for m in core.world.meta["unread"]["kit"]] == left
    assert any(m["id"] == everyone for m in core.world.meta["unread"]["wren"])  # others' lists untouched
    s.close()
    s2 = Store(tmp_path)
    world, _ = s2.open()
    s2.close()
    assert [m.id for m in Core(world).take_unread("kit")] == left


async def test_a_remote_tool_call_carries_only_the_messages_its_node_holds_and_confirms_them(tmp_path: Path) -> None:
    """A remote turn's Foreman tool call is answered by the daemon without the agent's unread
    messages (``unread=False``: they stay unread there); the node adds the ones delivered to it
    and confirms each, so a message is never taken before the node handed it to the runner."""
    from foreman.executors.node import RemoteTools

    from ..conductor.scripted import ScriptedRig, done
    from ..rig import wait_for

    seen: dict[str, str] = {}

    async def work(req, tools):
        await wait_for(lambda: tools.pending(), timeout=30, what="a message for kit")
        seen["remote"] = await tools.call("report_status", {"text": "working"}, unread=False)
        seen["left"] = [line for _, line in tools.pending()]
        seen["local"] = await tools.call("report_status", {"text": "still working"})
        seen["after"] = [line for _, line in tools.pending()]
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig.worker(tmp_path, work)
    try:
        await rig.start()
        rig.task("Greet", assignee="kit")
        await wait_for(lambda: rig.world.agents["kit"].activity, timeout=30, what="kit at work")
        await rig.c.ok({"type": "message.send", "to": "kit", "text": "use British spelling"})
        await wait_for(lambda: "after" in seen, timeout=30, what="kit's calls")
    finally:
        await rig.stop()
    assert "Unread messages" not in seen["remote"] and seen["left"] == ["user: use British spelling"]
    assert seen["local"].endswith("\n\nUnread messages:\nuser: use British spelling") and seen["after"] == []

    # the node's side: the result carries what the node holds; the read confirmation goes to the daemon
    events: list[dict] = []

    async def ask(what: str, **kw):
        return True, "report_status done"

    node = RemoteTools("kit", "kit:1", events.append, ask)
    node.inbox = [(7, "user: hi"), (9, "wren: see t2")]
    assert await node.call("report_status", {"text": "x"}) == "report_status done\n\nUnread messages:\nuser: hi\nwren: see t2"
    assert events == [{"kind": "unread", "read": [7, 9]}]
    assert await node.call("report_status", {"text": "y"}) == "report_status done"
