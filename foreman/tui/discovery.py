"""Find the daemon: ``--port``, else the ``foreman.json`` it records, else the default port.

A running daemon records ``{pid, port, host, backend, profile, version, startedAt}`` in
``<home>/<profile>/foreman.json`` and, for the first live daemon, in ``<home>/foreman.json``.
The home is ``--home``, else ``$AGENTCRAFT_HOME``, else ``~/.agentcraft``. The record is read
again on every connection attempt, so a daemon restarted on another port is found again.
The record also carries the client ``token`` (mode 0600), sent in ``hello``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

logger = logging.getLogger(__name__)

DEFAULT_PORT = 7878
"""The daemon's default WebSocket port."""
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class DaemonNotFound(Exception):
    """No daemon address could be found (the message says where we looked)."""


def default_home(env: Mapping[str, str]) -> Path:
    """Return the state root: ``$AGENTCRAFT_HOME`` or ``~/.agentcraft``."""
    value = env.get("AGENTCRAFT_HOME")
    return Path(value).expanduser() if value else Path.home() / ".agentcraft"


def url_for(port: int, host: str = "127.0.0.1") -> str:
    """Return the WebSocket URL of a daemon on this machine (never a non-loopback host)."""
    if host not in LOOPBACK:
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"ws://{host}:{port}"


class Locator:
    """Callable that returns the daemon's URL each time it is called.

    Args:
        home: the state root (see :func:`default_home`).
        profile: read ``<home>/<profile>/foreman.json``; None reads ``<home>/foreman.json``.
        port: a fixed port (``--port``): no file is read.
    """

    def __init__(self, home: Path, profile: str | None = None, port: int | None = None) -> None:
        self.home = home
        self.profile = profile
        self.port = port

    @property
    def record_path(self) -> Path:
        """The ``foreman.json`` this locator reads."""
        return self.home / self.profile / "foreman.json" if self.profile else self.home / "foreman.json"

    def read_record(self) -> dict | None:
        """Return the daemon's record, or None when there is none (or it cannot be read)."""
        try:
            data = json.loads(self.record_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            logger.warning("cannot read %s: %s", self.record_path, exc)
            return None
        return data if isinstance(data, dict) else None

    def __call__(self) -> str:
        """Return the URL to connect to.

        Raises:
            DaemonNotFound: a profile was named and it has no readable record.
        """
        if self.port is not None:
            return url_for(self.port)
        record = self.read_record()
        if record is None or not isinstance(record.get("port"), int):
            if self.profile:
                raise DaemonNotFound(
                    f"no Foreman is running for profile {self.profile!r}: {self.record_path} is missing; "
                    "start one with `foreman start` or pass --port"
                )
            return url_for(DEFAULT_PORT)
        return url_for(record["port"], str(record.get("host") or "127.0.0.1"))

    def token(self) -> str | None:
        """Return the client token of the daemon this locator finds, or None (none recorded).

        With a fixed port, the token comes from whichever record under the home names that
        port (``<home>/foreman.json`` or ``<home>/*/foreman.json``).
        """
        if self.port is None:
            record = self.read_record()
            token = record.get("token") if record else None
            return token if isinstance(token, str) else None
        for path in [self.home / "foreman.json", *sorted(self.home.glob("*/foreman.json"))]:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("port") == self.port and isinstance(data.get("token"), str):
                return data["token"]
        return None

    def refusal_advice(self, url: str) -> str:
        """Advice for a daemon that refused this client's token (missing or wrong).

        Args:
            url: the address that refused, e.g. ``ws://127.0.0.1:7878``.
        """
        port = url.rsplit(":", 1)[-1].strip("/") if ":" in url else "?"
        looked = self.record_path if self.port is None else f"{self.home}/foreman.json or {self.home}/*/foreman.json"
        return (f"the Foreman at port {port} refused this client: it needs the token in "
                f"<home>/<profile>/foreman.json of the daemon (this client looked in {looked}). "
                "Pass --home and --profile matching the daemon's (its `foreman start` flags)")

    def describe(self) -> str:
        """Say where the address comes from, for error messages."""
        if self.port is not None:
            return f"--port {self.port}"
        record = self.read_record()
        if record is None:
            return f"no {self.record_path}, default port {DEFAULT_PORT}"
        return f"{self.record_path} (pid {record.get('pid')}, port {record.get('port')})"
