"""The one place the daemon runs git: subprocesses from argument lists, never a shell.

:func:`git` is a coroutine, but each git process is started and collected on a small thread
pool (``subprocess.Popen``), not through asyncio's subprocess transports: on CPython 3.11 a
task cancelled while asyncio connects a child's pipes can hang forever
(python/cpython#125502, #133536 - a failing ``gather``/``TaskGroup`` sibling is enough). A
cancelled :func:`git` kills its process and the cancellation propagates at once.

Every call runs ``git`` with a *clean* environment: variables a parent process may have left
behind that point git at another repository or inject configuration (``GIT_DIR``,
``GIT_WORK_TREE``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS`` ...) are removed, and git is
told never to prompt and never to take optional locks (so ``git status`` in the user's checkout
does not rewrite their index). This is *not* the agent safety environment
(:mod:`foreman.repos.gitsafety`): the daemon's own calls keep the user's configuration and
identity, because the merge commit is theirs.

Failures become :class:`GitFailed` (a :class:`~foreman.errors.RepoError`) naming the command,
its exit code and git's last error line.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import threading
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from foreman.errors import RepoError

logger = logging.getLogger(__name__)

StrPath = str | os.PathLike[str]
Arg = str | bytes | os.PathLike[str] | os.PathLike[bytes]

ZERO_OID = "0" * 40

T = TypeVar("T")

HOOK_TIMEOUT = 120.0
"""Seconds a daemon git call that can run a repository hook (``worktree add`` runs
``post-checkout``, ``merge`` runs ``post-merge``, every ref update runs ``reference-transaction``)
may take before it is stopped, so a hanging hook never holds the repository lock for ever."""

GIT_THREADS = 8
"""git processes the daemon runs at once; more calls wait their turn (the machine has few cores)."""

_executor = ThreadPoolExecutor(max_workers=GIT_THREADS, thread_name_prefix="git")

# Variables that make git look at another repository, index or object store, or that carry
# configuration from a parent git process (git sets them when it runs hooks and aliases).
_REDIRECTING = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_PREFIX",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_QUARANTINE_PATH",
        "GIT_REPLACE_REF_BASE",
        "GIT_GRAFT_FILE",
        "GIT_SHALLOW_FILE",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_REFLOG_ACTION",
    }
)


@dataclass(frozen=True)
class GitResult:
    """What a git call returned.

    Attributes:
        rc: the exit code (0 on success).
        stdout: raw standard output (bytes: paths may not be UTF-8).
        stderr: raw standard error.
    """

    rc: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        """Standard output decoded as UTF-8 (bad bytes replaced), trailing whitespace removed."""
        return self.stdout.decode("utf-8", "replace").rstrip()

    @property
    def ok(self) -> bool:
        """True when git exited with 0."""
        return self.rc == 0


class GitFailed(RepoError):
    """A git command exited with a non-zero code (or could not be started).

    Attributes:
        args_: the git arguments (after ``git``).
        rc: git's exit code (``-1`` when git could not be started).
        stderr: git's standard error, decoded.
    """

    def __init__(self, args: list[str], rc: int, stderr: str) -> None:
        last = next((ln for ln in reversed(stderr.strip().splitlines()) if ln.strip()), "")
        super().__init__(f"git {' '.join(args[:3])} failed ({rc}): {last or 'no error output'}")
        self.args_ = args
        self.rc = rc
        self.stderr = stderr


def clean_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the environment for the daemon's own git calls.

    Args:
        base: the environment to start from (default: ``os.environ``).

    Returns:
        A copy without repository-redirecting and config-injecting ``GIT_*`` variables
        (``GIT_CONFIG_KEY_n``/``VALUE_n`` included), with ``GIT_TERMINAL_PROMPT=0`` and
        ``GIT_OPTIONAL_LOCKS=0`` (git-status(1): no index refresh written by read-only calls).
        ``GIT_CONFIG_GLOBAL``/``GIT_CONFIG_SYSTEM``/``GIT_CONFIG_NOSYSTEM`` and the identity
        variables are kept: they are how the user's git sees its configuration.
    """
    env = dict(os.environ if base is None else base)
    for key in list(env):
        if key in _REDIRECTING or key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
            del env[key]
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


