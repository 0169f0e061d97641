from __future__ import annotations

from pathlib import Path

import pytest

from foreman.errors import RepoError, WorktreeUnsafe
from foreman.repos.diffs import diff_commits, diff_range, diff_worktree
from foreman.repos.worktrees import ensure_worktree, worktree_path
from protocol.diff import DiffHunk, DiffLine

from .conftest import commit_all, out, sh, write


async def _branch_diff(repo: Path, change) -> object:
    """Commit ``change(repo)`` on a branch off main and return diff_commits(main, branch)."""
    sh(repo, "checkout", "-q", "-b", "work")
    change(repo)
    commit_all(repo, "change")
    sh(repo, "checkout", "-q", "main")
    return await diff_commits(repo, "main", "work")


def _by_path(diff) -> dict:
    return {f.path: f for f in diff.files}


async def test_text_changes_with_hunks_and_line_numbers(repo: Path) -> None:
    write(repo / "notes.txt", "one\ntwo\nthree\n")
    commit_all(repo, "notes")

    def change(root: Path) -> None:
        write(root / "notes.txt", "one\n2\nthree\nfour\n")
        write(root / "added.txt", "hello\n")
        (root / "README.md").unlink()

    diff = await _branch_diff(repo, change)
    files = _by_path(diff)
    assert sorted(files) == ["README.md", "added.txt", "notes.txt"]
    notes = files["notes.txt"]
    assert (notes.status, notes.additions, notes.deletions) == ("modified", 2, 1)
    assert notes.hunks == [DiffHunk(old_start=1, old_lines=3, new_start=1, new_lines=4, header="", lines=[
        DiffLine(op=" ", text="one", old=1, new=1),
        DiffLine(op="-", text="two", old=2),
        DiffLine(op="+", text="2", new=2),
        DiffLine(op=" ", text="three", old=3, new=3),
        DiffLine(op="+", text="four", new=4),
    ])]
    assert files["added.txt"].status == "added"
    assert files["added.txt"].hunks[0].lines == [DiffLine(op="+", text="hello", new=1)]
    readme = files["README.md"]
    assert (readme.status, readme.deletions, readme.hunks[0].lines[0]) == ("deleted", 1, DiffLine(op="-", text="# demo", old=1))
    assert (diff.files_changed, diff.additions, diff.deletions) == (3, 3, 2)
    assert diff.base == out(repo, "rev-parse", "main") and diff.head == out(repo, "rev-parse", "work")
    assert diff.repo == "repo"
    assert diff.wire()["filesChanged"] == 3


async def test_rename_keeps_old_path(repo: Path) -> None:
    write(repo / "long.txt", "".join(f"line {i}\n" for i in range(30)))
    commit_all(repo, "long")

    def change(root: Path) -> None:
        (root / "long.txt").rename(root / "moved.txt")
        write(root / "moved.txt", "".join(f"line {i}\n" for i in range(30)) + "extra\n")

    diff = await _branch_diff(repo, change)
    [moved] = diff.files
    assert (moved.path, moved.old_path, moved.status, moved.additions, moved.deletions) == (
        "moved.txt", "long.txt", "renamed", 1, 0)
    assert moved.hunks[0].lines[-1] == DiffLine(op="+", text="extra", new=31)


async def test_binary_files_are_summarised(repo: Path) -> None:
    write(repo / "img.bin", bytes(range(256)) * 4)
    commit_all(repo, "bin")

    def change(root: Path) -> None:
        write(root / "img.bin", bytes(reversed(range(256))) * 4)
        write(root / "new.bin", b"\x00\x01\x02binary")

    files = _by_path(await _branch_diff(repo, change))
    assert (files["img.bin"].status, files["img.bin"].binary, files["img.bin"].hunks) == ("binary", True, [])
    assert (files["new.bin"].status, files["new.bin"].binary, files["new.bin"].additions) == ("added", True, 0)


async def test_crlf_and_non_utf8_content(repo: Path) -> None:
    write(repo / "win.txt", b"a\r\nb\r\n")
    write(repo / "latin1.txt", b"caf\xe9\n")
    commit_all(repo, "crlf")

    def change(root: Path) -> None:
        write(root / "win.txt", b"a\r\nB\r\n")
        write(root / "latin1.txt", b"caf\xe9 cr\xe8me\n")

    files = _by_path(await _branch_diff(repo, change))
    assert [(ln.op, ln.text) for ln in files["win.txt"].hunks[0].lines] == [(" ", "a"), ("-", "b"), ("+", "B")]
    assert [(ln.op, ln.text) for ln in files["latin1.txt"].hunks[0].lines] == [("-", "caf\ufffd"), ("+", "caf\ufffd cr\ufffdme")]
    assert files["latin1.txt"].status == "modified"


