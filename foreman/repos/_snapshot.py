"""Worktree links and snapshots: the two reads every daemon write or diff in a worktree starts with.

*Link check.* A linked worktree's ``.git`` is a file ``gitdir: <common>/worktrees/<name>``, and
that entry's ``gitdir`` file points back at ``<worktree>/.git`` (gitrepository-layout(5),
git-worktree(1) "DETAILS"). If an agent deleted, rewrote or symlinked that file, git run in the
folder would act on some other repository (or walk up to an enclosing one), so the daemon
refuses to write or diff there.

*Snapshot.* The worktree's full state (committed, staged, unstaged and untracked, ignored files
excluded) as a tree object, written through a temporary copy of the worktree's index
(``GIT_INDEX_FILE`` + ``git add -A --sparse`` + ``git write-tree``; ``--sparse`` so a file
written outside a sparse-checkout cone is captured instead of failing the whole snapshot). The worktree's real index and files
are never touched, so an agent running git at the same moment sees nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from foreman.errors import WorktreeUnsafe

from ._git import StrPath, common_dir, git


def _realpath(path: StrPath) -> Path:
    return Path(os.path.realpath(os.fspath(path)))


async def linked_admin_dir(repo_root: StrPath, wt_path: StrPath, *, common: Path | None = None) -> Path:
    """Return the repository's administrative entry for the worktree, after checking both links.

    Args:
        repo_root: the registered repository.
        wt_path: the worktree directory.
        common: the repository's :func:`~._git.common_dir`, when the caller read it in this step
            for several worktrees (None: read here).

    Returns:
        ``<common git dir>/worktrees/<name>`` (resolved).

    Raises:
        WorktreeUnsafe: ``<wt>/.git`` is missing, a symlink or a directory, does not name an
            entry under this repository's ``worktrees/``, or that entry's ``gitdir`` does not
            point back at ``<wt>/.git``.
    """
    wt = _realpath(wt_path)
    dotgit = wt / ".git"
    if dotgit.is_symlink() or not dotgit.is_file():
        raise WorktreeUnsafe(f"{wt}: .git is missing or is not a plain file; the worktree is left as it is")
    content = dotgit.read_bytes()
    if not content.startswith(b"gitdir: "):
        raise WorktreeUnsafe(f"{wt}: .git does not hold a gitdir link")
    target = Path(os.fsdecode(content[len(b"gitdir: "):].strip()))
    admin = _realpath(target if target.is_absolute() else wt / target)
    common = common or await common_dir(repo_root)
    if admin.parent != common / "worktrees":
        raise WorktreeUnsafe(f"{wt}: .git points to {admin}, not to an entry of {common}")
    try:
        back = (admin / "gitdir").read_text(encoding="utf-8", errors="surrogateescape").strip()
    except OSError as exc:
        raise WorktreeUnsafe(f"{wt}: the repository has no entry {admin.name} for it") from exc
    if _realpath(back) != dotgit:
        raise WorktreeUnsafe(f"{wt}: the repository's entry {admin.name} belongs to {back}")
    return admin


async def check_link(repo_root: StrPath, wt_path: StrPath) -> bool:
    """Return True when the worktree's ``.git`` link still leads to this repository's entry for it.

    See :func:`linked_admin_dir` for what is checked. Never raises for a broken link; a
    repository git cannot read still raises :class:`~foreman.errors.RepoError`.
    """
    try:
        await linked_admin_dir(repo_root, wt_path)
    except WorktreeUnsafe:
        return False
    return True


def worktree_env(admin: Path, wt: Path) -> dict[str, str]:
    """Variables that pin git to the checked entry (so a ``.git`` swapped later is not followed)."""
    return {"GIT_DIR": str(admin), "GIT_WORK_TREE": str(wt)}


@dataclass(frozen=True)
class Snapshot:
    """A worktree's state, captured without touching it.

    Attributes:
        admin: the repository's entry for the worktree (``.git/worktrees/<name>``).
        head_ref: the ref HEAD points to (``refs/heads/x``), None when detached.
        head: HEAD's commit id, None on an unborn branch.
        tree: the tree id of everything in the worktree (ignored files excluded).
    """

    admin: Path
    head_ref: str | None
    head: str | None
    tree: str


async def snapshot(repo_root: StrPath, wt_path: StrPath) -> Snapshot:
    """Capture the worktree's full state as a tree through a temporary index.

    Raises:
        WorktreeUnsafe: the link check failed (nothing was run in the worktree).
        RepoError: git failed.
    """
    wt = _realpath(wt_path)
    admin = await linked_admin_dir(repo_root, wt)
    env = worktree_env(admin, wt)
    with tempfile.TemporaryDirectory(prefix="agentcraft-index-") as tmp:
        index = Path(tmp) / "index"
        real = admin / "index"
        if real.is_file():
            shutil.copyfile(real, index)  # keeps stat data: add -A only rehashes changed files
        env["GIT_INDEX_FILE"] = str(index)
        # --sparse: in a sparse checkout, files outside the cone are captured too (git-add(1))
        await git("add", "-A", "--sparse", cwd=wt, env=env)
        tree = (await git("write-tree", cwd=wt, env=env)).text
    del env["GIT_INDEX_FILE"]
    head_ref, head = await _head(wt, env)
    return Snapshot(admin, head_ref, head, tree)


async def _head(wt: Path, env: dict[str, str]) -> tuple[str | None, str | None]:
    """The ref HEAD points to (None: detached) and HEAD's commit (None: unborn), with one
    ``rev-parse HEAD --symbolic-full-name HEAD --`` (its commit, then the full name of the branch
    it points to, followed to the end as ``symbolic-ref`` does, or ``HEAD`` when detached); an
    unborn branch fails that call, and is read as before: ``symbolic-ref -q HEAD`` and
    ``rev-parse --verify -q HEAD``."""
    res = await git("rev-parse", "HEAD", "--symbolic-full-name", "HEAD", "--", cwd=wt, env=env, check=False)
    lines = res.text.splitlines()
    if res.ok and len(lines) == 3 and lines[2] == "--" and (lines[1] == "HEAD" or lines[1].startswith("refs/")):
        return (None if lines[1] == "HEAD" else lines[1]), lines[0]
    ref = await git("symbolic-ref", "-q", "HEAD", cwd=wt, env=env, check=False)
    head = await git("rev-parse", "--verify", "-q", "HEAD", cwd=wt, env=env, check=False)
    return (ref.text if ref.ok else None), (head.text if head.ok else None)
