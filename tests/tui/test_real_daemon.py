"""The client against a real daemon (sim backend): Pilot, the demo script, a broken script, a restart."""

import asyncio
import json
import subprocess
import sys
import time

import pytest
from textual.widgets import RichLog

import protocol as p
from foreman.tui.app import ForemanApp
from foreman.tui.client import Connection
from foreman.tui.discovery import Locator
from foreman.tui.main import EXIT_REFUSED
from foreman.tui.mirror import Mirror
from foreman.tui.screens import AnswerScreen, TextScreen
from tests.tui.real_daemon import ROOT, start_daemon
from tests.tui.test_app import cells, console, until

pytestmark = pytest.mark.timeout(120)

GOAL = "Add tags to pocket-notes: tag notes, list and search by tag, export, and ship it"


@pytest.fixture
def real(tmp_path):
    daemon = start_daemon(tmp_path)
    yield daemon
    daemon.stop()


@pytest.mark.slow  # end to end: the full-screen client drives a real daemon's scenario; slow suite since issue 38
async def test_pilot_against_the_real_daemon(real):
    app = ForemanApp(Locator(real.home, real.profile), reconnect_interval=0.05)
    async with app.run_test(size=(180, 50)) as pilot:
        await until(pilot, lambda: app.mirror.synced and len(cells(app, "agents")) == len(app.mirror.agents) > 0, 15)
        agents = cells(app, "agents")
        assert "marlow" in agents and agents["marlow"][0] == "marlow"
        for name, agent in app.mirror.agents.items():
            assert agents[name][1].startswith(f"{agent.state}@{agent.station}")
        assert cells(app, "tasks") == {}

        await pilot.press(*GOAL, "enter")
        await until(pilot, lambda: "ok: new goal" in console(app), 15)
        # Task upserts fill the table; juniper's row follows the agent upsert that gives it t1.
        await until(pilot, lambda: {"t1", "t9"} <= set(cells(app, "tasks")), 15)
        await until(pilot, lambda: cells(app, "agents")["juniper"][2] == "t1", 15)
        assert cells(app, "tasks")["t1"][4] == "juniper"

        await until(pilot, lambda: "d1" in cells(app, "decisions"), 30)
        assert "YOU ARE NEEDED: d1 permission" in str(app.query_one("#banner").render())
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen))
        await pilot.press("enter")
        await until(pilot, lambda: app.mirror.decisions["d1"].status == "answered", 15)
        assert app.mirror.decisions["d1"].answer.label == "Allow"
        assert "d1" not in cells(app, "decisions")

        await until(pilot, lambda: "d2" in cells(app, "decisions"), 30)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, TextScreen), 15)
        await until(pilot, lambda: app.screen.query_one(RichLog).lines, 15)  # written once the log has a size
        text = [line.text for line in app.screen.query_one(RichLog).lines]
        assert text[0].startswith("# d2: sim-demo")
        assert any(line.startswith("+") for line in text) and any(line.startswith("@@") for line in text)


