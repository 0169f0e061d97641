"""Restart: the daemon is SIGKILLed at many points of the scenario and restarted (no --reset).

Every run must end like an uninterrupted run with the same answers: the goal done, the same
tree on main, one merge commit per merged task (no merge done twice), a clean checkout.
Kill points are picked by watching protocol messages; at ``--speed`` 30 a scripted action's
pauses last tens of milliseconds, so a kill lands inside the stage (and inside a CI run or a
merge, which take longer than the client needs to react).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ._sim import MERGED_TASKS, SimClient, SimDaemon, git, start_daemon, tree_hash
from .conftest import Run

pytestmark = pytest.mark.slow

KILL_SPEED = 30.0
"""The speed of the incarnations that get killed."""
FINISH_SPEED = 1000.0
"""The speed of the last incarnation, which runs to the end."""
RUN_TIMEOUT = 90.0

Pred = Callable[[dict[str, Any]], bool]


def feed(text: str) -> Pred:
    return lambda m: m["type"] == "feed.append" and m["item"]["text"] == text


def agent(name: str, state: str, activity: str = "") -> Pred:
    return lambda m: (m["type"] == "agent.upsert" and m["agent"]["name"] == name and m["agent"]["state"] == state
                      and m["agent"]["activity"].startswith(activity))


def decision(kind: str, task: str | None, status: str) -> Pred:
    return lambda m: (m["type"] == "decision.upsert" and m["decision"]["kind"] == kind
                      and m["decision"].get("task") == task and m["decision"]["status"] == status)


def task(tid: str, status: str) -> Pred:
    return lambda m: m["type"] == "task.upsert" and m["task"]["id"] == tid and m["task"]["status"] == status


@dataclass(frozen=True)
class KillPoint:
    """Kill the daemon right after the ``nth`` message matching ``when``.

    Attributes:
        stage: the stage of the script (0 planning .. 16 the wrap-up) the kill lands in.
        not_yet: a feed line the restarted daemon must not have: proof the kill landed before
            that step was recorded (so the step really is redone after the restart). Only for
            steps that run git or the tests (tens of milliseconds, longer than the client needs
            to react); what the scenario does without awaiting lands before any kill can.
    """

    name: str
    stage: int
    when: Pred
    nth: int = 1
    not_yet: str | None = None


KILL_POINTS = (
    KillPoint("planning", 0, agent("marlow", "thinking", "planning the goal")),
    KillPoint("reading before the plan", 0, agent("marlow", "reading", "reading pocket-notes")),
    KillPoint("tasks planned", 0, task("t9", "todo")),
    KillPoint("t1 started", 1, feed("Juniper started t1 Add tags to notes")),
    KillPoint("during t1's CI run", 1, agent("juniper", "testing"), not_yet="CI passed on t1"),
    KillPoint("permission open", 2, decision("permission", "t5", "open")),
    KillPoint("permission answered", 2, decision("permission", "t5", "answered")),
    KillPoint("during t1's merge", 3, decision("merge", "t1", "answered"), not_yet="t1 done (merged)"),
    KillPoint("fan-out", 4, feed("Kit started t3 Search notes by tag")),
    KillPoint("busy: merge and question open", 5, decision("question", "t2", "open")),
    KillPoint("during t5's merge", 5, decision("merge", "t5", "answered"), not_yet="t5 done (merged)"),
    KillPoint("during t3's failing CI run", 6, agent("kit", "testing", "running the tests for t3"),
              not_yet="CI failed on t3"),
    KillPoint("t3's CI failed", 6, feed("CI failed on t3")),
    KillPoint("during t3's fixed CI run", 6, agent("kit", "testing", "running the tests for t3"), nth=2,
              not_yet="CI passed on t3"),
    KillPoint("during t2's merge", 7, decision("merge", "t2", "answered"), not_yet="t2 done (merged)"),
    KillPoint("t4 editing", 8, agent("wren", "editing")),
    KillPoint("t7 blocked", 9, task("t7", "blocked")),
    KillPoint("t8 cancelled", 10, task("t8", "cancelled")),
    KillPoint("overload error", 11, agent("rowan", "error")),
    KillPoint("recovered", 12, agent("rowan", "reading", "back:")),
    KillPoint("during t6's merge", 13, decision("merge", "t6", "answered"), not_yet="t6 done (merged)"),
    KillPoint("during t9's CI run", 14, agent("tove", "testing", "running the tests for t9"), not_yet="CI passed on t9"),
    KillPoint("final question open", 15, decision("question", None, "open")),
    KillPoint("final answered", 15, decision("question", None, "answered")),
    KillPoint("wrapping up", 16, agent("juniper", "done", "done for today")),
)


async def incarnation(home: Path, *, first: bool, speed: float, kill: KillPoint | None,
                      group: bool = False) -> tuple[SimDaemon, SimClient, bool]:
    """Run one daemon until ``kill`` fires (SIGKILL) or the scenario ends; return whether it was killed.

    Args:
        group: SIGKILL the daemon's whole process group (its git and test runs die too).
    """
    daemon = start_daemon(home, speed=speed, reset=first)
    killed = asyncio.Event()
    hits = 0

    def watch(msg: dict[str, Any]) -> None:
        nonlocal hits
        if kill is None or killed.is_set() or not kill.when(msg):
            return
        hits += 1
        if hits == kill.nth:
            os.killpg(daemon.proc.pid, signal.SIGKILL) if group else os.kill(daemon.proc.pid, signal.SIGKILL)
            killed.set()

    client = SimClient(on_message=watch)
    try:
        await client.connect(daemon.port, since=0 if first else None)
        await client.wait_for(lambda c: killed.is_set() or c.finished, RUN_TIMEOUT, f"kill point {kill}")
    finally:
        await client.close()
        if killed.is_set():
            daemon.proc.wait(10)
        else:
            daemon.stop()
    return daemon, client, killed.is_set()


def check_final(client: SimClient, daemon: SimDaemon, reference: Run) -> None:
    """The end state of an interrupted run equals the uninterrupted one's."""
    goal = client.goal()
    assert (goal["status"], goal["progress"]) == ("done", 100)
    assert client.finished
    repo = daemon.repo
    assert tree_hash(repo) == reference.tree
    merges = git(repo, "log", "--first-parent", "--merges", "--format=%s", "main").splitlines()
    assert len(merges) == len(MERGED_TASKS), merges  # nothing merged twice
    assert git(repo, "status", "--porcelain") == ""
    branches = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/agentcraft/").splitlines()
    assert len(branches) == 9
    assert sorted(t["status"] for t in client.tasks.values()) == ["cancelled"] * 2 + ["done"] * 7
    git(repo, "fsck", "--no-progress", "--no-dangling")
    for wt in git(repo, "worktree", "list", "--porcelain").split("\n\n")[1:]:
        path = wt.splitlines()[0].removeprefix("worktree ")
        assert git(Path(path), "status", "--porcelain") == "", path


