"""Issue 38 item 3, unattended runs: ``--auto-answer`` in the full-screen client too, ``--line``
ends at goal done, a line-mode client started before its daemon waits for it quietly, and the
main job runs unattended to goal done with the client's transcript alone on its output."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import re
import socket
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

import protocol as p
from foreman.tui.app import ForemanApp
from tests.tui.fake_daemon import FakeDaemon
from tests.tui.real_daemon import ROOT
from tests.tui.test_app import banner, cells, console, until

pytestmark = pytest.mark.timeout(120)

STAMP = re.compile(r"^\[\d\d:\d\d\.\d\] ")
"""How every transcript line starts."""


def env_for(tmp_path: Path) -> dict[str, str]:
    """The environment of a ``foreman`` child: this checkout, no AGENTCRAFT_* of the caller, a home of the test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_") and k not in ("COLUMNS", "LINES")}
    return {**env, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}


async def tui(tmp_path: Path, *args: str, **kw) -> asyncio.subprocess.Process:
    """Start ``foreman tui ARGS`` (a home of its own unless ARGS name one)."""
    home = [] if "--home" in args else ["--home", str(tmp_path / "home")]
    kw.setdefault("stdout", asyncio.subprocess.PIPE)
    kw.setdefault("stderr", asyncio.subprocess.PIPE)
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "foreman", "tui", *home, *args, cwd=ROOT,
                                                env=env_for(tmp_path), **kw)


async def test_the_full_screen_client_auto_answers_the_kinds_it_was_given(daemon):
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05, auto_answer={"merge", "permission"})
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: daemon.mirror.decisions["d1"].status == "answered")  # open at connect
        assert daemon.received[0] == p.DecisionAnswerIntent(id=daemon.received[0].id, decision="d1", option=0, by="auto")
        assert "--auto-answer merge,permission" in console(app)
        await until(pilot, lambda: "auto-answer d1 (merge): 1 Merge" in console(app))
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(message)
        await daemon.open_decision(p.Decision(id="d2", kind="permission", prompt="npm install?", options=["Allow", "Deny"],
                                              asked_by="kit", created_at=2.0))
        await until(pilot, lambda: daemon.mirror.decisions["d2"].status == "answered")
        critical = p.Risk(kind="secret", severity="critical", path="k.pem", message="a private key")
        await daemon.open_decision(p.Decision(id="d3", kind="merge", prompt="Merge kit-t3?", risks=[critical],
                                              options=["Request changes", "Merge anyway (risk acknowledged)", "Reject"],
                                              asked_by="marlow", created_at=3.0))
        await daemon.open_decision(p.Decision(id="d4", kind="question", prompt="Emoji tags?", options=["Yes", "No"],
                                              asked_by="kit", created_at=4.0))
        await until(pilot, lambda: {"d3", "d4"} <= set(cells(app, "decisions")))
        await until(pilot, lambda: "auto-answer d3 skipped: the merge has a critical risk finding" in console(app))
        assert "YOU ARE NEEDED: d3 merge" in banner(app)  # left to the user, as a question is
        assert [i.decision for i in daemon.received] == ["d1", "d2"]
        await until(pilot, lambda: len(notes) == 2)
        assert [n.split()[0] for n in notes] == ["d3", "d4"]  # d2, answered for the user, called nobody


