"""Guarded merges of an agent's branch into the base branch, built off-tree.

Steps (nothing in the user's checkout changes before the last one):

1. read both tips; refuse when the base branch is checked out in more than one working tree
   (``reason="checked_out_twice"``, all named), or when the checkout that has it - main or
   linked - has uncommitted tracked changes (``reason="dirty"``, the checkout and files named);
2. ``git merge-tree --write-tree`` (git >= 2.38) computes the merged tree in the object store
   (at the same time as step 1's status; step 1's refusal comes first); a conflict refuses
   (``reason="conflict"``, the files named);
3. ``git commit-tree`` writes the commit with the user's own identity as git sees it in that
   repository (``user.name``/``user.email``, ``GIT_AUTHOR_*``), signed with ``-S`` when their
   config says ``commit.gpgsign=true`` - ``commit-tree`` never reads that setting itself
   (git-commit-tree(1)); it uses ``gpg.format``/``user.signingkey``. A failure to sign refuses
   (``reason="signing"``);
4. the base moves by fast-forward only: in the checkout that has it through
   :func:`~foreman.repos._checkout.fast_forward_checkout` (untracked or ignored files in the
   way, an ``index.lock``, unwritable folders refuse first; a failure part-way is rolled back),
   or a compare-and-swap ``git update-ref refs/heads/<base> <new> <old>`` when none has it. If
   the base moved meanwhile, the merge is refused (``reason="base_moved"``) and nothing changed.

Every refusal message names what is in the way and says what to do.

With ``commit=<sha>`` (the commit a merge decision showed), the merge is of exactly that
commit: when the branch head is anything else the merge is refused (``reason="moved"``) before
anything is written, and after the fast-forward the base branch is checked to contain it.

``style="merge"`` makes a two-parent merge commit that keeps the agent's commits;
``style="squash"`` makes one single-parent commit with ``Co-authored-by:`` trailers. The agent's
branch is never moved or deleted. A branch that brings no change has nothing to merge.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from foreman.errors import MergeRefused, RepoError

from ._checkout import (
    Judge,
    fast_forward_checkout,
    gather_all,
    name_files,
    operation_at,
    operation_in_progress,
    tracked_changes,
    value,
)
from ._git import (
    HOOK_TIMEOUT,
    GitFailed,
    StrPath,
    WorktreeEntry,
    git,
    list_worktrees,
    repo_lock,
    rev_parse,
    rev_parse_all,
)
from .refs import is_ancestor

logger = logging.getLogger(__name__)

MergeStyle = Literal["merge", "squash"]


@dataclass(frozen=True)
class MergeResult:
    """The outcome of :func:`merge_branch`.

    Attributes:
        commit: the new commit on the base branch; None when the branch had nothing to merge
            (the caller closes the task as done without a merge).
        base_before: the base branch's commit before.
        base_after: the base branch's commit after (== ``base_before`` when nothing merged).
        signed: the commit was signed.
        merged: the agent's commit that was merged (the branch head, == ``commit=`` when given).
    """

    commit: str | None
    base_before: str
    base_after: str
    signed: bool = False
    merged: str = ""


def _message(message: str, style: MergeStyle, co_authors: list[str]) -> bytes:
    text = message.rstrip("\n") + "\n"
    trailers = list(dict.fromkeys(a.strip() for a in co_authors if a.strip())) if style == "squash" else []
    if trailers:
        text += "\n" + "".join(f"Co-authored-by: {a}\n" for a in trailers)
    return text.encode()


async def _wants_signing(root: Path) -> bool:
    res = await git("config", "--type=bool", "--get", "commit.gpgsign", cwd=root, check=False)
    return res.ok and res.text == "true"


async def _merged_tree(root: Path, base: str, tip: str, branch: str = "the branch", base_branch: str = "the base") -> str:
    res = await git("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", base, tip, cwd=root, check=False)
    tokens = res.stdout.split(b"\0")
    if res.rc == 0:
        return tokens[0].decode()
    if res.rc == 1:
        files = list(dict.fromkeys(os.fsdecode(t) for t in tokens[1:] if t))
        raise MergeRefused(
            f"merging {branch} into {base_branch} would conflict in {len(files)} file(s): "
            f"{name_files(files) or 'some files'}. The branch must merge {base_branch} in and resolve them (the "
            "worker is asked to), then it comes back for review.", reason="conflict", files=files)
    raise GitFailed(["merge-tree", "--write-tree", base, tip], res.rc, res.stderr.decode("utf-8", "replace"))


async def merge_branch(
    repo_root: StrPath,
    *,
    branch: str,
    base_branch: str,
    style: MergeStyle,
    message: str,
    sign: bool,
    co_authors: list[str],
    commit: str | None = None,
) -> MergeResult:
    """Merge ``branch`` into ``base_branch`` off-tree and fast-forward the base to it.

    Args:
        repo_root: the registered repository.
        branch: the agent's branch (short name).
        base_branch: the base branch (short name).
        style: ``"merge"`` (two parents) or ``"squash"`` (one parent + ``Co-authored-by:``).
        message: the commit message (first line = subject).
        sign: allow signing; the commit is signed only when this is True *and* the repo's
            config has ``commit.gpgsign=true``.
        co_authors: ``"Name <email>"`` entries for squash trailers (duplicates dropped).
        commit: the exact commit to merge (full or abbreviated id), e.g. the one a merge
            decision showed. When given and ``branch`` no longer points at it, the merge is
            refused with ``reason="moved"`` (the caller re-opens the decision with a new diff).
            None merges whatever ``branch`` points at.

    Returns:
        The :class:`MergeResult`.

    Raises:
        MergeRefused: ``reason`` is ``"dirty"`` (the base checkout has uncommitted tracked
            changes), ``"untracked"`` (untracked or ignored files in the way), ``"locked"``
            (``index.lock``), ``"unwritable"``, ``"lfs"`` (git-lfs needed, not installed),
            ``"failed"`` (git failed part-way; rolled back), ``"checked_out_twice"``,
            ``"conflict"``, ``"signing"``, ``"identity"`` (git knows no user name/email), ``"busy"``
            (the user is in the middle of a rebase, merge, cherry-pick, revert, bisect or ``git am``
            in the repository or the base's checkout, or another git command holds its lock),
            ``"base_moved"`` or ``"moved"`` (``branch`` is not at ``commit``). ``files`` names
            the paths (or checkouts) concerned. Nothing changed.
        RepoError: a branch does not exist, ``commit`` names no commit, git failed, or the base
            does not contain the merged commit after the fast-forward.
    """
    root = Path(repo_root).resolve()
    async with repo_lock(root):
        return await _merge(root, branch, base_branch, style, message, sign, co_authors, commit)


@dataclass(frozen=True)
class MergeCandidate:
    """The exact commit a merge would put on the base branch, built but not landed
    (:func:`build_merge`): what a merge test runs on.

    Attributes:
        commit: the merge (or squash) commit; None when the branch brings no change.
        base_before: the base branch's tip it was built on (landing requires it still there).
        merged: the agent's commit that was merged (the branch head).
        style: how it was built.
        signed: the commit was signed.
    """

    commit: str | None
    base_before: str
    merged: str
    style: MergeStyle = "merge"
    signed: bool = False


async def build_merge(
    repo_root: StrPath,
    *,
    branch: str,
    base_branch: str,
    style: MergeStyle,
    message: str,
    sign: bool,
    co_authors: list[str],
    commit: str | None = None,
    onto: str | None = None,
) -> MergeCandidate:
    """Build the commit :func:`merge_branch` would land (steps 1 to 3), without moving anything.

    Args and refusals as :func:`merge_branch` (but ``base_moved``, which only landing can meet);
    ``onto``: a commit to build on instead of the base's tip (a merge train's speculative build on
    the merge commit of the entry ahead, which has not landed yet: :func:`land_candidate` lands it
    only once the base points at exactly that commit).

    Returns:
        The :class:`MergeCandidate` (``base_before`` is ``onto`` when given); land it with
        :func:`land_candidate`.
    """
    root = Path(repo_root).resolve()
    async with repo_lock(root):
        return await _build(root, branch, base_branch, style, message, sign, co_authors, commit, onto)


async def land_candidate(repo_root: StrPath, *, branch: str, base_branch: str, candidate: MergeCandidate) -> MergeResult:
    """Fast-forward the base branch to ``candidate.commit`` (step 4 of :func:`merge_branch`), only
    while the base is still where the candidate was built: never land a result built (and tested)
    on an older base.

    Raises:
        MergeRefused: ``reason="base_moved"`` (the base is no longer at ``candidate.base_before``:
            build and test again), or a refusal of the checkout (``dirty``, ``busy``, ``locked`` ...).
            Nothing changed.
        RepoError: git failed, or the base does not contain the merged commit afterwards.
    """
    root = Path(repo_root).resolve()
    async with repo_lock(root):
        # (the checkout that has the base lists the base's tip as its HEAD: no second read of the ref)
        checkout = await base_checkout(root, base_branch) if candidate.commit is not None else None
        now = checkout.head if checkout is not None else await rev_parse(root, f"refs/heads/{base_branch}")
        if now != candidate.base_before:
            raise MergeRefused(f"{base_branch} moved (from {candidate.base_before[:12]} to {(now or 'nothing')[:12]}) "
                               "since the merge was built", reason="base_moved")
        if candidate.commit is None:  # (no change: nothing lands, nothing of the checkout is read)
            return await _land(root, branch, base_branch, candidate)
        if checkout is None:
            return await _land(root, branch, base_branch, candidate, checkout=None)
        there = checkout

        async def judge(dirs: tuple[Path, Path], dirty: list[str]) -> None:
            # (on the fast-forward's own reads of the checkout, just before it: the user's operation, then
            # their uncommitted changes, as the build judged them; each was read here a second time before)
            await _refuse_busy(root, there, gitdir=dirs[0])
            _refuse_dirty(base_branch, there, dirty)

        return await _land(root, branch, base_branch, candidate, checkout=checkout, judge=judge)


async def _refuse_busy(root: Path, checkout: WorktreeEntry | None, *, gitdir: Path | None = None) -> None:
    """Refuse (``busy``) while the user is in the middle of a git operation in the repository or
    the base's checkout: the user's work comes first. ``gitdir``: the checkout's own git directory,
    when the caller just read it (the checkout is not asked again)."""
    for place in dict.fromkeys([root, *([checkout.path] if checkout is not None else [])]):
        if gitdir is not None and checkout is not None and place == checkout.path:
            busy = operation_at(gitdir, locks=False)
        else:
            busy = await operation_in_progress(Path(place), locks=False)
        if busy is not None:
            # (a lock is the checkout preflight's refusal, reason "locked", which the flow holds the same way)
            raise MergeRefused(f"{busy} is in progress in {place}: the merge waits until it is done (finish or abort "
                               "it there)", reason="busy", files=[str(place)])


def _refuse_dirty(base_branch: str, checkout: WorktreeEntry | None, dirty: list[str]) -> None:
    """Refuse (``dirty``) when the base's checkout has uncommitted changes to tracked files."""
    if dirty and checkout is not None:
        raise MergeRefused(
            f"{checkout.path} (where {base_branch} is checked out) has uncommitted changes to {len(dirty)} "
            f"tracked file(s): {name_files(dirty)}. Commit, stash or discard them there, then Merge again.",
            reason="dirty", files=dirty)


