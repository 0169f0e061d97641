"""Fast-forwarding a branch that the user has checked out, without ever leaving it half-updated.

``git merge --ff-only`` in the user's checkout writes the changed files one by one and only
then the index and the ref. If a write fails part-way (a folder that cannot be written, a smudge
filter that fails - e.g. git-lfs missing -, a full disk), git stops with the files it already
wrote left as *uncommitted edits* in the user's checkout, and the index and ``HEAD`` at the old
commit. And by default git silently overwrites *ignored* files (git-merge(1),
``--overwrite-ignore``).

So :func:`fast_forward_checkout` does, in order:

1. :func:`preflight`: refuse, naming the files, when the checkout has uncommitted tracked
   changes, when another git process holds its ``index.lock``, when a path the update would
   create already exists untracked or ignored (git's own "would be overwritten by merge" rule,
   extended to ignored files), or when a folder the update writes to cannot be written;
2. ``git merge --ff-only --no-overwrite-ignore``;
3. if git still failed after it began writing: roll back - the index is put back byte for byte
   from a copy taken before (git writes it before the ref, so a ref lock leaves it new), every
   path git changed that now holds the *new* content (or is missing) is restored from it, every
   path it created with the new content is removed, and so are the folders it created - then
   check the checkout is clean again. The refusal says why git failed and whether the rollback
   restored everything.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreman.errors import MergeRefused

from ._git import HOOK_TIMEOUT, GitResult, GitTimeout, StrPath, git, main_git_dir, rev_parse

logger = logging.getLogger(__name__)

MAX_NAMED = 5
"""Files named in a refusal before the rest are counted."""

_OVERWRITE_MARKERS = ("would be overwritten", "would lose untracked", "local changes")


def name_files(files: list[str], limit: int = MAX_NAMED) -> str:
    """Return ``"a, b, c"`` or ``"a, b, c, d, e and 7 more"`` for a refusal message."""
    shown = ", ".join(files[:limit])
    return shown + (f" and {len(files) - limit} more" if len(files) > limit else "")


@dataclass(frozen=True)
class Change:
    """One path the fast-forward changes (``git diff-tree -r --no-renames``).

    Attributes:
        path: repository-relative path (``/``-separated).
        status: ``A`` (added), ``M`` (modified), ``D`` (deleted) or ``T`` (type changed).
        old_mode: mode in the old commit (``000000`` when added).
        new_mode: mode in the new commit (``000000`` when deleted).
        old_blob: object id in the old commit.
        new_blob: object id in the new commit.
    """

    path: str
    status: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str


async def changes(repo_root: StrPath, old: str, new: str) -> list[Change]:
    """Return the paths that differ between commits ``old`` and ``new``."""
    res = await git("-c", "core.quotePath=off", "diff-tree", "-r", "-z", "--no-renames", "--raw", old, new,
                    cwd=repo_root)
    tokens = res.stdout.split(b"\0")
    found: list[Change] = []
    for i in range(0, len(tokens) - 1, 2):
        meta, path = tokens[i].decode(), os.fsdecode(tokens[i + 1])
        if not meta.startswith(":"):
            break
        old_mode, new_mode, old_blob, new_blob, status = meta[1:].split(" ")
        found.append(Change(path, status[:1], old_mode, new_mode, old_blob, new_blob))
    return found


async def _git_dirs(checkout: Path) -> tuple[Path, Path]:
    """Return the checkout's own git directory and the repository's common one (one ``rev-parse``;
    none for a main working tree, whose ``.git`` folder is both: :func:`~._git.main_git_dir`)."""
    if (own := main_git_dir(checkout)) is not None:
        return own, own
    res = await git("rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir", cwd=checkout)
    gitdir, common = res.text.splitlines()
    return Path(gitdir), Path(common)


_IN_PROGRESS = (("rebase-merge", "a rebase"), ("MERGE_HEAD", "a merge"), ("CHERRY_PICK_HEAD", "a cherry-pick"),
                ("REVERT_HEAD", "a revert"), ("BISECT_LOG", "a bisect"), ("sequencer", "a cherry-pick or revert"))
"""The files git keeps in a checkout's git directory while an operation is under way (git-status(1)
reports the same states; ``rebase-apply`` is a rebase, or ``git am`` when it holds ``applying``)."""


async def operation_in_progress(checkout: Path, *, locks: bool = True) -> str | None:
    """What the user is in the middle of in ``checkout`` (``a rebase``, ``a merge``, ``git am``,
    ``a cherry-pick``, ``a revert``, ``a bisect``) or, when another git process works there and
    ``locks``, its lock (``index.lock``); None when nothing is. A merge must not move a branch
    under either."""
    return operation_at((await _git_dirs(checkout))[0], locks=locks)


def operation_at(gitdir: Path, *, locks: bool = True) -> str | None:
    """:func:`operation_in_progress` of the checkout whose own git directory (``--absolute-git-dir``)
    is ``gitdir``, already known: only the files there are looked at, no git runs."""
    apply = gitdir / "rebase-apply"
    if apply.is_dir():
        return "git am" if (apply / "applying").exists() else "a rebase"
    for name, what in _IN_PROGRESS:
        if (gitdir / name).exists():
            return what
    for lock in (gitdir / "index.lock", gitdir / "HEAD.lock") if locks else ():
        if lock.exists():
            return f"another git command ({lock} exists)"
    return None


async def tracked_changes(checkout: StrPath) -> list[str]:
    """Return the checkout's paths with uncommitted tracked changes (staged or not), sorted."""
    res = await git("-c", "core.quotePath=off", "status", "--porcelain", "-z", "--untracked-files=no",
                    "--ignore-submodules=dirty", cwd=checkout)
    files: list[str] = []
    tokens = iter(res.stdout.split(b"\0"))
    for token in tokens:
        if len(token) > 3:
            files.append(os.fsdecode(token[3:]))
            if token[:1] in (b"R", b"C"):
                next(tokens, None)  # the rename's source
    return sorted(dict.fromkeys(files))


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