async def test_foreman_tui_auto_answer_in_a_real_terminal(daemon, tmp_path):
    """The command line reaches the full-screen client: ``foreman tui --auto-answer merge`` in a
    pseudo-terminal answers the open merge (it was ignored there before issue 38)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 140, 0, 0))
    proc = await tui(tmp_path, "--port", str(daemon.port), "--auto-answer", "merge", stdin=slave, stdout=slave,
                     stderr=slave, start_new_session=True)
    os.close(slave)
    screen = bytearray()

    def drain() -> None:
        with contextlib.suppress(OSError):
            screen.extend(os.read(master, 65536))

    loop = asyncio.get_running_loop()
    loop.add_reader(master, drain)
    try:
        async with asyncio.timeout(60):
            while daemon.mirror.decisions["d1"].status != "answered":
                assert proc.returncode is None, bytes(screen[-2000:])
                await asyncio.sleep(0.05)
        assert daemon.received[-1].by == "auto" and daemon.received[-1].option == 0
    finally:
        loop.remove_reader(master)
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()
        os.close(master)


async def read_lines(stream: asyncio.StreamReader, into: list[str]) -> None:
    while line := await stream.readline():
        into.append(line.decode())


async def test_line_mode_ends_when_its_goal_is_done(daemon, tmp_path):
    g1 = daemon.mirror.goals["g1"]
    await daemon.push(p.GoalUpsert(seq=0, goal=g1.model_copy(update={"status": "done", "progress": 100})))
    proc = await tui(tmp_path, "--line", "--port", str(daemon.port), stdin=asyncio.subprocess.PIPE)
    out: list[str] = []
    reader = asyncio.create_task(read_lines(proc.stdout, out))
    try:
        proc.stdin.write(b"second goal\n")  # (standard input stays open: only the goal ends the session)
        await proc.stdin.drain()
        async with asyncio.timeout(30):
            while not any("ok: new goal g2: second goal" in line for line in out):
                await asyncio.sleep(0.05)
        assert proc.returncode is None  # g1, done when it connected, did not end it
        await daemon.push(p.GoalUpsert(seq=0, goal=daemon.mirror.goals["g2"].model_copy(update={"status": "active"})))
        await asyncio.sleep(0.3)
        assert proc.returncode is None
        await daemon.push(p.GoalUpsert(seq=0, goal=daemon.mirror.goals["g2"].model_copy(update={"status": "done", "progress": 100})))
        assert await asyncio.wait_for(proc.wait(), 15) == 0
        await reader
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert any("goal g2 done 100%: second goal" in line for line in out)
    assert out[-1].rstrip().endswith("end: 1 intents sent, 1 decisions opened, 0 answered")


async def test_line_mode_fails_when_the_goal_it_watches_is_cancelled(daemon, tmp_path):
    proc = await tui(tmp_path, "--line", "--port", str(daemon.port), stdin=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(30):
            while not daemon.clients:  # (it had its snapshot, g1 active: the latest goal, watched)
                await asyncio.sleep(0.05)
        await daemon.push(p.GoalUpsert(seq=0, goal=daemon.mirror.goals["g1"].model_copy(update={"status": "cancelled"})))
        assert await asyncio.wait_for(proc.wait(), 15) == 1
        assert "goal g1 was cancelled" in (await proc.stderr.read()).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_line_mode_client_started_before_its_daemon_waits_for_it_quietly(tmp_path):
    port = free_port()
    script, transcript = tmp_path / "status.script", tmp_path / "out.txt"
    script.write_text("/status\n")
    proc = await tui(tmp_path, "--port", str(port), "--script", str(script), "--transcript", str(transcript))
    late = FakeDaemon()
    try:
        await asyncio.sleep(2.5)  # its first attempts are refused
        assert proc.returncode is None
        await late.start(port)
        assert await asyncio.wait_for(proc.wait(), 30) == 0, (await proc.stderr.read()).decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await late.stop()
    lines = transcript.read_text().splitlines()
    assert "connected: foreman 9.9, backend sim" in lines[0] and any("> /status" in line for line in lines)
    assert not any("refused" in line or "disconnected" in line for line in lines), lines


def test_the_main_job_runs_unattended_to_goal_done(tmp_path):
    """The client starts first and waits; the daemon's log goes to its file; the daemon stops at
    goal done (``--exit-on-goal-done``) and the client ends there too (``--line``): both exit 0,
    and the client's output is its transcript alone."""
    home, log, shown, errors = tmp_path / "home", tmp_path / "daemon.log", tmp_path / "client.out", tmp_path / "client.err"
    env = env_for(tmp_path)
    with shown.open("w") as out, errors.open("w") as err:  # (its input stays open: only the goal ends it)
        client = subprocess.Popen(
            [sys.executable, "-m", "foreman", "tui", "--line", "--auto-answer", "merge,permission,question", "--home",
             str(home), "--profile", "sim"], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=out, stderr=err)
    time.sleep(1.0)
    with log.open("w") as out:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "foreman", "start", "--backend", "sim", "--reset", "--port", "0", "--home", str(home),
             "--sandbox", str(tmp_path / "sandbox"), "--no-notify", "--speed", "1000", "--exit-on-goal-done"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        assert client.wait(90) == 0, errors.read_text() + shown.read_text()[-3000:]
        assert daemon.wait(30) == 0, log.read_text()[-3000:]
    finally:
        for proc in (client, daemon):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    transcript = shown.read_text()
    lines = transcript.splitlines()
    assert lines and all(STAMP.match(line) for line in lines), transcript[:2000]
    assert "connected: foreman" in lines[0]
    assert any("goal g1 done 100%" in line for line in lines)
    assert lines[-1].endswith("end: 0 intents sent, 10 decisions opened, 10 answered")
    said = log.read_text()
    assert f"1 decision waiting: run `foreman tui --home {home}`" in said
    assert "goal g1 done: Add tags to pocket-notes" in said
    assert "summary: goals 1 done, 0 open · tasks 7 of 9 done · 7 merges · 10 decisions answered (10 auto), 0 open" in said


async def test_a_decision_opened_before_the_first_redraw_still_calls_the_user(daemon, monkeypatch):
    """What the first snapshot held is what was open at connect; a decision that opens after it
    is news even when no redraw ran in between (a loaded machine delays the redraw timer: the
    first redraw then took every decision it saw as already open at connect and called nobody)."""
    import foreman.tui.app as app_module
    monkeypatch.setattr(app_module, "REFRESH_INTERVAL", 3600.0)  # no redraw unless asked
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(message)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: app.mirror.synced)
        await daemon.open_decision(p.Decision(id="d4", kind="question", prompt="Emoji tags?", options=["Yes", "No"],
                                              asked_by="kit", created_at=4.0))
        await until(pilot, lambda: "d4" in app.mirror.decisions)
        app._refresh_panes()  # the first redraw, late
        assert [n.split()[0] for n in notes] == ["d4"]  # d1, open at connect, calls nobody
        app._refresh_panes()
        assert len(notes) == 1
