"""A task that lands while its worker runs another turn still has its worktree retired.

Found passing one of the sim's tasks through the flow: the merge landed while the worker answered
a message in a chat turn; landing leaves the worktree to "the running turn's end", and that turn
(about no task, or another one) never closed it, so the folder stayed for good."""

from __future__ import annotations

import asyncio
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult

from ..conductor.scripted import ScriptedRig, done, write_and_commit
from ..rig import wait_for


async def test_the_worktree_of_a_task_landed_during_a_chat_turn_is_retired_when_it_ends(tmp_path: Path) -> None:
    chatting, release = asyncio.Event(), asyncio.Event()

    async def turn(req: TurnRequest, tools: AgentTools) -> TurnResult:
        if req.task is None:  # a chat turn: held until the test lets it end
            chatting.set()
            await release.wait()
            return done()
        await write_and_commit(req, "greet.py", "def greet():\n    return 'hi'\n", "greet")
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig(tmp_path, lambda req: turn, lead_review=False, workers=["kit"], ci="true")
    try:
        await rig.start()
        t1 = rig.task("Add greet", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision")
        await wait_for(lambda: not rig.backend.runner.live.running, 10, "kit's turn ended")
        rig.d.act(lambda c, now: c.send_message("user", "kit", "how is it going?", now))
        await asyncio.wait_for(chatting.wait(), 30)
        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "done")
        folder = rig.worktree("kit", t1)
        assert folder.exists()  # (a turn of kit runs: its worktree waits for it)
        release.set()
        await wait_for(lambda: not folder.exists(), 60, "the worktree removed")
        # (the folder goes before the flow applies the removal's result: its record follows)
        await wait_for(lambda: rig.d.core.world.records["worktree"][f"kit-{t1}"].state == "removed", 10,
                       "the worktree's record says removed")
    finally:
        release.set()
        await rig.stop()