async def _in_tree(repo_root: StrPath, commit: str, paths: list[str]) -> set[str]:
    """Return which of ``paths`` name an entry of ``commit``'s tree (one ``cat-file`` call; none for no paths)."""
    asked = [p for p in paths if "\n" not in p]
    if not asked:
        return set()
    res = await git("cat-file", "--batch-check=%(objecttype)", cwd=repo_root, check=False,
                    input=b"".join(os.fsencode(f"{commit}:{p}") + b"\n" for p in asked))
    answers = res.stdout.decode("utf-8", "replace").splitlines()
    return {p for p, a in zip(asked, answers, strict=False) if not a.endswith("missing")}


async def preflight(checkout: Path, base_branch: str, old: str, diff: list[Change],
                    dirty: list[str] | None = None, dirs: tuple[Path, Path] | None = None) -> None:
    """Refuse a fast-forward of ``checkout`` from ``old`` that git could not finish cleanly.

    Only the paths the update writes are checked for untracked or ignored files in the way
    (``lstat`` of each created path and its parent folders; ``cat-file`` only for a parent that
    exists as something other than a folder), so untracked files elsewhere cost nothing and
    never refuse.

    Args:
        checkout: the working tree that has ``base_branch`` checked out.
        base_branch: short name, for messages.
        old: the commit the checkout is at.
        diff: :func:`changes` from ``old`` to the new commit.
        dirty: :func:`tracked_changes` of ``checkout`` when the caller just read them
            (None: read here).
        dirs: the checkout's git directory and common git directory when already known.

    Raises:
        MergeRefused: ``reason`` ``"dirty"`` (tracked changes), ``"locked"`` (``index.lock``),
            ``"untracked"`` (untracked or ignored paths in the way, ``files`` named) or
            ``"unwritable"`` (folders that cannot be written, ``files`` named). Nothing changed.
    """
    if dirty is None:
        dirty = await tracked_changes(checkout)
    if dirty:
        raise MergeRefused(
            f"{checkout} (where {base_branch} is checked out) has uncommitted changes to {len(dirty)} tracked "
            f"file(s): {name_files(dirty)}. Commit, stash or discard them there, then Merge again.",
            reason="dirty", files=dirty)
    gitdir, common = dirs if dirs is not None else await _git_dirs(checkout)
    for lock in (gitdir / "index.lock", gitdir / "HEAD.lock", common / "refs" / "heads" / f"{base_branch}.lock",
                 common / "packed-refs.lock"):
        if lock.exists():
            raise MergeRefused(
                f"another git process is using {checkout} ({lock} exists). Wait for it to finish - or, if no git "
                "is running there, delete that file - then Merge again.", reason="locked", files=[str(lock)])
    created = [c.path for c in diff if c.status == "A" or (c.status == "T" and c.old_mode == "000000")]
    parents = sorted({q for p in created for q in _parents(p)})
    # a parent that is a real folder is never in the way; only one that exists as something
    # else (a file, a symlink) is, unless the old commit tracks it there (git replaces it)
    odd = [q for q in parents if _lexists(checkout / q) and ((checkout / q).is_symlink() or not (checkout / q).is_dir())]
    tracked = await _in_tree(checkout, old, odd)
    in_way: list[str] = []
    for path in created:
        if _lexists(checkout / path):
            in_way.append(path)
    for q in parents:
        full = checkout / q
        if q not in tracked and _lexists(full) and (full.is_symlink() or not full.is_dir()):
            in_way.append(q)
    if in_way:
        in_way = sorted(dict.fromkeys(in_way))
        raise MergeRefused(
            f"the merge would overwrite {len(in_way)} untracked or ignored path(s) in {checkout}: "
            f"{name_files(in_way)}. Move or remove them (they are yours, git does not track them), then Merge again.",
            reason="untracked", files=in_way)
    blocked = _unwritable(checkout, diff) + [str(d) for d in (gitdir,) if not os.access(d, os.W_OK | os.X_OK)]
    if blocked:
        raise MergeRefused(
            f"the merge cannot write {len(blocked)} folder(s) in {checkout}: {name_files(blocked)}. Make them "
            "writable (chmod u+w, or chattr -i), or free space, then Merge again.", reason="unwritable", files=blocked)


