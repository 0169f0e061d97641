"""Merge trains (issue 36 item 2, ``--merge-train 2``): the second approved merge is tested on top of
the first while the first is tested, and lands right after it, exactly the commit tested; a red
head, the base moving from outside and a held head each discard the speculative result. Real
daemon, real git, a real CI command (a Python script) run on each merge commit.

The CI script logs which tasks' files the tree it runs on holds (``start t1+t2``), waits until
a gate file exists (``go``, or ``go-<tree>`` for that tree alone), then fails when the tree holds
a task marked red (``red-<task>``; only in a merge test's folder, so the task's own CI passes)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult

from ..conductor.scripted import ScriptedRig, done, write_and_commit
from ..rig import git, wait_for

CI = """\
import os, pathlib, sys, time
ctl = pathlib.Path(sys.argv[1])
tree = "+".join(sorted(p.stem for p in pathlib.Path(".").glob("t[0-9]*.txt"))) or "none"
merge = "merge-tests" in os.getcwd()
with open(ctl / "log", "a") as log:
    log.write(f"start {tree}\\n" if merge else f"own {tree}\\n")
while merge and not (ctl / "go").exists() and not (ctl / f"go-{tree}").exists():
    time.sleep(0.05)
red = merge and any((ctl / f"red-{t}").exists() for t in tree.split("+"))
with open(ctl / "log", "a") as log:
    log.write(f"end {tree} {'red' if red else 'green'}\\n" if merge else "")
sys.exit(1 if red else 0)
"""


class Team:
    """Each worker adds ``<task>.txt`` and hands it in; a follow-up (a red merge) hands it in again."""

    def __init__(self) -> None:
        self.prompts: list[tuple[str, str, str]] = []

    def pick(self, req: TurnRequest) -> Any:
        return self.turn

    async def turn(self, req: TurnRequest, tools: AgentTools) -> TurnResult:
        self.prompts.append((req.agent, req.job, req.prompt))
        if req.job == "work":
            await write_and_commit(req, f"{req.task}.txt", f"{req.task}\n", req.task or "")
        await tools.call("update_task", {"status": "review"})
        return done()


class Train:
    """A rig with ``--merge-train`` ``train`` (kit and wren), the CI script and its control folder."""

    def __init__(self, tmp: Path, train: int = 2) -> None:
        self.ctl = tmp / "ctl"
        self.ctl.mkdir()
        script = tmp / "ci.py"
        script.write_text(CI)
        self.team = Team()
        self.rig = ScriptedRig(tmp, self.team.pick, lead_review=False, workers=["kit", "wren"], os_sandbox="off",
                               ci=f"{sys.executable} {script} {self.ctl}", merge_train=train)

    def log(self) -> list[str]:
        path = self.ctl / "log"
        return path.read_text().splitlines() if path.exists() else []

    def open(self, tree: str = "") -> None:
        (self.ctl / (f"go-{tree}" if tree else "go")).write_text("")

    async def approve_two(self) -> tuple[str, str, str, str]:
        """Start, let t1 (kit) and t2 (wren) reach their decisions and approve both in order; return
        (t1, t2, d1, d2)."""
        rig = self.rig
        await rig.start()
        t1, t2 = rig.task("One", assignee="kit"), rig.task("Two", assignee="wren")
        d1 = await wait_for(lambda: rig.open_decision(t1), 60, "t1's decision")
        d2 = await wait_for(lambda: rig.open_decision(t2), 60, "t2's decision")
        await rig.c.answer(d1.id, 0)
        await rig.c.answer(d2.id, 0)
        return t1, t2, d1.id, d2.id

    async def both_testing(self) -> None:
        """Wait until the head (t1 on main) and the second (t1+t2) are tested at the same time."""
        try:
            await wait_for(lambda: {"start t1", "start t1+t2"} <= set(self.log()), 30, "both merge tests running")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; CI log {self.log()}; feed {self.rig.c.feed()[-10:]}") from None
        assert not any(line.startswith("end ") for line in self.log())  # at once: neither had ended


def test_log_of_ci_script_names_the_tree(tmp_path: Path) -> None:
    """The CI script itself: a merge test's folder waits for its gate and fails on a red task."""
    ctl, wt = tmp_path / "ctl", tmp_path / "merge-tests" / "d1"
    ctl.mkdir()
    wt.mkdir(parents=True)
    (tmp_path / "ci.py").write_text(CI)
    for name in ("t1.txt", "t2.txt", "notes.txt"):
        (wt / name).write_text("")
    (ctl / "go-t1+t2").write_text("")
    (ctl / "red-t2").write_text("")
    res = subprocess.run([sys.executable, str(tmp_path / "ci.py"), str(ctl)], cwd=wt, timeout=30)
    assert res.returncode == 1 and (ctl / "log").read_text().splitlines() == ["start t1+t2", "end t1+t2 red"]


