"""Restart: ``foreman start --backend claude`` is SIGKILLed during a plan, a work turn, a review
and an open question; after each restart the interrupted turns resume with the same session id
(the fake sees ``--resume <id>``) and job kind, and the goal still ends with both tasks merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..claude.fake_claude import FakeClaude, opt
from .harness import (
    DaemonProcess,
    cli_runs,
    commit,
    events_of,
    git,
    live,
    make_repo,
    mcp,
    prompts_of,
    read,
    run,
    wait_for,
    write,
)

pytestmark = pytest.mark.timeout(180)

TASK_VAR = {"task": r"Review task (t\d+)"}


def scenario(fake: FakeClaude) -> None:
    pids = str(fake.pids_path)
    hang = {"hang": True}
    fake.script(queues={
        "marlow": [
            run([{"text": "Planning."}, mcp("write_memory", note="plan", text="Plan: greet, then farewell."), hang],
                session_id="lead-plan"),
            run([mcp("create_task", title="Add greet", description="greet.py", assignee="juniper"),
                 mcp("create_task", title="Add farewell", description="farewell.py", assignee="kit"),
                 {"text": "Planned."}], expect_resume="lead-plan"),
            run([read("${task}"), hang], session_id="lead-review-1", prompt_vars=TASK_VAR),
            run([mcp("request_merge", task="${task}", summary="reviewed before and after a restart")],
                expect_resume="lead-review-1"),
            run([mcp("request_merge", task="${task}", summary="fine")], session_id="lead-review-2",
                prompt_vars=TASK_VAR),
        ],
        "juniper": [
            run([write("greet.py", "def greet():\n    return 'greet'\n"), commit("Add greet"),
                 {"spawn": {"orphan": True}}, hang], session_id="jun-1", pids_file=pids),
            run([mcp("update_task", status="review"), {"text": "Committed before the restart."}],
                expect_resume="jun-1", check_dead=pids),
        ],
        "kit": [
            run([mcp("ask_user", question="Which word for farewell?", options=["Bye", "Farewell"])],
                session_id="kit-1"),
            run([write("farewell.py", "def farewell():\n    return 'Farewell'\n"), commit("Add farewell"),
                 mcp("update_task", status="review")], expect_resume="kit-1"),
        ],
    })


def started(fake: FakeClaude, queue: str, n: int) -> bool:
    return len(cli_runs(fake, queue)) >= n


@pytest.mark.slow
async def test_kill_during_plan_work_question_and_review(tmp_path: Path, fake: FakeClaude) -> None:
    scenario(fake)
    repo = make_repo(tmp_path)
    daemon = DaemonProcess(tmp_path, fake, repo, "--workers", "juniper,kit")
    try:
        # 1. killed during the plan (after its memory note, before any task)
        c = await daemon.start()
        goal = (await c.ok({"type": "goal.submit", "text": "greet and farewell", "repo": "proj"}))["result"]
        await wait_for(lambda: fake.events("mcp_result"), 30, "the plan's memory note")
        await c.close()
        daemon.kill()

        # 2. the plan resumes and still activates the goal; killed during juniper's work turn
        #    (committed, a child left running) and while kit's question is open
        c = await daemon.start()
        await wait_for(lambda: c.goals.get(goal, {}).get("status") == "active", 30, "the goal active")
        question = (await wait_for(lambda: c.open_decisions("question", askedBy="kit"), 30, "kit's question"))[0]
        await wait_for(lambda: len(fake.pids()) == 2, 30, "juniper's CLI and its orphan")
        tasks = {t["title"]: t["id"] for t in c.tasks.values()}
        await c.close()
        daemon.kill()
        orphan = fake.pids()[1]
        assert live([orphan]) == [orphan], "the orphan outlived the killed daemon"

        # 3. juniper's work resumes (the orphan is reaped first); the question is still open;
        #    killed during the lead's review of juniper's task
        c = await daemon.start()
        assert c.decisions[question["id"]]["status"] == "open"
        await wait_for(lambda: started(fake, "marlow", 3), 30, "the lead's review")
        review_pid = cli_runs(fake, "marlow")[2]["pid"]
        await wait_for(lambda: events_of(fake, review_pid, "permission"), 30, "the review reading the diff")
        assert c.decisions[question["id"]]["status"] == "open"
        await c.close()
        daemon.kill()

        # 4. the review resumes and ends in a merge decision; the question, open across three
        #    restarts, is answered and kit's session resumes with the answer
        c = await daemon.start()
        greet_merge = (await wait_for(lambda: c.open_decisions("merge", task=tasks["Add greet"]), 30,
                                      "the resumed review's merge decision"))[0]
        assert c.decisions[question["id"]]["status"] == "open"
        await c.answer(c.decisions[question["id"]], 1)
        bye_merge = (await wait_for(lambda: c.open_decisions("merge", task=tasks["Add farewell"]), 30,
                                    "kit's merge decision"))[0]
        await c.answer(greet_merge, 0)
        await c.answer(bye_merge, 0)
        await wait_for(lambda: c.goals[goal]["status"] == "done", 30, "the goal done")
        assert len([d for d in c.decisions.values() if d["kind"] == "merge"]) == 2
        assert [d["kind"] for d in c.decisions.values()].count("question") == 1
        await c.close()
        await daemon.stop()
    finally:
        daemon.kill()

    # same session ids and job kinds after each restart
    lead = cli_runs(fake, "marlow")
    assert [opt(r["argv"], "--resume") for r in lead] == [None, "lead-plan", None, "lead-review-1", None]
    assert [r["cwd"] for r in lead] == [str(repo)] * 5
    (merged,) = events_of(fake, lead[3]["pid"], "mcp_result")  # the resumed review still ends in a merge decision
    assert merged["mcp_result"] == "request_merge" and merged["text"].endswith(f"opened for {tasks['Add greet']}")
    jun = cli_runs(fake, "juniper")
    assert [opt(r["argv"], "--resume") for r in jun] == [None, "jun-1"]
    (check,) = fake.events("check_dead")
    assert check["alive"] == [] and orphan in check["check_dead"]
    kit = cli_runs(fake, "kit")
    assert [opt(r["argv"], "--resume") for r in kit] == [None, "kit-1"]
    kit_prompt = prompts_of(fake, kit[1]["pid"])[0]
    assert "Which word for farewell?" in kit_prompt and "The user answered: Farewell" in kit_prompt
    assert git(repo, "show", "main:greet.py") == "def greet():\n    return 'greet'\n"
    assert git(repo, "show", "main:farewell.py") == "def farewell():\n    return 'Farewell'\n"
    assert "Plan: greet, then farewell." in (daemon.home / "claude" / "memory" / "shared" / "plan.md").read_text()
