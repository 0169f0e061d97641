"""Registering repositories: root checks and the status the daemon polls.

A registered path must be a repository's top-level folder. A folder inside another repository
is refused, naming the root to add instead, so that a merge never silently targets an enclosing
repository. A linked worktree is refused too (naming its main checkout): the agents' own
worktrees are linked worktrees and must never become merge targets.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from foreman.errors import NotARepoRoot, RepoError

from ._git import (
    GitFailed,
    StrPath,
    checkout_of,
    git,
    has_tracked_changes,
    list_worktrees,
    rev_parse,
)
from .gitsafety import check_ceiling_path

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RepoStatus:
    """What the daemon shows about a registered repository.

    Attributes:
        base_branch: the branch merges go to (short name, e.g. ``main``).
        head: the base branch's commit id; None while the branch has no commit.
        dirty: the checkout that has the base branch checked out (main or linked) has
            uncommitted changes to tracked files. False when no checkout has it.
        checkout: that checkout's directory, or None when the base branch is not checked out.
    """

    base_branch: str
    head: str | None
    dirty: bool
    checkout: Path | None


async def resolve_repo_root(path: StrPath) -> Path:
    """Check that ``path`` is a repository's top-level folder and return it resolved.

    Args:
        path: the folder the user named (``~`` is expanded).

    Returns:
        The resolved root (symlinks resolved, as ``git rev-parse --show-toplevel`` reports it).

    Raises:
        NotARepoRoot: ``path`` is missing, not inside a work tree (a bare repository included),
            inside another repository (the message names the root to add instead), or a linked
            worktree (the message names its main checkout).
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise NotARepoRoot(f"{folder} is not a folder")
    folder = folder.resolve()
    try:
        res = await git(
            "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir", cwd=folder
        )
    except GitFailed as exc:
        raise NotARepoRoot(f"{folder} is not a git repository (no work tree found): {exc.stderr.strip()}") from exc
    top, git_dir, common = (Path(line).resolve() for line in res.text.splitlines()[:3])
    if top != folder:
        raise NotARepoRoot(f"{folder} is inside the repository {top}; add {top} instead")
    if git_dir != common:
        main = next((e.path for e in await list_worktrees(folder) if e.main), common.parent)
        raise NotARepoRoot(f"{folder} is a linked worktree of {main}; add {main} instead")
    return top


async def check_repo_ready(root: StrPath, base_branch: str | None = None) -> None:
    """Refuse a repository the Foreman could not work in, with a message saying what to do.

    Call it at ``/repo add`` and at start, after :func:`resolve_repo_root`.

    Raises:
        RepoError: the repository has no commit yet (no worktree can start from it); the base
            branch does not exist; its path contains ``:`` (see
            :func:`~foreman.repos.gitsafety.check_ceiling_path`); or its files use git-lfs
            (``filter=lfs`` in a committed ``.gitattributes``) and ``git-lfs`` is not installed.
    """
    check_ceiling_path(root, what="repository path")
    if await rev_parse(root, "HEAD") is None and not (await git("for-each-ref", "--count=1", "refs/heads/", cwd=root)).text:
        raise RepoError(f"{root} has no commits yet: agents' worktrees start from a commit. Make a first commit "
                        "(git commit --allow-empty -m 'initial'), then add it again.")
    base = base_branch or await default_base_branch(root)
    head = await rev_parse(root, f"refs/heads/{base}")
    if head is None:
        raise RepoError(f"{root} has no branch {base!r}; name an existing base branch")
    uses_lfs = await git("grep", "-q", "-e", "filter=lfs", head, "--", ":(glob)**/.gitattributes", cwd=root,
                         check=False)
    if uses_lfs.ok and shutil.which("git-lfs") is None:
        raise RepoError(f"{root} stores files with git-lfs (filter=lfs in .gitattributes), and git-lfs is not "
                        "installed on this machine. Install it (https://git-lfs.com), run `git lfs install`, then "
                        "add the repository again.")


async def default_base_branch(root: StrPath) -> str:
    """Return the branch checked out in the main checkout, else ``main``, else ``master``.

    Call it once at registration and remember the answer: the base must not follow the user
    switching branches later.

    Raises:
        RepoError: the main checkout is detached and neither ``main`` nor ``master`` exists.
    """
    res = await git("symbolic-ref", "--quiet", "HEAD", cwd=root, check=False)
    ref = res.text
    if res.ok and ref.startswith("refs/heads/"):
        return ref.removeprefix("refs/heads/")
    for name in ("main", "master"):
        if await rev_parse(root, f"refs/heads/{name}"):
            return name
    raise RepoError(f"{root}: HEAD is detached and there is no main or master branch; name the base branch")


async def repo_status(root: StrPath, base_branch: str | None = None) -> RepoStatus:
    """Report the base branch, its head and whether its checkout is dirty.

    Args:
        root: a registered repository root.
        base_branch: the base chosen at registration; None works it out with
            :func:`default_base_branch`.

    Returns:
        The :class:`RepoStatus`. Costs 2-4 git calls; read-only (optional locks off, so the
        user's index is not refreshed on disk).

    Raises:
        RepoError: git failed (e.g. the folder is no longer a repository).
    """
    base = base_branch or await default_base_branch(root)
    entry = await checkout_of(root, base)
    # (a checkout that has the base lists the base's tip as its HEAD; the ref is read only without one)
    head = entry.head if entry is not None else await rev_parse(root, f"refs/heads/{base}")
    dirty = False
    if entry is not None and entry.path.is_dir():
        dirty = await has_tracked_changes(entry.path)
    return RepoStatus(base_branch=base, head=head, dirty=dirty, checkout=entry.path if entry else None)
