"""A session that cannot be resumed becomes a decision, not a silent restart (issue 8, item 6)."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.turns import TurnRequest, TurnResult

from .scripted import done, start_scripted
from .test_flow import make_repo, wait_for


async def test_an_unknown_session_asks_the_user_then_starts_fresh(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    seen: list[TurnRequest] = []

    def pick(req: TurnRequest):
        async def plan(req, tools):
            seen.append(req)
            if len(seen) == 1:
                tools.session_started("lost-session")
                return TurnResult(ok=False, session_id="lost-session",
                                  error="could not resume session lost-session: No conversation found")
            return done("fresh-session")
        return plan

    daemon, runner = await start_scripted(tmp_path, pick, repo)
    try:
        goal = daemon.act(lambda c, now: c.submit_goal("plan something", now, repo="proj"))
        world = daemon.core.world

        def question():
            return next((d for d in world.decisions.values() if d.status == "open" and d.asked_by == "foreman"), None)

        await wait_for(lambda: question() is not None)
        q = question()
        assert "could not be resumed" in q.prompt and q.options[0] == "Start a fresh session"
        assert world.agents["marlow"].state == "error"
        assert len(seen) == 1  # nothing restarted behind the user's back
        daemon.act(lambda c, now: c.answer_decision(q.id, 0, now))
        await wait_for(lambda: len(seen) == 2)
        assert seen[1].session_id is None and seen[1].job == "plan"
        await wait_for(lambda: world.goals[goal.id].status != "planning")
    finally:
        await daemon.stop()



async def test_a_fresh_review_session_after_a_lost_one_gets_the_diff_again(tmp_path: Path) -> None:
    """The daemon stops during the lead's review; after the restart its session cannot be
    resumed. The fresh session gets the task's diff and CI again: the resumed turn's own prompt
    ("continue where you were") tells a new session nothing of them."""
    import asyncio

    from .scripted import ScriptedRig, write_and_commit

    reviews: list[TurnRequest] = []
    hang = asyncio.Event()

    def pick(req: TurnRequest):
        async def work(req, tools):
            await write_and_commit(req, "f.py", "def f():\n    return 1\n", "f")
            await tools.call("update_task", {"status": "review"})
            return done("kit-sess")

        async def review(req, tools):
            reviews.append(req)
            if len(reviews) == 1:
                tools.session_started("review-1")
                await hang.wait()  # the daemon stops during it
            if req.session_id == "review-1":
                return TurnResult(ok=False, session_id="review-1",
                                  error="could not resume session review-1: No conversation found")
            await tools.call("request_merge", {"task": req.task, "summary": "fine"})
            return done("fresh-review")

        return review if req.job == "review" else work

    rig = ScriptedRig(tmp_path, pick, ci="true", workers=["kit"])
    try:
        await rig.start()
        t1 = rig.task("Add f", assignee="kit")
        await wait_for(lambda: reviews, 30, "the review")
        assert "f.py" in reviews[0].prompt
        await rig.stop()
        await rig.start()
        q = await wait_for(lambda: next((d for d in rig.world.decisions.values()
                                         if d.status == "open" and d.asked_by == "foreman"), None), 30,
                           "the question about the lost session")
        assert reviews[-1].session_id == "review-1" and "f.py" not in reviews[-1].prompt  # the resume attempt
        rig.d.act(lambda c, now: c.answer_decision(q.id, 0, now))
        fresh = await wait_for(lambda: reviews[-1] if reviews[-1].session_id is None and len(reviews) > 2 else None,
                               30, "the fresh review")
        assert fresh.task == t1
        assert "f.py (+2 -0)" in fresh.prompt, fresh.prompt  # the diff again
        assert "CI: " in fresh.prompt and "request_merge" in fresh.prompt
        assert "What the lost session was to be told:\nThe Foreman restarted" in fresh.prompt
        await wait_for(lambda: rig.open_decision(t1), 30, "the merge decision of the fresh review")
    finally:
        hang.set()
        await rig.stop()
