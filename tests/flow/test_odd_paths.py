"""A repository whose folder holds characters beyond plain ASCII letters and digits works end to
end (issue 37 item 1): its first task used to raise inside the scheduling loop (the worktree
folder was named after the repository and refused), which stopped scheduling for every repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.repos.worktrees import repo_folder, worktree_path

from ..conductor.scripted import ScriptedRig, commits_then_review
from ..rig import PYPROJECT, git, make_repo, wait_for

NAMES = ["café notes", "it's \"quoted\"", "tab\tand;semi", "日本語", "x" * 80, "..."]


@pytest.mark.parametrize("name", NAMES)
def test_every_repository_name_git_accepts_gets_a_plain_worktree_folder(name: str, tmp_path: Path) -> None:
    folder = repo_folder(name)
    assert folder.isascii() and "/" not in folder and ".." not in folder and len(folder) <= 40
    assert repo_folder(name) == folder and repo_folder(name + "!") != folder  # stable, and distinct
    assert worktree_path(tmp_path, name, "kit", "t1") == tmp_path / "worktrees" / folder / "kit-t1"
    assert repo_folder("proj") == "proj"  # a plain name keeps its folder (homes made before this)


async def test_a_task_in_a_repository_with_an_odd_name_merges_and_another_goes_on(tmp_path: Path) -> None:
    odd = make_repo(tmp_path, name="café notes", files=PYPROJECT)
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    try:
        await rig.start()
        await rig.d.add_repo(str(odd))
        tasks = [rig.d.act(lambda c, now, r=r: c.create_task(f"Add a file to {r}", now, repo=r, assignee="kit")).id
                 for r in ("café notes", "proj")]
        for t in tasks:
            dec = await wait_for(lambda t=t: rig.open_decision(t), 60, f"{t}'s merge decision")
            await rig.c.answer(dec.id, 0)
            await rig.wait_status(t, "done", timeout=60)
        assert "kit-t1.txt" in git(odd, "ls-tree", "--name-only", "main")
        assert "kit-t2.txt" in git(rig.repo, "ls-tree", "--name-only", "main")
    finally:
        await rig.stop()
