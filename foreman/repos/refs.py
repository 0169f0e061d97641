"""Branches and commits, as the rest of the daemon may ask about them (a public face over
:mod:`._git` and :mod:`._snapshot` for callers outside ``foreman.repos``).

All functions take the registered repository's root and short branch names or commit ids.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import RepoError
from ._git import HOOK_TIMEOUT, ZERO_OID, GitFailed, StrPath, git, rev_parse, rev_parse_all
from ._snapshot import Snapshot, snapshot


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


async def worktree_lacks_files(repo_root: StrPath, wt_path: StrPath, branch: str, *,
                               snap: Snapshot | None = None) -> bool:
    """True when files of ``branch``'s tip are missing from the worktree (its full state,
    untracked files included, compared with ``git diff-tree --diff-filter=D``; ``snap``: that
    state when the caller just took it, else taken here).

    Raises:
        WorktreeUnsafe: the worktree's ``.git`` link is broken.
        RepoError: git failed.
    """
    tip = await branch_tip(repo_root, branch)
    if tip is None:
        return False
    snap = snap or await snapshot(repo_root, wt_path)
    res = await git("diff-tree", "-r", "--name-only", "--diff-filter=D", tip, snap.tree, cwd=Path(repo_root))
    return bool(res.text)


BASE_NOTE_RE = re.compile(r"Your worktree starts from \S+ at [0-9a-f]{4,40} \(|Your branch \S+ left \S+ at [0-9a-f]{4,40}; ")
"""The start of each sentence :func:`base_note` writes (a runner that reads a prompt for the task's
own words leaves these lines out: they say where the branch starts, and quote commit subjects)."""


async def base_note(repo_root: StrPath, branch: str, base: str, *, tip: str | None = None) -> str:
    """A sentence for a worker's prompt: which commit of ``base`` its branch starts from, and when
    ``base`` moved on since, by how many commits and which (their subjects, at most five):
    ``Your worktree starts from main at 1a2b3c4 (Add tags).`` Empty when git cannot tell (the
    sentence helps; its absence must not stop a start). ``tip``: the branch's tip (full id) when the
    caller just read it (:func:`remember_tip`): a base still at that commit has nothing the branch
    lacks, which then is not asked (one git process, not two)."""
    root = Path(repo_root)
    head = await git("log", "-1", "--format=%H %h %s", f"refs/heads/{base}", cwd=root, check=False)
    if not head.ok or not head.text:
        return ""
    full, _, rest = head.text.partition(" ")
    short, _, subject = rest.partition(" ")
    if tip is not None and full == tip:  # (a branch just made from the base's tip)
        return f"Your worktree starts from {base} at {short} ({subject})."
    # what the base has that the branch lacks first: the branch's existence and its fork point are
    # read only when the answer needs them (a branch just made from the base's tip needs neither)
    behind = await git("log", "--format=%s", f"refs/heads/{branch}..refs/heads/{base}", cwd=root, check=False)
    subjects = [line for line in behind.text.splitlines() if line]
    if (not subjects if behind.ok else await rev_parse(root, f"refs/heads/{branch}") is None):
        return f"Your worktree starts from {base} at {short} ({subject})."  # (log fails on a missing branch)
    if not behind.ok:
        return ""
    fork = await git("merge-base", f"refs/heads/{branch}", f"refs/heads/{base}", cwd=root, check=False)
    if not fork.ok:
        return ""
    shown = "; ".join(subjects[:5]) + (f"; and {len(subjects) - 5} more" if len(subjects) > 5 else "")
    return (f"Your branch {branch} left {base} at {fork.text[:7]}; {base} has moved on by {len(subjects)} "
            f"commit{'s' if len(subjects) != 1 else ''} since (now {short} ({subject})): {shown}. Merge {base} into "
            "your branch when your work depends on them.")


LAST_KNOWN = "refs/agentcraft/last/"
"""Where the Foreman keeps the last commit it knew of each task branch
(``refs/agentcraft/last/<branch>``): the work survives a branch deleted or rewritten outside it,
and ``git gc`` never collects it."""


async def remember_tip(repo_root: StrPath, branch: str) -> str | None:
    """Point ``refs/agentcraft/last/<branch>`` at ``branch``'s tip; return the tip (None, and
    nothing changes, when the branch does not exist).

    Raises:
        RepoError: git failed.
    """
    root = Path(repo_root)
    state = await read_branch(root, branch, symbolic=False)
    tip = state.tip
    if tip is not None and state.last != tip:
        await git("update-ref", "-m", "agentcraft: last known tip", LAST_KNOWN + branch, tip, cwd=root,
                  timeout=HOOK_TIMEOUT, hooks=("reference-transaction",))
    return tip


@dataclass(frozen=True)
class BranchState:
    """What the refs of a task branch hold, read together (:func:`read_branch`).

    Attributes:
        symbolic: the ref ``refs/heads/<branch>`` points to when it is a symbolic ref
            (:func:`symbolic_target`), else None.
        tip: the commit at its tip (:func:`branch_tip`), None when it does not exist.
        tree: that commit's tree.
        last: the last commit of it the Foreman knew of (:func:`last_known`).
    """

    symbolic: str | None
    tip: str | None
    tree: str | None
    last: str | None


async def read_branch(repo_root: StrPath, branch: str, *, symbolic: bool = True) -> BranchState:
    """Read ``branch``'s tip, its tree and its last known commit with one ``git for-each-ref`` (a
    ``symbolic-ref`` and three ``rev-parse`` before), as :func:`branch_tip`, :func:`last_known`
    and :func:`symbolic_target` would each answer. ``symbolic``: tell a symbolic branch (with
    ``symbolic-ref``, only when the listing shows one, or shows no branch: a symbolic ref whose
    target is missing is not listed); else ``symbolic`` is None.

    Raises:
        RepoError: git failed.
    """
    root = Path(repo_root)
    head, kept = f"refs/heads/{branch}", LAST_KNOWN + branch
    res = await git("for-each-ref", "--format=%(refname)%00%(objectname)%00%(objecttype)%00%(tree)%00%(symref)",
                    head, kept, cwd=root)
    found: dict[str, list[str]] = {}
    for line in res.stdout.split(b"\n"):
        if line.count(b"\0") == 4:  # (the patterns also match refs below them: only exact names are read)
            name, *fields = (os.fsdecode(x) for x in line.split(b"\0"))
            found[name] = fields
    oid, kind, tree, target = found.get(head, ["", "", "", ""])
    target_of = await symbolic_target(root, branch) if symbolic and (target or head not in found) else None
    tip: str | None = oid or None
    if tip is not None and kind != "commit":  # (a branch at a tag object or a tree: resolved as rev-parse does)
        tip, tree = await rev_parse_all(root, f"{head}^{{commit}}", f"{head}^{{tree}}") or (None, "")
    return BranchState(target_of, tip, tree or None, found[kept][0] if kept in found else None)


async def last_known(repo_root: StrPath, branch: str) -> str | None:
    """The last commit of ``branch`` the Foreman knew of (:func:`remember_tip`), or None."""
    return await rev_parse(Path(repo_root), LAST_KNOWN + branch)


async def outside_change(repo_root: StrPath, branch: str, base: str, *, rewrites: bool = False) -> str | None:
    """What happened to ``branch`` outside the Foreman since its last known commit, as a clause
    (``"its branch agentcraft/kit/t1-x was deleted outside the Foreman"``), or None when nothing did.
    A deleted branch, or one made a symbolic ref (writing through it would move another branch),
    counts even when no commit of it is known.

    Args:
        repo_root: the registered repository.
        branch: the task's branch (short name).
        base: its base branch (short name): a branch sharing no history with it was replaced.
        rewrites: its worker worked on it since (an amend or a rebase of its own is no change
            from outside): only a deleted branch or an unrelated history count.

    Raises:
        RepoError: git failed.
    """
    root = Path(repo_root)
    state = await read_branch(root, branch)
    if state.symbolic is not None:
        return f"its branch {branch} was made a symbolic ref to {state.symbolic} outside the Foreman"
    tip, last = state.tip, state.last
    if tip is None:
        return f"its branch {branch} was deleted outside the Foreman"
    if last is None or tip == last:
        return None
    fork = await git("merge-base", tip, f"refs/heads/{base}", cwd=root, check=False)
    if fork.rc == 1:
        return f"its branch {branch} was replaced outside the Foreman by a history unrelated to {base} (now {tip[:12]})"
    if rewrites or await is_ancestor(root, last, tip):
        return None
    return f"its branch {branch} was moved outside the Foreman to {tip[:12]}, which lacks the work it had"


async def symbolic_target(repo_root: StrPath, branch: str) -> str | None:
    """The ref ``refs/heads/<branch>`` points to when it is a symbolic ref (``refs/heads/main``),
    else None. A write through such a ref moves its target (git-update-ref(1): refs are
    dereferenced unless ``--no-deref``): the Foreman never writes through one."""
    res = await git("symbolic-ref", "-q", f"refs/heads/{branch}", cwd=Path(repo_root), check=False)
    return res.text if res.ok and res.text else None


async def restore_branch(repo_root: StrPath, branch: str) -> str | None:
    """Recreate ``branch`` at its last known commit when it was deleted or no longer contains it;
    the tip it had is kept on ``<branch>-outside-<first 8 hex digits>`` (nothing is lost). Returns
    a sentence for the feed, or None when there was nothing to restore.

    Raises:
        RepoError: git failed, or the branch moved during the restore (compare-and-swap).
    """
    root = Path(repo_root)
    last = await last_known(root, branch)
    if last is None:
        return None
    if await symbolic_target(root, branch) is not None:  # drop the symbolic ref itself, never its target
        await git("update-ref", "--no-deref", "-d", f"refs/heads/{branch}", cwd=root)
    tip = await branch_tip(root, branch)
    if tip is not None and await is_ancestor(root, last, tip):
        return None
    kept = ""
    if tip is not None:
        side = f"{branch}-outside-{tip[:8]}"
        await git("update-ref", "-m", "agentcraft: keep what was on the branch", f"refs/heads/{side}", tip, cwd=root,
                  timeout=HOOK_TIMEOUT, hooks=("reference-transaction",))
        kept = f"; what it pointed at ({tip[:12]}) is kept on {side}"
    await set_branch(root, branch, last, tip, reason="agentcraft: recreate from the last known commit")
    return f"{branch} recreated at its last known commit {last[:12]}{kept}"
