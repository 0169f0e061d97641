"""The merge-safety suite: a refused merge changes nothing in the user's checkout; an approved one
brings exactly the reviewed commit.

For each shape of the user's checkout that can make a merge go wrong, a fingerprint of the
checkout - every file under it, ignored ones included (path, mode, content), the index file,
``git status --porcelain=v2 --ignored`` and every ref plus ``HEAD`` - is taken before and after a
refused merge and must be identical. Real git, real files.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from foreman.errors import MergeRefused
from foreman.repos.merge import merge_branch

from .conftest import commit_all, out, sh, write

BRANCH = "agentcraft/kit/t1-feature"
AGENT_ENV = {"GIT_AUTHOR_NAME": "AgentCraft Kit", "GIT_AUTHOR_EMAIL": "kit@agentcraft.invalid",
             "GIT_COMMITTER_NAME": "AgentCraft Kit", "GIT_COMMITTER_EMAIL": "kit@agentcraft.invalid"}


def fingerprint(checkout: Path) -> str:
    """Hash every file of ``checkout`` (ignored included), its index, its status and the refs."""
    h = hashlib.sha256()
    gitdir = Path(out(checkout, "rev-parse", "--absolute-git-dir"))
    for dirpath, dirnames, filenames in os.walk(checkout):
        dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) == checkout and d == ".git"))
        rel_dir = os.path.relpath(dirpath, checkout)
        h.update(f"D {rel_dir} {os.lstat(dirpath).st_mode:o}\n".encode())
        for name in sorted(filenames):
            full = Path(dirpath) / name
            st = os.lstat(full)
            data = os.readlink(full).encode() if full.is_symlink() else full.read_bytes()
            h.update(f"F {rel_dir}/{name} {st.st_mode:o} {len(data)}\n".encode() + data)
    index = gitdir / "index"
    h.update(b"INDEX" + (index.read_bytes() if index.exists() else b"-"))
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    status = subprocess.run(["git", "status", "--porcelain=v2", "--ignored", "-z", "--untracked-files=all"],
                            cwd=checkout, env=env, capture_output=True, check=True).stdout
    h.update(b"STATUS" + status)
    h.update(b"REFS" + out(checkout, "for-each-ref", "--format=%(refname) %(objectname)").encode())
    head = sh(checkout, "symbolic-ref", "-q", "HEAD", check=False).stdout
    h.update(b"HEAD" + head.encode() + out(checkout, "rev-parse", "HEAD").encode())
    return h.hexdigest()


def agent_commit(repo: Path, files: dict[str, str | None], *, start: str = "main") -> str:
    """Make (or extend) BRANCH with one agent commit; ``None`` deletes a file. Returns the tip."""
    wt = repo.parent / "agent-wt"
    exists = sh(repo, "rev-parse", "--verify", "-q", BRANCH, check=False).returncode == 0
    sh(repo, "worktree", "add", "-q", *([str(wt), BRANCH] if exists else ["-b", BRANCH, str(wt), start]))
    for name, text in files.items():
        if text is None:
            (wt / name).unlink()
        else:
            write(wt / name, text)
    env = {**os.environ, **AGENT_ENV}
    sh(wt, "add", "-A", "-f", env=env)
    sh(wt, "commit", "-q", "-m", "agent work", env=env)
    tip = out(wt, "rev-parse", "HEAD")
    sh(repo, "worktree", "remove", "--force", str(wt))
    return tip


async def merge(repo: Path, tip: str | None = None):
    return await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="Merge t1",
                              sign=False, co_authors=[], commit=tip)


async def refused(repo: Path, checkouts: list[Path], tip: str) -> MergeRefused:
    """Merge, expect a refusal, and check every checkout's fingerprint is unchanged."""
    before = [fingerprint(c) for c in checkouts]
    refs = out(repo, "for-each-ref")
    with pytest.raises(MergeRefused) as info:
        await merge(repo, tip)
    assert [fingerprint(c) for c in checkouts] == before
    assert out(repo, "for-each-ref") == refs
    assert "Merge again" in str(info.value) or "review" in str(info.value)  # says what to do
    return info.value


