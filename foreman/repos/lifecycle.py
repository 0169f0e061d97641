"""The end of a task's worktree: removal after merge or reject, and cleaning stale entries - never
deleting uncommitted work.

* :func:`retire_worktree` removes a task's worktree once its task is merged or rejected (the
  branch is always kept). Files the worktree still holds uncommitted - modified, added,
  untracked; ignored files excluded, they are rebuilt by tools - are first *copied* to
  ``<trash>/<worktree>-<UTC time>/`` (with ``DELETED.txt`` listing tracked files the agent had
  deleted, and ``ABOUT.txt`` naming the branch and commit). ``keep=True`` (``--keep-worktrees``)
  leaves it in place.
* :func:`clean_stale_worktrees` cleans the Foreman's worktree folder of one repository: entries
  git would prune (the folder is gone) lose their administrative entry; registered folders
  whose ``.git`` link is gone or broken, half-created ones, half-removed folders and folders
  that are not worktrees at all are *moved* whole into the trash (an empty folder, or one that
  holds only a dangling ``.git`` link, is simply removed).

Both take the repository's lock (:func:`~foreman.repos._git.repo_lock`), like worktree creation.
Entries are cleaned one by one (the administrative folder ``<common>/worktrees/<id>``,
gitrepository-layout(5)), never with a repository-wide ``git worktree prune``, which would also
prune the user's own worktrees on a disconnected drive.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from foreman.errors import WorktreeUnsafe

from ..private import private_dir
from ._git import StrPath, common_dir, git, list_worktrees, repo_lock
from ._snapshot import linked_admin_dir, worktree_env
from .worktrees import WorktreeBusy, _processes_inside, remove_worktree

logger = logging.getLogger(__name__)

Action = Literal["kept", "removed", "pruned", "trashed"]


@dataclass(frozen=True)
class Cleaned:
    """What happened to one worktree folder.

    Attributes:
        path: the worktree folder (as it was).
        action: ``"kept"`` (``keep``, or nothing to do), ``"removed"`` (deleted: nothing
            uncommitted, or an empty/dangling leftover), ``"pruned"`` (the folder was already gone;
            its stale entry was dropped) or ``"trashed"`` (work was moved aside first).
        trash: where the work went, when ``action == "trashed"``.
        files: the paths moved or copied to ``trash`` (relative to it), sorted.
        reason: one line for the feed.
    """

    path: Path
    action: Action
    trash: Path | None = None
    files: tuple[str, ...] = field(default_factory=tuple)
    reason: str = ""


def _trash_slot(trash_dir: Path, name: str) -> Path:
    private_dir(trash_dir)  # the trash is in the home: 0700 (foreman/private.py)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    slot = trash_dir / f"{name}-{stamp}"
    n = 2
    while slot.exists():
        slot = trash_dir / f"{name}-{stamp}-{n}"
        n += 1
    return slot


def _files_under(folder: Path) -> tuple[str, ...]:
    found = []
    for dirpath, _dirs, files in os.walk(folder):
        found += [os.path.relpath(Path(dirpath) / f, folder) for f in files]
    return tuple(sorted(found))


async def _admin_of(root: Path, wt: Path) -> Path | None:
    """Return ``<common>/worktrees/<id>`` whose ``gitdir`` points at ``<wt>/.git``, or None."""
    admin_root = await common_dir(root) / "worktrees"
    if not admin_root.is_dir():
        return None
    for admin in admin_root.iterdir():
        try:
            target = (admin / "gitdir").read_text(encoding="utf-8", errors="surrogateescape").strip()
        except OSError:
            continue
        if Path(os.path.realpath(target)) == wt / ".git" or Path(os.path.realpath(target)).parent == wt:
            return admin
    return None


async def _drop_entry(root: Path, wt: Path) -> None:
    admin = await _admin_of(root, wt)
    if admin is not None:
        shutil.rmtree(admin)


def _move_to_trash(folder: Path, trash_dir: Path) -> Cleaned:
    """Move a whole folder into the trash; its ``.git`` link (if any) is renamed so git ignores it."""
    slot = _trash_slot(trash_dir, folder.name)
    shutil.move(str(folder), str(slot))
    link = slot / ".git"
    if link.is_file() and not link.is_symlink():
        link.rename(slot / "git-link.txt")
    files = _files_under(slot)
    logger.warning("moved %s to %s (%d file(s))", folder, slot, len(files))
    return Cleaned(folder, "trashed", slot, files, f"moved {folder} aside to {slot}: it held {len(files)} file(s)")


def _leftover(folder: Path) -> bool:
    """True for a folder holding nothing, or only a ``.git`` link to a place that is gone."""
    children = list(folder.iterdir())
    if not children:
        return True
    if [c.name for c in children] == [".git"] and children[0].is_file() and not children[0].is_symlink():
        target = children[0].read_bytes().removeprefix(b"gitdir: ").strip()
        return not Path(os.fsdecode(target)).exists()
    return False


async def _uncommitted(wt: Path, admin: Path) -> tuple[list[str], list[str]]:
    """Return (present, deleted) repository paths the worktree holds uncommitted (ignored excluded)."""
    res = await git("-c", "core.quotePath=off", "status", "--porcelain", "-z", "--untracked-files=all",
                    "--no-renames", "--ignore-submodules=none", cwd=wt, env=worktree_env(admin, wt))
    present: list[str] = []
    deleted: list[str] = []
    for token in res.stdout.split(b"\0"):
        if len(token) < 4:
            continue
        path = os.fsdecode(token[3:])
        (deleted if os.path.lexists(wt / path) is False else present).append(path)
    return sorted(present), sorted(deleted)


async def retire_worktree(
    repo_root: StrPath, wt_path: StrPath, *, trash_dir: StrPath, keep: bool = False
) -> Cleaned:
    """Remove a task's worktree after its merge or reject; the branch is kept.

    Args:
        repo_root: the registered repository.
        wt_path: the task's worktree.
        trash_dir: ``<home>/<profile>/trash``: uncommitted files are copied under it first.
        keep: leave the worktree in place (``--keep-worktrees``); returns ``action="kept"``.

    Returns:
        The :class:`Cleaned` record: ``"removed"``, ``"trashed"`` (uncommitted files copied
        to ``trash``, listed in ``files``), ``"pruned"`` (the folder was already gone) or
        ``"kept"``. A worktree whose ``.git`` link is gone is moved whole into the trash.

    Raises:
        WorktreeBusy: a process has its working directory inside, or the worktree is locked;
            nothing was removed (retry later).
        RepoError: git failed.
    """
    root = Path(repo_root).resolve()
    wt = Path(os.path.realpath(wt_path))
    if keep:
        return Cleaned(wt, "kept", reason=f"kept {wt} (--keep-worktrees)")
    async with repo_lock(root):
        entry = next((e for e in await list_worktrees(root) if e.path == wt), None)
        if entry is None or entry.prunable or not wt.exists():
            return await _clean_folder(root, wt, Path(trash_dir), registered=entry is not None)
        try:
            admin = await linked_admin_dir(root, wt)
        except WorktreeUnsafe:
            return await _clean_folder(root, wt, Path(trash_dir), registered=True)
        if entry.locked is not None and entry.locked != "initializing":
            raise WorktreeBusy(f"{wt} is locked ({entry.locked or 'no reason given'}); it is kept")
        pids = _processes_inside(wt)
        if pids:
            raise WorktreeBusy(f"{wt} is in use by process(es) {', '.join(map(str, pids))}; it is kept for now")
        present, deleted = await _uncommitted(wt, admin)
        slot = None
        if present or deleted:
            slot = _trash_slot(Path(trash_dir), wt.name)
            for rel in present:
                dest = slot / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(wt / rel, dest, follow_symlinks=False)
            if deleted:
                (slot / "DELETED.txt").write_text("".join(f"{p}\n" for p in deleted))
            (slot / "ABOUT.txt").write_text(
                f"Uncommitted files of {wt} (branch {entry.branch or 'detached'}, HEAD {entry.head}), "
                f"copied before the worktree was removed.\n")
        await remove_worktree(root, wt, force=True)
    if slot is None:
        return Cleaned(wt, "removed", reason=f"removed {wt}; its branch is kept")
    files = tuple(sorted(present))
    return Cleaned(wt, "trashed", slot, files,
                   f"removed {wt}; its {len(present) + len(deleted)} uncommitted change(s) were moved to {slot}")


async def _clean_folder(root: Path, wt: Path, trash_dir: Path, *, registered: bool) -> Cleaned:
    """Clean one folder that is not a healthy worktree (lock held by the caller)."""
    if not os.path.lexists(wt):
        if registered:
            await _drop_entry(root, wt)
            return Cleaned(wt, "pruned", reason=f"dropped the stale worktree entry for {wt} (its folder was gone)")
        return Cleaned(wt, "kept", reason=f"{wt} does not exist")
    if wt.is_dir() and not wt.is_symlink() and _leftover(wt):
        shutil.rmtree(wt)
        if registered:
            await _drop_entry(root, wt)
        return Cleaned(wt, "removed", reason=f"removed the empty leftover folder {wt}")
    pids = _processes_inside(wt)
    if pids:
        raise WorktreeBusy(f"{wt} is in use by process(es) {', '.join(map(str, pids))}; it is kept for now")
    if registered:
        await _drop_entry(root, wt)
    return _move_to_trash(wt, trash_dir)


async def clean_stale_worktrees(repo_root: StrPath, worktrees_dir: StrPath, *, trash_dir: StrPath) -> list[Cleaned]:
    """Clean stale worktrees under the Foreman's folder of one repository (at start, or before a
    task starts again).

    Args:
        repo_root: the registered repository.
        worktrees_dir: ``<home>/<profile>/worktrees/<repo>``; nothing outside it is touched.
        trash_dir: ``<home>/<profile>/trash``.

    Returns:
        One :class:`Cleaned` per folder or entry acted on (healthy worktrees are not listed).

    Raises:
        WorktreeBusy: a process runs inside a stale folder (others were cleaned).
        RepoError: git failed.
    """
    root = Path(repo_root).resolve()
    base = Path(os.path.realpath(worktrees_dir))
    done: list[Cleaned] = []
    async with repo_lock(root):
        entries = [e for e in await list_worktrees(root) if not e.main and e.path.parent == base]
        common = await common_dir(root) if entries else None  # (once for every entry's link check)
        seen = set()
        for entry in entries:
            seen.add(entry.path)
            broken = entry.prunable or not await _link_ok(root, entry.path, common)
            half = entry.locked == "initializing" or not entry.head
            if broken or half:
                done.append(await _clean_folder(root, entry.path, Path(trash_dir), registered=True))
        if base.is_dir():
            for child in sorted(base.iterdir()):
                if child.resolve() not in seen and child.is_dir() and not child.is_symlink():
                    done.append(await _clean_folder(root, child.resolve(), Path(trash_dir), registered=False))
    for item in done:
        logger.info("%s", item.reason)
    return done


async def _link_ok(root: Path, wt: Path, common: Path | None = None) -> bool:
    try:
        await linked_admin_dir(root, wt, common=common)
    except WorktreeUnsafe:
        return False
    return True


async def clear_stale_locks(repo_root: StrPath, wt_paths: list[StrPath]) -> list[str]:
    """Remove the ``index.lock`` a git command killed with a previous daemon left in a worktree.

    git creates ``<admin dir>/index.lock`` while it writes the index and removes it when done; a
    git process killed part-way leaves it, and every later ``git add`` or ``git commit`` there
    fails ("Unable to create .../index.lock: File exists ... remove the file manually", git's own
    advice). A lock is removed only when no process has its working directory inside the worktree
    (a git still running there owns it). Worktrees whose links are broken are left to
    :func:`clean_stale_worktrees`.

    Args:
        repo_root: the registered repository. wt_paths: its worktrees the Foreman keeps.

    Returns:
        The worktrees whose lock was removed (paths as given).
    """
    root = Path(repo_root)
    cleared: list[str] = []
    for wt_path in wt_paths:
        wt = Path(wt_path)
        if not wt.is_dir():
            continue
        try:
            admin = await linked_admin_dir(root, wt)
        except WorktreeUnsafe:
            continue
        lock = admin / "index.lock"
        if not lock.exists() or _processes_inside(wt):
            continue
        try:
            lock.unlink()
        except FileNotFoundError:
            continue  # (its git finished meanwhile)
        logger.info("removed a stale %s left by a git command killed part-way", lock)
        cleared.append(str(wt_path))
    return cleared
