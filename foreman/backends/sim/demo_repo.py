"""Creates the pocket-notes demo repository the sim team works on.

The repository is built from :data:`foreman.backends.sim.demo_content.COMMITS` with a fixed
identity and fixed dates, and git runs with an environment that ignores the user's and the
system's git config, so the head commit hash is the same on every machine and every run.

The repository is built in a temporary sibling folder and renamed into place, so a crash while
creating it never leaves a half-made repository at the final path.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Protocol

from foreman.backends.sim.demo_content import COMMITS
from foreman.errors import RepoError

logger = logging.getLogger(__name__)

BASE_BRANCH = "main"
"""The demo repository's base branch."""

DEMO_AUTHOR_NAME = "Sam Rivera"
DEMO_AUTHOR_EMAIL = "sam@pocket-notes.example"

GIT_TIMEOUT = 30.0
"""Seconds one git call may take before it counts as failed."""

# `-c` options for every call: never sign, never rewrite line ends, no hooks.
_GIT_OPTIONS = (
    "-c", "commit.gpgsign=false",
    "-c", "tag.gpgsign=false",
    "-c", "core.autocrlf=false",
    "-c", "core.hooksPath=" + os.devnull,
)


class StepLike(Protocol):
    """What :func:`apply_step` reads from a step (see :class:`foreman.backends.sim.patches.Step`)."""

    @property
    def writes(self) -> Mapping[str, str]: ...
    @property
    def deletes(self) -> tuple[str, ...] | list[str]: ...


def demo_test_command(python: str | None = None) -> list[str]:
    """The demo repository's test command as an argument list.

    Args:
        python: the interpreter to use; defaults to the one running the Foreman.

    Returns:
        ``[python, "-m", "unittest", "discover", "-s", "tests"]``, to run with the repository
        (or a worktree of it) as the working directory.
    """
    return [python or sys.executable, "-m", "unittest", "discover", "-s", "tests"]


def git_env(date: str | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for git that ignores every git config but the repository's own.

    Every inherited ``GIT_*`` variable is dropped (``GIT_DIR``, ``GIT_INDEX_FILE`` ... would
    point git elsewhere); ``GIT_CONFIG_GLOBAL`` (git >= 2.32) and ``GIT_CONFIG_NOSYSTEM`` hide
    the user's and the system's config; the demo identity is set as author and committer.

    Args:
        date: author and committer date (anything git's date parser accepts), or None.
        base: the environment to start from; defaults to ``os.environ``.

    Returns:
        A new dict, ready for ``subprocess.run(env=...)``.
    """
    env = {key: value for key, value in (base if base is not None else os.environ).items()
           if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME=DEMO_AUTHOR_NAME,
        GIT_AUTHOR_EMAIL=DEMO_AUTHOR_EMAIL,
        GIT_COMMITTER_NAME=DEMO_AUTHOR_NAME,
        GIT_COMMITTER_EMAIL=DEMO_AUTHOR_EMAIL,
    )
    if date is not None:
        env["GIT_AUTHOR_DATE"] = date
        env["GIT_COMMITTER_DATE"] = date
    return env


def create_demo_repo(path: Path, *, force: bool = False) -> str:
    """Creates the pocket-notes repository at ``path`` with its history on ``main``.

    Args:
        path: the folder to create; its parent is created if needed.
        force: remove an existing demo repository at ``path`` first.

    Returns:
        The head commit's sha (40 hex digits); the same for every call.

    Raises:
        FileExistsError: ``path`` exists and ``force`` is False, or ``force`` is True but
            ``path`` is not a folder this function made (it is never removed then).
        RepoError: a git command failed (the message has git's output).
    """
    path = Path(path).absolute()
    if path.exists() or path.is_symlink():
        if not force:
            raise FileExistsError(
                f"{path} already exists; pass force=True (--force) to remove and recreate it")
        if not _looks_like_demo(path):
            raise FileExistsError(
                f"{path} exists and does not look like a pocket-notes demo repository; "
                "not removing it, remove it yourself or pick another path")
        logger.info("removing the old demo repository at %s", path)
        _remove_tree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.creating-"))
    staging.chmod(0o755)  # mkdtemp makes it private; the repository is an ordinary folder
    try:
        head = _build(staging)
        staging.rename(path)
    except BaseException:
        _remove_tree(staging)
        raise
    logger.info("created the pocket-notes demo repository at %s (head %s)", path, head[:12])
    return head


def apply_step(root: Path, step: StepLike) -> None:
    """Writes a step's files into a checkout and deletes the ones it removes.

    Args:
        root: the checkout (a repository or worktree folder).
        step: anything with ``writes`` (relative POSIX path -> full content) and ``deletes``
            (relative POSIX paths; a missing file is not an error).

    Raises:
        ValueError: a path is absolute, contains ``..``, or points into ``.git``.
    """
    root = Path(root)
    for rel, content in step.writes.items():
        target = root / _safe_relative(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8"))
    for rel in step.deletes:
        (root / _safe_relative(rel)).unlink(missing_ok=True)


def _build(root: Path) -> str:
    _git(root, "init", "--quiet", f"--initial-branch={BASE_BRANCH}")
    for commit in COMMITS:
        for rel, content in commit.writes.items():
            target = root / _safe_relative(rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8"))
        _git(root, "add", "--all")
        _git(root, "commit", "--quiet", "--no-verify", "-m", commit.message, date=commit.date)
    return _git(root, "rev-parse", "HEAD").strip()


def _git(cwd: Path, *args: str, date: str | None = None) -> str:
    argv = ["git", *_GIT_OPTIONS, *args]
    try:
        done = subprocess.run(argv, cwd=cwd, env=git_env(date), capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RepoError(f"git {args[0]} could not run in {cwd}: {exc}") from exc
    if done.returncode != 0:
        raise RepoError(f"git {args[0]} failed in {cwd} (exit {done.returncode}): "
                        f"{(done.stderr or done.stdout).strip()}")
    return done.stdout


def _safe_relative(rel: str) -> PurePosixPath:
    pure = PurePosixPath(rel)
    if pure.is_absolute() or not pure.parts or ".." in pure.parts or pure.parts[0] == ".git" \
            or "\\" in rel or ":" in rel:
        raise ValueError(f"refusing to write {rel!r}: not a plain path inside the repository")
    return pure


def _looks_like_demo(path: Path) -> bool:
    """True for an empty folder or one holding a (possibly half-made) demo repository."""
    if path.is_symlink() or not path.is_dir():
        return False
    names = {entry.name for entry in path.iterdir()}
    return not names or names == {".git"} or {".git", "pocket_notes"} <= names


def _remove_tree(path: Path) -> None:
    def make_writable_and_retry(func, name, _exc):  # git makes object files read-only
        os.chmod(name, 0o700)
        func(name)

    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=make_writable_and_retry)
        else:
            shutil.rmtree(path, onerror=make_writable_and_retry)
