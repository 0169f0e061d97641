"""Process trees: start in a session of their own, kill the whole tree, never a reused pid.

A process the daemon starts (an agent CLI, a command, a CI run) gets its own session and
process group (``start_new_session=True``). Aborting it:

1. snapshot the tree: the leader, its descendants, and every process still in the leader's
   session (children that were re-parented after their parent died keep the session id);
2. SIGTERM each, wait up to ``grace`` seconds;
3. look again - the leader's session and the descendants of everything known - to find
   orphans spawned meanwhile, and SIGKILL whatever is left; repeat a few rounds so a
   process that forks while dying is caught too.

Every process is remembered as a :class:`ProcRef` ``(pid, create_time)``. A signal is sent only
if the pid's creation time still matches (psutil), through a pidfd where the OS has them
(Linux >= 5.3) so the check and the signal concern the same process. A pid the OS reused for
an unrelated process is never signalled.

A process that left the session on purpose (``setsid``, as the Claude Code CLI starts its Bash
commands) and whose parent is already gone is out of reach of the tree and the session. For
those, every process the daemon starts for a turn carries an environment marker
(:data:`MARKER_ENV`, a value unique per turn, see :func:`new_marker`) that its descendants
inherit; :func:`kill_by_marker` finds and kills every live process of ours whose environment
(``/proc/<pid>/environ``, the environment it was started with) carries it.

Limits: a session id is used only while its leader is alive with the recorded creation time, or
gone (never when another process now owns that pid); a process started with a cleared
environment (``env -i``) and outside the session escapes both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import psutil

logger = logging.getLogger(__name__)

StrPath = str | os.PathLike[str]

_CREATE_TIME_TOLERANCE = 0.01  # seconds; psutil's create_time is derived from clock ticks


@dataclass(frozen=True, order=True)
class ProcRef:
    """A process identified by pid *and* creation time (seconds since the epoch, psutil).

    Attributes:
        pid: the process id.
        create_time: its creation time; a different process with the same pid has another.
    """

    pid: int
    create_time: float

    @classmethod
    def of(cls, pid: int) -> ProcRef | None:
        """Return the ref of the live process ``pid``, or None when there is none."""
        try:
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
            return cls(pid, proc.create_time())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return None

    def alive(self) -> bool:
        """True while this very process runs (same pid, same creation time, not a zombie)."""
        current = ProcRef.of(self.pid)
        return current is not None and abs(current.create_time - self.create_time) < _CREATE_TIME_TOLERANCE


@dataclass
class AbortReport:
    """What :func:`abort` did.

    Attributes:
        signalled: every process that was sent a signal.
        survivors: processes still alive at the end (should be empty; e.g. uninterruptible sleep).
        skipped: refs whose pid now belongs to another process (never signalled).
    """

    signalled: list[ProcRef] = field(default_factory=list)
    survivors: list[ProcRef] = field(default_factory=list)
    skipped: list[ProcRef] = field(default_factory=list)


def spawn(
    *args: StrPath,
    cwd: StrPath,
    env: Mapping[str, str] | None = None,
    stdin: Any = subprocess.DEVNULL,
    stdout: Any = subprocess.PIPE,
    stderr: Any = subprocess.PIPE,
) -> subprocess.Popen[bytes]:
    """Start ``args`` in a new session and process group as a plain :class:`subprocess.Popen`.

    This never touches asyncio's subprocess transports (which can hang on CPython 3.11 when
    cancelled while connecting pipes, python/cpython#125502, #133536); wait for it with
    :func:`wait_exit` and read its pipes from a thread.

    Raises:
        OSError: the program could not be started.
    """
    return subprocess.Popen(
        [os.fspath(a) for a in args], cwd=os.fspath(cwd), env=dict(env) if env is not None else None,
        stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True,
    )


async def wait_exit(popen: subprocess.Popen[bytes]) -> int:
    """Wait until ``popen`` exits without blocking the loop, reap it and return its exit code.

    Uses a pidfd watched by the event loop where the OS has them (Linux >= 5.3), else a thread.
    """
    if popen.poll() is not None:
        return popen.returncode
    loop = asyncio.get_running_loop()
    try:
        fd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):
        return await loop.run_in_executor(None, popen.wait)
    exited: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not exited.done():
            exited.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await exited
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    return popen.wait()


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def session_members(leader: ProcRef) -> list[ProcRef]:
    """Return the live processes in the session ``leader`` created (its pid is the session id).

    Empty when ``leader`` did not create a session, or when its pid now belongs to another
    process (the session id may have been reused). Only processes created after the leader
    count.
    """
    owner = ProcRef.of(leader.pid)
    if owner is not None and (not leader.alive() or _sid(leader.pid) != leader.pid):
        return []
    found = []
    for pid in psutil.pids():
        if _sid(pid) != leader.pid:
            continue
        ref = ProcRef.of(pid)
        if ref is not None and ref.create_time >= leader.create_time - _CREATE_TIME_TOLERANCE:
            found.append(ref)
    return found


def _descendants(ref: ProcRef) -> list[ProcRef]:
    if not ref.alive():
        return []
    try:
        children = psutil.Process(ref.pid).children(recursive=True)
    except psutil.Error:
        return []
    return [r for r in (ProcRef.of(c.pid) for c in children) if r is not None]


def snapshot_tree(pid: int) -> list[ProcRef]:
    """Return the process ``pid``, its descendants and its session's members (leader first).

    Returns:
        Refs of live processes; empty when ``pid`` is not running.
    """
    leader = ProcRef.of(pid)
    if leader is None:
        return []
    return _merge([leader], _descendants(leader), session_members(leader))


def _merge(*groups: Iterable[ProcRef]) -> list[ProcRef]:
    seen: dict[int, ProcRef] = {}
    for group in groups:
        for ref in group:
            seen.setdefault(ref.pid, ref)
    return list(seen.values())


def _signal(ref: ProcRef, sig: signal.Signals) -> bool:
    """Send ``sig`` to ``ref`` only if its pid still has the recorded creation time."""
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(ref.pid)
        except OSError:
            return False
    try:
        if not ref.alive():  # checked after the pidfd pins the process, so no reuse can slip in
            return False
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, sig)
        else:
            psutil.Process(ref.pid).send_signal(sig)
        return True
    except (OSError, psutil.Error):
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


async def _wait_gone(refs: Sequence[ProcRef], timeout: float, interval: float = 0.02) -> list[ProcRef]:
    deadline = time.monotonic() + timeout
    alive = [r for r in refs if r.alive()]
    while alive and time.monotonic() < deadline:
        await asyncio.sleep(interval)
        alive = [r for r in alive if r.alive()]
    return alive


async def kill_tree(refs: Iterable[ProcRef], *, grace: float = 3.0, report: AbortReport | None = None) -> list[ProcRef]:
    """SIGTERM each process, wait up to ``grace`` seconds, then SIGKILL those left.

    Args:
        refs: the processes (e.g. from :func:`snapshot_tree`); refs whose pid now belongs to
            another process are skipped.
        grace: seconds between SIGTERM and SIGKILL.
        report: collects what was signalled or skipped.

    Returns:
        The refs still alive after SIGKILL and a short wait (normally empty).
    """
    report = report if report is not None else AbortReport()
    targets = []
    for ref in refs:
        if not ref.alive():
            if ProcRef.of(ref.pid) is not None:
                report.skipped.append(ref)
            continue
        targets.append(ref)
        if _signal(ref, signal.SIGTERM):
            report.signalled.append(ref)
    left = await _wait_gone(targets, grace)
    for ref in left:
        _signal(ref, signal.SIGKILL)
    return await _wait_gone(left, 1.0)


ProcTarget = asyncio.subprocess.Process | subprocess.Popen[bytes] | int | ProcRef


async def abort(target: ProcTarget, *, grace: float = 3.0, rounds: int = 4) -> AbortReport:
    """Kill a process and everything it started, orphans included.

    Args:
        target: an asyncio process, a :class:`subprocess.Popen`, a pid (its creation time is
            read now), or a :class:`ProcRef` recorded at start (safe even if the pid was reused
            since).
        grace: seconds between SIGTERM and SIGKILL.
        rounds: how many times to look again for processes that appeared meanwhile.

    Returns:
        The :class:`AbortReport`. An asyncio process or a Popen is also reaped.
    """
    report = AbortReport()
    proc = target if isinstance(target, (asyncio.subprocess.Process, subprocess.Popen)) else None
    if isinstance(target, ProcRef):
        leader: ProcRef | None = target
    elif proc is not None:
        leader = ProcRef.of(proc.pid)
    else:
        assert isinstance(target, int)
        leader = ProcRef.of(target)
    if leader is None:
        await _reap(proc, 1.0)
        return report
    known = [leader, *_descendants(leader), *session_members(leader)]
    if not leader.alive() and ProcRef.of(leader.pid) is not None:
        report.skipped.append(leader)
        known = known[1:]
    survivors = await kill_tree(_merge(known), grace=grace, report=report)
    for _ in range(rounds):
        # second look: orphans re-parented away from the tree keep the leader's session id
        again = _merge(session_members(leader), *(_descendants(r) for r in known))
        fresh = [r for r in again if r.alive()]
        if not fresh:
            break
        known = _merge(known, fresh)
        survivors = await kill_tree(fresh, grace=0.0, report=report)
    report.survivors = [r for r in survivors if r.alive()]
    await _reap(proc, max(grace, 1.0))
    if report.survivors:
        logger.warning("processes survived abort: %s", report.survivors)
    return report


async def _reap(proc: asyncio.subprocess.Process | subprocess.Popen[bytes] | None, timeout: float) -> None:
    if proc is None:
        return
    waiter = wait_exit(proc) if isinstance(proc, subprocess.Popen) else proc.wait()
    with contextlib.suppress(ProcessLookupError, TimeoutError):
        await asyncio.wait_for(waiter, timeout)


MARKER_ENV = "AGENTCRAFT_TURN"
"""The environment variable naming the turn a process belongs to (see :func:`kill_by_marker`)."""


def new_marker(scope: str, turn_id: str) -> str:
    """Return a fresh marker value for one turn: ``<scope>:<turn_id>:<8 hex digits>``.

    Args:
        scope: names the daemon's profile (e.g. a short hash of its home and profile), so
            processes of another profile never match.
        turn_id: the turn (``"kit:3"``, ``"ci:T1"``).

    The random tail makes the value unique even when a turn id is used again (a CI key, a
    counter lost in a crash), so a sweep never matches a process of a later turn.
    """
    return f"{scope}:{turn_id}:{secrets.token_hex(4)}"


def find_by_marker(marker: str) -> list[ProcRef]:
    """Return the live processes whose environment has ``MARKER_ENV=marker``.

    Only processes whose environment we may read count (our own user's, psutil raises
    AccessDenied for others'); this process and its ancestors are never returned. An empty
    ``marker`` matches nothing.
    """
    if not marker:
        return []
    spared = {os.getpid()}
    with contextlib.suppress(psutil.Error):
        spared.update(p.pid for p in psutil.Process().parents())
    found = []
    for proc in psutil.process_iter():
        if proc.pid in spared:
            continue
        try:
            ref = ProcRef(proc.pid, proc.create_time())
            if proc.environ().get(MARKER_ENV) != marker:
                continue
        except (psutil.Error, OSError):
            continue
        if ref.alive():  # the environment read above belonged to this very process
            found.append(ref)
    return found


async def kill_by_marker(marker: str, *, grace: float = 3.0, rounds: int = 4) -> list[int]:
    """Kill every live process carrying ``MARKER_ENV=marker``, and their process trees.

    Finds processes that left the daemon's trees and sessions (a detached ``setsid`` child
    re-parented to init after its parent died). SIGTERM, ``grace`` seconds, SIGKILL, then looks
    again up to ``rounds`` times for processes that appeared meanwhile. Each process is
    signalled only while its pid has the creation time seen when it was found (never a reused
    pid); this process and its ancestors are never signalled.

    Args:
        marker: a value made by :func:`new_marker` and recorded with the turn.
        grace: seconds between SIGTERM and SIGKILL.
        rounds: how many times to look again.

    Returns:
        The pids that were signalled.
    """
    report = AbortReport()
    spared = {os.getpid()}
    for i in range(rounds + 1):
        found = find_by_marker(marker)
        targets = [r for r in _merge(found, *(_descendants(r) for r in found)) if r.pid not in spared]
        if not targets:
            break
        await kill_tree(targets, grace=grace if i == 0 else 0.0, report=report)
    return sorted({r.pid for r in report.signalled})
