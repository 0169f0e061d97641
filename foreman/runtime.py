"""Run files: ``foreman.json`` records where a running Foreman listens.

``<home>/<profile>/foreman.json`` describes the Foreman running that profile and doubles as
its lock: a second Foreman on a profile whose recorded pid is alive is refused.
``<home>/foreman.json`` names the first live Foreman; when it exits, another live profile
takes its place.

Both files carry the client ``token`` (unless the daemon runs with ``--no-auth``) and are
written with mode 0600: a client proves it may read and steer this Foreman by reading it
(see ``docs/protocol.md``, "Authentication"). The token is new at every start.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import psutil

from .errors import ConfigError

RUN_FILE = "foreman.json"


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
    if not isinstance(pid, int) or not _alive(pid, data.get("pidCreated")):
        return None
    return data


def _alive(pid: int, created: float | None) -> bool:
    try:
        proc = psutil.Process(pid)
        if created is not None and abs(proc.create_time() - created) > 1.0:
            return False  # the pid was reused by another process
        return proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def claim_profile(home: Path, profile: str) -> None:
    """Refuse to start when another live Foreman runs ``profile``.

    Raises:
        ProfileInUse: names the other Foreman's pid and what to do.
    """
    other = read_run_file(home / profile / RUN_FILE)
    if other is not None and other["pid"] != os.getpid():
        raise ProfileInUse(
            f'profile "{profile}" is in use by the Foreman pid {other["pid"]} (port {other.get("port")}); '
            "stop it first or use --profile NAME"
        )


def record(home: Path, profile: str, info: dict[str, Any]) -> dict[str, Any]:
    """Write this Foreman's run files; return the record written.

    Args:
        info: ``{port, host, backend, version, startedAt, token?}``; pid and profile are added.
    """
    data = {"pid": os.getpid(), "pidCreated": psutil.Process().create_time(), "profile": profile, **info}
    (home / profile).mkdir(parents=True, exist_ok=True)
    _write_json(home / profile / RUN_FILE, data)
    if read_run_file(home / RUN_FILE) is None:
        _write_json(home / RUN_FILE, data)
    return data


def release(home: Path, profile: str) -> None:
    """Remove this Foreman's run files; hand ``<home>/foreman.json`` to another live profile."""
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