async def test_paths_with_spaces_non_ascii_and_quotes(repo: Path) -> None:
    names = ["with space.txt", "dir one/naïve café.md", "日本語.txt", 'quote"and\\back.txt', "tab\there.txt"]

    def change(root: Path) -> None:
        for name in names:
            write(root / name, f"{name}\n")

    files = _by_path(await _branch_diff(repo, change))
    assert sorted(files) == sorted(names)
    for name in names:
        assert files[name].status == "added"
        assert files[name].hunks[0].lines == [DiffLine(op="+", text=name, new=1)]


async def test_huge_file_is_truncated_with_stats(repo: Path) -> None:
    def change(root: Path) -> None:
        write(root / "big.txt", "".join(f"row {i:07d} of a large generated file\n" for i in range(120_000)))  # ~4.6 MB
        write(root / "small.txt", "small\n")

    diff = await _branch_diff(repo, change)
    files = _by_path(diff)
    big = files["big.txt"]
    assert (big.truncated, big.hunks, big.additions, big.status) == (True, [], 120_000, "added")
    assert files["small.txt"].hunks[0].lines == [DiffLine(op="+", text="small", new=1)]
    assert diff.additions == 120_001


async def test_single_huge_line_is_truncated(repo: Path) -> None:
    diff = await _branch_diff(repo, lambda root: write(root / "min.js", "x" * 3_000_000 + "\n"))
    assert diff.files[0].truncated and diff.files[0].additions == 1


async def test_total_limit_truncates_later_files(repo: Path) -> None:
    sh(repo, "checkout", "-q", "-b", "work")
    for i in range(5):
        write(repo / f"f{i}.txt", "".join(f"{i} line {n}\n" for n in range(2000)))
    commit_all(repo, "many")
    diff = await diff_commits(repo, "main", "work", max_total_bytes=40_000)
    flags = [f.truncated for f in diff.files]
    assert flags[0] is False and flags[-1] is True
    assert all(f.additions == 2000 for f in diff.files)


