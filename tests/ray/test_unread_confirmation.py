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
