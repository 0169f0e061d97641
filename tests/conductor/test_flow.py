"""The conductor's whole flow with a scripted model edge, real git and the real daemon."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.turns import TurnRequest

from ..rig import PYPROJECT, git, wait_for
from ..rig import make_repo as rig_make_repo
from .scripted import done, start_scripted, write_and_commit


def make_repo(root: Path) -> Path:
    """The Python project whose CI is unittest."""
    return rig_make_repo(root, files=PYPROJECT)


async def test_plan_work_ci_review_merge_and_requested_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    revised = {"kit": 0}

    def pick(req: TurnRequest):
        async def plan(req, tools):
            await tools.call("write_memory", {"note": "plan", "text": "Plan: greet and farewell"})
            await tools.call("create_task", {"title": "Add greet", "description": "greet()", "assignee": "juniper"})
            await tools.call("create_task", {"title": "Add farewell", "description": "farewell()", "assignee": "kit"})
            return done("lead-plan")

        async def work(req, tools):
            name = "greet" if req.agent == "juniper" else "farewell"
            body = f"def {name}():\n    return '{name}'\n"
            if req.job == "followup" and req.agent == "kit":
                revised["kit"] += 1
                body = f"def {name}(who='you'):\n    return '{name} ' + who\n"
            await write_and_commit(req, f"{name}.py", body, f"{name} ({req.job})")
            await tools.call("update_task", {"status": "review"})
            return done(f"{req.agent}-sess")

        async def review(req, tools):
            await tools.call("request_merge", {"task": req.task, "summary": "looks right"})
            return done("lead-review")

        if req.job == "plan":
            return plan
        if req.job == "review":
            return review
        return work

    daemon, runner = await start_scripted(tmp_path, pick, repo)
    try:
        goal = daemon.act(lambda c, now: c.submit_goal("greet and farewell", now, repo="proj"))
        world = daemon.core.world

        def open_merge(task_id: str):
            return next((d for d in world.decisions.values() if d.kind == "merge" and d.task == task_id
                         and d.status == "open"), None)

        await wait_for(lambda: open_merge("t1") is not None and open_merge("t2") is not None)
        daemon.act(lambda c, now: c.answer_decision(open_merge("t1").id, 0, now))
        first_t2 = open_merge("t2").id
        daemon.act(lambda c, now: c.answer_decision(first_t2, 1, now, text="take a name"))
        await wait_for(lambda: world.tasks["t1"].status == "done")
        await wait_for(lambda: (d := open_merge("t2")) is not None and d.id != first_t2)
        daemon.act(lambda c, now: c.answer_decision(open_merge("t2").id, 0, now))
        await wait_for(lambda: world.tasks["t2"].status == "done")
        await wait_for(lambda: world.goals[goal.id].status == "done")
        assert revised["kit"] == 1
        tree = git(repo, "ls-tree", "--name-only", "main")
        assert "greet.py" in tree and "farewell.py" in tree
        assert "who='you'" in git(repo, "show", "main:farewell.py")
        assert git(repo, "log", "-1", "--format=%an", "main").strip() == "User One"
        assert world.goals[goal.id].progress == 100
        assert "Plan: greet" in daemon.memory.read("shared/plan")
        jobs = [(r.agent, r.job) for r in runner.requests]
        assert ("marlow", "plan") in jobs and ("marlow", "review") in jobs and ("kit", "followup") in jobs
        assert git(repo, "status", "--porcelain") == ""
    finally:
        await daemon.stop()
