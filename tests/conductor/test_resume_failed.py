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
