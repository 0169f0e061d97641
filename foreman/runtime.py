"""Run files: ``foreman.json`` records where a running Foreman listens.

``<home>/<profile>/foreman.json`` describes the Foreman running that profile.
``<home>/<profile>/foreman.lock`` is its lock: the Foreman holds an exclusive ``flock`` on it
for its lifetime (the kernel drops it when the process ends, however it ends), and a second
Foreman on that profile is refused. A record counts as live while its profile's lock is held;
the recorded pid and start time only decide for records without a lock file (older Foremen,
hand-made records), since a start time read back after the wall clock jumped no longer matches.
``<home>/foreman.json`` names the first live Foreman; when it exits, another live profile
takes its place.

Both files carry the client ``token`` (unless the daemon runs with ``--no-auth``) and are
written with mode 0600: a client proves it may read and steer this Foreman by reading it
(see ``docs/protocol.md``, "Authentication"). The token is new at every start.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from .errors import ConfigError
from .private import private_dir

RUN_FILE = "foreman.json"
LOCK_FILE = "foreman.lock"
LOCK_WAIT = 1.0
"""Seconds a start waits for the lock (a client's liveness probe holds it for an instant)."""

_held: dict[Path, int] = {}
"""Lock file -> the descriptor holding it, for the profiles this process runs."""


class ProfileInUse(ConfigError):
    """Another live Foreman runs this profile."""

    code = "profile_in_use"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.fchmod(fd, 0o600)  # it holds the client token: readable by its owner only
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    os.replace(tmp, path)


def read_run_file(path: Path) -> dict[str, Any] | None:
    """Return the run record at ``path`` if its pid is alive, else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pid = data.get("pid")
    if not isinstance(pid, int):
        return None
    held = _locked(path.parent / LOCK_FILE if path.parent.name == data.get("profile")
                   else path.parent / str(data.get("profile")) / LOCK_FILE)
    if held is False or not _alive(pid, None if held else data.get("pidCreated")):
        return None
    return data


def running(home: Path, profile: str | None = None) -> list[dict[str, Any]]:
    """The live run records under ``home``: of ``profile``, or of every profile (sorted by name)."""
    paths = [home / profile / RUN_FILE] if profile is not None else sorted(home.glob(f"*/{RUN_FILE}"))
    return [r for r in map(read_run_file, paths) if r is not None]


def _locked(lock: Path) -> bool | None:
    """True when a Foreman holds ``lock``, False when nobody does, None without a lock file."""
    if lock in _held:
        return True
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # (closing also drops the shared lock, if taken)
    return False


def _alive(pid: int, created: float | None) -> bool:
    try:
        proc = psutil.Process(pid)
        if created is not None and abs(proc.create_time() - created) > 1.0:
            return False  # the pid was reused by another process
        return proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def claim_profile(home: Path, profile: str) -> None:
    """Take ``profile``'s lock (``<home>/<profile>/foreman.lock``) for this process, or refuse.

    The lock is an exclusive ``flock`` held until :func:`release` (or the process's end). A
    process that already holds it may claim it again (tests restart daemons in-process).

    Raises:
        ProfileInUse: another Foreman holds it; names its pid (from its record, when readable)
            and what to do.
    """
    lock = home / profile / LOCK_FILE
    if lock in _held:
        return
    private_dir(lock.parent)  # (the home and the profile: 0700, foreman/private.py)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            os.close(fd)
            raise ProfileInUse(f'profile "{profile}" is in use by {_holder(home, profile)}; stop it first or use '
                               "--profile NAME") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())  # who holds it, for the refusal above
    _held[lock] = fd


def _holder(home: Path, profile: str) -> str:
    """``the Foreman pid N (port P)`` for the holder of ``profile``'s lock, as far as it is known."""
    try:
        pid: int | None = int((home / profile / LOCK_FILE).read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        pid = None
    try:
        record = json.loads((home / profile / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    port = record.get("port") if isinstance(record, dict) and record.get("pid") == pid else None
    if pid is None:
        return f"another Foreman (it holds {home / profile / LOCK_FILE})"
    return f"the Foreman pid {pid}" + (f" (port {port})" if port is not None else "")


def unclaim(home: Path, profile: str) -> None:
    """Drop this process's lock on ``profile`` (a no-op when it holds none). The lock file stays:
    removing it could let two Foremen lock two different files of one name."""
    fd = _held.pop(home / profile / LOCK_FILE, None)
    if fd is not None:
        os.close(fd)


def record(home: Path, profile: str, info: dict[str, Any]) -> dict[str, Any]:
    """Write this Foreman's run files; return the record written.

    Args:
        info: ``{port, host, backend, version, startedAt, token?}``; pid and profile are added.
    """
    data = {"pid": os.getpid(), "pidCreated": psutil.Process().create_time(), "profile": profile, **info}
    private_dir(home / profile)
    _write_json(home / profile / RUN_FILE, data)
    if read_run_file(home / RUN_FILE) is None:
        _write_json(home / RUN_FILE, data)
    return data


def release(home: Path, profile: str) -> None:
    """Remove this Foreman's run files; hand ``<home>/foreman.json`` to another live profile;
    then drop the profile's lock (:func:`unclaim`)."""
    try:
        _remove_run_files(home, profile)
    finally:
        unclaim(home, profile)


def _remove_run_files(home: Path, profile: str) -> None:
    mine = home / profile / RUN_FILE
    try:
        data = json.loads(mine.read_text(encoding="utf-8"))
        if data.get("pid") == os.getpid():
            mine.unlink()
    except (OSError, ValueError):
        pass
    top = home / RUN_FILE
    try:
        current = json.loads(top.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        current = None
    if current is not None and current.get("pid") != os.getpid() and read_run_file(top) is not None:
        return
    for other in sorted(home.glob(f"*/{RUN_FILE}")):
        data = read_run_file(other)
        if data is not None and data.get("pid") != os.getpid():
            _write_json(top, data)
            return
    try:
        top.unlink()
    except OSError:
        pass


def port_holder(home: Path, port: int) -> tuple[str | None, dict[str, Any] | None]:
    """Who listens on ``port``: ``("the Foreman of profile 'sim' (pid 12)", its run record)`` for a
    Foreman of ``home``, ``("python3 (pid 34)", None)`` for another program the OS lets us see,
    else ``(None, None)``."""
    for path in [home / RUN_FILE, *sorted(home.glob(f"*/{RUN_FILE}"))]:
        record = read_run_file(path)
        if record is not None and record.get("port") == port:
            return f"the Foreman of profile {record.get('profile')!r} (pid {record['pid']})", record
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                return f"{psutil.Process(conn.pid).name()} (pid {conn.pid})", None
    except (psutil.Error, OSError):
        pass
    return None, None


def port_in_use(home: Path, port: int) -> str:
    """What ``foreman start`` says when ``port`` is taken: who holds it, when known, and how to
    pick another port."""
    holder, record = port_holder(home, port)
    stop = f"stop it (`foreman stop --profile {record.get('profile')}`)" if record else "stop it"
    return (f"port {port} is already in use{f' by {holder}' if holder else ' by another program'}: {stop}, "
            "or start on another port with --port N (--port 0 lets the OS pick a free one)")