async def test_submodule_and_symlinks(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    sh(lib, "init", "-q", "-b", "main")
    write(lib / "lib.txt", "v1\n")
    first = commit_all(lib, "v1")
    write(repo / "target.txt", "t\n")
    write(repo / "was_file", "plain\n")
    commit_all(repo, "files")
    sh(repo, "checkout", "-q", "-b", "work")
    sh(repo, "submodule", "add", "-q", str(lib), "vendor/lib")
    (repo / "link").symlink_to("target.txt")
    (repo / "was_file").unlink()
    (repo / "was_file").symlink_to("target.txt")
    commit_all(repo, "submodule and links")
    files = _by_path(await diff_commits(repo, "main", "work"))
    assert files["vendor/lib"].status == "submodule"
    assert files["vendor/lib"].hunks[0].lines == [DiffLine(op="+", text=f"Subproject commit {first}", new=1)]
    assert files["link"].status == "symlink"
    assert files["link"].hunks[0].lines == [DiffLine(op="+", text="target.txt", new=1)]
    changed = files["was_file"]  # a type change: git prints a deletion plus an addition
    assert changed.status == "symlink"
    assert [(ln.op, ln.text) for h in changed.hunks for ln in h.lines] == [("-", "plain"), ("+", "target.txt")]
    assert files[".gitmodules"].status == "added"
    # moving the submodule to a new commit
    write(lib / "lib.txt", "v2\n")
    second = commit_all(lib, "v2")
    sh(repo / "vendor" / "lib", "fetch", "-q", "origin")
    sh(repo / "vendor" / "lib", "checkout", "-q", second)
    commit_all(repo, "bump")
    bump = _by_path(await diff_commits(repo, "work~1", "work"))["vendor/lib"]
    assert bump.status == "submodule" and [ln.text for ln in bump.hunks[0].lines] == [
        f"Subproject commit {first}", f"Subproject commit {second}"]


async def test_diff_commits_uses_the_merge_base(repo: Path) -> None:
    sh(repo, "checkout", "-q", "-b", "work")
    write(repo / "agent.txt", "agent\n")
    commit_all(repo, "agent")
    sh(repo, "checkout", "-q", "main")
    write(repo / "user.txt", "user moved on\n")
    commit_all(repo, "user")
    diff = await diff_commits(repo, "main", "work")
    assert [f.path for f in diff.files] == ["agent.txt"]
    assert diff.base == out(repo, "rev-parse", "main~1")


async def test_worktree_diff_covers_committed_staged_unstaged_untracked(repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    write(wt.path / "committed.txt", "c\n")
    commit_all(wt.path, "agent commit")
    write(wt.path / "staged.txt", "s\n")
    sh(wt.path, "add", "staged.txt")
    write(wt.path / "src" / "app.py", "def main():\n    return 2\n")
    write(wt.path / "untracked dir" / "new.txt", "u\n")
    write(wt.path / ".gitignore", "*.log\n")
    write(wt.path / "noise.log", "ignored\n")
    admin = repo / ".git" / "worktrees" / wt.path.name
    status_before = out(wt.path, "status", "--porcelain")  # (refreshes the index itself)
    index_before = (admin / "index").read_bytes()
    diff = await diff_worktree(repo, wt.path, "main")
    assert sorted(f.path for f in diff.files) == [".gitignore", "committed.txt", "src/app.py", "staged.txt", "untracked dir/new.txt"]
    assert diff.base == out(repo, "rev-parse", "main")
    assert diff.head not in (out(wt.path, "rev-parse", "HEAD"), diff.base)  # the uncommitted state's tree
    assert (admin / "index").read_bytes() == index_before
    assert out(wt.path, "status", "--porcelain") == status_before
    commit_all(wt.path, "everything")
    assert (await diff_worktree(repo, wt.path, "main")).head == out(wt.path, "rev-parse", "HEAD")


async def test_worktree_diff_is_refused_for_a_broken_link(repo: Path, home_profile: Path) -> None:
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    (wt.path / ".git").unlink()
    with pytest.raises(WorktreeUnsafe):
        await diff_worktree(repo, wt.path, "main")


async def test_empty_diff(repo: Path) -> None:
    diff = await diff_commits(repo, "main", "main")
    assert (diff.files, diff.files_changed, diff.additions) == ([], 0, 0)


async def test_crlf_modes_and_head_kind_are_reported(tmp_path) -> None:
    """A CRLF -> LF change is visible per line; modes say what kind of file changed; an
    uncommitted worktree state is a tree, not a commit."""
    import subprocess

    from foreman.repos.diffs import diff_commits, diff_worktree

    repo = tmp_path / "r"
    repo.mkdir()
    run = lambda *a: subprocess.run(a, cwd=repo, check=True, capture_output=True)  # noqa: E731
    run("git", "init", "-q", "-b", "main")
    run("git", "config", "user.name", "U")
    run("git", "config", "user.email", "u@x")
    run("git", "config", "core.autocrlf", "false")
    (repo / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "run.sh").write_text("echo hi\n")
    run("git", "add", "-A")
    run("git", "commit", "-qm", "base")
    run("git", "checkout", "-q", "-b", "topic")
    (repo / "a.txt").write_bytes(b"one\ntwo\n")
    (repo / "run.sh").chmod(0o755)
    run("git", "add", "-A")
    run("git", "commit", "-qm", "lf")
    d = await diff_commits(repo, "main", "topic")
    a = next(f for f in d.files if f.path == "a.txt")
    removed = [ln for h in a.hunks for ln in h.lines if ln.op == "-"]
    added = [ln for h in a.hunks for ln in h.lines if ln.op == "+"]
    assert removed and all(ln.crlf for ln in removed) and added and not any(ln.crlf for ln in added)
    sh = next(f for f in d.files if f.path == "run.sh")
    assert (sh.old_mode, sh.new_mode) == ("100644", "100755")
    assert d.head_kind == "commit"
    run("git", "checkout", "-q", "main")
    wt = tmp_path / "wt"
    run("git", "worktree", "add", "-q", str(wt), "topic")
    (wt / "new.txt").write_text("x\n")
    w = await diff_worktree(repo, wt, "main")
    assert w.head_kind == "tree"
    new = next(f for f in w.files if f.path == "new.txt")
    assert (new.old_mode, new.new_mode) == (None, "100644")


async def test_diff_range_of_a_merged_decision_still_shows_what_was_merged(repo: Path) -> None:
    """``/diff`` of a merged decision: the recorded base and head give the same diff after the merge."""
    sh(repo, "checkout", "-q", "-b", "work")
    write(repo / "agent.txt", "agent\n")
    commit_all(repo, "agent")
    sh(repo, "checkout", "-q", "main")
    shown = await diff_commits(repo, "main", "work")
    sh(repo, "merge", "-q", "--no-ff", "-m", "merge", "work")
    assert (await diff_commits(repo, "main", "work")).files == []  # the branch diff is empty now
    after = await diff_range(repo, shown.base, shown.head)
    assert [f.path for f in after.files] == ["agent.txt"] and (after.base, after.head) == (shown.base, shown.head)
    assert after.files == shown.files
    with pytest.raises(RepoError):
        await diff_range(repo, shown.base, "0" * 40)
