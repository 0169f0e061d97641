"""What travels between the daemon and a node: git bundles of a task's branch and a patch of
its uncommitted files.

Both sides keep the set of commit ids the other side has (``have``): every bundle excludes
them (``git bundle create ... --not <have>``), so after the first one a bundle carries only
the new commits (git-bundle(1): a bundle with prerequisites is unpacked only where they exist).
Uncommitted work travels as a binary patch (``git diff --binary HEAD <tree>``, git-apply(1)),
the tree written with a temporary index so the worktree's own index is never touched.

Only :func:`foreman.repos.git` runs git here (the daemon's clean environment); the same
functions run in the daemon and on the nodes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..repos import git, rev_parse

WIP_IDENTITY = {"GIT_AUTHOR_NAME": "AgentCraft Foreman", "GIT_AUTHOR_EMAIL": "foreman@agentcraft.invalid",
                "GIT_COMMITTER_NAME": "AgentCraft Foreman", "GIT_COMMITTER_EMAIL": "foreman@agentcraft.invalid"}


@dataclass
class Shipment:
    """One transfer of a task's state.

    Attributes:
        tip: the branch's commit id.
        bundle: a git bundle with the commits the other side lacks (None: it has them all).
        wip: a binary patch of the uncommitted files over ``tip`` (empty: none).
        base: the base branch's commit id (daemon -> node only; it travels in the bundle too).
        refs: the ref names the bundle carries (for people and tests).
    """

    tip: str
    bundle: bytes | None = None
    wip: bytes = b""
    base: str | None = None
    refs: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        """Bytes on the wire (bundle and patch)."""
        return len(self.bundle or b"") + len(self.wip)


async def make_bundle(repo: Path, refs: Iterable[str], have: Iterable[str]) -> tuple[bytes | None, list[str]]:
    """A bundle of ``refs`` (full ref names) without the commits in ``have``.

    Refs whose tip is already in ``have`` are left out; with none left there is nothing to send
    and the result is ``(None, [])`` (git refuses an empty bundle).

    Returns:
        ``(bundle bytes or None, the ref names it carries)``.

    Raises:
        GitFailed: git failed (a ref that does not exist ...).
    """
    have = set(have)
    wanted = []
    for ref in refs:
        sha = await rev_parse(repo, ref)
        if sha is not None and sha not in have:
            wanted.append(ref)
    if not wanted:
        return None, []
    known = [h for h in sorted(have) if await rev_parse(repo, f"{h}^{{commit}}")]
    with tempfile.TemporaryDirectory(prefix="foreman-bundle-") as tmp:
        out = Path(tmp) / "b.bundle"
        await git("bundle", "create", "-q", out, *wanted, *(["--not", *known] if known else []), cwd=repo)
        return out.read_bytes(), wanted


async def unbundle(repo: Path, data: bytes) -> None:
    """Store a bundle's commits in ``repo``'s object database (no ref changes: git-bundle(1) ``unbundle``).

    Raises:
        GitFailed: the bundle is damaged or lacks its prerequisites here.
    """
    with tempfile.TemporaryDirectory(prefix="foreman-bundle-") as tmp:
        path = Path(tmp) / "b.bundle"
        path.write_bytes(data)
        await git("bundle", "verify", "-q", path, cwd=repo)
        await git("bundle", "unbundle", path, cwd=repo)


async def wip_patch(worktree: Path) -> bytes:
    """A binary patch of ``worktree``'s uncommitted files (tracked and untracked, not ignored)
    over its HEAD; empty when it is clean. The worktree's index is left as it was."""
    fd, index = tempfile.mkstemp(prefix="foreman-index-")
    os.close(fd)
    env = {"GIT_INDEX_FILE": index, **WIP_IDENTITY}
    own = Path((await git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=worktree)).text)
    try:
        try:  # a copy of the worktree's index keeps its stat data: unchanged files are not hashed again
            shutil.copyfile(own, index)  # (what it had staged does not matter: add -A stages everything)
        except OSError:
            os.unlink(index)
            await git("read-tree", "HEAD", cwd=worktree, env=env)
        await git("add", "-A", cwd=worktree, env=env)
        tree = (await git("write-tree", cwd=worktree, env=env)).text
    finally:
        if os.path.exists(index):
            os.unlink(index)
    if tree == (await git("rev-parse", "HEAD^{tree}", cwd=worktree)).text:
        return b""
    return (await git("diff", "--binary", "--no-color", "--no-ext-diff", "HEAD", tree, cwd=worktree)).stdout


async def settle(worktree: Path, tip: str, wip: bytes) -> None:
    """Make ``worktree`` exactly ``tip`` plus the uncommitted ``wip`` patch: its branch moves to
    ``tip`` (``reset --hard``), untracked files go (``clean -fd``; ignored ones stay), the patch
    is applied to the files (not the index).

    Only for worktrees the Foreman owns and nobody edits meanwhile (a node's, or the daemon's
    mirror of a task worktree during a remote turn).

    Raises:
        GitFailed: ``tip`` is missing here or the patch does not apply.
    """
    await git("reset", "-q", "--hard", tip, cwd=worktree)
    await git("clean", "-fdq", cwd=worktree)
    if wip:
        await git("apply", "--binary", "-", cwd=worktree, input=wip)


async def head(worktree: Path) -> str:
    """The commit id checked out in ``worktree``."""
    return (await git("rev-parse", "HEAD", cwd=worktree)).text