def run_tui(real, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "foreman", "tui", "--home", str(real.home), "--profile", "sim", *args]
    return subprocess.run(cmd, cwd=ROOT, check=False, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.slow  # end to end: the demo script replays a whole scenario to goal done; slow suite since issue 38
def test_the_demo_script_replays_to_goal_done(real, tmp_path):
    transcript = tmp_path / "out.txt"
    done = run_tui(real, "--script", str(ROOT / "scripts" / "sim-demo.script"), "--transcript", str(transcript), "--timeout", "60")
    assert done.returncode == 0, done.stderr + done.stdout[-3000:]
    text = transcript.read_text()
    for n in range(1, 11):
        assert f"DECISION d{n} " in text and f"DECIDED d{n} answered: " in text
    assert 'DECIDED d4 answered: 1 List tags with counts (by user) "counts are more useful"' in text
    assert "goal g1 done 100%" in text
    assert text.splitlines()[-1].endswith("10 decisions opened, 10 answered")


def test_a_broken_script_exits_non_zero_naming_the_line(real, tmp_path):
    script = tmp_path / "broken.script"
    script.write_text(f"{GOAL}\n# a decision that never comes\n/wait d99\n")
    done = run_tui(real, "--script", str(script), "--timeout", "2")
    assert done.returncode == 1
    assert "broken.script:3: '/wait d99' did not happen within 2 s" in done.stderr
    script.write_text("/pause @nobody\n")
    done = run_tui(real, "--script", str(script))
    assert done.returncode == 1 and "broken.script:1: '/pause @nobody' was refused: not_found" in done.stderr


@pytest.mark.slow
async def test_the_client_follows_a_restarted_daemon_to_its_new_port(tmp_path):
    first = start_daemon(tmp_path)
    second = None
    conn = Connection(Locator(first.home, "sim"), Mirror(), client_name="test", reconnect_interval=0.05, max_reconnect_interval=0.2)
    task = None
    try:
        task = asyncio.create_task(conn.run())
        await conn.wait_ready(15)
        ack = await conn.request(p.GoalSubmit(text=GOAL), 15)
        await conn.wait_for(lambda m: "t1" in m.tasks and "d1" in m.decisions, 30)
        before = conn.mirror.seq
        first.stop()
        await conn.wait_for(lambda m: not conn.ready, 10)
        second = await asyncio.to_thread(start_daemon, tmp_path, reset=False)
        assert second.port != first.port
        await conn.wait_for(lambda m: conn.ready and conn.connections == 2, 20)
        assert conn.mirror.goals[ack.result].text == GOAL and conn.mirror.seq >= before
        # The resumed session is live: an answer goes through and comes back as state. (The sim's
        # team runs on the flow: a stop withdraws the permission its turn was waiting on, and the
        # resumed turn asks it again as a new decision.)
        await conn.wait_for(lambda m: any(d.status == "open" and d.id != "d1" for d in m.decisions.values()), 15)
        waiting = next(d.id for d in conn.mirror.decisions.values() if d.status == "open" and d.id != "d1")
        await conn.request(p.DecisionAnswerIntent(decision=waiting, option=0), 15)
        await conn.wait_for(lambda m: m.decisions[waiting].status == "answered", 15)
    finally:
        await conn.close()
        if task is not None:
            await task
        first.stop()
        if second is not None:
            second.stop()


@pytest.mark.parametrize("token", [None, "not-the-token"])
def test_a_client_refused_for_its_token_exits_at_once_with_advice(real, tmp_path, token):
    # a home without the daemon's record (no token), or one whose record names the port with a stale token
    home = tmp_path / f"other-home-{token}"
    home.mkdir()
    if token is not None:
        (home / "foreman.json").write_text(json.dumps({"pid": 1, "port": real.port, "token": token}))
    script = tmp_path / "status.script"
    script.write_text("/status\n")
    cmd = [sys.executable, "-m", "foreman", "tui", "--home", str(home), "--port", str(real.port),
           "--script", str(script), "--connect-timeout", "30"]
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, check=False, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    assert done.returncode == EXIT_REFUSED, done.stderr
    assert elapsed < 20, f"took {elapsed:.1f} s: the client kept retrying a refused token"
    assert f"port {real.port}" in done.stderr and "foreman.json" in done.stderr, done.stderr
    assert "--home" in done.stderr and "--profile" in done.stderr, done.stderr
    assert "start it with `foreman start`" not in done.stderr, done.stderr  # not "unreachable"


async def test_the_full_screen_client_refused_for_its_token_exits_with_advice(real, tmp_path):
    app = ForemanApp(Locator(tmp_path / "no-home", port=real.port), reconnect_interval=0.05)
    started = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):  # up to 10 s
            if app.return_code is not None:
                break
            await pilot.pause(0.05)
    assert app.return_code == EXIT_REFUSED and time.monotonic() - started < 10
    assert app.conn.refused and f"port {real.port}" in app.conn.refused and "--profile" in app.conn.refused
