"""Start a real Foreman daemon (``python -m foreman start``) in a temporary home for a test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class RealDaemon:
    """A running daemon: its process, home, profile and port."""

    proc: subprocess.Popen
    home: Path
    profile: str
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop the daemon (SIGTERM, then SIGKILL after 10 s)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def start_daemon(tmp: Path, *extra: str, speed: float = 10.0, timeout: float = 30.0, reset: bool = True) -> RealDaemon:
    """Start ``foreman start --backend sim --reset --port 0`` under ``tmp`` and wait for its record.

    Raises:
        RuntimeError: the daemon exited or wrote no ``foreman.json`` within ``timeout`` seconds
            (the message holds its log).
    """
    home, log = tmp / "home", tmp / f"daemon-{time.monotonic_ns()}.log"
    cmd = [
        sys.executable, "-m", "foreman", "start", "--backend", "sim", "--reset" if reset else "--no-reset", "--port", "0", "--home", str(home),
        "--sandbox", str(tmp / "sandbox"), "--no-autostart", "--no-notify", "--speed", str(speed), *extra,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env)
    record = home / "sim" / "foreman.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            data = json.loads(record.read_text())
            if data.get("pid") == proc.pid:
                return RealDaemon(proc, home, "sim", int(data["port"]), log)
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
        proc.wait(5)
    raise RuntimeError(f"the Foreman did not start: {log.read_text()[-3000:]}")
