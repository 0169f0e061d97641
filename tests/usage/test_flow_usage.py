"""Usage, budgets, repository instructions and the risk scan through the conductor's flow, a
real daemon, real git and the protocol (the model edge is a scripted runner)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from foreman.backends.turns import TurnRequest, TurnResult
from tests.conductor.scripted import ScriptedRig, write_and_commit
from tests.rig import PYPROJECT, make_repo, wait_for

pytestmark = pytest.mark.timeout(120)

AWS = "AKIA" + "Q3EGRIEXK4ZJ7M2P"


@dataclass
class Reported(TurnResult):
    """A TurnResult with the usage a backend reports (the fields TurnResult gains for it)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


def paid(session: str, cost: float = 0.6) -> Reported:
    return Reported(ok=True, session_id=session, text="done", cost_usd=cost, input_tokens=1000, output_tokens=100,
                    cache_read_tokens=10, cache_write_tokens=1)


def one_task_plan(title: str = "Add greet", description: str = "greet() in greet.py"):
    async def plan(req: TurnRequest, tools):
        await tools.call("create_task", {"title": title, "description": description, "assignee": "juniper"})
        return paid("lead-plan")
    return plan


async def test_usage_instructions_and_a_critical_risk(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files={**PYPROJECT, "AGENTS.md": "Agents: keep greet() pure.\n"})
    rounds = {"work": 0}

    def pick(req: TurnRequest):
        async def work(req, tools):
            rounds["work"] += 1
            key = f'KEY = "{AWS}"\n' if rounds["work"] == 1 else ""
            await write_and_commit(req, "greet.py", f"def greet():\n    return 'hi'\n{key}", f"greet {rounds['work']}")
            await tools.call("update_task", {"status": "review"})
            return paid("w")

        async def review(req, tools):
            await tools.call("request_merge", {"task": req.task, "summary": "ok"})
            return paid("lead-review")

        return {"plan": one_task_plan(), "review": review}.get(req.job, work)

    rig = ScriptedRig(tmp_path, pick, repo=repo, workers=["1"])
    await rig.start()
    try:
        goal = rig.d.act(lambda c, now: c.submit_goal("greet", now, repo="proj")).id
        first = await wait_for(lambda: rig.open_decision("t1"), 60, "the first merge decision")
        # the review prompt had the scan; the decision has it and Request changes comes first
        review_req = next(r for r in rig.runner.requests if r.job == "review")
        assert "CRITICAL secret greet.py:3" in review_req.prompt
        assert first.options == ["Request changes", "Merge anyway (risk acknowledged)", "Reject"]
        assert any(r.severity == "critical" and r.path == "greet.py" for r in first.risks)
        wire = rig.c.decisions[first.id] if first.id in rig.c.decisions else await wait_for(lambda: rig.c.decisions.get(first.id))
        assert wire["risks"][0]["severity"] == "critical"
        await rig.c.answer(first.id, 0)  # the first option: Request changes, never a merge
        second = await wait_for(lambda: (x := rig.open_decision("t1")) and x.id != first.id and x, 60, "the second decision")
        assert "merge" not in rig.c.feed()[-1].lower() or rig.status("t1") != "done"
        assert second.options[0] == "Merge" and not [r for r in second.risks if r.severity == "critical"]
        await rig.c.answer(second.id, 0)
        await rig.wait_status("t1", "done")
        # the repository's instructions reached every turn's system prompt
        assert all("Agents: keep greet() pure." in r.system for r in rig.runner.requests)
        # usage: plan + 2 work + 2 review turns, 0.6 each
        w = rig.world
        turns = len(rig.runner.requests)
        assert w.goals[goal].usage.turns == turns and w.goals[goal].usage.cost_usd == pytest.approx(0.6 * turns)
        assert w.agents["juniper"].usage.turns == 2 and w.agents["juniper"].usage.input_tokens == 2000
        assert w.tasks["t1"].usage.turns == turns - 1  # every turn but the plan
        await wait_for(lambda: any(f["type"] == "foreman.status" and f["usageSession"]["turns"] == turns for f in rig.c.frames))
        assert rig.c.agents["marlow"]["usage"]["turns"] == 3
    finally:
        await rig.stop()
    # durable: a restart keeps the totals
    await rig.start()
    try:
        assert rig.world.agents["juniper"].usage.cost_usd == pytest.approx(1.2)
        assert rig.d.status().usage_session.turns == 0 and rig.d.status().usage_day.turns == turns
    finally:
        await rig.stop()