async def test_two_green_merges_are_tested_at_once_and_land_in_order_each_exactly_as_tested(tmp_path: Path) -> None:
    train = Train(tmp_path)
    rig = train.rig
    try:
        t1, t2, _, _ = await train.approve_two()
        base = git(rig.repo, "rev-parse", "main").strip()
        await train.both_testing()
        second = rig.world.tasks[t2]
        assert second.merge_queue == 2 and second.merge_test is not None and second.merge_test.behind == t1
        assert second.merge_test.state == "testing"
        train.open()
        await rig.wait_status(t2, "done", timeout=60)
        assert rig.status(t1) == "done"
        first, last = rig.world.tasks[t1].merge_test, rig.world.tasks[t2].merge_test
        assert first is not None and last is not None and first.state == last.state == "passed"
        tips = git(rig.repo, "rev-list", "--first-parent", "main").split()
        assert tips[:3] == [last.commit, first.commit, base]  # in order; t2 landed exactly its tested commit
        assert last.base == first.commit and first.base == base  # t2 was tested on t1's merge, not on main
        assert git(rig.repo, "rev-parse", f"{last.commit}^1").strip() == first.commit
        assert sorted(x for x in train.log() if x.startswith("start")) == ["start t1", "start t1+t2"]  # once each
    finally:
        await rig.stop()


async def test_with_train_1_the_second_is_tested_only_after_the_first_landed(tmp_path: Path) -> None:
    train = Train(tmp_path, train=1)
    rig = train.rig
    try:
        t1, t2, _, _ = await train.approve_two()
        await wait_for(lambda: "start t1" in train.log(), 30, "the head's test")
        await asyncio.sleep(1.0)
        assert "start t1+t2" not in train.log()  # one merge test at a time, as before
        train.open("t1")
        await wait_for(lambda: "start t1+t2" in train.log(), 30, "the second's test, after the first landed")
        assert train.log().index("end t1 green") < train.log().index("start t1+t2")
        assert rig.status(t1) == "done" and rig.world.tasks[t2].merge_test.behind is None  # type: ignore[union-attr]
        train.open()
        await rig.wait_status(t2, "done", timeout=60)
    finally:
        await rig.stop()


async def test_a_red_head_discards_the_speculative_result_and_the_second_lands_tested_on_the_base(
        tmp_path: Path) -> None:
    train = Train(tmp_path)
    rig = train.rig
    try:
        (train.ctl / "red-t1").write_text("")
        t1, t2, _, _ = await train.approve_two()
        base = git(rig.repo, "rev-parse", "main").strip()
        await train.both_testing()
        train.open("t1")  # the head goes red; t2's test on top of it is still running
        await wait_for(lambda: "start t2" in train.log(), 30, "t2 tested again, on main alone")
        assert "end t1+t2 green" not in train.log() and "end t1+t2 red" not in train.log()  # stopped, not waited for
        train.open("t2")
        await rig.wait_status(t2, "done", timeout=60)
        final = rig.world.tasks[t2].merge_test
        assert final is not None and final.state == "passed" and final.base == base and final.behind is None
        assert git(rig.repo, "rev-parse", "main").strip() == final.commit
        assert "t1.txt" not in git(rig.repo, "ls-tree", "--name-only", "main")  # the red merge never landed
        follow = await wait_for(lambda: next((p for a, j, p in train.team.prompts if a == "kit" and j == "followup"),
                                             None), 30, "t1 back with its worker")
        assert "merge into the base failed its test" in follow
        assert rig.world.tasks[t1].merge_test.state == "failed"  # type: ignore[union-attr]
    finally:
        await rig.stop()


async def test_the_base_moving_from_outside_during_a_speculative_test_retests_both(tmp_path: Path) -> None:
    train = Train(tmp_path)
    rig = train.rig
    try:
        t1, t2, _, _ = await train.approve_two()
        await train.both_testing()
        (rig.repo / "user.txt").write_text("the user's own commit\n")
        subprocess.run(["git", "add", "user.txt"], cwd=rig.repo, check=True)
        subprocess.run(["git", "commit", "-qm", "user's commit"], cwd=rig.repo, check=True)
        user_tip = git(rig.repo, "rev-parse", "main").strip()
        train.open()
        await rig.wait_status(t2, "done", timeout=60)
        first, last = rig.world.tasks[t1].merge_test, rig.world.tasks[t2].merge_test
        assert first is not None and last is not None
        assert first.base == user_tip and last.base == first.commit  # each tested again on the new reality
        assert git(rig.repo, "rev-list", "--first-parent", "--max-count=3", "main").split() == [
            last.commit, first.commit, user_tip]
        starts = [x for x in train.log() if x.startswith("start")]
        assert starts.count("start t1") == 2 and starts.count("start t1+t2") == 2
    finally:
        await rig.stop()


