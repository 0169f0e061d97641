"""A private home: what the Foreman keeps under ``--home`` is its owner's alone.

The home holds every message, every agent's log, the memory notes, the client tokens
(``foreman.json``), the state database and the worktrees: readable by other users of the machine,
it leaks all of it, and a token read from it lets another user steer the team. So folders the
Foreman makes there are 0700 and files 0600 (:func:`private_dir`, :func:`private_file`; SQLite
gives the ``-wal`` and ``-shm`` files of ``state.db`` the database's own mode), and a home made
before this rule, or loosened by hand, is tightened at every start (:func:`tighten_home`).

What is not changed: the contents of git repositories and worktrees (agents' worktrees, the sim's
demo repository, a trash slot holding an old worktree): their own files keep the modes git gave
them (an executable stays executable), and their folders, 0700 one level up, are reachable by
nobody else anyway. A home that is a user's home folder itself (``--home ~``) is never walked.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

logger = logging.getLogger(__name__)

DIR_MODE = 0o700
"""Folders under the home: the owner's alone."""
FILE_MODE = 0o600
"""Files under the home (an owner-executable file keeps its execute bit: 0700)."""

#: Files at the top of the home that are the Foreman's (the rest of a top folder is not walked).
_HOME_FILES = ("foreman.json", "config.json")
#: Entries that mark a folder at the top of the home as a profile (or the sim's sandbox).
_PROFILE_MARKS = ("state.db", "foreman.lock", "foreman.json", "foreman.log", "logs", "memory", "worktrees", "config.json")


def private_dir(path: Path) -> Path:
    """Make ``path`` (and any missing parent) a folder of mode 0700; an existing ``path`` is set to
    0700 too, its existing parents are left as they are. Returns ``path``."""
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass
    _chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty if it is missing, with mode 0600, or set an existing one to 0600."""
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def append_private(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Append ``text`` to ``path``, creating it (and its missing folders) private: 0600 and 0700."""
    path = Path(path)
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    with os.fdopen(fd, "a", encoding=encoding) as handle:
        handle.write(text)


def _chmod(path: Path, mode: int) -> bool:
    """Set ``path``'s permission bits to ``mode`` when they differ; True when it changed them."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode) or stat.S_IMODE(st.st_mode) == mode:
        return False
    try:
        os.chmod(path, mode)
    except OSError as exc:
        logger.warning("cannot make %s private (mode %o): %s", path, mode, exc)
        return False
    return True


def _file_mode(st: os.stat_result) -> int:
    return 0o700 if st.st_mode & stat.S_IXUSR else FILE_MODE


def _is_repository(folder: Path) -> bool:
    """A git working tree, worktree or repository: its contents are git's, not the Foreman's."""
    return (folder / ".git").exists() or ((folder / "HEAD").is_file() and (folder / "objects").is_dir())


def _tighten_tree(root: Path, changed: list[Path]) -> None:
    """Folders 0700 and files 0600 (0700 when owner-executable) from ``root`` down; the folder of a
    repository or worktree is tightened but not entered, nor are the slots of ``trash``."""
    if _chmod(root, DIR_MODE):
        changed.append(root)
    if _is_repository(root):
        return
    try:
        entries = list(os.scandir(root))
    except OSError as exc:
        logger.warning("cannot read %s to make it private: %s", root, exc)
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if root.name == "trash":  # a retired worktree moved whole: the slot, not its contents
                if _chmod(path, DIR_MODE):
                    changed.append(path)
                continue
            _tighten_tree(path, changed)
        elif stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) != _file_mode(st):
            if _chmod(path, _file_mode(st)):
                changed.append(path)


def tighten_home(home: Path) -> list[Path]:
    """Make an existing home private: the home folder 0700, its run and config files 0600, and
    every profile folder (a folder holding a ``state.db``, ``logs``, ``memory``... of the Foreman's)
    and the sim's ``sandbox`` tightened as :func:`_tighten_tree` says. Other entries at the top
    of the home are left alone; a home that is the user's own home folder is not touched.

    Returns:
        The paths whose mode changed (the start logs how many).
    """
    home = Path(home)
    changed: list[Path] = []
    try:
        if not home.is_dir() or home.resolve() == Path.home().resolve():
            return changed
    except OSError:
        return changed
    if _chmod(home, DIR_MODE):
        changed.append(home)
    for name in _HOME_FILES:
        if (home / name).is_file() and _chmod(home / name, FILE_MODE):
            changed.append(home / name)
    for entry in sorted(home.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        if entry.name == "sandbox" or any((entry / mark).exists() for mark in _PROFILE_MARKS):
            _tighten_tree(entry, changed)
    if changed:
        logger.info("made %d paths under %s private to you (folders 0700, files 0600)", len(changed), home)
    return changed
