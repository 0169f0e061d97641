"""Goals the flow used to leave without a word: a goal whose open tasks are all blocked, a task
started before any repository is registered, and tasks a team's plan keeps for one worker."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.turns import TurnRequest
from foreman.core.backoff import Backoff

from ..rig import wait_for
from .scripted import ScriptedRig, done


async def test_a_goal_whose_open_tasks_are_all_blocked_wakes_the_lead_once(tmp_path: Path) -> None:
    """Found making the sim a scripted team on the flow: a worker blocked its task on the user, the
    others finished, and the goal waited for ever with nothing said."""
    prompts: list[str] = []

    def pick(req: TurnRequest):
        async def plan(req, tools):
            await tools.call("create_task", {"title": "Publish", "description": "needs a token", "assignee": "kit"})
            return done("plan")

        async def block(req, tools):
            await tools.call("update_task", {"status": "blocked", "note": "needs the user's PyPI token"})
            return done("kit")

        async def lead(req, tools):
            prompts.append(req.prompt)
            said = await tools.call("ask_user", {"task": None, "question": "Finish the goal without t1?",
                                                 "options": ["Finish", "Keep it"]})
            if "Finish" in said:
                await tools.call("update_task", {"task": "t1", "status": "cancelled", "note": "the user said so"})
            return done("lead")

        if req.job == "plan":
            return plan
        return lead if req.lead else block

    rig = ScriptedRig(tmp_path, pick, lead_review=False, ci="true")
    await rig.start()
    try:
        d, world = rig.d, rig.world
        goal = d.act(lambda c, now: c.submit_goal("Ship it", now, repo="proj"))
        await wait_for(lambda: any(q.kind == "question" and q.status == "open" for q in world.decisions.values()))
        (question,) = [q for q in world.decisions.values() if q.kind == "question"]
        assert (question.task, question.goal) == (None, goal.id)  # about the goal, from the lead
        assert len(prompts) == 1 and "t1 (needs the user's PyPI token)" in prompts[0]
        d.act(lambda c, now: c.answer_decision(question.id, 0, now))
        await wait_for(lambda: world.tasks["t1"].status == "cancelled")
        assert world.goals[goal.id].status == "cancelled"  # (its only task was dropped)
        assert len(prompts) == 1
    finally:
        await rig.stop()


async def test_the_lead_is_woken_once_for_the_same_blocked_tasks(tmp_path: Path) -> None:
    """A lead that answers nothing is not asked again and again about the same blocked tasks."""
    prompts: list[str] = []

    def pick(req: TurnRequest):
        async def plan(req, tools):
            await tools.call("create_task", {"title": "Publish", "description": "needs a token", "assignee": "kit"})
            return done("plan")

        async def block(req, tools):
            await tools.call("update_task", {"status": "blocked", "note": "needs a token"})
            return done("kit")

        async def lead(req, tools):
            prompts.append(req.prompt)
            return done("lead")

        if req.job == "plan":
            return plan
        return lead if req.lead else block

    rig = ScriptedRig(tmp_path, pick, lead_review=False, ci="true")
    await rig.start()
    try:
        d, world = rig.d, rig.world
        d.act(lambda c, now: c.submit_goal("Ship it", now, repo="proj"))
        await wait_for(lambda: len(prompts) == 1)
        for _ in range(5):  # more scheduling passes
            rig.backend.kick()
            await wait_for(lambda: rig.backend.runner.live.running == {})
        assert len(prompts) == 1 and world.tasks["t1"].status == "blocked"
    finally:
        await rig.stop()


async def test_a_task_started_with_no_repository_registered_says_what_to_do(tmp_path: Path) -> None:
    """Found the same way: a goal submitted before any repository was registered failed its task's
    start with ``coroutine raised StopIteration``. It says to add a repository, and starts once one is."""
    def pick(req: TurnRequest):
        async def plan(req, tools):
            await tools.call("create_task", {"title": "Add greet", "description": "greet()", "assignee": "kit"})
            return done("plan")

        async def work(req, tools):
            await tools.call("update_task", {"status": "blocked", "note": "stop here"})
            return done("kit")

        return plan if req.job == "plan" else work

    rig = ScriptedRig(tmp_path, pick, lead_review=False, ci="true")
    rig.daemon = rig.make_daemon()
    await rig.daemon.start()
    try:
        d, world = rig.daemon, rig.daemon.core.world
        d.backend.backoff = Backoff(initial=0.05, maximum=0.1)  # (retry the start soon)
        d.act(lambda c, now: c.submit_goal("greet", now))
        await wait_for(lambda: any("no repository is registered" in f.text for f in world.feed))
        line = next(f.text for f in world.feed if "no repository is registered" in f.text)
        assert "/repo add" in line and "StopIteration" not in line
        await d.add_repo(str(rig.repo))
        await wait_for(lambda: world.tasks["t1"].status == "blocked" and world.tasks["t1"].blocked_reason == "stop here")
    finally:
        await rig.daemon.stop()
