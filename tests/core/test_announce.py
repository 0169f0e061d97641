"""Issue 38 item 2: the daemon says on its terminal what it is doing (a decision waits, a goal is
finished, a summary at stop), and ``--exit-on-goal-done`` stops it once every goal is finished."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foreman.config import resolve
from foreman.daemon import Daemon
from foreman.store import Store
from tests.core.live import ROOT

pytestmark = pytest.mark.timeout(120)


class NoTeam:
    """A backend with no agents: the daemon's own words are under test."""

    name = "none"

    def status(self) -> tuple[str, str]:
        return ("none", "")

    async def start(self, daemon) -> None:
        for name in ("marlow", "kit"):
            if name not in daemon.core.world.agents:
                daemon.act(lambda c, now, name=name: c.add_agent(name, now))

    def on_effect(self, effect) -> None:
        return None

    async def stop(self) -> None:
        return None


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the daemon said (its ``foreman.announce`` lines) so far; clears them."""
    lines = [r.getMessage() for r in caplog.records if r.name == "foreman.announce"]
    caplog.clear()
    return lines


async def started(home: Path, **flags) -> Daemon:
    daemon = Daemon(resolve({"home": str(home), "port": 0, "backend": "sim", **flags}, env={}), backend=NoTeam())
    await daemon.start()
    return daemon


async def test_a_waiting_decision_is_said_once_and_again_only_when_the_count_rises(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="foreman.announce")
    home = tmp_path / "home"
    d = await started(home, auto_answer=["permission"])
    tui = f"foreman tui --home {home}"
    try:
        assert said(caplog) == []
        d1 = d.act(lambda c, now: c.open_decision("question", "Tags?", ["Yes", "No"], now, asked_by="kit")).id
        assert said(caplog) == [f"1 decision waiting: run `{tui}`"]
        d.act(lambda c, now: c.feed("unrelated", now))
        d2 = d.act(lambda c, now: c.open_decision("merge", "Merge t1?", ["Merge", "Reject"], now, asked_by="marlow")).id
        assert said(caplog) == [f"2 decisions waiting: run `{tui}`"]
        d.act(lambda c, now: c.answer_decision(d1, 0, now))  # down to 1: nothing to say
        assert said(caplog) == []
        # one the daemon auto-answers (--auto-answer permission) is not waiting for the user
        d.act(lambda c, now: c.open_decision("permission", "npm install?", ["Allow", "Deny"], now, asked_by="kit"))
        assert said(caplog) == []
        d3 = d.act(lambda c, now: c.open_decision("question", "Emoji?", ["Yes", "No"], now, asked_by="kit")).id
        assert said(caplog) == [f"2 decisions waiting: run `{tui}`"]  # up again: said again
        for did in (d2, d3):
            d.act(lambda c, now, did=did: c.cancel_decision(did, now))
        assert said(caplog) == []
        d.act(lambda c, now: c.open_decision("question", "Again?", ["Yes", "No"], now, asked_by="kit"))
        assert said(caplog) == [f"1 decision waiting: run `{tui}`"]
    finally:
        await d.stop()
    # a restart says what the last run left waiting
    again = await started(home)
    try:
        assert f"1 decision waiting: run `{tui}`" in said(caplog)
    finally:
        await again.stop()


async def test_goals_finished_are_said_and_exit_on_goal_done_stops_when_every_goal_is(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="foreman.announce")
    home = tmp_path / "home"
    d = await started(home, exit_on_goal_done=True)
    try:
        assert not d.stopping.is_set()  # no goal yet: nothing to wait for
        g1 = d.act(lambda c, now: c.submit_goal("Add tags", now)).id
        g2 = d.act(lambda c, now: c.submit_goal("Export", now)).id
        d.act(lambda c, now: c.create_task("tag notes", now, goal=g1))
        d.act(lambda c, now: c.set_goal_status(g1, "done", now))
        assert said(caplog) == [f"goal {g1} done: Add tags (0 of 1 task done)"]
        assert not d.stopping.is_set() and d.say.finished is None  # g2 is still open
        d.act(lambda c, now: c.set_goal_status(g2, "cancelled", now))
        assert said(caplog) == [f"goal {g2} cancelled: Export (0 of 0 tasks done)",
                                "every goal is finished (one at least cancelled): stopping (--exit-on-goal-done)"]
        assert d.stopping.is_set() and d.say.finished == "cancelled"
    finally:
        await d.stop()
    assert said(caplog) == ["summary: goals 1 done, 0 open, 1 cancelled · tasks 0 of 1 done · 0 merges · "
                            "0 decisions answered (0 auto), 0 open"]
    # without the flag, finished goals do not stop the daemon
    plain = await started(home)
    try:
        assert not plain.stopping.is_set()
        g3 = plain.act(lambda c, now: c.submit_goal("More", now)).id
        plain.act(lambda c, now: c.set_goal_status(g3, "done", now))
        assert f"goal {g3} done: More (0 of 0 tasks done)" in said(caplog) and not plain.stopping.is_set()
        plain.act(lambda c, now: c.set_goal_status(g3, "active", now))
        plain.act(lambda c, now: c.set_goal_status(g3, "done", now))
        assert said(caplog) == [f"goal {g3} done: More (0 of 0 tasks done)"]  # done again: said again
    finally:
        await plain.stop()
    # a profile whose goals are all finished stops right after its start
    last = await started(home, exit_on_goal_done=True)
    try:
        assert last.stopping.is_set() and last.say.finished == "cancelled"
    finally:
        await last.stop()


def test_start_exit_on_goal_done_runs_the_sim_to_its_end_and_exits_0_saying_so(tmp_path: Path) -> None:
    """The real ``foreman start`` (the setting from its environment variable, as every option
    takes one): the sim's goal runs to done, answered by the daemon, and the daemon stops by
    itself with its state saved."""
    home = tmp_path / "home"
    cmd = [sys.executable, "-m", "foreman", "start", "--backend", "sim", "--reset", "--port", "0", "--home", str(home),
           "--sandbox", str(tmp_path / "sandbox"), "--no-notify", "--speed", "1000",
           "--auto-answer", "merge,permission,question"]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}, "PYTHONPATH": str(ROOT),
           "AGENTCRAFT_EXIT_ON_GOAL_DONE": "1"}
    began = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.monotonic() - began < 60
    said = [line.split("foreman.announce: ", 1)[1] for line in done.stderr.splitlines() if "foreman.announce: " in line]
    assert said == [
        "goal g1 done: Add tags to pocket-notes: tag notes, list and search by tag, export, and ship it (7 of 9 tasks done)",
        "every goal is finished (done): stopping (--exit-on-goal-done)",
        "summary: goals 1 done, 0 open · tasks 7 of 9 done · 7 merges · 10 decisions answered (10 auto), 0 open",
    ]  # (every decision was the daemon's to answer: none waited for the user)
    assert not (home / "sim" / "foreman.json").exists()  # stopped as `foreman stop` stops it
    store = Store(home / "sim")
    world, _ = store.open()
    store.close()
    assert world.goals["g1"].status == "done" and world.tasks["t9"].status == "done"
    # the final question's first option closes t7: the feed says who answered it (it said "closed by the user")
    final = next(d for d in world.decisions.values() if d.prompt.endswith("Finish the goal without it?"))
    closed = [item.text for item in world.feed if " cancelled: closed" in item.text]
    assert closed == [f"t7 cancelled: closed: {final.id} was auto-answered"], closed


def test_start_help_names_exit_on_goal_done_and_its_exit_codes() -> None:
    out = subprocess.run([sys.executable, "-m", "foreman", "start", "--help"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    text = " ".join(out.stdout.split())
    assert "--exit-on-goal-done" in text and "AGENTCRAFT_EXIT_ON_GOAL_DONE" in text
    assert "done or cancelled" in text and "exit code 0 when every goal is done, 1 when one was cancelled" in text