_UNREAD = WorktreeEntry(Path("/nonexistent: not read"), None, None)
"""Stands for the base's checkout not read yet (:func:`_fast_forward` reads it)."""


async def _land(root: Path, branch: str, base_branch: str, c: MergeCandidate, *,
                checkout: WorktreeEntry | None = _UNREAD, judge: Judge | None = None) -> MergeResult:
    """Move the base to ``c.commit`` (nothing to do when the branch brought no change);
    ``checkout`` and ``judge`` as :func:`_fast_forward`."""
    if c.commit is None:
        return MergeResult(None, c.base_before, c.base_before, merged=c.merged)
    await _fast_forward(root, base_branch, c.base_before, c.commit, checkout=checkout, judge=judge)
    if not await contains(root, base_branch, c.merged if c.style == "merge" else c.commit):
        raise RepoError(f"{base_branch} does not contain {c.commit[:12]} after the fast-forward")
    logger.info("merged %s into %s as %s (%s%s)", branch, base_branch, c.commit[:12], c.style,
                ", signed" if c.signed else "")
    return MergeResult(c.commit, c.base_before, c.commit, c.signed, merged=c.merged)


async def _merge(
    root: Path, branch: str, base_branch: str, style: MergeStyle, message: str, sign: bool, co_authors: list[str],
    expected: str | None = None,
) -> MergeResult:
    return await _land(root, branch, base_branch, await _build(root, branch, base_branch, style, message, sign,
                                                               co_authors, expected))


