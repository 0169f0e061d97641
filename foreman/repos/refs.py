"""Branches and commits, as the rest of the daemon may ask about them (a public face over
:mod:`._git` and :mod:`._snapshot` for callers outside ``foreman.repos``).

All functions take the registered repository's root and short branch names or commit ids.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import RepoError
from ._git import ZERO_OID, GitFailed, StrPath, git, rev_parse
from ._snapshot import snapshot


async def branch_tip(repo_root: StrPath, branch: str) -> str | None:
    """Return the commit id at the tip of ``branch`` (short name), or None when it does not exist."""
    return await rev_parse(Path(repo_root), f"refs/heads/{branch}")


async def resolve_commit(repo_root: StrPath, rev: str) -> str | None:
    """Return the commit id ``rev`` names (a ref, a sha ...), or None when it names no commit."""
    return await rev_parse(Path(repo_root), rev)


async def is_ancestor(repo_root: StrPath, ancestor: str, descendant: str) -> bool:
    """True when ``ancestor`` is reachable from ``descendant`` (``git merge-base --is-ancestor``,
    exit 0: yes, 1: no; a commit is its own ancestor).

    Raises:
        GitFailed: git failed otherwise (an unknown commit ...).
    """
    args = ["merge-base", "--is-ancestor", ancestor, descendant]
    res = await git(*args, cwd=Path(repo_root), check=False)
    if res.rc not in (0, 1):
        raise GitFailed(args, res.rc, res.stderr.decode("utf-8", "replace"))
    return res.rc == 0


async def set_branch(repo_root: StrPath, branch: str, new: str, old: str | None, *, reason: str) -> None:
    """Point ``branch`` at ``new`` only if it still points at ``old`` (None: it must not exist),
    a compare-and-swap ``git update-ref -m <reason> <ref> <new> <old>`` (git-update-ref(1)).

    Raises:
        RepoError: the branch moved meanwhile, or git failed.
    """
    try:
        await git("update-ref", "-m", reason, f"refs/heads/{branch}", new, old or ZERO_OID, cwd=Path(repo_root))
    except GitFailed as exc:
        raise RepoError(f"could not move {branch} to {new[:12]}: {exc.message}") from exc


async def worktree_lacks_files(repo_root: StrPath, wt_path: StrPath, branch: str) -> bool:
    """True when files of ``branch``'s tip are missing from the worktree (its full state,
    untracked files included, compared with ``git diff-tree --diff-filter=D``).

    Raises:
        WorktreeUnsafe: the worktree's ``.git`` link is broken.
        RepoError: git failed.
    """
    tip = await branch_tip(repo_root, branch)
    if tip is None:
        return False
    snap = await snapshot(repo_root, wt_path)
    res = await git("diff-tree", "-r", "--name-only", "--diff-filter=D", tip, snap.tree, cwd=Path(repo_root))
    return bool(res.text)