def _lexists(path: Path) -> bool:
    return os.path.lexists(path)


def _unwritable(checkout: Path, diff: list[Change]) -> list[str]:
    """Folders the update writes into (the deepest existing one of each path) that deny writing."""
    bad: dict[str, None] = {}
    seen: set[Path] = set()
    for change in diff:
        folder = (checkout / change.path).parent
        while folder != checkout and not folder.is_dir():
            folder = folder.parent
        if folder in seen:
            continue
        seen.add(folder)
        if not os.access(folder, os.W_OK | os.X_OK):
            bad[os.path.relpath(folder, checkout) if folder != checkout else "."] = None
    return list(bad)


async def gather_all(*calls: Awaitable[Any]) -> list[Any]:
    """Await ``calls`` concurrently and return each one's result or the exception it raised.

    Every call runs to its end (nothing is cancelled), so a failure of one never leaves another's
    git process behind; the caller judges the answers in its own order with :func:`value`.
    """
    return list(await asyncio.gather(*calls, return_exceptions=True))


def value(result: Any) -> Any:
    """Return a :func:`gather_all` result, raising it when it is an exception."""
    if isinstance(result, BaseException):
        raise result
    return result


Judge = Callable[[tuple[Path, Path], list[str]], Awaitable[None]]
"""A caller's own refusals of a checkout, from reads it would otherwise repeat: called with the
checkout's ``(git directory, common git directory)`` and its :func:`tracked_changes`; raises
:class:`~foreman.errors.MergeRefused` to refuse."""


