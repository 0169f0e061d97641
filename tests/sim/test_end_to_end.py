"""The whole sim scenario through a real daemon and the protocol, every decision answered "first option"."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import get_args

from foreman.backends.sim import patches
from foreman.backends.sim.plan import ASSIGN
from protocol.entities import AgentState, Station

from ._sim import MERGED_TASKS, blobs, expected_main, git
from .conftest import Run


def first_option_steps() -> dict[str, list[patches.Step]]:
    """What reaches main when every decision gets option 0: each merged task's first version."""
    return {pid: patches.steps_for(pid, include_revisions=False) for pid in MERGED_TASKS}


def run_tests_on(repo: Path, rev: str, dest: Path) -> subprocess.CompletedProcess[str]:
    """Export ``rev``'s tree to ``dest`` (git archive) and run the demo's unittest suite there."""
    data = subprocess.run(["git", "archive", "--format=tar", rev], cwd=repo, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))  # (3.11.4+)
    return subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests"], cwd=dest,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})


def test_goal_reaches_done_through_protocol_answers(first_run: Run) -> None:
    c = first_run.client
    goal = c.goal()
    assert (goal["status"], goal["progress"]) == ("done", 100)
    # every decision was answered by this client, through the protocol, with option 0
    assert c.answers and {o for _, o in c.answers} == {0}
    assert sorted(d for d, _ in c.answers) == sorted(c.decisions)
    for d in c.decisions.values():
        assert d["status"] == "answered" and d["answer"]["by"] == "user" and d["answer"]["option"] == 0, d
    kinds = [(d["kind"], d.get("task")) for d in c.decisions_of("permission") + c.decisions_of("question")]
    assert kinds == [("permission", "t5"), ("question", "t2"), ("question", None)]
    assert [d["task"] for d in c.decisions_of("merge")] == list(MERGED_TASKS)
    statuses = {t: c.tasks[t]["status"] for t in c.tasks}
    assert statuses == {**{t: "done" for t in MERGED_TASKS}, "t7": "cancelled", "t8": "cancelled"}
    # the team wraps up: everyone done, in the lounge
    assert {n: (a["state"], a["station"]) for n, a in c.agents.items()} == {
        n: ("done", "lounge") for n in ("marlow", "juniper", "kit", "wren", "rowan", "tove")}
    texts = [f["text"] for f in c.feed]
    assert texts.index("CI failed on t3") < texts.index("CI passed on t3")
    assert "Tove reproduced the bug on real data" in texts


def test_main_has_one_approved_merge_commit_per_merged_task(first_run: Run) -> None:
    repo, c = first_run.repo, first_run.client
    merges = git(repo, "log", "--first-parent", "--merges", "--reverse", "--format=%H %P|%s", "main").splitlines()
    assert len(merges) == len(MERGED_TASKS)
    for line, pid in zip(merges, MERGED_TASKS):
        shas, subject = line.split("|", 1)
        _, _first_parent, second_parent = shas.split()
        branch = c.tasks[pid]["branch"]
        assert branch.startswith(f"agentcraft/{ASSIGN[pid]}/{pid}-")
        assert subject == f"Merge {branch}: {c.tasks[pid]['title']}"
        assert second_parent == git(repo, "rev-parse", f"refs/heads/{branch}")  # the approved tip, not a copy
    # main is exactly the base plus every merged task's work, and the checkout is clean
    assert blobs(repo) == expected_main(repo, first_option_steps())
    assert git(repo, "status", "--porcelain") == ""
    heads = [m["repo"]["head"] for m in c.messages if m["type"] == "repo.upsert"]
    assert heads[-1] == git(repo, "rev-parse", "main")  # the daemon told clients about the last merge


def test_tests_pass_on_main_and_agent_branches_are_kept(first_run: Run, tmp_path: Path) -> None:
    repo, c = first_run.repo, first_run.client
    result = run_tests_on(repo, "main", tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "OK" in result.stderr
    branches = set(git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/agentcraft/").splitlines())
    assert branches == {c.tasks[t]["branch"] for t in c.tasks}
    assert len(branches) == len(patches.TASKS)


def test_every_agent_state_and_station_appears(first_run: Run) -> None:
    agents = [m["agent"] for m in first_run.client.messages if m["type"] == "agent.upsert"]
    assert {a["state"] for a in agents} == set(get_args(AgentState))
    assert {a["station"] for a in agents} == set(get_args(Station))
    assert {a["name"] for a in agents if a["state"] == "blocked"} == {"wren"}
    assert {a["name"] for a in agents if a["state"] == "error"} == {"rowan"}


def test_every_merge_of_the_main_job_was_tested_as_it_lands(first_run: Run) -> None:
    """The sim's team goes through the flow's merge queue (issue 36): each approved merge was built
    on main's tip and the demo's tests passed on that exact commit before main moved."""
    c = first_run.client
    for pid in MERGED_TASKS:
        test = c.tasks[pid]["mergeTest"]
        assert test is not None and test["state"] == "passed", (pid, test)
    texts = [f["text"] for f in c.feed]
    assert all(any(t.startswith(f"{pid}: testing its merge into main") for t in texts) for pid in MERGED_TASKS)


def test_the_permission_says_what_always_allow_covers_once(first_run: Run) -> None:
    """Found by a newcomer: the permission's detail read '"Always allow for this agent" covers:
    "Always allow for this agent" covers: only the exact command ...'."""
    (perm,) = first_run.client.decisions_of("permission")
    assert perm["detail"].count('"Always allow for this agent" covers:') == 1, perm["detail"]
