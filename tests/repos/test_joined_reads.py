"""Reads joined into one git process (issue 35) answer exactly as the separate reads did: several
revisions in one ``rev-parse``, a snapshot's HEAD and branch in one, a task branch's refs in one
``for-each-ref``, on the odd cases too (a detached or unborn HEAD, a file named HEAD, a symbolic
branch whose target is missing)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from foreman.repos import refs
from foreman.repos._git import rev_parse, rev_parse_all
from foreman.repos._snapshot import snapshot
from foreman.repos.mergetest import run_merge_test

from ..rig import git, make_repo


def worktree(repo: Path, tmp: Path, branch: str = "agentcraft/kit/t1") -> Path:
    wt = tmp / "wt"
    git(repo, "worktree", "add", "-q", "-b", branch, str(wt), "main")
    return wt


async def test_several_revisions_in_one_rev_parse_or_none_when_any_is_missing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    head, tree = git(repo, "rev-parse", "main", "main^{tree}").split()
    (repo / "main^{commit}").write_text("a file named like a revision\n")
    assert await rev_parse_all(repo, "main^{commit}", "main^{tree}") == [head, tree]
    assert await rev_parse_all(repo, "main^{commit}", "nope^{commit}") is None
    assert await rev_parse_all(repo, "main..main") is None  # (a range is two lines: not one revision)
    assert await rev_parse_all(repo, f"{head}^{{commit}}") == [await rev_parse(repo, head)]


async def test_a_snapshot_reads_head_and_its_branch_as_symbolic_ref_and_rev_parse_did(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = worktree(repo, tmp_path)
    tip = git(repo, "rev-parse", "main").strip()
    (wt / "HEAD").write_text("a file named HEAD\n")
    snap = await snapshot(repo, wt)
    assert (snap.head_ref, snap.head) == ("refs/heads/agentcraft/kit/t1", tip)
    git(wt, "switch", "-q", "--detach")
    snap = await snapshot(repo, wt)
    assert (snap.head_ref, snap.head) == (None, tip)
    git(wt, "switch", "-q", "--orphan", "fresh")
    snap = await snapshot(repo, wt)
    assert (snap.head_ref, snap.head) == ("refs/heads/fresh", None)


async def test_read_branch_answers_as_the_single_reads(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    branch = "agentcraft/kit/t1"
    worktree(repo, tmp_path, branch)
    tip, tree = git(repo, "rev-parse", "main", "main^{tree}").split()

    async def single() -> tuple[str | None, str | None, str | None]:
        return (await refs.symbolic_target(repo, branch), await refs.branch_tip(repo, branch),
                await refs.last_known(repo, branch))

    state = await refs.read_branch(repo, branch)
    assert (state.symbolic, state.tip, state.tree, state.last) == (None, tip, tree, None)
    assert (state.symbolic, state.tip, state.last) == await single()
    await refs.remember_tip(repo, branch)
    state = await refs.read_branch(repo, branch)
    assert (state.symbolic, state.tip, state.last) == await single() == (None, tip, tip)

    subprocess.run(["git", "worktree", "remove", "--force", str(tmp_path / "wt")], cwd=repo, check=True)
    git(repo, "symbolic-ref", f"refs/heads/{branch}", "refs/heads/main")
    state = await refs.read_branch(repo, branch)
    assert (state.symbolic, state.tip, state.last) == await single() == ("refs/heads/main", tip, tip)
    git(repo, "symbolic-ref", f"refs/heads/{branch}", "refs/heads/gone")  # its target missing: not listed
    state = await refs.read_branch(repo, branch)
    assert (state.symbolic, state.tip, state.last) == await single() == ("refs/heads/gone", None, tip)
    assert (await refs.read_branch(repo, branch, symbolic=False)).symbolic is None

    git(repo, "update-ref", "--no-deref", "-d", f"refs/heads/{branch}")
    state = await refs.read_branch(repo, branch)
    assert (state.symbolic, state.tip, state.last) == await single() == (None, None, tip)


async def test_a_merge_test_whose_folder_a_crash_left_registered_and_gone_still_runs(tmp_path: Path) -> None:
    """The merge test prunes only when its worktree cannot be added (it pruned before every run):
    an entry a crash left, its folder deleted since, is pruned and the worktree made once more; a
    folder that is there is removed first; nothing of the test's is left afterwards."""
    repo = make_repo(tmp_path)
    folder = tmp_path / "merge-tests" / "d1"
    git(repo, "worktree", "add", "-q", "--detach", str(folder), "main")
    shutil.rmtree(folder)  # (registered, its folder gone: git refuses to add it again until pruned)
    res = await run_merge_test(repo, git(repo, "rev-parse", "main").strip(), folder, ["true"], env=dict(os.environ),
                               timeout=30)
    assert res.ok, res.output
    assert not folder.exists() and str(folder) not in git(repo, "worktree", "list")
    git(repo, "worktree", "add", "-q", "--detach", str(folder), "main")  # a leftover folder that is there
    res = await run_merge_test(repo, git(repo, "rev-parse", "main").strip(), folder, ["true"], env=dict(os.environ),
                               timeout=30)
    assert res.ok, res.output
    assert not folder.exists() and str(folder) not in git(repo, "worktree", "list")
