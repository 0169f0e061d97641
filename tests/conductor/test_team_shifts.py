"""The named workers follow the team (``--workers``) across restarts, as generated workers do.

A real daemon on an ephemeral port with the scripted runner, restarted on the same home with a
different ``--workers``: a worker the new team leaves out goes off shift (keeping its name,
seat and history, with a feed line saying why), one the new team has again comes back on
shift, and a worker the user stopped stays off shift. A worker taken off shift in the middle of
a task hands it over: the task goes back on the board and the next worker continues from the
work it committed (the user asked for a smaller team, so the old worker does not go on).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.config import resolve

from ..rig import wait_for
from .scripted import ScriptedRig, commits_then_review, write_and_commit

pytestmark = pytest.mark.timeout(180)


def _shifts(rig: ScriptedRig) -> dict[str, bool]:
    """Worker name -> on shift, as a connected client sees the team."""
    return {n: a["active"] for n, a in rig.c.agents.items() if a["role"] == "worker"}


async def _restart(rig: ScriptedRig, workers: list[str]) -> None:
    await rig.stop()
    rig.settings = resolve({**rig.flags, "workers": workers}, env={})
    await rig.start()


def _feed(rig: ScriptedRig) -> list[str]:
    return [f.text for f in rig.world.feed]


async def test_named_workers_follow_the_team_across_restarts(tmp_path: Any) -> None:
    halfway = asyncio.Event()

    async def hold(req: TurnRequest, tools: AgentTools) -> TurnResult:
        """Tove's turn: commit half of the work, then keep working until the daemon stops."""
        await write_and_commit(req, "half.txt", "tove's half\n", "tove: first half")
        halfway.set()
        await asyncio.sleep(3600)
        raise AssertionError("the turn should have been aborted")

    def pick(req: TurnRequest) -> Any:
        return hold if req.agent == "tove" else commits_then_review()

    rig = ScriptedRig(tmp_path, pick, workers=["5"], lead_review=False, ci="true")
    await rig.start()
    try:
        seats = {n: a["seat"] for n, a in rig.c.agents.items()}
        assert all(_shifts(rig).values()) and len(_shifts(rig)) == 5
        task = rig.task("two halves", assignee="tove")
        await asyncio.wait_for(halfway.wait(), 60)
        assert rig.status(task) == "doing"

        # a smaller team: rowan and tove go off shift; tove's task goes back on the board
        await _restart(rig, ["3"])
        assert _shifts(rig) == {"juniper": True, "kit": True, "wren": True, "rowan": False, "tove": False}
        assert {n: a["seat"] for n, a in rig.c.agents.items()} == seats
        line = next(t for t in _feed(rig) if "Not on this start's team" in t)
        assert "rowan, tove went off shift" in line and "--workers" in line
        await rig.wait_status(task, "review", timeout=60)
        t = rig.world.tasks[task]
        assert t.assignee in ("juniper", "kit", "wren")
        assert any("tove went off shift: back on the board" in h.what for h in t.history), t.history
        # the next worker went on from what tove committed (nothing was lost)
        assert (rig.worktree(t.assignee, task) / "half.txt").read_text() == "tove's half\n"
        assert [r.agent for r in rig.runner.requests if r.task == task].count("tove") == 1  # not resumed

        # a team by names: juniper goes off shift too
        await _restart(rig, ["kit", "wren"])
        assert _shifts(rig) == {"juniper": False, "kit": True, "wren": True, "rowan": False, "tove": False}
        assert any("Not on this start's team" in t and "juniper went off shift" in t for t in _feed(rig))

        # the user stops kit; the whole team again: everyone the team took off comes back, kit
        # (the user's stop) stays off shift
        await rig.c.ok({"type": "agent.stop", "agent": "kit"})
        await _restart(rig, ["5"])
        assert _shifts(rig) == {"juniper": True, "kit": False, "wren": True, "rowan": True, "tove": True}
        assert {n: a["seat"] for n, a in rig.c.agents.items()} == seats
        assert any("Tove joined the team" in t for t in _feed(rig))
        again = rig.task("more work", assignee="tove")
        halfway.clear()
        await asyncio.wait_for(halfway.wait(), 60)  # tove works again, in her own seat's worktree
        assert rig.status(again) == "doing" and rig.world.agents["tove"].task == again
    finally:
        await rig.stop()


async def test_workers_left_out_at_the_first_start_come_on_shift_when_the_team_grows(tmp_path: Any) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), workers=["3"])
    await rig.start()
    try:
        assert _shifts(rig) == {"juniper": True, "kit": True, "wren": True, "rowan": False, "tove": False}
        assert not any("went off shift" in t for t in _feed(rig))  # never on shift: nothing to say

        await _restart(rig, ["5"])
        assert all(_shifts(rig).values()) and len(_shifts(rig)) == 5
        assert sorted(a["seat"] for a in rig.c.agents.values()) == list(range(6))
        task = rig.task("rowan's part", assignee="rowan")
        await rig.wait_status(task, "review", timeout=60)

        await _restart(rig, ["kit"])  # and shrinks again, by name
        await wait_for(lambda: _shifts(rig) == {"juniper": False, "kit": True, "wren": False, "rowan": False,
                                                "tove": False} or None, 10, "the team of one")
    finally:
        await rig.stop()


async def test_a_state_from_before_the_team_was_followed_grows_too(tmp_path: Any) -> None:
    """An older Foreman created rowan and tove off shift without recording why; the user
    stopped wren. A larger team brings rowan and tove on shift; wren (the user's stop) stays off."""
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), workers=["3"])
    await rig.start()
    try:
        await rig.c.ok({"type": "agent.stop", "agent": "wren"})
        rig.d.act(lambda core, now: (core.set_meta("off_roster", []), core.set_meta("roster_follows", None)))
        await _restart(rig, ["5"])
        assert _shifts(rig) == {"juniper": True, "kit": True, "wren": False, "rowan": True, "tove": True}
        await _restart(rig, ["3"])
        await _restart(rig, ["5"])  # recorded now: the team's own shifts follow it from here on
        assert _shifts(rig) == {"juniper": True, "kit": True, "wren": False, "rowan": True, "tove": True}
    finally:
        await rig.stop()
