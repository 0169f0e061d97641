"""The lead's review requests changes (``update_task`` status ``doing`` with a note): the task
goes back to its worker for exactly ONE turn, whatever the timing.

The request both sends the worker a message (which may start a "new messages" follow-up at once)
and, when the review turn ends, asks for the worker's follow-up; found on the real claude CLI
(tests/claude_cli/test_team_real_cli.py), where the worker got two turns for one request. The
variants: the worker's turn still running when the review ends; already ended (the task back in
review); the worker busy in a chat turn when the request comes (the follow-up waits for it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from foreman.backends.turns import TurnRequest, TurnResult

from ..rig import git, wait_for
from .scripted import ScriptedRig, done, write_and_commit


@pytest.mark.parametrize("timing", ["worker-still-running", "worker-already-done", "worker-busy-chatting"])
async def test_one_request_for_changes_gives_the_worker_one_turn(tmp_path: Path, timing: str) -> None:
    reviews: list[str] = []
    chat = asyncio.Event()

    def pick(req: TurnRequest):
        async def work(req: TurnRequest, tools) -> TurnResult:
            revised = req.job == "followup"
            body = "def f(who='you'):\n    return who\n" if revised else "def f():\n    return 1\n"
            if not (req.cwd / "f.py").exists() or (req.cwd / "f.py").read_text() != body:
                await write_and_commit(req, "f.py", body, "revised" if revised else "f")
            await tools.call("update_task", {"status": "review"})
            return done("kit-sess")

        async def chatting(req: TurnRequest, tools) -> TurnResult:
            await chat.wait()
            return done("kit-chat")

        async def review(req: TurnRequest, tools) -> TurnResult:
            reviews.append(req.task)
            if len(reviews) == 1:
                if timing == "worker-busy-chatting":
                    rig.d.act(lambda c, now: c.send_message("user", "kit", "a word with you", now))
                    await wait_for(lambda: [r for r in rig.runner.requests if r.agent == "kit" and r.task is None],
                                   what="kit's chat turn")
                await tools.call("update_task", {"task": req.task, "status": "doing", "note": "take a name"})
                if timing == "worker-already-done":
                    await wait_for(lambda: rig.world.tasks[req.task].status == "review", what="the revision")
                if timing == "worker-busy-chatting":
                    asyncio.get_running_loop().call_later(0.3, chat.set)
            else:
                await tools.call("request_merge", {"task": req.task, "summary": "fine"})
            return done("lead-review")

        if req.job == "review":
            return review
        if req.agent == "kit" and req.task is None:
            return chatting
        return work

    rig = ScriptedRig(tmp_path, pick, ci="true", workers=["kit"])
    try:
        await rig.start()
        t1 = rig.task("Add f", assignee="kit")
        await wait_for(lambda: rig.open_decision(t1), 30, "the merge decision after the revision")
        await asyncio.sleep(0.5)  # a duplicate follow-up would have started by now
        kit_turns = [(r.job, r.task) for r in rig.runner.requests if r.agent == "kit" and r.task == t1]
        assert kit_turns == [("work", t1), ("followup", t1)], kit_turns
        assert reviews == [t1, t1]
        revision = next(r for r in rig.runner.requests if r.agent == "kit" and r.job == "followup" and r.task == t1)
        assert "take a name" in revision.prompt  # the lead's note reaches the worker
        rig.d.act(lambda c, now: c.answer_decision(rig.open_decision(t1).id, 0, now))
        await wait_for(lambda: rig.world.tasks[t1].status == "done", 30, "the merge")
        assert "who='you'" in git(rig.repo, "show", "main:f.py")
    finally:
        chat.set()
        await rig.stop()
