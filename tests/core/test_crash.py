"""Crash test: SIGKILL the daemon at random moments under a steady stream of intents.

Each round starts the daemon (on the same profile), streams ``message.send`` (to agents and
``all``) and ``agent.pause``/``agent.resume`` steering over one connection without waiting
for replies, and SIGKILLs the process at a random moment. After the restart every intent
that had been acknowledged must be in the snapshot: each acked message by id and text, the
steering state at least as far as the last ack, and ``seq`` at least the highest acked.

The negative control runs the same rounds against a daemon patched to acknowledge before it
writes (``crash_runner.py --unsafe``) and requires the check to catch lost acks.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from .live import Conn, LiveDaemon, daemon_cmd

RUNNER = Path(__file__).with_name("crash_runner.py")
TARGETS = ("kit", "juniper", "all", "rowan", "tove")


@dataclass
class Round:
    """What one round sent and what was acknowledged."""

    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    acked: dict[str, dict[str, Any]] = field(default_factory=dict)
    steer_acked: int = -1
    """Index of the last acknowledged steering op (ops alternate pause/resume of wren)."""
    steer_sent: int = -1
    wren_paused_at_start: bool = False
    max_seq: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)


async def _stream(conn: Conn, rnd: Round, tag: str, interval: float) -> None:
    i = 0
    while True:
        i += 1
        if i % 7 == 0:
            rnd.steer_sent += 1
            paused_now = rnd.wren_paused_at_start != (rnd.steer_sent % 2 == 1)
            op = "agent.resume" if paused_now else "agent.pause"
            intent = {"type": op, "agent": "wren", "id": f"{tag}-s{rnd.steer_sent}"}
        else:
            intent = {"type": "message.send", "to": TARGETS[i % len(TARGETS)], "text": f"{tag} msg {i}", "id": f"{tag}-m{i}"}
        rnd.sent[intent["id"]] = intent
        await conn.ws.send(json.dumps(intent))
        await asyncio.sleep(interval)


async def _read(conn: Conn, rnd: Round) -> None:
    try:
        while True:
            data = json.loads(await conn.ws.recv())
            if data.get("type") == "ack":
                rid = data["id"]
                rnd.acked[rid] = {**rnd.sent[rid], "result": data.get("result")}
                rnd.max_seq = max(rnd.max_seq, data["seq"])
                if "-s" in rid:
                    rnd.steer_acked = int(rid.rsplit("-s", 1)[1])
            elif data.get("type") == "error":
                rnd.errors.append(data)
    except ConnectionClosed:
        pass


def _missing(rnd: Round, snap: dict[str, Any]) -> list[str]:
    """Return what was acknowledged in ``rnd`` but is absent from the snapshot after the restart."""
    lost: list[str] = []
    by_id = {m["id"]: m for m in snap["messages"]}
    for rid, intent in rnd.acked.items():
        if intent["type"] != "message.send":
            continue
        m = by_id.get(int(intent["result"]))
        if m is None or m["text"] != intent["text"] or m["to"] != intent["to"]:
            lost.append(f"message {rid} ({intent['text']})")
    if rnd.steer_acked >= 0:
        wren = next(a for a in snap["agents"] if a["name"] == "wren")
        allowed = {rnd.wren_paused_at_start != (k % 2 == 0) for k in (rnd.steer_acked, rnd.steer_acked + 1)
                   if k <= rnd.steer_sent}
        if wren["paused"] not in allowed:
            lost.append(f"steering up to s{rnd.steer_acked} (wren paused={wren['paused']})")
    if snap["seq"] < rnd.max_seq:
        lost.append(f"seq {snap['seq']} < acked {rnd.max_seq}")
    return lost


async def _crash_rounds(home: Path, rounds: int, *, unsafe: bool, seed: int) -> tuple[list[list[str]], int]:
    """Run ``rounds`` kill/restart rounds; return what was lost per round and how many acks came."""
    rng = random.Random(seed)
    cmd = [sys.executable, str(RUNNER), *(["--unsafe"] if unsafe else []), *daemon_cmd(home)[3:]]
    daemon = LiveDaemon(home, cmd=cmd)
    losses: list[list[str]] = []
    acks = 0
    prev: Round | None = None
    try:
        for n in range(rounds):
            daemon.start()
            conn = await Conn.open(daemon.port, token=daemon.token)
            snap = (await conn.hello())[0]
            assert snap["type"] == "snapshot"
            if prev is not None:
                losses.append(_missing(prev, snap))
            rnd = Round(wren_paused_at_start=next(a for a in snap["agents"] if a["name"] == "wren")["paused"])
            reader = asyncio.create_task(_read(conn, rnd))
            writer = asyncio.create_task(_stream(conn, rnd, f"r{n}", interval=rng.choice([0.001, 0.002, 0.004])))
            # Kill after a random amount of progress (k acks, then a moment more), not after a
            # random time: a loaded machine acks fewer intents per second, and the kill must
            # still land at every stage of the stream (k=0 kills at once).
            want = rng.randint(0, 90)
            for _ in range(3000):
                if len(rnd.acked) >= want or writer.done():
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(rng.uniform(0.0, 0.05))
            daemon.kill()
            writer.cancel()
            await asyncio.gather(writer, reader, return_exceptions=True)
            await conn.ws.close()
            assert not rnd.errors, rnd.errors[:3]
            acks += len(rnd.acked)
            prev = rnd
        daemon.start()
        conn = await Conn.open(daemon.port, token=daemon.token)
        losses.append(_missing(prev, (await conn.hello())[0]))
        await conn.close()
    finally:
        daemon.kill()
    return losses, acks


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_acknowledged_intents_survive_50_sigkills(tmp_path: Path) -> None:
    losses, acks = await _crash_rounds(tmp_path, 50, unsafe=False, seed=2)
    assert len(losses) == 50 and acks > 2000
    assert all(not lost for lost in losses), [lost for lost in losses if lost][:3]


async def test_acknowledged_intents_survive_sigkill_quick(tmp_path: Path) -> None:
    losses, acks = await _crash_rounds(tmp_path, 3, unsafe=False, seed=1)
    assert losses == [[], [], []] and acks > 50


async def test_negative_control_ack_before_write_is_caught(tmp_path: Path) -> None:
    """The same check against a daemon that acks before writing must report lost intents."""
    losses, _ = await _crash_rounds(tmp_path, 3, unsafe=True, seed=3)
    assert any(losses), "the crash check did not notice acknowledged intents lost by an ack-before-write daemon"
