"""`/stop @agent` takes an agent off shift; the scenario waits for it until `/resume`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from ._sim import SimClient, start_daemon, tree_hash
from .conftest import Run, run_async

QUIET = 2.0
"""Seconds without a state message that count as "the scenario is waiting" (at --speed 1000
that is 2,000 s of the team's time: no scripted action pauses that long). The other agents'
work goes on through real git and test processes, whose gaps grow with the machine's load: at
0.4 s a loaded run (load 4-6 on 2 cores) saw 7 messages after its quiet window."""


async def quiet(client: SimClient, timeout: float = 10.0) -> None:
    """Wait until no state message arrived for :data:`QUIET` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = len(client.messages)
        await asyncio.sleep(QUIET)
        if len(client.messages) == seen:
            return
    raise AssertionError("the scenario never went quiet")


@pytest.mark.slow  # end to end: a whole scenario run, stopped and resumed; slow suite since issue 38
async def test_stopped_agent_holds_the_scenario_until_resumed(tmp_path: Path, first_run: Run) -> None:
    daemon = start_daemon(tmp_path, "--no-autostart", "--no-ambient")
    started = asyncio.Event()

    def watch(msg: dict[str, Any]) -> None:
        if msg["type"] == "task.upsert" and msg["task"]["id"] == "t1" and msg["task"]["status"] == "doing":
            started.set()

    client = SimClient(on_message=watch)
    try:
        await client.connect(daemon.port, since=0)
        ack = await client.request({"type": "goal.submit", "text": "Add tags to pocket-notes"})
        assert ack["type"] == "ack" and ack["result"] == "g1"
        await asyncio.wait_for(started.wait(), 10)
        ack = await client.request({"type": "agent.stop", "agent": "juniper"})
        assert ack["type"] == "ack", ack
        stopped_at = len(client.messages)
        await quiet(client)
        juniper = client.agents["juniper"]
        assert (juniper["active"], juniper["state"], juniper["station"]) == (False, "idle", "lounge")
        assert client.goal()["status"] != "done" and not client.finished
        # nothing juniper does happens while she is off shift; her t1 went back to the board
        after = client.messages[stopped_at:]
        assert not [m for m in after if m["type"] == "agent.upsert" and m["agent"]["name"] == "juniper"
                    and m["agent"]["active"]]
        assert not [m for m in after if m["type"] == "log.append" and m["line"]["agent"] == "juniper"]
        # (the stop lands while juniper works on t1: it goes back to the board; on a very slow
        # machine it may land once t1 is already in review, which stop leaves alone)
        t1 = client.tasks["t1"]
        assert (t1["status"], t1["assignee"]) in (("todo", None), ("review", "juniper"))
        # still waiting a while later
        before = len(client.messages)
        await asyncio.sleep(QUIET)
        assert len(client.messages) == before
        ack = await client.request({"type": "agent.resume", "agent": "juniper"})
        assert ack["type"] == "ack", ack
        await client.wait_for(lambda c: c.finished, 60, "the scenario's end")
        assert (client.goal()["status"], client.goal()["progress"]) == ("done", 100)
        assert client.tasks["t1"]["assignee"] == "juniper" and client.tasks["t1"]["status"] == "done"
        assert not [m for m in client.messages if m["type"] == "log.append" and m["line"]["kind"] == "ambient"]
    finally:
        await client.close()
        daemon.stop()
    assert tree_hash(daemon.repo) == first_run.tree  # the same work reached main


@pytest.mark.slow  # end to end: a scenario run to goal done; slow suite since issue 38
async def test_user_cancels_a_task_in_progress(tmp_path: Path) -> None:
    """`task.cancel` on a task being worked on: it is not offered for merge; the run still ends."""
    from foreman.backends.sim import patches

    from ._sim import blobs

    daemon = start_daemon(tmp_path)
    started = asyncio.Event()

    def watch(msg: dict[str, Any]) -> None:
        if msg["type"] == "feed.append" and msg["item"]["text"].startswith("Wren started t4"):
            started.set()

    client = SimClient(on_message=watch)
    try:
        await client.connect(daemon.port, since=0)
        await asyncio.wait_for(started.wait(), 30)
        ack = await client.request({"type": "task.cancel", "task": "t4"})
        assert ack["type"] == "ack", ack
        await client.wait_for(lambda c: c.finished, 60, "the scenario's end")
    finally:
        await client.close()
        daemon.stop()
    assert client.tasks["t4"]["status"] == "cancelled"
    assert client.decisions_of("merge", "t4") == []
    assert (client.goal()["status"], client.goal()["progress"]) == ("done", 100)
    t4_files = {p for s in patches.steps_for("t4") for p in s.writes}
    assert not t4_files & set(blobs(daemon.repo))


def test_a_second_goal_is_declined_in_the_feed_not_left_planning(tmp_path: Path) -> None:
    """Found by a newcomer: a goal submitted to the sim besides its scenario's sat in ``planning``
    for ever with nothing said. The sim plays one scripted scenario; it says so and cancels it."""
    async def run() -> SimClient:
        daemon = start_daemon(tmp_path / "home")
        client = SimClient(answer=None)
        try:
            await client.connect(daemon.port, since=0)
            await client.wait_for(lambda c: any(t["status"] == "doing" for t in c.tasks.values()), 30, "the scenario")
            reply = await client.request({"type": "goal.submit", "text": "Add a delete command"})
            second = reply["result"]
            await client.wait_for(lambda c: c.goals.get(second, {}).get("status") == "cancelled", 30, "the decline")
            scenario = next(g for g in client.goals.values() if g["id"] != second)
            assert scenario["status"] in ("planning", "active")  # the scenario goes on
            return client
        finally:
            await client.close()
            daemon.stop()

    client = run_async(run())
    assert any("cannot plan" in f["text"] and "--backend claude or --backend local" in f["text"] for f in client.feed)
