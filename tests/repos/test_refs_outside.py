"""What the Foreman tells apart when a task branch changed since it last knew it (issue 37 item 3):
moved on (kept), rewritten by its own worker (an amend: no change from outside while it works),
force-moved, deleted or replaced by an unrelated history; and recreating it keeps what was there."""

from __future__ import annotations

from pathlib import Path

from foreman.repos import refs

from .conftest import commit_all, out, sh, write

BRANCH = "agentcraft/kit/t1"


def on_branch(repo: Path) -> str:
    sh(repo, "checkout", "-q", "-b", BRANCH)
    write(repo / "work.txt", "one\n")
    return commit_all(repo, "work")


async def test_nothing_known_nothing_changed(repo: Path) -> None:
    on_branch(repo)
    assert await refs.outside_change(repo, BRANCH, "main") is None
    assert await refs.restore_branch(repo, BRANCH) is None


async def test_moving_on_is_no_change_and_an_amend_only_counts_for_a_branch_in_review(repo: Path) -> None:
    first = on_branch(repo)
    assert await refs.remember_tip(repo, BRANCH) == first
    assert out(repo, "rev-parse", refs.LAST_KNOWN + BRANCH) == first
    write(repo / "work.txt", "two\n")
    commit_all(repo, "more")
    assert await refs.outside_change(repo, BRANCH, "main") is None  # a descendant: moved on
    await refs.remember_tip(repo, BRANCH)
    sh(repo, "commit", "-q", "--amend", "-m", "more, amended")
    assert await refs.outside_change(repo, BRANCH, "main", rewrites=True) is None
    said = await refs.outside_change(repo, BRANCH, "main")
    assert said is not None and "was moved outside the Foreman" in said


async def test_deleted_and_unrelated(repo: Path) -> None:
    first = on_branch(repo)
    await refs.remember_tip(repo, BRANCH)
    sh(repo, "checkout", "-q", "main")
    sh(repo, "branch", "-D", BRANCH)
    for rewrites in (False, True):
        assert await refs.outside_change(repo, BRANCH, "main", rewrites=rewrites) == (
            f"its branch {BRANCH} was deleted outside the Foreman")
    assert await refs.restore_branch(repo, BRANCH) == f"{BRANCH} recreated at its last known commit {first[:12]}"
    assert out(repo, "rev-parse", BRANCH) == first
    orphan = out(repo, "commit-tree", "-m", "elsewhere", out(repo, "write-tree"))
    sh(repo, "update-ref", f"refs/heads/{BRANCH}", orphan)
    for rewrites in (False, True):
        said = await refs.outside_change(repo, BRANCH, "main", rewrites=rewrites)
        assert said is not None and "history unrelated to main" in said
    said = await refs.restore_branch(repo, BRANCH)
    assert said is not None and f"kept on {BRANCH}-outside-{orphan[:8]}" in said
    assert out(repo, "rev-parse", BRANCH) == first
    assert out(repo, "rev-parse", f"{BRANCH}-outside-{orphan[:8]}") == orphan  # nothing lost
