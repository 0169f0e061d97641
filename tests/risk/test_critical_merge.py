"""A merge decision with a critical finding: Request changes first, never merged by a first
option or an auto-answer; Merge anyway merges."""

from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

import pytest

import protocol as p
from foreman.config import resolve
from foreman.core.rules import MERGE_ANYWAY, merge_choice
from foreman.daemon import Daemon
from foreman.errors import Conflict
from foreman.tui.client import Connection
from foreman.tui.mirror import Mirror
from foreman.tui.script import LineRunner
from foreman.tui.transcript import Transcript
from tests.conductor.test_daemon_edges import NoTeam
from tests.core.worlds import T0, team_core
from tests.tui.fake_daemon import FakeDaemon

KEY = p.Risk(kind="secret", severity="critical", path="a.py", line=3, message="AWS Access Key (AKIA...)")
CI = p.Risk(kind="ci", severity="high", path=".github/workflows/x.yml", message="CI or automation file added")


def _in_review(core, title: str = "x"):
    t = core.create_task(title, T0, goal="g1")
    core.start_task(t.id, "kit", T0)
    core.set_task_status(t.id, "review", T0, who="kit")
    return t.id


def test_critical_finding_reorders_options_and_first_option_does_not_merge() -> None:
    core = team_core()
    tid = _in_review(core)
    d = core.open_merge_decision(tid, T0, asked_by="marlow", worktree="kit-t1", risks=[CI, KEY])
    assert d.options == ["Request changes", MERGE_ANYWAY, "Reject"]
    assert d.risks == [CI, KEY]
    core.answer_decision(d.id, 0, T0)
    with pytest.raises(Conflict):
        core.complete_task(tid, T0, decision=d.id)
    assert merge_choice(core.decision(d.id).answer.label) == "changes"


def test_merge_anyway_merges_and_a_high_finding_keeps_the_usual_options() -> None:
    core = team_core()
    tid = _in_review(core)
    d = core.open_merge_decision(tid, T0, asked_by="marlow", worktree="kit-t1", risks=[KEY])
    core.answer_decision(d.id, 1, T0)
    assert core.complete_task(tid, T0, decision=d.id).status == "done"
    tid2 = _in_review(core, "y")
    d2 = core.open_merge_decision(tid2, T0, asked_by="marlow", worktree="kit-t2", risks=[CI])
    assert d2.options == ["Merge", "Request changes", "Reject"]
    assert merge_choice("Merge") == "merge" and merge_choice("Reject") == "reject" and merge_choice("What") is None


async def test_daemon_auto_answer_never_answers_a_critical_merge(tmp_path: Path) -> None:
    settings = resolve({"home": str(tmp_path / "home"), "port": 0, "backend": "sim", "auto_answer": ["merge"]}, env={})
    daemon = Daemon(settings, backend=NoTeam())
    await daemon.start()
    try:
        risky = daemon.act(lambda c, now: c.open_decision("merge", "Merge t1?", ["Request changes", MERGE_ANYWAY], now,
                                                          asked_by="kit", risks=[KEY]))
        plain = daemon.act(lambda c, now: c.open_decision("merge", "Merge t2?", ["Merge", "Reject"], now, asked_by="kit", risks=[CI]))
        answered = await asyncio.wait_for(daemon.wait_decision(plain.id), 5)
        assert answered.answer is not None and answered.answer.by == "auto"
        await asyncio.sleep(0.05)
        assert daemon.core.world.decisions[risky.id].status == "open"
    finally:
        await daemon.stop()
    # and not at the next start either (the crash-recovery path)
    again = Daemon(settings, backend=NoTeam())
    await again.start()
    try:
        await asyncio.sleep(0.05)
        assert again.core.world.decisions[risky.id].status == "open"
    finally:
        await again.stop()


@pytest.mark.timeout(30)
async def test_tui_auto_answer_skips_a_critical_merge() -> None:
    daemon = FakeDaemon()
    await daemon.start()
    out = io.StringIO()
    conn = Connection(lambda: daemon.url, Mirror(), client_name="test")
    runner = LineRunner(conn, Transcript([out], time.monotonic), auto_answer={"merge"}, wait_timeout=2.0)
    conn.listener = runner.on_message
    task = asyncio.create_task(conn.run())
    try:
        await conn.wait_ready(5)
        await daemon.open_decision(p.Decision(id="d9", kind="merge", prompt="Merge t9?", asked_by="marlow",
                                              options=["Request changes", MERGE_ANYWAY, "Reject"], risks=[KEY]))
        await conn.wait_for(lambda m: "d9" in m.decisions, 5)
        await conn.wait_for(lambda m: m.decisions["d1"].status == "answered", 5)
        await asyncio.sleep(0.1)
        assert "d9" not in [i.decision for i in daemon.received]
        assert "auto-answer d9 skipped" in out.getvalue()
    finally:
        await conn.close()
        await task
        await daemon.stop()
