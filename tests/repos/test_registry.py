from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foreman.errors import NotARepoRoot
from foreman.repos._git import GitProcess
from foreman.repos.registry import default_base_branch, repo_status, resolve_repo_root

from .conftest import out, sh, write


async def test_root_resolves_to_itself(repo: Path) -> None:
    assert await resolve_repo_root(repo) == repo


async def test_nested_folder_is_refused_naming_the_root(repo: Path) -> None:
    with pytest.raises(NotARepoRoot) as info:
        await resolve_repo_root(repo / "src")
    assert f"add {repo} instead" in info.value.message
    assert info.value.code == "not_repo_root"


async def test_plain_folder_and_missing_folder_are_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotARepoRoot, match="not a git repository"):
        await resolve_repo_root(plain)
    with pytest.raises(NotARepoRoot, match="not a folder"):
        await resolve_repo_root(tmp_path / "missing")


async def test_linked_worktree_is_refused_naming_the_main_checkout(repo: Path, tmp_path: Path) -> None:
    sh(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    with pytest.raises(NotARepoRoot, match=f"add {repo} instead"):
        await resolve_repo_root(tmp_path / "side")


async def test_status_reports_base_head_and_dirty(repo: Path) -> None:
    status = await repo_status(repo)
    assert (status.base_branch, status.head, status.dirty, status.checkout) == ("main", out(repo, "rev-parse", "HEAD"), False, repo)
    write(repo / "untracked.txt", "x")
    assert not (await repo_status(repo)).dirty  # untracked files do not count
    write(repo / "README.md", "changed\n")
    assert (await repo_status(repo)).dirty
    sh(repo, "add", "README.md")
    assert (await repo_status(repo)).dirty  # staged counts too


async def test_status_follows_the_checkout_that_has_the_base(repo: Path, tmp_path: Path) -> None:
    sh(repo, "checkout", "-q", "-b", "feature")
    write(repo / "README.md", "dirty on feature\n")
    status = await repo_status(repo, "main")
    assert status.checkout is None and not status.dirty  # nobody has main checked out
    sh(repo, "worktree", "add", "-q", str(tmp_path / "mainwt"), "main")
    write(tmp_path / "mainwt" / "src" / "app.py", "changed\n")
    status = await repo_status(repo, "main")
    assert status.checkout == (tmp_path / "mainwt").resolve() and status.dirty


async def test_status_does_not_rewrite_the_users_index(repo: Path) -> None:
    write(repo / "README.md", "# demo\n")  # same content, new mtime: a refresh would rewrite the index
    index = repo / ".git" / "index"
    before = (index.stat().st_mtime_ns, index.read_bytes())
    await repo_status(repo)
    assert (index.stat().st_mtime_ns, index.read_bytes()) == before


async def test_default_base_branch_when_detached(repo: Path) -> None:
    assert await default_base_branch(repo) == "main"
    sh(repo, "checkout", "-q", "--detach")
    assert await default_base_branch(repo) == "main"


async def test_check_repo_ready_refuses_with_what_to_do(tmp_path: Path, repo: Path) -> None:
    import shutil

    from foreman.errors import RepoError
    from foreman.repos.registry import check_repo_ready

    await check_repo_ready(repo)
    empty = tmp_path / "empty"
    sh(tmp_path, "init", "-q", "-b", "main", str(empty))
    with pytest.raises(RepoError, match="no commits yet.*first commit"):
        await check_repo_ready(empty)
    with pytest.raises(RepoError, match="no branch 'trunk'"):
        await check_repo_ready(repo, "trunk")
    colon = tmp_path / "a:b"
    sh(tmp_path, "init", "-q", "-b", "main", str(colon))
    with pytest.raises(RepoError, match="contains ':'"):
        await check_repo_ready(colon)
    if shutil.which("git-lfs") is None:
        (repo / "assets").mkdir()
        (repo / "assets" / ".gitattributes").write_text("*.psd filter=lfs diff=lfs merge=lfs -text\n")
        sh(repo, "add", "-A")
        sh(repo, "commit", "-q", "-m", "lfs")
        with pytest.raises(RepoError, match="git-lfs is not installed"):
            await check_repo_ready(repo)


async def test_status_takes_the_bases_tip_from_its_checkout(
        repo: Path, tmp_path: Path, git_calls: list[list[str]]) -> None:
    """The clients' repository status after each merge: the worktree list that names the base's
    checkout names its tip too (its HEAD); the ref is read on its own only when no checkout has it."""
    asked = git_calls
    asked.clear()
    status = await repo_status(repo, "main")
    assert status.head == out(repo, "rev-parse", "main") and status.checkout == repo
    assert [argv[0] for argv in asked] == ["worktree", "status"]
    sh(repo, "checkout", "-q", "--detach")
    write(repo / "n.txt", "n\n")
    sh(repo, "add", "n.txt")
    sh(repo, "commit", "-qm", "detached")  # (main stays where it was)
    asked.clear()
    status = await repo_status(repo, "main")
    assert status.checkout is None and status.head == out(repo, "rev-parse", "main") != out(repo, "rev-parse", "HEAD")
    assert [argv[0] for argv in asked] == ["worktree", "rev-parse"]