async def _build(
    root: Path, branch: str, base_branch: str, style: MergeStyle, message: str, sign: bool, co_authors: list[str],
    expected: str | None = None, onto: str | None = None,
) -> MergeCandidate:
    base_ref = onto or f"refs/heads/{base_branch}"
    # the base, the branch, the base's tree and the decision's commit in one call
    revs = await rev_parse_all(root, f"{base_ref}^{{commit}}", f"refs/heads/{branch}^{{commit}}", f"{base_ref}^{{tree}}",
                               *([f"{expected}^{{commit}}"] if expected is not None else []))
    if revs is None:
        if await rev_parse(root, base_ref) is None or expected is None \
                or await rev_parse(root, f"refs/heads/{branch}") is None:
            missing = (onto or base_branch) if await rev_parse(root, base_ref) is None else branch
            raise RepoError(f"cannot merge: branch {missing!r} does not exist")
        raise RepoError(f"cannot merge: {expected!r} names no commit in {root}")
    base_before, tip, base_tree = revs[:3]
    if expected is not None:
        want = revs[3]
        if want != tip:
            raise MergeRefused(
                f"{branch} moved since the decision opened (it showed {want[:12]}, the branch is now at {tip[:12]}); "
                "review the new diff and decide again", reason="moved")
    checkout = await base_checkout(root, base_branch)
    await _refuse_busy(root, checkout)
    # the checkout's status and the merged tree are read at once (both read-only); a dirty checkout still refuses first
    dirty, tree = await gather_all(tracked_changes(checkout.path) if checkout is not None else _nothing(),
                                   _merged_tree(root, base_before, tip, branch, base_branch))
    _refuse_dirty(base_branch, checkout, value(dirty))  # (no checkout: nothing was read, _nothing)
    tree = value(tree)
    if tree == base_tree:
        logger.info("%s brings no change to %s; nothing to merge", branch, base_branch)
        return MergeCandidate(None, base_before, tip, style)
    signed = sign and await _wants_signing(root)
    parents = ["-p", base_before] + (["-p", tip] if style == "merge" else [])
    res = await git("commit-tree", "-S" if signed else "--no-gpg-sign", *parents, "-F", "-", tree, cwd=root,
                    input=_message(message, style, co_authors), check=False)
    if not res.ok:
        err = res.stderr.decode("utf-8", "replace").strip()
        if signed and ("sign" in err or "gpg" in err):
            raise MergeRefused(f"signing the merge commit failed: {err}. Fix the signing setup (user.signingkey, "
                               "gpg.format, your key agent) or turn merge signing off, then Merge again.",
                               reason="signing")
        if "identity" in err or "tell me who you are" in err.lower():
            raise MergeRefused(f"git does not know who you are in {root}: {err}. The merge commit carries your "
                               "identity: run git config --global user.name 'Your Name' and git config --global "
                               "user.email you@example.com, then Merge again.", reason="identity")
        raise GitFailed(["commit-tree", tree], res.rc, err)
    return MergeCandidate(res.text, base_before, tip, style, signed)


