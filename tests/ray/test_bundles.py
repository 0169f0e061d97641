"""What travels between the daemon and a node: incremental bundles and the uncommitted-work patch (real git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.executors import bundles
from foreman.repos._git import GitFailed

from ..rig import git, make_repo


def commit(repo: Path, name: str, text: str) -> str:
    (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", name)
    return git(repo, "rev-parse", "HEAD").strip()


def bare(root: Path) -> Path:
    git(root.parent, "init", "-q", "--bare", str(root))
    return root


async def test_a_bundle_after_the_first_carries_only_new_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    first = git(repo, "rev-parse", "HEAD").strip()
    full, refs = await bundles.make_bundle(repo, ["refs/heads/main"], set())
    assert full and refs == ["refs/heads/main"]
    node = bare(tmp_path / "node.git")
    await bundles.unbundle(node, full)
    big = commit(repo, "big.txt", "x" * 50_000)
    tip = commit(repo, "small.txt", "small\n")
    delta, _ = await bundles.make_bundle(repo, ["refs/heads/main"], {first})
    assert delta and len(delta) < len(full) + 50_000
    with pytest.raises(GitFailed):  # a node without the first bundle cannot take the increment
        await bundles.unbundle(bare(tmp_path / "empty.git"), delta)
    await bundles.unbundle(node, delta)
    assert git(node, "cat-file", "-t", tip).strip() == "commit" and git(node, "cat-file", "-t", big).strip() == "commit"
    assert await bundles.make_bundle(repo, ["refs/heads/main"], {tip}) == (None, [])  # nothing new: nothing sent


async def test_uncommitted_work_travels_as_a_patch_and_settles_exactly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, files={"a.txt": "a\n", "b.txt": "b\n"})
    tip = git(repo, "rev-parse", "HEAD").strip()
    assert await bundles.wip_patch(repo) == b""
    tracked = sorted(p.name for p in repo.iterdir() if p.is_file())
    (repo / tracked[0]).write_text("changed\n")
    (repo / tracked[1]).unlink()
    (repo / "new dir").mkdir()
    (repo / "new dir" / "blob.bin").write_bytes(bytes(range(256)))
    (repo / ".gitignore").write_text("ignored.txt\n")
    (repo / "ignored.txt").write_text("stays here\n")
    git(repo, "add", tracked[0])  # something staged: the patch must not disturb the index
    staged = git(repo, "diff", "--cached", "--name-only")
    patch = await bundles.wip_patch(repo)
    assert patch and git(repo, "diff", "--cached", "--name-only") == staged
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    (other / "stray.txt").write_text("an untracked file the daemon never had\n")
    await bundles.settle(other, tip, patch)
    assert (other / tracked[0]).read_text() == "changed\n" and not (other / tracked[1]).exists()
    assert (other / "new dir" / "blob.bin").read_bytes() == bytes(range(256))
    assert not (other / "stray.txt").exists() and not (other / "ignored.txt").exists()
    assert git(other, "rev-parse", "HEAD").strip() == tip