async def test_budget_decision_through_the_protocol(tmp_path: Path) -> None:
    def pick(req: TurnRequest):
        async def plan(req, tools):
            for name in ("greet", "farewell"):
                await tools.call("create_task", {"title": f"Add {name}", "description": f"{name}.py", "assignee": "juniper"})
            return paid("lead-plan")

        async def work(req, tools):
            name = "greet" if req.task == "t1" else "farewell"
            await write_and_commit(req, f"{name}.py", f"def {name}():\n    return 1\n", name)
            await tools.call("update_task", {"status": "review"})
            return paid(f"w-{req.task}")

        async def review(req, tools):
            await tools.call("request_merge", {"task": req.task, "summary": "ok"})
            return paid("lead-review")

        return {"plan": plan, "review": review}.get(req.job, work)

    rig = ScriptedRig(tmp_path, pick, workers=["1"], budget_goal="1")
    await rig.start()
    try:
        rig.d.act(lambda c, now: c.submit_goal("greet and farewell", now, repo="proj"))

        def budget_question():
            return next((x for x in rig.c.decisions.values() if x["kind"] == "question" and x["status"] == "open"
                         and x["askedBy"] == "foreman"), None)

        first = await wait_for(budget_question, 60, "the budget decision")
        assert first["prompt"] == "Goal g1 has used $1.20 of $1.00: continue with $1.00 more, or stop here?"
        seen = len(rig.runner.requests)
        await asyncio.sleep(0.5)
        assert len(rig.runner.requests) == seen  # no turn starts while it is open
        await rig.c.answer(first["id"], 0)  # continue with $1 more: the cap is now $2.20
        await wait_for(lambda: rig.world.goals["g1"].budget_usd == pytest.approx(2.2))
        merge = await wait_for(lambda: rig.open_decision("t1"), 60, "t1's merge decision")
        await rig.c.answer(merge.id, 0)
        await rig.wait_status("t1", "done")
        second = await wait_for(lambda: (x := budget_question()) and x["id"] != first["id"] and x, 60, "a second budget decision")
        assert second["prompt"].startswith("Goal g1 has used $2.40 of $2.20")
        await rig.c.answer(second["id"], 1)  # stop here
        await rig.wait_status("t2", "blocked")
        assert rig.world.tasks["t2"].blocked_reason.startswith("budget: goal g1 used $2.40 of $2.20")
        wt = rig.worktree("juniper", "t2")
        assert (wt / "farewell.py").exists()  # the work is kept
        await asyncio.sleep(0.3)
        assert not [x for x in rig.world.decisions.values() if x.status == "open"]
    finally:
        await rig.stop()


async def test_the_merge_merges_the_scanned_commit_and_a_moved_branch_is_scanned_again(tmp_path: Path) -> None:
    from tests.rig import git

    def pick(req: TurnRequest):
        async def work(req, tools):
            await write_and_commit(req, "greet.py", "def greet():\n    return 'hi'\n", "greet")
            await tools.call("update_task", {"status": "review"})
            return paid("w")

        async def review(req, tools):
            await tools.call("request_merge", {"task": req.task, "summary": "ok"})
            return paid("lead-review")

        return {"plan": one_task_plan(), "review": review}.get(req.job, work)

    rig = ScriptedRig(tmp_path, pick, workers=["1"])
    await rig.start()
    try:
        rig.d.act(lambda c, now: c.submit_goal("greet", now, repo="proj"))
        first = await wait_for(lambda: rig.open_decision("t1"), 60, "the merge decision")
        assert not [r for r in first.risks if r.severity == "critical"]
        # a commit lands on the branch after the scan (a key, unseen by the first decision)
        wt = rig.worktree("juniper", "t1")
        (wt / "late.py").write_text(f'KEY = "{AWS}"\n')
        git(wt, "add", "-A")
        git(wt, "-c", "user.name=J", "-c", "user.email=j@x", "commit", "-qm", "late")
        await rig.c.answer(first.id, 0)  # Merge: refused, the branch is not at the scanned commit
        again = await wait_for(lambda: (x := rig.world.decisions[first.id]).status == "open"
                               and "moved" in (x.detail or "") and x, 60, "the decision re-opened with the new head")
        assert again.options[0] == "Request changes"  # the late key is critical now
        assert any(r.path == "late.py" and r.severity == "critical" for r in again.risks)
        assert "late.py" not in git(rig.repo, "ls-tree", "--name-only", "main")
    finally:
        await rig.stop()