async def _nothing() -> list[str]:
    return []


async def contains(repo_root: StrPath, branch: str, commit: str) -> bool:
    """Return True when ``refs/heads/<branch>`` contains ``commit`` (``merge-base --is-ancestor``).

    A squash merge does not contain the agent's commit itself, only its content: check the
    :attr:`MergeResult.commit` then.
    """
    try:
        return await is_ancestor(repo_root, commit, f"refs/heads/{branch}")
    except GitFailed:
        return False  # an unknown commit or branch contains nothing


async def _fast_forward(root: Path, base_branch: str, old: str, new: str, *,
                        checkout: WorktreeEntry | None = _UNREAD, judge: Judge | None = None) -> None:
    """Move the base from ``old`` to ``new`` (a descendant) without touching anything else.

    In the checkout that has the base, :func:`~foreman.repos._checkout.fast_forward_checkout`
    (checked first, rolled back if git fails part-way; ``judge`` passed on to it); with none, a
    compare-and-swap ref update. ``checkout``: the base's checkout (:func:`base_checkout`) when the
    caller just read it under the repository lock it still holds (default: read here).
    """
    base_ref = f"refs/heads/{base_branch}"
    if checkout is _UNREAD:
        checkout = await base_checkout(root, base_branch)
    if checkout is None:
        res = await git("update-ref", "-m", f"agentcraft: merge into {base_branch}", base_ref, new, old, cwd=root,
                        check=False, timeout=HOOK_TIMEOUT, hooks=("reference-transaction",))
        if not res.ok:
            raise MergeRefused(f"{base_branch} moved during the merge; Merge again to merge onto it.",
                               reason="base_moved")
        return
    await fast_forward_checkout(checkout.path, base_branch, old, new, judge=judge)


