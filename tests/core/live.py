"""Helpers for tests that run the real daemon process and talk to it over a real socket."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from foreman.tui.discovery import Locator

ROOT = Path(__file__).resolve().parents[2]
STATE_TYPES = ("snapshot", "agent.upsert", "goal.upsert", "task.upsert", "decision.upsert", "repo.upsert",
               "feed.append", "message.append", "log.append", "foreman.status")


def daemon_cmd(home: Path, *extra: str) -> list[str]:
    """The command line of a sim daemon on an OS-chosen port with no scenario running."""
    return [sys.executable, "-m", "foreman", "start", "--backend", "sim", "--no-autostart", "--no-ambient",
            "--home", str(home), "--port", "0", "--sandbox", str(home / "sandbox"), "--repo-poll-ms", "600000",
            "--log-level", "WARNING", *extra]


class LiveDaemon:
    """A ``foreman start`` child process.

    Args:
        home: the ``--home`` folder (the profile is ``sim``).
        cmd: the command (default :func:`daemon_cmd`).
        env: extra environment variables.
    """

    def __init__(self, home: Path, cmd: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        self.home = Path(home)
        self.cmd = cmd or daemon_cmd(self.home)
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.starts = 0

    @property
    def run_file(self) -> Path:
        return self.home / "sim" / "foreman.json"

    @property
    def token(self) -> str | None:
        """The client token, read from the run file as the TUI reads it."""
        return Locator(self.home, "sim").token()

    def start(self, timeout: float = 30.0) -> int:
        """Start the process and wait until its run file names it; return the port.

        Raises:
            RuntimeError: the process exited or did not come up in ``timeout`` seconds.
        """
        self.starts += 1
        log = open(self.home / f"daemon-{self.starts}.err", "wb")
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}: {self.stderr()}")
            try:
                info = json.loads(self.run_file.read_text())
                # the run file is written when the port is bound; "connect with" once start() finished
                if info.get("pid") == self.proc.pid and "connect with" in self.stderr():
                    self.port = int(info["port"])
                    return self.port
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"daemon did not start in {timeout}s: {self.stderr()}")

    def stderr(self) -> str:
        path = self.home / f"daemon-{self.starts}.err"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM the daemon and wait; return its exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL the daemon (no clean-up at all) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


class Conn:
    """A protocol client over a real WebSocket (no Origin header)."""

    _ids = itertools.count(1)

    def __init__(self, ws: ClientConnection, token: str | None = None) -> None:
        self.ws = ws
        self.token = token
        """Sent in ``hello`` (None: no token)."""
        self.states: list[dict[str, Any]] = []
        """Every state message received, in order."""

    @classmethod
    async def open(cls, port: int, token: str | None = None, **kw: Any) -> "Conn":
        """Connect to ``port``; ``token`` goes in every ``hello`` (``kw`` go to ``connect``)."""
        return cls(await connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None, **kw), token)

    async def close(self) -> None:
        await self.ws.close()

    async def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        data = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        if data.get("type") in STATE_TYPES:
            self.states.append(data)
        return data

    async def hello(self, since: int | None = None, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Send hello; return the catch-up frames (a snapshot, or the missed frames, or none).

        The end of the catch-up is found with a ``memory.read`` probe whose reply follows it.
        """
        msg: dict[str, Any] = {"type": "hello", "protocol": 1, "client": "core-tests"}
        if since is not None:
            msg["since"] = since
        if self.token is not None:
            msg["token"] = self.token
        await self.ws.send(json.dumps(msg))
        probe = f"probe-{next(self._ids)}"
        await self.ws.send(json.dumps({"type": "memory.read", "id": probe}))
        frames = []
        while True:
            data = await self.recv(timeout)
            if data.get("id") == probe and data.get("type") in ("memory", "error"):
                return frames
            frames.append(data)

    async def request(self, intent: dict[str, Any], timeout: float = 5.0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Send an intent with a fresh id; return ``(reply, state frames received before it)``."""
        rid = intent.get("id", f"r{next(self._ids)}")
        await self.ws.send(json.dumps({**intent, "id": rid}))
        frames = []
        while True:
            data = await self.recv(timeout)
            if data.get("id") == rid and data.get("type") in ("ack", "error", "diff", "memory"):
                return data, frames
            frames.append(data)

    async def drain(self, quiet: float = 0.2) -> list[dict[str, Any]]:
        """Read until nothing arrives for ``quiet`` seconds; return what came."""
        out = []
        while True:
            try:
                out.append(await self.recv(quiet))
            except asyncio.TimeoutError:
                return out


def state_view(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A snapshot without what legitimately changes between two reads (``seq``, ``status``)."""
    return {k: v for k, v in snapshot.items() if k not in ("seq", "status")}