async def approved(repo: Path, tip: str) -> str:
    """Merge and check the base now holds exactly the merge of ``tip`` and the checkout is clean."""
    before = out(repo, "rev-parse", "main")
    result = await merge(repo, tip)
    assert out(repo, "rev-parse", "main") == result.commit
    assert out(repo, "rev-list", "--parents", "-n1", "main").split() == [result.commit, before, tip]
    assert result.merged == tip
    return result.commit


@pytest.fixture
def unwritable() -> Iterator:
    """Make a folder unwritable, even for root (``chattr +i``) - undone at teardown."""
    made: list[Path] = []

    def lock(path: Path) -> None:
        if os.geteuid() == 0:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
                pytest.skip("running as root without chattr +i: no way to make a folder unwritable here")
        else:
            path.chmod(0o555)
        made.append(path)

    yield lock
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=False)
        else:
            path.chmod(0o755)


async def test_dirty_tracked_file_is_refused_naming_checkout_and_files(repo: Path) -> None:
    tip = agent_commit(repo, {"feature.txt": "new\n"})
    for i in range(7):
        write(repo / f"f{i}.txt", "x\n")
    commit_all(repo, "more files")
    tip = agent_commit(repo, {"feature.txt": "newer\n"})  # branch now behind main: still mergeable
    for i in range(7):
        write(repo / f"f{i}.txt", "edited\n")
    sh(repo, "add", "f0.txt")
    err = await refused(repo, [repo], tip)
    assert err.reason == "dirty" and str(repo) in str(err)
    assert "f0.txt, f1.txt, f2.txt, f3.txt, f4.txt and 2 more" in str(err) and len(err.files) == 7
    assert "Commit, stash or discard" in str(err)


async def test_untracked_file_in_the_way_is_refused(repo: Path) -> None:
    tip = agent_commit(repo, {"feature.txt": "agent\n", "docs/new.md": "agent\n"})
    write(repo / "feature.txt", "the user's own notes\n")
    err = await refused(repo, [repo], tip)
    assert err.reason == "untracked" and err.files == ["feature.txt"] and "feature.txt" in str(err)
    assert (repo / "feature.txt").read_text() == "the user's own notes\n"


async def test_only_files_at_paths_the_merge_writes_are_in_the_way(repo: Path) -> None:
    """The untracked/ignored check covers exactly the paths the merge writes: a user's file at a
    path it creates (here in a new nested folder) refuses; untracked and ignored files anywhere
    else - beside the written files, in the folders they go into, at the top - do not, and stay."""
    write(repo / ".gitignore", "*.log\n")
    commit_all(repo, "ignore logs")
    tip = agent_commit(repo, {"docs/guide/new.md": "agent\n", "src/app.py": "agent\n", "src/extra.py": "agent\n"})
    mine = {"notes.txt": "mine\n", "src/scratch.py": "mine\n", "docs/draft.md": "mine\n", "debug.log": "ignored\n",
            "src/trace.log": "ignored\n", "docs/guide/todo.txt": "mine\n"}
    for name, text in mine.items():
        write(repo / name, text)
    write(repo / "docs" / "guide" / "new.md", "the user's own\n")
    err = await refused(repo, [repo], tip)
    assert err.reason == "untracked" and err.files == ["docs/guide/new.md"]
    (repo / "docs" / "guide" / "new.md").unlink()
    await approved(repo, tip)
    assert (repo / "docs" / "guide" / "new.md").read_text() == "agent\n" and (repo / "src" / "extra.py").exists()
    assert {name: (repo / name).read_text() for name in mine} == mine
    status = out(repo, "status", "--porcelain", "--untracked-files=all")
    assert sorted(line[3:] for line in status.splitlines()) == sorted(n for n in mine if not n.endswith(".log"))