async def base_checkout(repo_root: StrPath, base_branch: str) -> WorktreeEntry | None:
    """Return the one working tree that has ``base_branch`` checked out, or None.

    Raises:
        MergeRefused: ``reason="checked_out_twice"`` when several working trees have it (git
            allows it with ``worktree add -f``): a fast-forward updates the files of only the one
            it runs in and leaves every other with staged changes that undo the merge
            (git-worktree(1)), so the merge is refused naming them all.
    """
    ref = f"refs/heads/{base_branch}"
    found = [e for e in await list_worktrees(repo_root) if e.branch == ref and not e.bare and not e.prunable]
    missing = [e for e in found if not e.path.is_dir()]
    if missing:
        raise MergeRefused(
            f"{base_branch} is checked out in {missing[0].path}, which does not exist (a worktree on a drive that is "
            f"not mounted?). Mount it, or run git worktree prune if it is gone for good, then Merge again.",
            reason="checkout_missing", files=[str(e.path) for e in missing])
    if len(found) > 1:
        paths = [str(e.path) for e in found]
        raise MergeRefused(
            f"{base_branch} is checked out in {len(found)} working trees: {name_files(paths)}. A fast-forward "
            f"would update only one of them and leave the others with staged changes; switch all but one to "
            f"another branch (git switch --detach), then Merge again.", reason="checked_out_twice", files=paths)
    return found[0] if found else None


async def landing_blocked(repo_root: StrPath, base_branch: str) -> str | None:
    """Why a merge into ``base_branch`` must wait now (an operation of the user's in the repository
    or the base's checkout, or a git lock there), or None when it may go ahead."""
    root = Path(repo_root).resolve()
    checkout = await base_checkout(root, base_branch)
    for place in dict.fromkeys([root, *([checkout.path] if checkout is not None else [])]):
        if (busy := await operation_in_progress(Path(place))) is not None:
            return f"{busy} is in progress in {place}"
    return None
