"""Per-task worktrees: names, creation under a per-repo lock, leftover commits, guarded removal.

Layout: ``<home>/<profile>/worktrees/<repo>/<agent>-<task>`` on branch
``agentcraft/<agent>/<task>-<slug>``.

Rules (and the failures they prevent):

* creation runs under one asyncio lock per repository and is idempotent: a retry finds the
  finished worktree and returns it; a half-created one (git's ``initializing`` lock still on
  it, no HEAD, a stale entry whose folder is gone, an empty leftover folder) is cleaned up and
  created again;
* the daemon writes in a worktree only after :func:`check_link` passed, and pins git to the
  checked entry (``GIT_DIR``/``GIT_WORK_TREE``) for the write;
* leftover commits move only the agent's own branch, with a compare-and-swap ref update;
* removal refuses while the branch has commits not in base, while the worktree holds
  uncommitted work, or while a process runs inside it, unless forced by a decision.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import psutil

from foreman.errors import RepoError, WorktreeUnsafe

from ..private import private_dir
from ._checkout import lfs_missing
from ._git import (
    HOOK_TIMEOUT,
    ZERO_OID,
    GitFailed,
    GitTimeout,
    StrPath,
    git,
    list_worktrees,
    repo_lock,
    rev_parse,
)
from ._snapshot import Snapshot, check_link, linked_admin_dir, snapshot, worktree_env
from .hooks import CommitHooks, run_commit_hooks
from .refs import is_ancestor, read_branch

logger = logging.getLogger(__name__)

__all__ = [
    "Committed", "Worktree", "WorktreeBusy", "WorktreeHasWork", "branch_name", "check_link", "commit_for_agent",
    "commit_leftovers", "ensure_worktree", "remove_worktree", "slugify", "worktree_path",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_AUTHOR = re.compile(r"^\s*(?P<name>[^<>]*?)\s*<(?P<email>[^<>]*)>\s*$")


class WorktreeBusy(RepoError):
    """The worktree cannot be removed right now (a process runs in it, it is locked, the OS
    refused); the caller retries later."""


class WorktreeHasWork(RepoError):
    """The worktree holds work that removal would lose (branch commits not in base, or
    uncommitted files); it is removed only with ``force`` after a merge or abandon decision."""


@dataclass(frozen=True)
class Worktree:
    """A worktree the daemon made for an (agent, task).

    Attributes:
        path: its directory (resolved).
        branch: the branch it was created on (short name).
        head: its HEAD commit when returned.
        created: False when an existing, complete worktree was found (a retry).
    """

    path: Path
    branch: str
    head: str
    created: bool
    submodules: str = ""
    """Empty, or why the repository's submodules are not in the worktree (:func:`init_submodules`)."""


_HELD = re.compile(r"is already (?:checked out|used by worktree) at '(?P<where>[^']+)'")
"""git-worktree's refusal of a branch that another worktree has checked out (git 2.x wordings)."""


def _check_name(kind: str, value: str) -> str:
    if not _NAME.match(value) or value.endswith((".lock", ".")) or ".." in value:
        raise ValueError(f"bad {kind} name for a worktree: {value!r}")
    return value


def slugify(title: str, *, max_len: int = 40) -> str:
    """Return a lowercase ASCII slug of ``title`` (``"Add OAuth: login!"`` -> ``"add-oauth-login"``).

    Accents are folded (NFKD), anything else that is not a letter or digit becomes ``-``; the
    result is at most ``max_len`` characters and may be empty.
    """
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    return slug[:max_len].rstrip("-")


def repo_folder(repo_id: str) -> str:
    """The folder of a repository's worktrees under ``<home>/<profile>/worktrees/``: its id when
    that is a plain name (``[A-Za-z0-9._-]``), else a slug of it and a hash of the whole id
    (``café notes`` -> ``cafe-notes-6f1e2a9b``): a repository's folder may hold any character
    git accepts (spaces, accents, quotes), the Foreman's own folders never do."""
    try:
        return _check_name("repo", repo_id)
    except ValueError:
        digest = hashlib.sha256(repo_id.encode("utf-8", "surrogateescape")).hexdigest()[:8]
        return f"{slugify(repo_id, max_len=30) or 'repo'}-{digest}"


def worktree_path(home_profile_dir: StrPath, repo_id: str, agent: str, task: str) -> Path:
    """Return ``<home>/<profile>/worktrees/<repo folder>/<agent>-<task>`` (:func:`repo_folder`).

    Raises:
        ValueError: the agent or task name is empty, has a path separator, ``..`` or other
            characters outside ``[A-Za-z0-9._-]``.
    """
    return (Path(home_profile_dir) / "worktrees" / repo_folder(repo_id)
            / f"{_check_name('agent', agent)}-{_check_name('task', task)}")