class GitTimeout(GitFailed):
    """A git call did not finish within its timeout and was stopped (its whole process group:
    SIGTERM, so git removes its lock files, then SIGKILL).

    Attributes:
        timeout: the limit in seconds.
        hooks: the repository hooks this command runs that exist (paths), usually the cause.
    """

    def __init__(self, args: list[str], timeout: float, hooks: list[str]) -> None:
        what = f"git {' '.join(args[:2])}"
        if hooks:
            names = ", ".join(f"the {Path(h).name} hook ({h})" for h in hooks)
            why = f"{names} did not finish. Fix or remove the hook, then retry"
        else:
            why = "no hook of the repository was involved; another program may hold its lock. Retry later"
        RepoError.__init__(self, f"{what} was stopped after {timeout:g} s: {why}.")
        self.args_ = args
        self.rc = -1
        self.stderr = ""
        self.timeout = timeout
        self.hooks = hooks


async def hook_paths(cwd: Arg, names: tuple[str, ...]) -> list[str]:
    """Return the executable hooks among ``names`` that git would run in ``cwd``.

    The hooks folder is ``git rev-parse --git-path hooks``, which honours ``core.hooksPath``
    (githooks(5)); a hook runs only when the file is executable.
    """
    if not names:
        return []
    res = await git("rev-parse", "--path-format=absolute", "--git-path", "hooks", cwd=cwd, check=False)
    if not res.ok:
        return []
    folder = Path(res.text)
    return [str(folder / n) for n in names if os.access(folder / n, os.X_OK) and (folder / n).is_file()]


def _communicate(proc: subprocess.Popen[bytes], input: bytes | None, timeout: float | None) -> tuple[bytes, bytes, bool]:
    """``proc.communicate`` with a timeout that stops git's whole process group (git and its hooks)."""
    try:
        out, err = proc.communicate(input, timeout=timeout)
        return out, err, False
    except subprocess.TimeoutExpired:
        pass
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            out, err = proc.communicate(timeout=grace)
            return out, err, True
        except subprocess.TimeoutExpired:
            continue
    return b"", b"", True


async def git(
    *args: Arg,
    cwd: Arg,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    input: bytes | None = None,
    timeout: float | None = None,
    hooks: tuple[str, ...] = (),
) -> GitResult:
    """Run ``git <args>`` in ``cwd`` and collect its output.

    Args:
        *args: git arguments (str, bytes or paths); passed as an argument list, never a shell.
        cwd: the directory git runs in.
        env: extra variables layered over :func:`clean_env` (they win).
        check: raise :class:`GitFailed` on a non-zero exit code.
        input: bytes written to git's standard input (otherwise stdin is ``/dev/null``).
        timeout: seconds before git - and every hook it started: it runs in its own process
            group - is stopped (see :data:`HOOK_TIMEOUT`); None waits for ever.
        hooks: names of the hooks this command can run (``"post-checkout"``), named in the
            :class:`GitTimeout` message when they exist.

    Returns:
        The :class:`GitResult`.

    Raises:
        GitTimeout: ``timeout`` passed (whatever ``check`` says).
        GitFailed: git exited non-zero (with ``check``) or could not be started (missing
            ``cwd`` or git binary). If the calling task is cancelled, git is killed and the
            cancellation propagates at once.
    """
    argv = [a if isinstance(a, str) else os.fsdecode(a) for a in args]
    run = GitProcess(argv, cwd, env, new_group=timeout is not None)
    out, err, timed_out = await run.call(lambda proc: _communicate(proc, input, timeout), stdin=input is not None)
    if timed_out:
        raise GitTimeout(argv, timeout or 0.0, await hook_paths(cwd, hooks))
    if check and run.returncode != 0:
        raise GitFailed(argv, run.returncode, err.decode("utf-8", "replace"))
    return GitResult(run.returncode, out, err)


