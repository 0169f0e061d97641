"""The sim survives steering it used to trip over (both found by the sim chaos test's kind of
events): a prompt withdrawn by ``/stop`` is asked again after ``/resume`` (before, the withdrawal
counted as a denial, and a withdrawn final question left the goal open); an off-shift agent's
scripted message waits for the agent instead of being refused (its messages are delivered, and the
turn that answers them runs, once it is back)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from foreman.config import resolve
from foreman.daemon import Daemon
from tests.sim._sim import SimClient, start_daemon


def permissions(c: SimClient) -> list[dict[str, Any]]:
    return c.decisions_of("permission")


async def test_permission_withdrawn_by_stop_is_asked_again_after_resume(tmp_path: Path) -> None:
    daemon = start_daemon(tmp_path, "--no-ambient", "--seed", "11")
    client = SimClient(answer=None)
    try:
        await client.connect(daemon.port, since=0)
        await client.wait_for(lambda c: any(d["status"] == "open" for d in permissions(c)), 30, "tove's permission prompt")
        (first,) = permissions(client)
        assert (await client.request({"type": "agent.stop", "agent": "tove"}))["type"] == "ack"
        await client.wait_for(lambda c: c.decisions[first["id"]]["status"] == "cancelled", 10, "the withdrawal")
        assert client.decisions[first["id"]]["detail"] == "tove went off shift"
        assert len(permissions(client)) == 1  # nothing is asked while she is off shift

        assert (await client.request({"type": "agent.resume", "agent": "tove"}))["type"] == "ack"
        await client.wait_for(lambda c: len(permissions(c)) == 2, 10, "the permission asked again")
        again = permissions(client)[1]
        assert again["status"] == "open"
        assert {k: again[k] for k in ("prompt", "options", "askedBy", "task")} == \
            {k: first[k] for k in ("prompt", "options", "askedBy", "task")}
        assert again["detail"] == first["detail"] != client.decisions[first["id"]]["detail"]
        reply = await client.request({"type": "decision.answer", "decision": again["id"], "option": 0})
        assert reply["type"] == "ack", reply
        await client.wait_for(lambda c: any(f["text"].startswith("Tove reproduced the bug") for f in c.feed), 20,
                              "the permission's outcome")
        texts = [f["text"] for f in client.feed]
        assert "Tove reproduced the bug on real data" in texts  # the answer to the re-asked prompt counts
        assert "Tove reproduced the bug with a fixture" not in texts
    finally:
        await client.close()
        daemon.stop()


async def test_message_of_an_off_shift_agent_waits_until_it_is_back(tmp_path: Path) -> None:
    settings = resolve({"backend": "sim", "home": str(tmp_path / "home"), "sandbox": str(tmp_path / "sb"), "port": 0,
                        "autostart": False, "notify": False, "profile": "sim", "user_name": "sam"}, env={})
    d = Daemon(settings)
    await d.start()
    try:
        def said() -> list[str]:
            return [m.text for m in d.core.world.messages if m.sender == "marlow"]

        d.act(lambda c, now: c.stop_agent("marlow", now))
        d.act(lambda c, now: c.send_message("user", "marlow", "please keep the tags lowercase", now))
        await asyncio.sleep(0.3)
        assert said() == []  # the turn that answers waits (the Foreman would refuse an off-shift agent's message)
        d.act(lambda c, now: c.spawn_agent("marlow", now))
        for _ in range(500):
            if said():
                break
            await asyncio.sleep(0.01)
        assert said() == ["Got it, sam: I'll keep that in mind."]
    finally:
        await d.stop()