def branch_name(agent: str, task: str, title: str) -> str:
    """Return ``agentcraft/<agent>/<task>-<slug>`` (just ``<task>`` when the title has no slug).

    The result is a valid ref name (git-check-ref-format(1)).

    Raises:
        ValueError: ``agent`` or ``task`` is not a safe name (see :func:`worktree_path`).
    """
    slug = slugify(title)
    leaf = f"{_check_name('task', task)}-{slug}" if slug else task
    return f"agentcraft/{_check_name('agent', agent)}/{leaf}"


async def ensure_worktree(
    repo_root: StrPath,
    path: StrPath,
    branch: str,
    base: str,
    start_point: str | None = None,
    *,
    hook_timeout: float = HOOK_TIMEOUT,
) -> Worktree:
    """Create the worktree at ``path`` on ``branch``, or return it if it already exists.

    Args:
        repo_root: the registered repository.
        path: from :func:`worktree_path`; parent folders are created.
        branch: from :func:`branch_name`. An existing branch is checked out as it is (a retry,
            or a task coming back); a new one starts at ``start_point`` or ``base``.
        base: the repository's base branch (or any commit).
        start_point: where a new branch starts instead of ``base`` - e.g. the previous
            worker's branch on a hand-off.
        hook_timeout: seconds ``git worktree add`` may take; it runs the repository's
            ``post-checkout`` hook, and a hook that hangs must not hold the repository lock.

    Returns:
        The :class:`Worktree` (``created=False`` when a complete one was already there).

    Raises:
        WorktreeUnsafe: a registered worktree is at ``path`` but its ``.git`` link is broken
            (left in place for the user).
        GitTimeout: ``git worktree add`` passed ``hook_timeout`` (the message names the hook);
            the half-made worktree is removed and the lock released.
        RepoError: ``path`` holds files that are not a worktree of this repository (left in
            place), the start commit does not exist, the branch is checked out elsewhere, or
            git failed.
    """
    root = Path(repo_root).resolve()
    wt = Path(os.path.realpath(path))
    async with repo_lock(root):
        return await _ensure(root, wt, branch, base, start_point, hook_timeout)


async def _ensure(root: Path, wt: Path, branch: str, base: str, start_point: str | None,
                  hook_timeout: float = HOOK_TIMEOUT) -> Worktree:
    entry = next((e for e in await list_worktrees(root) if e.path == wt), None)
    if entry is not None and entry.prunable:
        if wt.exists():
            raise WorktreeUnsafe(f"{wt} is registered but its .git link is gone; left for inspection")
        await git("worktree", "prune", cwd=root)  # the folder was deleted: drop the stale entry
    elif entry is not None and (entry.locked == "initializing" or not entry.head):
        logger.warning("worktree %s was half-created (%s); recreating", wt, entry)
        await git("worktree", "remove", "--force", "--force", wt, cwd=root, check=False)
    elif entry is not None:
        if not await check_link(root, wt):
            raise WorktreeUnsafe(f"{wt} is registered but its .git link is broken; left for inspection")
        return Worktree(wt, branch, entry.head or "", created=False)
    _clear_leftover_dir(wt, root)
    start = await rev_parse(root, start_point or base)
    if start is None:
        raise RepoError(f"cannot start a worktree: {start_point or base!r} names no commit in {root}", permanent=True)
    private_dir(wt.parent)  # the worktrees' parent folders are 0700 (foreman/private.py)
    if await rev_parse(root, f"refs/heads/{branch}"):
        args: tuple[str | Path, ...] = ("worktree", "add", wt, branch)
    else:
        args = ("worktree", "add", "--no-track", "-b", branch, wt, start)
    try:
        await git(*args, cwd=root, timeout=hook_timeout, hooks=("post-checkout", "reference-transaction"))
        await _full_checkout(wt, hook_timeout)
    except GitFailed as exc:
        await git("worktree", "remove", "--force", "--force", wt, cwd=root, check=False)
        await git("worktree", "prune", cwd=root, check=False)
        if lfs_missing(exc.stderr):
            raise RepoError(
                f"{root} stores files with git-lfs (a filter=lfs attribute), and git-lfs is not installed on this "
                "machine, so no worktree can be checked out. Install git-lfs (https://git-lfs.com) and run "
                f"`git lfs install`, then retry. (git said: {str(exc)})", permanent=True) from exc
        if (held := _HELD.search(exc.stderr or "")) is not None:
            raise RepoError(
                f"the branch {branch} is checked out in another worktree, {held['where']}: remove that worktree "
                f"(git worktree remove) or check out another branch there, then retry the task",
                permanent=True) from exc
        raise
    head = await rev_parse(wt, "HEAD")
    if head is None:
        raise RepoError(f"worktree {wt} was created without a HEAD")
    logger.info("created worktree %s on %s at %s", wt, branch, head[:12])
    return Worktree(wt, branch, head, created=True, submodules=await init_submodules(wt))