class GitProcess:
    """One git process driven from a worker thread and killed if the awaiting task is cancelled.

    Args:
        argv: git arguments (after ``git``).
        cwd: the directory git runs in.
        env: extra variables layered over :func:`clean_env`.
        new_group: start git in a new session (its own process group), so a timeout can stop
            the hooks it started too.

    Attributes:
        returncode: git's exit code once :meth:`call` returned (``-1`` before).
    """

    def __init__(self, argv: list[str], cwd: Arg, env: Mapping[str, str] | None = None, *,
                 new_group: bool = False) -> None:
        self.argv = argv
        self.new_group = new_group
        self.cwd = os.fsdecode(cwd)
        self.env = clean_env()
        if env:
            self.env.update(env)
        self.returncode = -1
        self._proc: subprocess.Popen[bytes] | None = None
        self._cancelled = False
        self._lock = threading.Lock()

    async def call(self, body: Callable[[subprocess.Popen[bytes]], T], *, stdin: bool = False, stderr: Any = None) -> T:
        """Start git in a worker thread, run ``body(popen)`` there, reap git, return the body's result.

        Args:
            body: reads git's output (e.g. ``popen.communicate()``); runs off the event loop.
            stdin: give git a pipe for standard input (else ``/dev/null``).
            stderr: where git's standard error goes (default: a pipe).

        Raises:
            GitFailed: git could not be started.
        """
        future = asyncio.get_running_loop().run_in_executor(_executor, self._run, body, stdin, stderr)
        try:
            return await future
        except asyncio.CancelledError:
            self.kill()
            raise

    def kill(self) -> None:
        """Kill git if it runs, and keep it from starting if it has not yet."""
        with self._lock:
            self._cancelled = True
            if self._proc is not None and self._proc.poll() is None:
                if self.new_group:
                    try:
                        os.killpg(self._proc.pid, signal.SIGKILL)  # its hooks too
                    except (ProcessLookupError, PermissionError):
                        self._proc.kill()
                else:
                    self._proc.kill()

    def _run(self, body: Callable[[subprocess.Popen[bytes]], T], stdin: bool, stderr: Any) -> T:
        with self._lock:
            if self._cancelled:
                raise GitFailed(self.argv, -1, "cancelled before start")
            try:
                proc = subprocess.Popen(
                    ["git", *self.argv], cwd=self.cwd, env=self.env,
                    stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE if stderr is None else stderr,
                    start_new_session=self.new_group,
                )
            except OSError as exc:
                raise GitFailed(self.argv, -1, f"cannot run git in {self.cwd}: {exc}") from exc
            self._proc = proc
        with proc:
            try:
                return body(proc)
            finally:
                if proc.poll() is None:
                    proc.kill()
                self.returncode = proc.wait()


async def rev_parse(cwd: Arg, rev: str) -> str | None:
    """Return the commit id ``rev`` names, or None when it names no commit (``rev-parse --verify -q``)."""
    res = await git("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}", cwd=cwd, check=False)
    return res.text if res.ok else None


async def rev_parse_all(cwd: Arg, *revs: str) -> list[str] | None:
    """Return the object id each of ``revs`` names (``"main^{commit}"``, ``"<sha>^{tree}"`` ...),
    read by one ``git rev-parse``, or None when any of them names nothing (the caller then asks
    :func:`rev_parse` one by one where it must say which)."""
    res = await git("rev-parse", "--end-of-options", *revs, "--", cwd=cwd, check=False)
    # (git before 2.43 echoes --end-of-options; the trailing "--" makes every argument a revision)
    ids = [line for line in res.text.splitlines() if line not in ("--", "--end-of-options")]
    return ids if res.ok and len(ids) == len(revs) else None


async def common_dir(repo_root: Arg) -> Path:
    """Return the absolute, resolved common git directory of the repository at ``repo_root``.

    A checkout whose ``.git`` is a git directory itself (a main working tree: ``HEAD``,
    ``objects/`` and ``refs/`` in it) with no ``commondir`` file has that directory as its common
    one (gitrepository-layout(5): only a ``commondir`` file names another, and ``GIT_COMMON_DIR`` is
    never passed on, :func:`clean_env`), so no git runs; anything else (``.git`` a file or a
    symlink, a linked worktree, a folder inside a checkout) is asked of ``git rev-parse``.

    Raises:
        GitFailed: git failed (not a repository, or one git refuses to read).
    """
    if (own := main_git_dir(repo_root)) is not None:
        return own
    res = await git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repo_root)
    return Path(res.text).resolve()


