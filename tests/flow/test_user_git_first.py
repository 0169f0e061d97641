"""The user's git operations come first (issue 37 item 2): a rebase, merge, cherry-pick, bisect or
``git am`` in progress in the user's checkout, or a git lock held there, holds an approved merge
with the reason in the feed; it lands once the user is done. Before, the merge moved the base
branch under the user's operation (or re-opened the decision, for a lock)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conductor.scripted import ScriptedRig, commits_then_review
from ..rig import git, wait_for


def run(repo: Path, *args: str, ok: bool = True) -> None:
    ident = ["-c", "user.name=User One", "-c", "user.email=one@example.com", "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", *ident, *args], cwd=repo, capture_output=True, text=True)
    assert (done.returncode == 0) == ok, (args, done.stdout, done.stderr)


def diverge(repo: Path) -> None:
    """A branch ``side`` and main each change proj.py's first line: applying one onto the other conflicts."""
    run(repo, "checkout", "-q", "-b", "side")
    (repo / "proj.py").write_text("def hello():\n    return 'side'\n")
    run(repo, "commit", "-qam", "side's hello")
    run(repo, "checkout", "-q", "main")
    (repo / "proj.py").write_text("def hello():\n    return 'main'\n")
    run(repo, "commit", "-qam", "main's hello")


def merging(repo: Path) -> Callable[[], None]:
    diverge(repo)
    run(repo, "merge", "side", ok=False)
    return lambda: run(repo, "merge", "--abort")


def cherry_picking(repo: Path) -> Callable[[], None]:
    diverge(repo)
    run(repo, "cherry-pick", "side", ok=False)
    return lambda: run(repo, "cherry-pick", "--abort")


def rebasing(repo: Path) -> Callable[[], None]:
    diverge(repo)
    run(repo, "rebase", "side", ok=False)
    return lambda: run(repo, "rebase", "--abort")


def bisecting(repo: Path) -> Callable[[], None]:
    run(repo, "bisect", "start")
    return lambda: run(repo, "bisect", "reset")


def applying(repo: Path) -> Callable[[], None]:
    diverge(repo)
    patch = subprocess.run(["git", "format-patch", "-1", "--stdout", "side"], cwd=repo, capture_output=True,
                           text=True, check=True).stdout
    (repo.parent / "side.patch").write_text(patch)
    run(repo, "am", str(repo.parent / "side.patch"), ok=False)
    return lambda: run(repo, "am", "--abort")


def locked(repo: Path) -> Callable[[], None]:
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    return lock.unlink


OPERATIONS = {"a merge": merging, "a cherry-pick": cherry_picking, "a rebase": rebasing, "a bisect": bisecting,
              "git am": applying, "index.lock": locked}


@pytest.mark.parametrize("what", OPERATIONS)
async def test_an_approved_merge_waits_for_the_users_git_operation_then_lands(what: str, tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    try:
        await rig.start()
        t1 = rig.task("Add a file", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision")
        done = OPERATIONS[what](rig.repo)
        before = git(rig.repo, "rev-parse", "refs/heads/main")
        await rig.c.answer(dec.id, 0)
        line = await wait_for(lambda: next((f for f in rig.c.feed() if f.startswith(f"{dec.id}: {t1}'s merge waits")),
                                           None), 30, "the feed saying the merge waits")
        assert f"{what}" in line and str(rig.repo) in line
        assert git(rig.repo, "rev-parse", "refs/heads/main") == before  # nothing moved under the user
        assert rig.status(t1) == "review" and rig.world.decisions[dec.id].status == "answered"
        done()
        await rig.wait_status(t1, "done", timeout=30)
        assert "kit-t1.txt" in git(rig.repo, "ls-tree", "--name-only", "main")
    finally:
        await rig.stop()