async def fast_forward_checkout(checkout: Path, base_branch: str, old: str, new: str, *,
                                judge: Judge | None = None) -> None:
    """Fast-forward ``checkout`` (which has ``base_branch`` at ``old``) to ``new``, or change nothing.

    Args:
        judge: called after the moved-base check and before :func:`preflight` with what was read
            of the checkout (its git directories and tracked changes): the caller's refusals
            (an operation of the user's under way ...) judged on the same reads, not read again.

    Raises:
        MergeRefused: see :func:`preflight`; ``reason="base_moved"`` when the base no longer is
            at ``old``; what ``judge`` raises; ``"lfs"`` when the update needs git-lfs and it is
            not installed; ``"failed"`` when git failed part-way (the message says why and what
            the rollback restored).
    """
    # the read-only git calls of the checks run at once; their answers are judged in the same order as before
    at, diff, dirty, dirs = await gather_all(
        rev_parse(checkout, f"refs/heads/{base_branch}"), changes(checkout, old, new), tracked_changes(checkout),
        _git_dirs(checkout))
    if value(at) != old:
        raise MergeRefused(f"{base_branch} moved during the merge; Merge again to merge onto it.", reason="base_moved")
    diff, dirty, dirs = value(diff), value(dirty), value(dirs)
    if judge is not None:
        await judge(dirs, dirty)
    await preflight(checkout, base_branch, old, diff, dirty, dirs)
    missing_dirs = {q for c in diff for q in _parents(c.path) if not _lexists(checkout / q)}
    index = dirs[0] / "index"
    backup = index.with_name("agentcraft-index.backup")
    if index.is_file():
        shutil.copy2(index, backup)  # git may write the index and then fail on the ref (a ref lock)
    try:
        await _run_merge(checkout, base_branch, old, new, diff, missing_dirs, index, backup)
    finally:
        backup.unlink(missing_ok=True)


async def _run_merge(checkout: Path, base_branch: str, old: str, new: str, diff: list[Change],
                     missing_dirs: set[str], index: Path, backup: Path) -> None:
    try:
        res = await git("merge", "--ff-only", "--no-overwrite-ignore", "--no-verify-signatures", "--no-autostash", "-q",
                        new, cwd=checkout, env={"GIT_REFLOG_ACTION": f"agentcraft: merge into {base_branch}"}, check=False,
                        timeout=HOOK_TIMEOUT, hooks=("post-merge", "reference-transaction"))
    except GitTimeout as exc:
        if await rev_parse(checkout, f"refs/heads/{base_branch}") == new and not await tracked_changes(checkout):
            logger.warning("merged into %s, but %s", base_branch, exc)  # post-merge runs after the update
            return
        res = GitResult(-1, b"", str(exc).encode())
    if res.ok:
        return
    err = res.stderr.decode("utf-8", "replace").strip()
    if await rev_parse(checkout, f"refs/heads/{base_branch}") != old:
        raise MergeRefused(f"{base_branch} moved during the merge ({err.splitlines()[-1] if err else 'no error'}); "
                           "Merge again to merge onto it.", reason="base_moved")
    if any(m in err for m in _OVERWRITE_MARKERS):  # git checked before writing anything
        raise MergeRefused(f"the fast-forward would overwrite files in {checkout}: {err}. Commit, stash or move them, "
                           "then Merge again.", reason="dirty")
    if backup.is_file() and index.read_bytes() != backup.read_bytes() and not index.with_name("index.lock").exists():
        os.replace(backup, index)  # byte for byte the index the user had
    left = await rollback(checkout, diff, missing_dirs)
    state = ("the checkout was restored as it was" if not left
             else f"could not restore {name_files(left)}: check them before merging again")
    if lfs_missing(err):
        raise MergeRefused(f"{checkout} needs git-lfs to check out the merged files, and git-lfs is not installed on "
                           f"this machine ({err.splitlines()[-1]}); {state}. Install git-lfs (https://git-lfs.com), "
                           "run `git lfs install`, then Merge again.", reason="lfs", files=left)
    raise MergeRefused(f"updating {checkout} failed part-way: {err or 'git gave no reason'}; {state}. Fix the cause, "
                       "then Merge again.", reason="failed", files=left)