async def test_ignored_file_is_never_overwritten(repo: Path) -> None:
    """The agent un-ignores a file and commits it; the user's ignored file of that name stays."""
    write(repo / ".gitignore", "secret.env\nbuild\n")
    commit_all(repo, "ignore")
    tip = agent_commit(repo, {".gitignore": "", "secret.env": "AGENT=1\n", "build/out.txt": "agent\n"})
    write(repo / "secret.env", "TOKEN=the-users-own\n")
    write(repo / "build", "an ignored file where the agent wants a folder\n")
    err = await refused(repo, [repo], tip)
    assert err.reason == "untracked" and err.files == ["build", "secret.env"]
    assert (repo / "secret.env").read_text() == "TOKEN=the-users-own\n"
    (repo / "build").unlink()
    (repo / "secret.env").unlink()
    await approved(repo, tip)
    assert (repo / "secret.env").read_text() == "AGENT=1\n"


async def test_unwritable_folder_is_refused_before_anything_is_written(repo: Path, unwritable) -> None:
    tip = agent_commit(repo, {"README.md": "# agent\n", "src/new.py": "x = 1\n"})
    unwritable(repo / "src")
    err = await refused(repo, [repo], tip)
    assert err.reason == "unwritable" and err.files == ["src"] and "writable" in str(err)


async def test_index_lock_is_refused(repo: Path) -> None:
    tip = agent_commit(repo, {"feature.txt": "x\n"})
    (repo / ".git" / "index.lock").write_text("")
    err = await refused(repo, [repo], tip)
    assert err.reason == "locked" and "index.lock" in str(err)
    (repo / ".git" / "index.lock").unlink()
    await approved(repo, tip)


async def test_failure_part_way_is_rolled_back(repo: Path) -> None:
    """A smudge filter that fails on the third file: git has already written two; they are undone."""
    tip = agent_commit(repo, {".gitattributes": "*.bin filter=boom\n", "README.md": "# agent\n", "data.bin": "x\n",
                              "zz/new.txt": "z\n"})
    sh(repo, "config", "filter.boom.smudge", "false")
    sh(repo, "config", "filter.boom.clean", "cat")
    sh(repo, "config", "filter.boom.required", "true")
    git_alone = subprocess.run(["git", "merge", "--ff-only", "-q", tip], cwd=repo, capture_output=True)
    assert git_alone.returncode != 0 and out(repo, "status", "--porcelain")  # git itself leaves a mess
    sh(repo, "reset", "-q", "--hard")
    sh(repo, "clean", "-qfd")
    err = await refused(repo, [repo], tip)
    assert err.reason == "failed" and "restored as it was" in str(err) and err.files == []


@pytest.mark.skipif(shutil.which("git-lfs") is not None, reason="git-lfs is installed here")
async def test_missing_git_lfs_is_named_and_rolled_back(repo: Path) -> None:
    tip = agent_commit(repo, {".gitattributes": "*.psd filter=lfs diff=lfs merge=lfs -text\n",
                              "art.psd": "version https://git-lfs.github.com/spec/v1\n", "README.md": "# agent\n"})
    sh(repo, "config", "filter.lfs.process", "git-lfs filter-process")
    sh(repo, "config", "filter.lfs.required", "true")
    err = await refused(repo, [repo], tip)
    assert err.reason == "lfs" and "git-lfs is not installed" in str(err)


async def test_base_checked_out_twice_is_refused_naming_both(repo: Path, tmp_path: Path) -> None:
    tip = agent_commit(repo, {"feature.txt": "x\n"})
    second = tmp_path / "second"
    sh(repo, "worktree", "add", "-q", "-f", str(second), "main")
    err = await refused(repo, [repo, second], tip)
    assert err.reason == "checked_out_twice" and str(repo) in str(err) and str(second.resolve()) in str(err)
    assert out(second, "status", "--porcelain") == "" and out(repo, "status", "--porcelain") == ""
    sh(repo, "worktree", "remove", str(second))
    await approved(repo, tip)