def main_git_dir(checkout: Arg) -> Path | None:
    """``<checkout>/.git`` (resolved) when it is a git directory of its own (``HEAD``, ``objects/``
    and ``refs/`` in it) without a ``commondir`` file: the checkout is a main working tree, and that
    folder is both its git directory and its repository's common one (gitrepository-layout(5)).
    None for anything else (``.git`` a file or a symlink, a linked worktree, no ``.git``): ask git."""
    dotgit = Path(os.fsdecode(checkout)) / ".git"
    if not dotgit.is_symlink() and dotgit.is_dir() and (dotgit / "HEAD").is_file() and (dotgit / "objects").is_dir() \
            and (dotgit / "refs").is_dir() and not os.path.lexists(dotgit / "commondir"):
        return dotgit.resolve()
    return None


_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]] = weakref.WeakKeyDictionary()


def repo_lock(root: Path) -> asyncio.Lock:
    """Return the running loop's lock for the repository at ``root`` (a resolved path).

    Worktree creation and merges of one repository take it, so two of them never race on
    git's own lock files or on the base ref.
    """
    per_loop = _locks.setdefault(asyncio.get_running_loop(), {})
    return per_loop.setdefault(root, asyncio.Lock())


@dataclass(frozen=True)
class WorktreeEntry:
    """One entry of ``git worktree list --porcelain -z``.

    Attributes:
        path: the checkout's directory (as git recorded it, resolved).
        head: its HEAD commit id (None for an unborn branch).
        branch: the full ref checked out (``refs/heads/x``), None when detached.
        bare: the entry is the bare repository itself.
        locked: the lock reason when locked ("" for a lock without reason), else None.
        prunable: git would prune it (its directory is gone).
        main: the first entry (the main working tree).
    """

    path: Path
    head: str | None
    branch: str | None
    bare: bool = False
    locked: str | None = None
    prunable: bool = False
    main: bool = False


LIST_TRIES = 5
"""Tries of ``git worktree list`` while another worktree is half added or removed."""


async def list_worktrees(repo_root: Arg) -> list[WorktreeEntry]:
    """List the repository's working trees (git-worktree(1), porcelain format, ``-z``).

    A worktree being added or removed at that moment (its admin folder under ``.git/worktrees``
    half written: git says "failed to read .../commondir") is waited for: asked again, up to
    :data:`LIST_TRIES` times, 50 ms apart.

    Raises:
        GitFailed: ``repo_root`` is not a repository (or its worktrees' admin folders stay broken).
    """
    for attempt in range(1, LIST_TRIES + 1):
        try:
            res = await git("worktree", "list", "--porcelain", "-z", cwd=repo_root)
            break
        except GitFailed as exc:
            if attempt == LIST_TRIES or not ("failed to read" in exc.stderr and "worktrees" in exc.stderr):
                raise
            await asyncio.sleep(0.05)
    entries: list[WorktreeEntry] = []
    fields: dict[str, str] = {}
    for raw in res.stdout.split(b"\0"):
        if raw:
            key, _, value = os.fsdecode(raw).partition(" ")
            fields[key] = value
            continue
        if fields:
            entries.append(_entry(fields, main=not entries))
            fields = {}
    if fields:
        entries.append(_entry(fields, main=not entries))
    return entries


def _entry(fields: dict[str, str], *, main: bool) -> WorktreeEntry:
    head = fields.get("HEAD")
    return WorktreeEntry(
        path=Path(fields["worktree"]).resolve(),
        head=None if head in (None, ZERO_OID) else head,
        branch=fields.get("branch"),
        bare="bare" in fields,
        locked=fields.get("locked"),
        prunable="prunable" in fields,
        main=main,
    )


async def checkout_of(repo_root: Arg, branch: str) -> WorktreeEntry | None:
    """Return the working tree that has ``refs/heads/<branch>`` checked out, or None."""
    ref = branch if branch.startswith("refs/") else f"refs/heads/{branch}"
    for entry in await list_worktrees(repo_root):
        if entry.branch == ref and not entry.bare and not entry.prunable:
            return entry
    return None


async def has_tracked_changes(checkout: Arg) -> bool:
    """Return True when ``checkout`` has uncommitted changes to tracked files (staged or not).

    Uses ``git status --porcelain -z --untracked-files=no`` with optional locks off, so the
    checkout's index is not rewritten by the check.
    """
    res = await git("status", "--porcelain", "-z", "--untracked-files=no", "--ignore-submodules=dirty", cwd=checkout)
    return bool(res.stdout.strip(b"\0"))
