"""Showcase states: the sim team on the flow, fast-forwarded through its script to a hold point
(every decision before it answered "by showcase"), and held there."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ._sim import SimClient, git, start_daemon

# Who does what at the hold is the flow's: Juniper asks her product question about t2 herself and
# waits for it; Kit's t3 and Wren's t4 turns wait for their first cue; Tove handed t5 in; Rowan's
# t6 waits for a free slot (--max-concurrent 3).
BUSY = {
    "marlow": ("idle", "lounge"), "juniper": ("waiting_user", "user"), "kit": ("thinking", "desk"),
    "wren": ("thinking", "desk"), "rowan": ("idle", "lounge"), "tove": ("idle", "lounge"),
}
# Rowan's t6 turn hit an API overload; Tove's t9 turn waits for its first cue; Kit's t8 was dropped.
LATE = {
    "marlow": ("idle", "lounge"), "juniper": ("idle", "lounge"), "kit": ("idle", "lounge"),
    "wren": ("idle", "lounge"), "rowan": ("error", "library"), "tove": ("thinking", "desk"),
}
HOLD_WAIT = 30.0


async def held(port: int, point: str) -> SimClient:
    """Connect (answering nothing) and wait for the hold point's feed line."""
    client = SimClient(answer=None)
    await client.connect(port)
    await client.wait_for(lambda c: any(f["text"] == f"Showcase: holding the {point} state" for f in c.feed),
                          HOLD_WAIT, f"the {point} hold")
    return client


def states(client: SimClient) -> dict[str, tuple[str, str]]:
    return {n: (a["state"], a["station"]) for n, a in client.agents.items()}


def open_decisions(client: SimClient) -> list[tuple[str, str | None]]:
    return sorted((d["kind"], d.get("task")) for d in client.decisions.values() if d["status"] == "open")


@pytest.mark.slow  # end to end: the team fast-forwarded on the flow, then a restart; slow suite since issue 38
async def test_busy_showcase_holds_its_state_across_a_restart(tmp_path: Path) -> None:
    daemon = start_daemon(tmp_path, "--showcase", profile="showcase")
    assert daemon.repo.name == "sim-demo-showcase"
    try:
        client = await held(daemon.port, "busy")
        assert states(client) == BUSY
        assert open_decisions(client) == [("merge", "t5"), ("question", "t2")]
        merge = client.decisions_of("merge", "t5")[0]
        assert merge["worktree"] == "tove-t5" and merge["options"] == ["Merge", "Request changes", "Reject"]
        # decisions before the hold were answered for the user while fast-forwarding
        (perm,) = client.decisions_of("permission")
        assert perm["answer"]["by"] == "showcase" and perm["answer"]["option"] == 0
        assert client.goal()["status"] == "active" and client.goal()["progress"] == 11  # t1 merged, 1 of 9
        statuses = {t: v["status"] for t, v in client.tasks.items()}
        assert statuses == {"t1": "done", "t2": "doing", "t3": "doing", "t4": "doing", "t5": "review", "t6": "todo",
                            "t7": "blocked", "t8": "todo", "t9": "todo"}
        # held: nothing more happens
        seen = len(client.messages)
        await asyncio.sleep(0.5)
        assert len(client.messages) == seen
        await client.close()
    finally:
        daemon.kill()
    # a restarted showcase daemon (no --reset) comes back to the same held state
    head = git(daemon.repo, "rev-parse", "main")
    daemon = start_daemon(tmp_path, "--showcase", profile="showcase", reset=False)
    try:
        client = await held(daemon.port, "busy")
        await asyncio.sleep(0.3)
        assert states(client) == BUSY
        assert open_decisions(client) == [("merge", "t5"), ("question", "t2")]
        assert git(daemon.repo, "rev-parse", "main") == head
        await client.close()
    finally:
        daemon.stop()


@pytest.mark.slow  # end to end: the team fast-forwarded on the flow to its late state; slow suite since issue 38
async def test_late_showcase(tmp_path: Path) -> None:
    daemon = start_daemon(tmp_path, "--showcase", "late", profile="showcase-late")
    assert daemon.repo.name == "sim-demo-showcase-late"
    try:
        client = await held(daemon.port, "late")
        assert states(client) == LATE
        assert open_decisions(client) == []
        statuses = {t: v["status"] for t, v in client.tasks.items()}
        assert statuses == {"t1": "done", "t2": "done", "t3": "done", "t4": "done", "t5": "done",
                            "t6": "doing", "t7": "blocked", "t8": "cancelled", "t9": "doing"}
        assert client.agents["rowan"]["activity"].startswith("API overloaded")
        assert all(d["answer"]["by"] == "showcase" for d in client.decisions.values())  # every one before the hold
        seen = len(client.messages)
        await asyncio.sleep(0.5)
        assert len(client.messages) == seen
        await client.close()
    finally:
        daemon.stop()