async def test_detached_user_checkout_is_left_alone(repo: Path) -> None:
    tip = agent_commit(repo, {"feature.txt": "x\n"})
    sh(repo, "checkout", "-q", "--detach", "main")
    write(repo / "README.md", "the user's edit on a detached HEAD\n")
    moved = agent_commit(repo, {"feature.txt": "y\n"})
    before = fingerprint(repo)
    await refused(repo, [repo], tip)  # the branch moved since the decision: nothing changes
    commit = await approved(repo, moved)
    refs = out(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    assert f"refs/heads/main {commit}" in refs
    sh(repo, "update-ref", "refs/heads/main", f"{commit}^1")  # put the ref back: the checkout was untouched
    assert fingerprint(repo) == before


async def test_conflict_is_refused_naming_files(repo: Path) -> None:
    tip = agent_commit(repo, {"src/app.py": "agent\n", "README.md": "agent\n"})
    write(repo / "src" / "app.py", "user\n")
    write(repo / "README.md", "user\n")
    commit_all(repo, "user")
    err = await refused(repo, [repo], tip)
    assert err.reason == "conflict" and err.files == ["README.md", "src/app.py"]
    assert "README.md, src/app.py" in str(err) and "resolve" in str(err)


async def test_approved_merge_brings_exactly_the_reviewed_commit(repo: Path) -> None:
    tip = agent_commit(repo, {"feature.txt": "x\n", "README.md": None})
    write(repo / "notes.txt", "untracked, unrelated\n")
    commit = await approved(repo, tip)
    assert out(repo, "rev-parse", f"{commit}^{{tree}}") == out(repo, "rev-parse", f"{tip}^{{tree}}")
    assert out(repo, "status", "--porcelain") == "?? notes.txt" and not (repo / "README.md").exists()


async def test_base_checked_out_in_a_missing_locked_worktree_is_refused(repo: Path, tmp_path: Path) -> None:
    tip = agent_commit(repo, {"feature.txt": "x\n"})
    away = tmp_path / "usb" / "wt"
    sh(repo, "checkout", "-q", "--detach")
    sh(repo, "worktree", "add", "-q", str(away), "main")
    sh(repo, "worktree", "lock", "--reason", "on a usb drive", str(away))
    shutil.rmtree(tmp_path / "usb")
    err = await refused(repo, [repo], tip)
    assert err.reason == "checkout_missing" and str(away.resolve()) in str(err)


async def test_ref_lock_is_refused_and_a_late_one_is_rolled_back(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git writes the files *and the index*, then fails to lock the ref: both are put back."""
    from foreman.repos import _checkout

    tip = agent_commit(repo, {"README.md": "# agent\n", "new/file.txt": "n\n"})
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")
    err = await refused(repo, [repo], tip)
    assert err.reason == "locked" and "main.lock" in str(err)

    async def too_late(*args) -> None:  # the lock appears after the checks ran
        return None

    monkeypatch.setattr(_checkout, "preflight", too_late)
    err = await refused(repo, [repo], tip)
    assert err.reason == "failed" and "cannot lock ref" in str(err) and "restored as it was" in str(err)
    assert not (repo / "new").exists() and not (repo / ".git" / "agentcraft-index.backup").exists()
    lock.unlink()
    await approved(repo, tip)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("chattr") is None,
                    reason="an immutable file needs root and chattr; for other users git replaces a read-only file")
async def test_immutable_file_fails_part_way_and_is_rolled_back(repo: Path) -> None:
    """git writes README.md, then cannot replace the immutable src/app.py: README.md is put back."""
    tip = agent_commit(repo, {"README.md": "# agent\n", "src/app.py": "agent\n", "src/zz.py": "new\n"})
    target = repo / "src" / "app.py"
    if subprocess.run(["chattr", "+i", str(target)], capture_output=True).returncode != 0:
        pytest.skip("this filesystem does not support chattr +i")
    try:
        err = await refused(repo, [repo], tip)
    finally:
        subprocess.run(["chattr", "-i", str(target)], check=False)
    assert err.reason == "failed" and "src/app.py" in str(err) and "restored as it was" in str(err)
    assert (repo / "README.md").read_text() == "# demo\n"