async def test_a_held_head_keeps_its_place_and_the_second_never_lands_before_it(tmp_path: Path) -> None:
    train = Train(tmp_path)
    rig = train.rig
    try:
        t1, t2, d1, _ = await train.approve_two()
        await train.both_testing()
        before = git(rig.repo, "rev-parse", "main").strip()
        subprocess.run(["git", "bisect", "start"], cwd=rig.repo, check=True, capture_output=True)  # the user's work
        train.open()
        await wait_for(lambda: any(f.startswith(f"{d1}: {t1}'s merge waits") for f in rig.c.feed()), 30, "t1 held")
        await wait_for(lambda: "end t1+t2 green" in train.log() or rig.world.tasks[t2].merge_test is None, 30,
                       "t2's speculative test over or discarded")
        await asyncio.sleep(1.5)
        assert git(rig.repo, "rev-parse", "main").strip() == before  # nothing landed, t2 neither
        assert (rig.status(t1), rig.status(t2)) == ("review", "review")
        assert (rig.world.tasks[t1].merge_queue, rig.world.tasks[t2].merge_queue) == (1, 2)
        subprocess.run(["git", "bisect", "reset"], cwd=rig.repo, check=True, capture_output=True)
        await rig.wait_status(t2, "done", timeout=60)
        first, last = rig.world.tasks[t1].merge_test, rig.world.tasks[t2].merge_test
        assert first is not None and last is not None and last.base == first.commit
        assert git(rig.repo, "rev-list", "--first-parent", "--max-count=3", "main").split() == [
            last.commit, first.commit, before]
    finally:
        await rig.stop()


async def test_a_restart_during_the_train_tests_again_from_the_head(tmp_path: Path) -> None:
    """An unfinished speculative test never counts: after a restart the head is tested first again,
    the second on top of it again, and both land."""
    train = Train(tmp_path)
    rig = train.rig
    try:
        t1, t2, _, _ = await train.approve_two()
        base = git(rig.repo, "rev-parse", "main").strip()
        await train.both_testing()
        await rig.stop()  # the daemon stops in the middle of both tests
        assert git(rig.repo, "rev-parse", "main").strip() == base
        assert not any(line.startswith("end ") for line in train.log())  # neither test finished
        await rig.start()
        try:
            await wait_for(lambda: train.log().count("start t1") == 2 and train.log().count("start t1+t2") == 2, 30,
                           "both tested again after the restart")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; CI log {train.log()}; feed {rig.c.feed()[-12:]}") from None
        train.open()
        await rig.wait_status(t2, "done", timeout=60)
        first, last = rig.world.tasks[t1].merge_test, rig.world.tasks[t2].merge_test
        assert first is not None and last is not None and last.base == first.commit and first.base == base
        assert git(rig.repo, "rev-list", "--first-parent", "--max-count=3", "main").split() == [
            last.commit, first.commit, base]
        assert not list(Path(rig.flags["home"]).rglob("merge-tests/*/d*"))  # no test's worktree is left
    finally:
        await rig.stop()


async def test_a_red_second_goes_back_once_the_head_landed_without_a_second_run(tmp_path: Path) -> None:
    """The second's test on top of the head fails: nothing happens until the head lands (the head
    might still go red); then the result is the second's own, on exactly the base's tip, and it goes
    back to its worker with it, not tested again."""
    train = Train(tmp_path)
    rig = train.rig
    try:
        (train.ctl / "red-t2").write_text("")
        t1, t2, _, _ = await train.approve_two()
        await train.both_testing()
        train.open("t1+t2")  # the second's speculative test ends first, red
        await wait_for(lambda: "end t1+t2 red" in train.log(), 30, "t2's red speculative result")
        await asyncio.sleep(0.5)
        assert rig.status(t2) == "review" and rig.world.tasks[t2].merge_queue == 2  # it waits for t1
        train.open("t1")
        await rig.wait_status(t1, "done", timeout=60)
        follow = await wait_for(lambda: next((p for a, j, p in train.team.prompts if a == "wren" and j == "followup"),
                                             None), 30, "t2 back with its worker")
        assert "merge into the base failed its test" in follow and "Merge agentcraft/kit/t1" in follow  # what it met
        landed = rig.world.tasks[t1].merge_test
        red = rig.world.tasks[t2].merge_test
        assert landed is not None and red is not None and red.state == "failed" and red.base == landed.commit
        assert git(rig.repo, "rev-parse", "main").strip() == landed.commit  # the red one never landed
        assert sorted(x for x in train.log() if x.startswith("start")) == ["start t1", "start t1+t2"]  # no second run (the two start at once, in either order)
    finally:
        await rig.stop()
