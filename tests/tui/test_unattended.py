"""Issue 38 item 3, unattended runs: ``--auto-answer`` in the full-screen client too."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import struct
import sys
import termios
from pathlib import Path

import pytest

import protocol as p
from foreman.tui.app import ForemanApp
from tests.tui.real_daemon import ROOT
from tests.tui.test_app import banner, cells, console, until

pytestmark = pytest.mark.timeout(120)


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
