"""The sim lead plans for the team it has (issue 17 item 4): with ``--workers 7`` the two generated
workers get tasks of the plan, do their git work on their own branches, and the goal reaches done
with the same merged result as the five-worker script. A real daemon through the protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.backends.sim import patches
from foreman.backends.sim.plan import ASSIGN, plan_for

from ._sim import MERGED_TASKS, SimClient, SimDaemon, blobs, expected_main, first_option, git, run_to_end, start_daemon
from .conftest import SEED, run_async


def test_the_plan_deals_the_second_tasks_to_the_extra_workers_in_seat_order() -> None:
    assert plan_for([]) == ASSIGN
    assert plan_for(["ash", "bryn"]) == {**ASSIGN, "t2": "ash", "t7": "bryn", "t8": "ash", "t9": "bryn"}
    six = plan_for(["ash", "bryn", "cedar", "dale", "ember", "fern"])
    assert [six[p] for p in ("t2", "t7", "t8", "t9")] == ["ash", "bryn", "cedar", "dale"]
    assert {six[p] for p in ("t1", "t3", "t4", "t5", "t6")} == {"juniper", "kit", "wren", "tove", "rowan"}
    assert set(six.values()).isdisjoint({"ember", "fern"})  # nine tasks: the fifth and sixth extra get none


@pytest.mark.slow  # end to end: a scenario run to goal done with seven workers; slow suite since issue 38
def test_a_team_of_seven_gives_the_generated_workers_tasks_and_the_goal_reaches_done(tmp_path: Path) -> None:
    daemon, c = run_async(run_to_end(tmp_path / "seven", "--seed", SEED, "--workers", "7"))
    repo = daemon.repo
    goal = c.goal()
    assert (goal["status"], goal["progress"]) == ("done", 100)
    plan = {**ASSIGN, "t2": "ash", "t7": "bryn", "t8": "ash", "t9": "bryn"}
    assert {t: c.tasks[t]["assignee"] for t in c.tasks} == plan
    statuses = {t: c.tasks[t]["status"] for t in c.tasks}
    assert statuses == {**{t: "done" for t in MERGED_TASKS}, "t7": "cancelled", "t8": "cancelled"}
    # the generated workers did the work of their tasks: their own branches, commits as themselves, merged
    for pid in ("t2", "t9"):
        branch = c.tasks[pid]["branch"]
        assert branch.startswith(f"agentcraft/{plan[pid]}/{pid}-"), branch
        assert git(repo, "log", "--format=%an", "-1", branch) == f"AgentCraft {plan[pid].capitalize()}"
        git(repo, "merge-base", "--is-ancestor", branch, "main")  # (fails the test unless merged)
    states = [(m["agent"]["name"], m["agent"]["state"]) for m in c.messages if m["type"] == "agent.upsert"]
    for extra in ("ash", "bryn"):
        assert {s for n, s in states if n == extra} >= {"editing", "testing"}, extra
    texts = [f["text"] for f in c.feed]
    assert "Marlow planned for a team of 7 workers: Ash takes t2 and t8, Bryn takes t7 and t9" in texts
    assert any(t.startswith("CI passed on t9") for t in texts)
    # the same merged result as the five named workers' script: the same work reached main
    steps = {pid: patches.steps_for(pid, include_revisions=False) for pid in MERGED_TASKS}
    assert blobs(repo) == expected_main(repo, steps)
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.slow
def test_a_restart_with_a_smaller_team_gives_the_unstarted_tasks_of_the_plan_back(tmp_path: Path) -> None:
    """Planned for seven, killed before any extra worker started a task, restarted with five:
    the plan's tasks go back to the scripted workers and the goal still reaches done."""

    async def run() -> tuple[SimDaemon, SimClient]:
        home = tmp_path / "home"
        first = start_daemon(home, "--seed", SEED, "--workers", "7", speed=1.0)
        client = SimClient(answer=None)
        try:
            await client.connect(first.port, since=0)
            await client.wait_for(lambda c: any(f["text"].startswith("Marlow planned") for f in c.feed), 60, "the plan")
            assert {c["assignee"] for c in client.tasks.values()} >= {"ash", "bryn"}
            assert not any(t["status"] == "doing" and t["assignee"] in ("ash", "bryn") for t in client.tasks.values())
        finally:
            await client.close()
            first.kill()
        second = start_daemon(home, "--seed", SEED, "--workers", "5", reset=False)
        client = SimClient(answer=first_option)
        try:
            await client.connect(second.port)
            await client.wait_for(lambda c: c.finished, 90, "the scenario's end")
        finally:
            await client.close()
            second.stop()
        return second, client

    daemon, c = run_async(run())
    assert c.goal()["status"] == "done"
    assert {t: c.tasks[t]["assignee"] for t in ("t2", "t9")} == {"t2": ASSIGN["t2"], "t9": ASSIGN["t9"]}
    assert c.tasks["t2"]["branch"].startswith(f"agentcraft/{ASSIGN['t2']}/t2-")
    assert (c.agents["ash"]["active"], c.agents["bryn"]["active"]) == (False, False)
    steps = {pid: patches.steps_for(pid, include_revisions=False) for pid in MERGED_TASKS}
    assert blobs(daemon.repo) == expected_main(daemon.repo, steps)
