"""A task's branch or worktree changed outside the Foreman (issue 37 item 3): a deleted,
force-moved or unrelated-history branch, or a removed worktree folder, blocks the task with what
happened and the choices (``/task tN retry`` recreates the branch from the last known commit, which
the Foreman keeps a ref to; ``/task tN cancel``). Before, a deleted branch re-opened its merge
decision for ever ("the branch is gone"), a commit of leftovers onto it had no parent, and a
force-moved branch re-opened the decision with a diff that dropped the reviewed work."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult

from ..conductor.scripted import ScriptedRig, commits_then_review, done, write_and_commit
from ..rig import git, wait_for

LAST_KNOWN = "refs/agentcraft/last/"


def run(repo: Path, *args: str) -> str:
    ident = ["-c", "user.name=User One", "-c", "user.email=one@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *ident, *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def delete(repo: Path, branch: str) -> None:
    run(repo, "update-ref", "-d", f"refs/heads/{branch}")


def force_back(repo: Path, branch: str) -> None:
    run(repo, "update-ref", f"refs/heads/{branch}", "refs/heads/main")


def unrelated(repo: Path, branch: str) -> None:
    orphan = run(repo, "commit-tree", "-m", "someone else's history", run(repo, "write-tree"))
    run(repo, "update-ref", f"refs/heads/{branch}", orphan)


def symref(repo: Path, branch: str) -> None:
    run(repo, "symbolic-ref", f"refs/heads/{branch}", "refs/heads/main")


CHANGES: dict[str, tuple[Callable[[Path, str], None], str]] = {
    "deleted": (delete, "was deleted outside the Foreman"),
    "force-moved": (force_back, "was moved outside the Foreman"),
    "unrelated": (unrelated, "history unrelated to main"),
    "symbolic": (symref, "was made a symbolic ref to refs/heads/main outside the Foreman"),
}


def commits_anew() -> Callable[[TurnRequest, AgentTools], Awaitable[TurnResult]]:
    """A worker that commits a new line to ``<agent>-<task>.txt`` each turn, then hands the task in."""
    turns: list[str] = []

    async def script(req: TurnRequest, tools: AgentTools) -> TurnResult:
        turns.append(req.job)
        path = req.cwd / f"{req.agent}-{req.task}.txt"
        text = (path.read_text() if path.exists() else "") + f"turn {len(turns)}\n"
        await write_and_commit(req, path.name, text, f"{req.task}: turn {len(turns)}")
        await tools.call("update_task", {"status": "review"})
        return done()
    return script


async def to_decision(rig: ScriptedRig) -> tuple[str, Any, str]:
    """Start ``rig``, give kit a task and wait for its merge decision: (task, decision, branch)."""
    await rig.start()
    t1 = rig.task("Add a file", assignee="kit")
    dec = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision")
    return t1, dec, rig.world.tasks[t1].branch


@pytest.mark.parametrize("change", CHANGES)
async def test_a_branch_changed_under_an_answered_merge_blocks_and_retry_recreates_it(change: str,
                                                                                      tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_anew())
    try:
        t1, dec, branch = await to_decision(rig)
        reviewed = git(rig.repo, "rev-parse", f"refs/heads/{branch}").strip()
        assert git(rig.repo, "rev-parse", LAST_KNOWN + branch).strip() == reviewed  # the Foreman's ref to it
        act, said = CHANGES[change]
        act(rig.repo, branch)
        main_before = git(rig.repo, "rev-parse", "main").strip()
        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "blocked", timeout=30)
        reason = rig.world.tasks[t1].blocked_reason or ""
        assert said in reason and branch in reason and reviewed[:12] in reason, reason
        assert f"/task {t1} retry" in reason and f"/task {t1} cancel" in reason
        assert git(rig.repo, "rev-parse", "main").strip() == main_before  # nothing landed
        assert rig.open_decision(t1) is None  # no decision re-opening for ever
        await rig.c.ok({"type": "task.retry", "task": t1})
        dec2 = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision after the retry")
        tip = git(rig.repo, "rev-parse", f"refs/heads/{branch}").strip()
        assert run(rig.repo, "merge-base", "--is-ancestor", reviewed, tip) == ""  # rebuilt on the reviewed work
        await rig.c.answer(dec2.id, 0)
        await rig.wait_status(t1, "done", timeout=30)
        assert f"kit-{t1}.txt" in git(rig.repo, "ls-tree", "--name-only", "main")
    finally:
        await rig.stop()


@pytest.mark.parametrize("change", ["deleted", "symbolic"])
async def test_a_branch_changed_while_the_worker_works_blocks_at_the_hand_in(change: str, tmp_path: Path) -> None:
    """The branch is deleted (or made a symbolic ref to main) while the worker works, its leftovers
    uncommitted: the hand-in blocks the task. Before, the leftovers' commit had no parent (the whole
    tree as a new root), or went through the symbolic ref onto main with no decision."""
    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        await write_and_commit(req, "first.txt", "committed\n", "a start")
        (req.cwd / "left.txt").write_text("uncommitted\n")
        CHANGES[change][0](rig.repo, rig.world.tasks[req.task].branch)
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig.worker(tmp_path, work)
    try:
        await rig.start()
        roots = run(rig.repo, "rev-list", "--max-parents=0", "--all").split()
        main_before = run(rig.repo, "rev-parse", "main")
        t1 = rig.task("Leave work", assignee="kit")
        await rig.wait_status(t1, "blocked", timeout=30)
        reason = rig.world.tasks[t1].blocked_reason or ""
        assert CHANGES[change][1] in reason and f"/task {t1} retry" in reason, reason
        assert run(rig.repo, "rev-parse", "main") == main_before  # nothing reached main
        assert run(rig.repo, "rev-list", "--max-parents=0", "--all").split() == roots  # no new root commit
        await rig.c.ok({"type": "task.cancel", "task": t1})
        await rig.wait_status(t1, "cancelled", timeout=30)
        assert run(rig.repo, "rev-list", "--max-parents=0", "--all").split() == roots
    finally:
        await rig.stop()


async def test_a_removed_worktree_folder_blocks_and_retry_makes_a_new_one_from_the_branch(tmp_path: Path) -> None:
    turns: list[str] = []

    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        turns.append(req.job)
        if len(turns) > 1:
            return await commits_then_review()(req, tools)
        await write_and_commit(req, "first.txt", "first part\n", "first part")
        (req.cwd / "unsaved.txt").write_text("lost with the folder\n")
        shutil.rmtree(req.cwd)  # someone removes the folder while the task is handed in
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig.worker(tmp_path, work)
    try:
        await rig.start()
        t1 = rig.task("Add a file", assignee="kit")
        await rig.wait_status(t1, "blocked", timeout=30)
        reason = rig.world.tasks[t1].blocked_reason or ""
        path = rig.worktree("kit", t1)
        assert f"its worktree folder {path} was removed outside the Foreman" in reason, reason
        assert f"/task {t1} retry" in reason and f"/task {t1} cancel" in reason
        await rig.c.ok({"type": "task.retry", "task": t1})
        dec = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision after the retry")
        assert path.is_dir() and (path / "first.txt").is_file()  # a new worktree from the branch
        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "done", timeout=30)
        assert {"first.txt", f"kit-{t1}.txt"} <= set(git(rig.repo, "ls-tree", "--name-only", "main").split())
    finally:
        await rig.stop()


async def test_a_deleted_branch_with_no_commit_kept_blocks_and_retry_starts_from_the_base(tmp_path: Path) -> None:
    """Found by a newcomer: with the Foreman's ref to the last known commit deleted too, the merge
    re-opened its decision for ever ("the branch is gone"). It blocks; a retry starts from main."""
    rig = ScriptedRig.worker(tmp_path, commits_anew())
    try:
        t1, dec, branch = await to_decision(rig)
        delete(rig.repo, branch)
        run(rig.repo, "update-ref", "-d", LAST_KNOWN + branch)
        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "blocked", timeout=30)
        reason = rig.world.tasks[t1].blocked_reason or ""
        assert "was deleted outside the Foreman" in reason and "starts it again from main" in reason, reason
        await rig.c.ok({"type": "task.retry", "task": t1})
        dec2 = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision after the retry")
        await rig.c.answer(dec2.id, 0)
        await rig.wait_status(t1, "done", timeout=30)
    finally:
        await rig.stop()