SUBMODULE_TIMEOUT = 120.0
"""Seconds the submodules of a new worktree may take to check out (their sources may be far away)."""


async def init_submodules(wt: Path, timeout: float = SUBMODULE_TIMEOUT) -> str:
    """Check out a new worktree's submodules (``git worktree add`` leaves them empty), recursively,
    from the sources the repository's ``.gitmodules`` names, without prompting for credentials.

    Returns:
        ``""`` when there are none or they are all there; else a sentence saying they are not and
        why (a source that cannot be reached, a timeout): the task goes on without them and its
        worker is told (the start does not fail on it).
    """
    if not (wt / ".gitmodules").is_file():
        return ""
    # the user's own submodules may live in local folders, which git >= 2.38.1 refuses to clone for
    # submodules by default (CVE-2022-39253): allowed here for the sources the repository names
    try:
        res = await git("-c", "protocol.file.allow=always", "submodule", "update", "--init", "--recursive", cwd=wt,
                        env={"GIT_TERMINAL_PROMPT": "0"}, timeout=timeout, check=False)
    except GitTimeout:
        return (f"the repository's submodules are not in this worktree (checking them out took over {timeout:g} s); "
                "the work goes on without them")
    if res.ok:
        return ""
    said = res.stderr.decode("utf-8", "replace").strip().splitlines()
    why = said[-1] if said else f"git exited with {res.rc}"
    return (f"the repository's submodules are not in this worktree (git submodule update failed: {why}); the work "
            "goes on without them")


async def _full_checkout(wt: Path, timeout: float) -> None:
    """Turn off sparse checkout in a new worktree (git >= 2.36 copies the user's sparsity into it).

    In a sparse worktree ``git add -A`` fails with "paths ... outside of your sparse-checkout
    definition" as soon as an agent writes a file outside the cone (git-sparse-checkout(1)), so
    every later add and commit fails; agents get a full checkout instead.
    """
    res = await git("config", "--type=bool", "--get", "core.sparseCheckout", cwd=wt, check=False)
    if res.ok and res.text == "true":
        await git("sparse-checkout", "disable", cwd=wt, timeout=timeout, hooks=("post-checkout",))
        logger.info("worktree %s: sparse checkout turned off (agents need every path)", wt)


def _clear_leftover_dir(wt: Path, root: Path) -> None:
    """Remove a folder left by an interrupted creation: empty, or only a dangling ``.git`` file."""
    if not wt.exists():
        return
    children = list(wt.iterdir()) if wt.is_dir() else None
    if children == []:
        wt.rmdir()
        return
    if children and [c.name for c in children] == [".git"] and children[0].is_file():
        target = children[0].read_bytes().removeprefix(b"gitdir: ").strip()
        if not Path(os.fsdecode(target)).exists():
            shutil.rmtree(wt)
            return
    raise RepoError(f"{wt} exists and is not a worktree of {root}: it is left in place; move or delete it, then "
                    "retry the task", permanent=True)


def _parse_author(author: str) -> tuple[str, str]:
    match = _AUTHOR.match(author)
    if not match or not match["name"] or not match["email"]:
        raise ValueError(f"author must look like 'Name <email>': {author!r}")
    return match["name"], match["email"]


async def commit_leftovers(
    repo_root: StrPath, wt_path: StrPath, branch: str, message: str, author: str, *, snap: Snapshot | None = None
) -> str | None:
    """Commit whatever the agent left uncommitted onto its own branch, running no hook.

    The snapshot commits of work in progress (a hand-off, a closed task, late writes of a
    retired worktree) use this; the commit that goes to a merge decision runs the repository's
    commit hooks first (:func:`commit_for_agent`). See there for the rules; returns the new
    commit id, or None when there was nothing to commit. ``snap``: the worktree's snapshot when the
    caller just took it (see :func:`commit_for_agent`).
    """
    return (await commit_for_agent(repo_root, wt_path, branch, message, author, snap=snap)).commit


