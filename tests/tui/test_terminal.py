"""The real ``foreman tui`` in a real terminal (tmux) against a real daemon."""

import json
import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from tests.tui.real_daemon import ROOT, start_daemon

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


SOCKET = f"foreman-tui-test-{uuid.uuid4().hex[:8]}"
"""A tmux server of our own (``-L``): other tmux users' options do not apply."""


ENV = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
"""pytest sets COLUMNS=80 and LINES=24; the app would take them over the terminal's size."""


@pytest.fixture(autouse=True)
def tmux_home(tmp_path, monkeypatch):
    """The tmux server (started by a test's first ``tmux`` command, ended by its last) and every
    shell and program in it get a home of the test's own: the shell of
    ``test_a_background_daemon_is_not_stopped_by_keys_typed_in_its_terminal`` wrote its history
    (``.bash_history``) into the user's home when ``kill-server`` ended it (issue 38)."""
    home = tmp_path / "tmux-home"
    home.mkdir()
    monkeypatch.setitem(ENV, "HOME", str(home))
    return home


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", *args], capture_output=True, text=True,
                          check=True, timeout=10, env=ENV).stdout


def screen_until(session: str, predicate, timeout: float = 30.0) -> str:
    """Capture the pane until ``predicate(text)`` holds; return the text (or fail showing it)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = tmux("capture-pane", "-p", "-t", session)
        if predicate(text):
            return text
        time.sleep(0.2)
    size = tmux("display", "-p", "-t", session, "#{window_width}x#{window_height}")
    pytest.fail(f"the screen ({size.strip()}) never showed what was expected:\n{text}")


def test_foreman_tui_in_tmux(tmp_path):
    daemon = start_daemon(tmp_path)
    session = f"foreman-tui-{uuid.uuid4().hex[:8]}"
    cmd = f"{sys.executable} -m foreman tui --home {daemon.home} --profile sim"
    try:
        tmux("new-session", "-d", "-s", session, "-x", "170", "-y", "45", "-c", str(ROOT), cmd)
        tmux("resize-window", "-t", session, "-x", "170", "-y", "45")
        screen = screen_until(session, lambda t: "marlow" in t and "nothing needs you" in t)
        assert "Agents" in screen and "Tasks" in screen and "Open decisions" in screen
        tmux("send-keys", "-t", session, "-l", "/agents")
        tmux("send-keys", "-t", session, "Enter")
        screen_until(session, lambda t: "worker idle@lounge" in t)  # the /agents view in the console
        tmux("send-keys", "-t", session, "-l", "Add tags to pocket-notes")
        tmux("send-keys", "-t", session, "Enter")
        screen = screen_until(session, lambda t: "ok: new goal" in t and "YOU ARE NEEDED: d1" in t, 60)
        assert "juniper" in screen and "t1" in screen
        tmux("send-keys", "-t", session, "C-q")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            alive = subprocess.run(["tmux", "-L", SOCKET, "has-session", "-t", session], check=False, capture_output=True,
                                   timeout=10, env=ENV)
            if alive.returncode != 0:
                break
            time.sleep(0.2)
        else:
            pytest.fail("ctrl+q did not end foreman tui")
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], check=False, capture_output=True, timeout=10, env=ENV)
        daemon.stop()


def _state(pid: int) -> str:
    return subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()


def test_a_background_daemon_is_not_stopped_by_keys_typed_in_its_terminal(tmp_path):
    """The README's recipe `foreman start ... &`: a key typed while another command ran made the
    daemon read its terminal from the background, and SIGTTIN stopped it (state T): the client
    then timed out connecting. A background daemon must not read the terminal at all."""
    home = tmp_path / "home"
    session = f"foreman-bg-{uuid.uuid4().hex[:8]}"
    start = (f"{sys.executable} -m foreman start --backend sim --reset --port 0 --home {home} "
             f"--sandbox {tmp_path / 'sandbox'} --no-autostart --no-notify > {tmp_path / 'daemon.log'} 2>&1 &")
    record = home / "sim" / "foreman.json"
    pid = None
    try:
        tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "30", "-c", str(ROOT), "bash --norc --noprofile")
        tmux("send-keys", "-t", session, "-l", start)
        tmux("send-keys", "-t", session, "Enter")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and pid is None:
            try:
                pid = int(json.loads(record.read_text())["pid"])
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        assert pid is not None, (tmp_path / "daemon.log").read_text()[-2000:]
        tmux("send-keys", "-t", session, "-l", "sleep 3")
        tmux("send-keys", "-t", session, "Enter")
        time.sleep(0.5)
        tmux("send-keys", "-t", session, "-l", "x")  # typed while `sleep` holds the terminal
        tmux("send-keys", "-t", session, "Enter")
        time.sleep(3.5)
        assert not _state(pid).startswith("T"), f"the daemon was stopped: {_state(pid)}"
        from websockets.sync.client import connect

        port = int(json.loads(record.read_text())["port"])
        with connect(f"ws://127.0.0.1:{port}", open_timeout=10):  # a stopped daemon never answers the handshake
            pass
    finally:
        if pid is not None:
            subprocess.run(["kill", "-CONT", str(pid)], capture_output=True)
            subprocess.run(["kill", str(pid)], capture_output=True)
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], check=False, capture_output=True, timeout=10, env=ENV)
