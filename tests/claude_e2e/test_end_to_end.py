"""End to end on the fake CLI: plan -> two workers edit real files -> CI -> lead review -> the
user merges one task and requests changes on the other, which is revised (same session) and merged."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from foreman.core.records import Session

from ..claude.fake_claude import FakeClaude, opt
from .harness import Rig, bash, cli_runs, commit, edit, git, mcp, prompts_of, read, run, wait_for, write

pytestmark = pytest.mark.timeout(120)

GREET = "def greet():\n    return 'greet'\n"
FAREWELL = "def farewell():\n    return 'farewell'\n"


def work(agent: str, name: str, body: str) -> dict:
    return run([
        {"text": f"I will add {name}.py."},
        read("proj.py"),
        write(f"{name}.py", body),
        bash("python3 -m unittest -q"),
        commit(f"Add {name}"),
        mcp("update_task", status="review", note="added and tested"),
        {"text": f"{name} is in, tested and committed."},
    ], session_id=f"{agent}-1", cost=0.1)


REVIEW = run([read("${task}"), {"sleep": 0.3}, mcp("request_merge", task="${task}", summary="small and tested"),
              {"text": "Ready to merge."}], prompt_vars={"task": r"Review task (t\d+)"}, cost=0.05)


def scenario(fake: FakeClaude) -> None:
    plan = run([
        {"text": "Reading the repository."},
        read("proj.py"),
        mcp("write_memory", note="plan", text="Plan: greet() by Juniper, farewell() by Kit."),
        mcp("create_task", title="Add greet", description="greet.py with greet()", assignee="juniper"),
        mcp("create_task", title="Add farewell", description="farewell.py with farewell()", assignee="kit"),
        {"text": "Two tasks created."},
    ], session_id="lead-plan", cost=0.2)
    revise = run([
        edit("farewell.py", "def farewell():\n    return 'farewell'",
             "def farewell(who='you'):\n    return 'farewell ' + who"),
        bash("python3 -m unittest -q"),
        commit("farewell takes a name"),
        mcp("update_task", status="review"),
        {"text": "Revised."},
    ], expect_resume="kit-1", cost=0.15)
    fake.script(queues={"marlow": [plan, REVIEW, REVIEW, REVIEW], "juniper": [work("juniper", "greet", GREET)],
                        "kit": [work("kit", "farewell", FAREWELL), revise]})


@pytest.mark.slow  # end to end: a goal to two merged tasks through the daemon; slow suite since issue 38
async def test_goal_to_two_merged_tasks_with_requested_changes(tmp_path: Path, fake: FakeClaude, monkeypatch) -> None:
    scenario(fake)
    rig = Rig(tmp_path, fake, monkeypatch)
    c = await rig.start()
    try:
        reply = await c.ok({"type": "goal.submit", "text": "greet and farewell", "repo": "proj"})
        goal = reply["result"]
        await wait_for(lambda: len(c.open_decisions("merge")) == 2, 60, "two merge decisions")
        by_task = {d["task"]: d for d in c.open_decisions("merge")}
        greet_task = next(t for t in c.tasks.values() if t["title"] == "Add greet")["id"]
        bye_task = next(t for t in c.tasks.values() if t["title"] == "Add farewell")["id"]
        assert c.goals[goal]["status"] == "active"
        # both workers edited and committed real files in their own worktrees
        assert (rig.worktree("juniper", greet_task) / "greet.py").read_text() == GREET
        assert (rig.worktree("kit", bye_task) / "farewell.py").read_text() == FAREWELL
        assert "Add greet" in git(rig.worktree("juniper", greet_task), "log", "-1", "--format=%s")
        assert git(rig.worktree("kit", bye_task), "log", "-1", "--format=%an").strip() == "AgentCraft Kit"
        assert f"CI passed on {greet_task}" in c.feed() and f"CI passed on {bye_task}" in c.feed()

        await c.answer(by_task[greet_task], 0)  # Merge
        await c.answer(by_task[bye_task], 1, text="let farewell take a name")  # Request changes
        await wait_for(lambda: c.tasks[greet_task]["status"] == "done", 30, "greet merged")
        second = await wait_for(lambda: c.open_decisions("merge", task=bye_task), 60, "the revised task's merge decision")
        assert second[0]["id"] != by_task[bye_task]["id"]
        await c.answer(second[0], 0)
        await wait_for(lambda: c.tasks[bye_task]["status"] == "done", 30, "farewell merged")
        await wait_for(lambda: c.goals[goal]["status"] == "done", 30, "the goal done")

        # the final repository holds both changes, merged into main by the user's identity
        tree = git(rig.repo, "ls-tree", "--name-only", "main").split()
        assert "greet.py" in tree and "farewell.py" in tree
        assert git(rig.repo, "show", "main:greet.py") == GREET
        assert "def farewell(who='you')" in git(rig.repo, "show", "main:farewell.py")
        assert git(rig.repo, "log", "-1", "--format=%an", "main").strip() == "User One"
        assert git(rig.repo, "status", "--porcelain") == ""
        assert "Plan: greet() by Juniper" in rig.d.memory.read("shared/plan")

        # the revision resumed kit's session: a new CLI process with --resume kit-1 and the user's note
        kit_runs = cli_runs(fake, "kit")
        assert len(kit_runs) == 2
        assert opt(kit_runs[0]["argv"], "--resume") is None
        assert opt(kit_runs[1]["argv"], "--resume") == "kit-1"
        assert "let farewell take a name" in prompts_of(fake, kit_runs[1]["pid"])[0]
        # the lead: one plan and three reviews, each request_merge naming the task of its prompt
        lead_runs = cli_runs(fake, "marlow")
        assert len(lead_runs) == 4
        # one turn at a time per agent: both tasks reached review together, the second review waited
        for before, after in itertools.pairwise(lead_runs):
            assert max(r["t"] for r in fake.entries() if r["pid"] == before["pid"]) <= after["t"]
        reviewed = [e["text"] for e in fake.events("mcp_result") if e["mcp_result"] == "request_merge"]
        assert len(reviewed) == 3 and all("merge decision" in text for text in reviewed)
        # the lead worked in the user's checkout, read-only; workers in their worktrees
        assert {r["cwd"] for r in lead_runs} == {str(rig.repo)}
        assert cli_runs(fake, "juniper")[0]["cwd"] == str(rig.worktree("juniper", greet_task))
        # cost per turn, per agent / task / goal (differences of the CLI's cumulative cost)
        # every session ended (none left 'running' for a restart to resume by mistake)
        assert {k: v.state for k, v in rig.d.core.records(Session).items()} == dict.fromkeys(
            ("marlow:g1", "juniper:t1", "kit:t2", "marlow:t1", "marlow:t2"), "done")
        costs = rig.world.meta["costs"]

        assert costs["agent"]["kit"] == pytest.approx(0.25)
        assert costs["agent"]["marlow"] == pytest.approx(0.35)
        assert costs["task"][bye_task] == pytest.approx(0.25 + 0.05 * 2)
        assert costs["goal"][goal] == pytest.approx(0.2 + 0.1 + 0.25 + 0.15)
    finally:
        await rig.stop()