KILLS = [pytest.param(p, False, id=p.name) for p in KILL_POINTS] + [
    pytest.param(p, True, id=f"{p.name} (group)") for p in KILL_POINTS if p.not_yet is not None]
"""Every point with only the daemon killed (its git/test children finish on their own), and
the points where git or a test run is in flight with the whole process group killed."""


@pytest.mark.parametrize(("point", "group"), KILLS)
async def test_killed_once_ends_like_an_uninterrupted_run(point: KillPoint, group: bool, tmp_path: Path,
                                                          first_run: Run) -> None:
    daemon, _, killed = await incarnation(tmp_path, first=True, speed=KILL_SPEED, kill=point, group=group)
    assert killed, f"{point.name} never happened"
    daemon, client, killed = await incarnation(tmp_path, first=False, speed=FINISH_SPEED, kill=None)
    if point.not_yet is not None:
        # the restarted daemon's snapshot shows the kill landed before the step was recorded
        restored = [f["text"] for f in client.snapshot["feed"]]
        assert point.not_yet not in restored, f"the kill landed after {point.not_yet!r}"
        assert point.not_yet in [f["text"] for f in client.feed]
    check_final(client, daemon, first_run)


def test_kill_points_cover_ten_stages() -> None:
    assert len({p.stage for p in KILL_POINTS}) >= 10


async def test_killed_again_and_again(tmp_path: Path, first_run: Run) -> None:
    """Kill every incarnation after it sent 30 state messages, until the scenario ends."""
    kills = 0
    for _ in range(40):
        seen = [0]

        def every_30(msg: dict[str, Any], seen: list[int] = seen) -> bool:
            seen[0] += 1
            return seen[0] == 30

        daemon, client, killed = await incarnation(tmp_path, first=kills == 0, speed=KILL_SPEED,
                                                   kill=KillPoint("every 30", -1, every_30))
        if not killed:
            break
        kills += 1
    else:
        pytest.fail("the scenario never finished")
    assert kills >= 6
    check_final(client, daemon, first_run)


async def test_merge_done_but_not_recorded_is_not_merged_twice(tmp_path: Path, first_run: Run) -> None:
    """The crash the sim's merge step must survive: main got the merge, the store did not.

    The daemon is killed right after t1's Merge answer; if its merge had not reached main yet,
    the test merges the branch itself (as the killed merge would have), then restarts.
    """
    point = next(p for p in KILL_POINTS if p.name == "during t1's merge")
    daemon, client, killed = await incarnation(tmp_path, first=True, speed=KILL_SPEED, kill=point)
    assert killed
    repo, branch = daemon.repo, client.tasks["t1"]["branch"]
    before = git(repo, "rev-list", "--count", "--merges", "main")
    done = subprocess.run(["git", "merge-base", "--is-ancestor", branch, "main"], cwd=repo, check=False)  # noqa: ASYNC221
    if done.returncode != 0:
        git(repo, "-c", "commit.gpgsign=false", "merge", "--no-ff", "--no-edit", branch)
    daemon, client, _ = await incarnation(tmp_path, first=False, speed=FINISH_SPEED, kill=None)
    assert "t1 done (merged)" not in [f["text"] for f in client.snapshot["feed"]]
    assert client.tasks["t1"]["status"] == "done"
    assert int(git(repo, "rev-list", "--count", "--merges", "main")) == int(before) + (0 if done.returncode == 0 else 1) + 6
    check_final(client, daemon, first_run)