def lfs_missing(stderr: str) -> bool:
    """Return True when git's error output says the git-lfs filter could not run.

    git reports a missing ``git-lfs`` as ``git-lfs: not found`` / ``command not found`` from its
    filter process and then "the remote end hung up unexpectedly"; ``shutil.which`` confirms.
    """
    return "git-lfs" in stderr and shutil.which("git-lfs") is None


async def _blob_ids(checkout: Path, paths: list[str]) -> dict[str, set[str]]:
    """Object ids a worktree file could have: raw bytes and through the checkout's clean filters."""
    algo = (await git("rev-parse", "--show-object-format", cwd=checkout, check=False)).text or "sha1"
    ids: dict[str, set[str]] = {}
    for path in paths:
        full = checkout / path
        try:
            data = os.readlink(full).encode() if full.is_symlink() else full.read_bytes()
        except OSError:
            continue
        ids[path] = {hashlib.new(algo, b"blob %d\0" % len(data) + data).hexdigest()}
        if not full.is_symlink():
            res = await git("hash-object", "--", path, cwd=checkout, check=False)
            if res.ok:
                ids[path].add(res.text)
    return ids


async def rollback(checkout: Path, diff: list[Change], missing_dirs: set[str]) -> list[str]:
    """Undo a fast-forward that git left part-way (index and ``HEAD`` still at the old commit).

    Only what the update wrote is undone: a path is restored from the index when it holds the
    new content or is gone, and removed when the update created it with the new content; a path
    that holds anything else is left and returned. Folders in ``missing_dirs`` (absent before)
    are removed when empty. ``.gitattributes`` files go first so later paths use the old filters.

    Returns:
        The paths that still differ from the old commit.
    """
    order = sorted(diff, key=lambda c: (not c.path.endswith(".gitattributes"), c.path))
    ids = await _blob_ids(checkout, [c.path for c in order if _lexists(checkout / c.path)])
    skipped = await _skip_worktree(checkout, [c.path for c in order if c.old_mode != "000000"])
    restore: list[str] = []
    remove: list[str] = []
    for c in order:
        present = _lexists(checkout / c.path)
        if c.old_mode != "000000":
            if (not present and c.path not in skipped) or (present and c.new_blob in ids.get(c.path, set())):
                restore.append(c.path)
        elif present and c.new_blob in ids.get(c.path, set()):
            remove.append(c.path)
    for path in remove:
        full = checkout / path
        if full.is_dir() and not full.is_symlink():
            shutil.rmtree(full, ignore_errors=True)
        else:
            full.unlink(missing_ok=True)
    if restore:
        attrs = [p for p in restore if p.endswith(".gitattributes")]
        for batch in (attrs, [p for p in restore if p not in attrs]):
            if batch:
                await git("checkout-index", "-f", "-q", "-z", "--stdin", cwd=checkout, check=False,
                          input=b"".join(os.fsencode(p) + b"\0" for p in batch))
    for folder in sorted(missing_dirs, key=lambda q: q.count("/"), reverse=True):
        try:
            (checkout / folder).rmdir()
        except OSError:
            pass
    left = await tracked_changes(checkout)
    left += [c.path for c in diff if c.old_mode == "000000" and _lexists(checkout / c.path)]
    return sorted(dict.fromkeys(left))


async def _skip_worktree(checkout: Path, paths: list[str]) -> set[str]:
    """Paths marked skip-worktree (sparse checkout) in the checkout's index: never materialised."""
    if not paths:
        return set()
    res = await git("-c", "core.quotePath=off", "ls-files", "-z", "-t", cwd=checkout, check=False)
    wanted = set(paths)
    return {os.fsdecode(t[2:]) for t in res.stdout.split(b"\0") if t[:2] == b"S " and os.fsdecode(t[2:]) in wanted}
