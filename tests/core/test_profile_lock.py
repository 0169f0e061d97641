"""One Foreman per profile, whatever the clock and the run file say.

Found by a newcomer: the wall clock of the machine jumped by about two minutes, so the start time
recorded in ``foreman.json`` (``pidCreated``) no longer matched the running daemon's, and its
record looked stale. A second ``foreman start`` then ran on the same profile and the same
``state.db``, and, stopping, deleted the first one's run files (its clients were locked out). The
profile is now held by an OS file lock (``foreman.lock``, ``flock``) for the daemon's lifetime.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreman import runtime

from .live import LiveDaemon


@pytest.mark.parametrize("record", ["clock-jumped", "deleted", "garbage"])
def test_a_second_daemon_is_refused_while_the_first_runs(tmp_path: Path, record: str) -> None:
    first = LiveDaemon(tmp_path)
    first.start()
    try:
        if record == "clock-jumped":
            data = json.loads(first.run_file.read_text())
            first.run_file.write_text(json.dumps({**data, "pidCreated": data["pidCreated"] - 113}))
        elif record == "deleted":
            first.run_file.unlink()
        else:
            first.run_file.write_text("{not json")
        saved = first.run_file.read_bytes() if first.run_file.exists() else None
        second = LiveDaemon(tmp_path)
        with pytest.raises(RuntimeError) as refused:
            second.start(timeout=30)
        assert second.proc.returncode == 2
        assert 'profile "sim" is in use' in str(refused.value), refused.value
        if record != "deleted":
            assert f"pid {first.proc.pid}" in str(refused.value)
        assert (first.run_file.read_bytes() if first.run_file.exists() else None) == saved  # left as it was
        assert first.proc.poll() is None
    finally:
        assert first.stop() == 0
    again = LiveDaemon(tmp_path)  # the lock went with the first daemon
    again.start()
    assert again.stop() == 0


def test_a_record_is_live_while_its_profile_is_locked_whatever_its_start_time(tmp_path: Path) -> None:
    """Clients and ``doctor`` read the record through :func:`runtime.read_run_file`."""
    first = LiveDaemon(tmp_path)
    first.start()
    try:
        data = json.loads(first.run_file.read_text())
        first.run_file.write_text(json.dumps({**data, "pidCreated": data["pidCreated"] - 113}))
        assert runtime.read_run_file(first.run_file)["pid"] == first.proc.pid
        assert runtime.read_run_file(tmp_path / "foreman.json")["pid"] == first.proc.pid
    finally:
        assert first.stop() == 0
    # a crash's leftover whose pid now belongs to another live process (here: this test's): the
    # profile's lock is free, so no Foreman runs it
    import os

    import psutil

    leftover = {**data, "pid": os.getpid(), "pidCreated": psutil.Process().create_time()}
    (tmp_path / "sim" / "foreman.json").write_text(json.dumps(leftover))
    assert runtime.read_run_file(tmp_path / "sim" / "foreman.json") is None


def test_the_start_lines_connect_hint_reaches_the_daemon_from_another_shell(tmp_path: Path) -> None:
    """Found by a newcomer: with ``--home`` the hint said ``foreman tui --port N``, which a shell
    without that home was refused with; the hint now carries ``--home`` (and ``--profile``)."""
    import os
    import re
    import shlex
    import subprocess
    import sys

    home = tmp_path / "ho me"
    home.mkdir()
    d = LiveDaemon(home)
    d.start()
    try:
        hint = re.search(r"connect with: (.+?)   \(q", d.stderr()).group(1)
        words = shlex.split(hint)
        assert words[:4] == ["foreman", "tui", "--port", str(d.port)] and str(home) in words, hint
        env = {k: v for k, v in os.environ.items() if k != "AGENTCRAFT_HOME"} | {"HOME": str(tmp_path / "elsewhere")}
        run = subprocess.run([sys.executable, "-m", "foreman", *words[1:], "--line", "--connect-timeout", "20"],
                             input="/status\n", capture_output=True, text=True, timeout=60, env=env,
                             cwd=str(tmp_path))
        assert run.returncode == 0, run.stdout + run.stderr
        assert "agents:" in run.stdout, run.stdout
    finally:
        assert d.stop() == 0


def _foreman(*args: str, timeout: float = 60) -> "subprocess.CompletedProcess[str]":
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "foreman", *args], capture_output=True, text=True, timeout=timeout)


def test_foreman_stop_ends_the_running_foreman_and_frees_its_profile(tmp_path: Path) -> None:
    """The README named ``foreman stop`` before it existed (found by a newcomer)."""
    from .live import daemon_cmd

    class OtherProfile(LiveDaemon):
        @property
        def run_file(self) -> Path:
            return self.home / "other" / "foreman.json"

    d = LiveDaemon(tmp_path)
    d.start()
    other = OtherProfile(tmp_path, cmd=daemon_cmd(tmp_path, "--profile", "other"))
    try:
        other.start()
        several = _foreman("stop", "--home", str(tmp_path))
        assert several.returncode == 2 and "several Foremen run" in several.stderr and "--profile" in several.stderr
        assert d.proc.poll() is None and other.proc.poll() is None  # nothing stopped on a guess
        done = _foreman("stop", "--home", str(tmp_path), "--profile", "sim")
        assert done.returncode == 0, done.stderr
        assert f"stopped the Foreman of profile 'sim' (pid {d.proc.pid}, port {d.port})" in done.stdout
        assert d.proc.wait(10) == 0  # a clean stop, as on Ctrl+C
        assert not d.run_file.exists() and other.proc.poll() is None
        again = _foreman("stop", "--home", str(tmp_path), "--profile", "sim")
        assert again.returncode == 1 and "no Foreman runs" in again.stderr
        last = _foreman("stop", "--home", str(tmp_path))  # the only one left needs no --profile
        assert last.returncode == 0 and "'other'" in last.stdout, last.stderr
        assert other.proc.wait(10) == 0
    finally:
        for daemon in (d, other):
            if daemon.proc is not None and daemon.proc.poll() is None:
                daemon.stop()


def test_foreman_stop_ends_a_foreman_suspended_by_its_terminal(tmp_path: Path) -> None:
    """A daemon stopped by Ctrl+Z (SIGTSTP; state T) cannot run its SIGTERM handler: `foreman stop`
    waited 30 s and said it "still runs", its turns "may still be ending". It now resumes it so the
    stop goes through (noticed at stop 9)."""
    import os
    import signal

    d = LiveDaemon(tmp_path)
    d.start()
    try:
        os.kill(d.proc.pid, signal.SIGSTOP)  # what SIGTSTP does, without a terminal to send it
        done = _foreman("stop", "--home", str(tmp_path), "--timeout", "20")
        assert done.returncode == 0, done.stderr
        assert d.proc.wait(10) == 0 and not d.run_file.exists()
    finally:
        if d.proc is not None and d.proc.poll() is None:
            os.kill(d.proc.pid, signal.SIGCONT)
            d.stop()