@dataclass(frozen=True)
class Committed:
    """What :func:`commit_for_agent` did.

    Attributes:
        commit: the new commit id, or None when there was nothing to commit.
        hooks: the repository's commit hooks that ran and passed on it (empty when none ran).
        tip: the branch's tip it left: the new commit, else the tip it found (None: no branch).
    """

    commit: str | None
    hooks: tuple[str, ...] = ()
    tip: str | None = None


async def commit_for_agent(
    repo_root: StrPath, wt_path: StrPath, branch: str, message: str, author: str, *,
    hooks: CommitHooks | None = None, snap: Snapshot | None = None,
) -> Committed:
    """Commit whatever the agent left uncommitted onto its own branch.

    Everything in the worktree counts (staged, unstaged, untracked; ignored files excluded).
    When the worktree has ``branch`` checked out, the commit extends it and the worktree's
    index is reset to it (files untouched). When the agent checked out another branch (or
    detached HEAD), the worktree's state becomes a snapshot commit on ``branch`` and neither
    the other branch nor the worktree's HEAD/index is touched. The ref moves with a
    compare-and-swap ``update-ref <ref> <new> <old>``. The commit is never signed.

    The commit is written with ``git commit-tree``, which runs no hook. With ``hooks``, the
    repository's ``pre-commit`` and ``commit-msg`` hooks run first, as ``git commit`` would run
    them (:func:`foreman.repos.hooks.run_commit_hooks`: the agent's environment and sandbox, a
    time limit); a refusal commits nothing. Without, a hook that would have refused does not stop
    the snapshot (the effect of ``git commit --no-verify``). The ref update runs a
    ``reference-transaction`` hook, under :data:`~foreman.repos._git.HOOK_TIMEOUT`.

    Args:
        repo_root: the registered repository.
        wt_path: the agent's worktree.
        branch: the agent's own branch (short name, ``agentcraft/...``).
        message: the commit message.
        author: ``"Name <email>"`` for author and committer (the agent's identity).
        hooks: run the repository's commit hooks this way first (None: no hook runs).
        snap: the worktree's :func:`~._snapshot.snapshot`, when the caller just took it (None: taken here).

    Returns:
        :class:`Committed`: the new commit id (None when there was nothing to commit) and the
        hooks that ran.

    Raises:
        HookRefused: a commit hook refused (its output is on the exception); nothing was committed.
        WorktreeUnsafe: the ``.git`` link check failed; nothing was committed.
        RepoError: git failed, the branch moved during the commit, the branch is gone while the
            worktree has no commit checked out (never a commit without a parent), or the worktree
            has something checked out that lacks the branch's commits (a snapshot would drop them).
        ValueError: ``author`` is malformed.
    """
    name, email = _parse_author(author)
    wt = Path(os.path.realpath(wt_path))
    snap = snap or await snapshot(repo_root, wt)
    ref = f"refs/heads/{branch}"
    state = await read_branch(repo_root, branch)  # (its commit and tree: nothing to commit when the snapshot's is the same)
    if (target := state.symbolic) is not None:
        raise RepoError(f"{branch} is a symbolic ref to {target}: a commit onto it would move {target}; nothing was "
                        "committed", permanent=True)
    own, own_tree = state.tip, state.tree
    on_branch = snap.head_ref == ref
    if not on_branch and own and snap.head and not await is_ancestor(repo_root, own, snap.head):
        where = snap.head_ref or f"detached HEAD {snap.head[:12]}"
        raise RepoError(f"{wt} has {where} checked out, which lacks {branch}'s commits (switched, or replaced by "
                        f"another worktree, outside the task): a snapshot of it would drop them, so nothing was "
                        f"committed; check {branch} out there again (git switch), then retry", permanent=True)
    parent = own or snap.head
    if parent is None:  # (a worktree always starts from a commit: its branch was deleted under it)
        raise RepoError(f"{branch} is gone and {wt} has no commit checked out: nothing to commit onto (a commit "
                        "without a parent would hold the whole tree as new history)", permanent=True)
    if (own_tree if own else (await git("rev-parse", f"{parent}^{{tree}}", cwd=repo_root)).text) == snap.tree:
        return Committed(None, tip=own)
    text = message.rstrip("\n") + "\n"
    if not on_branch:
        where = snap.head_ref or f"detached HEAD {snap.head}"
        text += f"\nSnapshot of the worktree while it had {where} checked out.\n"
    tree = snap.tree
    ran: tuple[str, ...] = ()
    if hooks is not None:
        passed = await run_commit_hooks(hooks, wt, snap.admin, tree, text)
        tree, text, ran = passed.tree, passed.message, passed.ran
    ident = {
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
    }
    parents = ("-p", parent) if parent else ()
    commit = (
        await git("commit-tree", "--no-gpg-sign", *parents, "-F", "-", tree, cwd=repo_root, env=ident,
                  input=text.encode())
    ).text
    try:
        await git("update-ref", "-m", "agentcraft: commit leftover work", ref, commit, own or ZERO_OID, cwd=repo_root,
                  timeout=HOOK_TIMEOUT, hooks=("reference-transaction",))
    except GitTimeout:
        raise
    except GitFailed as exc:  # the compare-and-swap lost: something committed on the branch meanwhile
        now = await rev_parse(repo_root, ref)
        if now == (own or None):
            raise
        by = "a commit hook of the repository (or another process)" if ran else "another process"
        raise RepoError(f"{branch} moved to {(now or 'nothing')[:12]} while the leftovers were committed: {by} "
                        "committed on it; nothing was committed over it") from exc
    if on_branch:
        res = await git("reset", "-q", cwd=wt, env=worktree_env(snap.admin, wt), check=False)
        if not res.ok:
            logger.warning("committed %s but could not reset the index of %s: %s", commit, wt, res.stderr)
    logger.info("committed leftovers of %s on %s as %s", wt, branch, commit[:12])
    return Committed(commit, ran, tip=commit)


