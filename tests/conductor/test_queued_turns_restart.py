"""A turn that waits for its agent's current one (the conductor's queue) survives a restart.

The user's "Request changes" on a merge decision while the worker is busy in another turn queues
the worker's follow-up, with the user's note in its prompt. Before the queue was kept in the
store, a restart between the answer and the end of the busy turn lost it: the task went back to
``todo`` and a fresh work turn started without the note, so an acknowledged answer never reached
the agent. Both a clean stop and the restart after it are real (in-process daemon, real git).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from foreman.backends.turns import TurnRequest, TurnResult

from ..rig import wait_for
from .scripted import ScriptedRig, done, write_and_commit


async def test_a_queued_follow_up_with_the_users_note_survives_a_restart(tmp_path: Path) -> None:
    chat_started = asyncio.Event()
    never = asyncio.Event()

    def pick(req: TurnRequest):
        async def work(req: TurnRequest, tools) -> TurnResult:
            if req.job == "work":
                await write_and_commit(req, "f.py", "def f():\n    return 1\n", "f")
            else:
                await write_and_commit(req, "f.py", "def f(who='you'):\n    return who\n", "revised")
            await tools.call("update_task", {"status": "review"})
            return done("kit-sess")

        async def chatting(req: TurnRequest, tools) -> TurnResult:
            if not chat_started.is_set():
                chat_started.set()
                await never.wait()  # busy until the daemon stops (its resumed turn after the restart ends)
            return done("kit-chat")

        if req.agent == "kit" and req.task is None:
            return chatting
        return work

    rig = ScriptedRig(tmp_path, pick, ci="true", lead_review=False, workers=["kit"])
    try:
        await rig.start()
        t1 = rig.task("Add f", assignee="kit")
        await wait_for(lambda: rig.open_decision(t1), 30, "the merge decision")
        rig.d.act(lambda c, now: c.send_message("user", "kit", "a word with you", now))
        await asyncio.wait_for(chat_started.wait(), 30)
        decision = rig.open_decision(t1)
        changes = decision.options.index("Request changes")
        rig.d.act(lambda c, now: c.answer_decision(decision.id, changes, now, text="take a name"))
        await rig.wait_status(t1, "doing")
        await asyncio.sleep(0.3)  # the follow-up is queued behind the chat turn
        assert not [r for r in rig.runner.requests if r.job == "followup" and r.task == t1]
        await rig.stop()

        await rig.start()
        revision = await wait_for(
            lambda: next((r for r in rig.runner.requests if r.agent == "kit" and r.task == t1
                          and r.job in ("work", "followup") and r is not rig.runner.requests[0]), None),
            30, f"kit's turn on the task after the restart (turns: {[(r.agent, r.job, r.task) for r in rig.runner.requests]}, "
                f"task {rig.status(t1)})")
        assert "take a name" in revision.prompt, revision.prompt
        await wait_for(lambda: rig.open_decision(t1), 30, "the merge decision after the revision")
        kit_turns = [(r.job, r.task) for r in rig.runner.requests if r.agent == "kit" and r.task == t1]
        assert kit_turns == [("work", t1), ("followup", t1)], kit_turns
    finally:
        never.set()
        await rig.stop()