async def remove_worktree(
    repo_root: StrPath,
    wt_path: StrPath,
    *,
    branch: str | None = None,
    base: str | None = None,
    force: bool = False,
    common: Path | None = None,
) -> None:
    """Remove the worktree (the branch is kept).

    Args:
        repo_root: the registered repository.
        wt_path: the worktree.
        branch: the agent's branch; with ``base``, removal is refused while it has commits
            not in ``base``.
        base: the base branch.
        force: the task was merged or abandoned by decision: remove even with unmerged
            commits or uncommitted files (a running process or a lock still refuses).
        common: the repository's common git directory when the caller read it under the
            repository lock it still holds (the link check reads the worktree's links again,
            not the repository's own directory); None: read here.

    Raises:
        WorktreeHasWork: unmerged commits or uncommitted files, without ``force``.
        WorktreeBusy: a process has its working directory inside the worktree, the worktree is
            locked, or the OS refused to delete it; retry later.
        WorktreeUnsafe: the ``.git`` link is broken; the worktree is left for the user.
        RepoError: ``wt_path`` is not a worktree of this repository (left in place), or git failed.
    """
    root = Path(repo_root).resolve()
    wt = Path(os.path.realpath(wt_path))
    entry = next((e for e in await list_worktrees(root) if e.path == wt), None)
    if entry is not None and entry.prunable and wt.exists():
        raise WorktreeUnsafe(f"{wt}: its .git link is gone; the worktree is left for inspection")
    if entry is None or entry.prunable:
        if wt.exists():
            raise RepoError(f"{wt} is not a worktree of {root}; it is left in place")
        await git("worktree", "prune", cwd=root)
        return
    await linked_admin_dir(root, wt, common=common)
    if not force and branch and base:
        ahead = await git("rev-list", "--count", f"refs/heads/{base}..refs/heads/{branch}", cwd=root, check=False)
        if ahead.ok and int(ahead.text or 0) > 0:
            raise WorktreeHasWork(f"{branch} has {ahead.text} commit(s) not in {base}; {wt} is kept")
    if entry.locked is not None and entry.locked != "initializing":
        raise WorktreeBusy(f"{wt} is locked ({entry.locked or 'no reason given'})")
    pids = _processes_inside(wt)
    if pids:
        raise WorktreeBusy(f"{wt} is in use by process(es) {', '.join(map(str, pids))}")
    res = await git("worktree", "remove", *(["--force"] if force else []), wt, cwd=root, check=False)
    if res.ok:
        logger.info("removed worktree %s", wt)
        return
    err = res.stderr.decode("utf-8", "replace")
    if "modified or untracked" in err:
        raise WorktreeHasWork(f"{wt} has uncommitted files; it is kept")
    raise WorktreeBusy(f"could not remove {wt}: {err.strip()}")


def _processes_inside(wt: Path) -> list[int]:
    """Return pids whose working directory is inside ``wt`` (psutil; unreadable ones skipped)."""
    found = []
    for proc in psutil.process_iter(["cwd"]):
        cwd = proc.info.get("cwd")
        if cwd and (cwd == str(wt) or cwd.startswith(str(wt) + os.sep)):
            found.append(proc.pid)
    return found
