"""The sim team's director alone: cues in rank order, only when the flow is quiet, every turn in
flight waits for its cue and no decision is open; an aborted wait leaves no cue behind; a hold
point stops the cues for good."""

from __future__ import annotations

import asyncio

from foreman.backends.sim.director import Director


class Flow:
    """What the director reads of the flow, as plain switches."""

    def __init__(self) -> None:
        self.quiet_now = asyncio.Event()
        self.quiet_now.set()
        self.running: set[str] = set()
        self.user_waits = False

    async def quiet(self) -> None:
        await self.quiet_now.wait()


def director(flow: Flow) -> Director:
    d = Director()
    d.attach(flow.quiet, lambda: flow.running, lambda: flow.user_waits)
    return d


async def act(d: Director, who: str, rank: int, log: list[str], flow: Flow | None = None) -> None:
    """One action of ``who``'s turn, which then ends (it leaves the turns in flight)."""
    async with d.act(who, rank):
        log.append(who)
        await asyncio.sleep(0.01)
    if flow is not None:
        flow.running.discard(who)


async def test_cues_go_lowest_rank_first_once_every_turn_in_flight_waits() -> None:
    flow = Flow()
    flow.running = {"kit", "wren", "tove"}
    d, log = director(flow), []
    kit = asyncio.create_task(act(d, "kit", 3, log, flow))
    wren = asyncio.create_task(act(d, "wren", 1, log, flow))
    await asyncio.sleep(0.05)
    assert log == []  # tove's turn is in flight but not waiting for a cue: nobody goes
    tove = asyncio.create_task(act(d, "tove", 2, log, flow))
    await asyncio.wait_for(asyncio.gather(kit, wren, tove), 5)
    assert log == ["wren", "tove", "kit"]
    assert d.cues == [("wren", 1), ("tove", 2), ("kit", 3)]


async def test_no_cue_while_the_flow_is_busy_or_the_user_is_asked() -> None:
    flow = Flow()
    flow.running = {"kit"}
    flow.quiet_now.clear()
    flow.user_waits = True
    d, log = director(flow), []
    kit = asyncio.create_task(act(d, "kit", 1, log))
    await asyncio.sleep(0.05)
    flow.quiet_now.set()
    await asyncio.sleep(0.05)
    assert log == []  # quiet, but a decision is open
    flow.user_waits = False
    await asyncio.wait_for(kit, 2)
    assert log == ["kit"]


async def test_an_aborted_wait_leaves_no_cue_behind() -> None:
    """Found running the sim to goal done with --exit-on-goal-done: turns waiting for their cue at
    shutdown were cancelled and waited on for 15 s (asyncio.wait_for on 3.11 can swallow a
    cancellation that comes as its timeout fires)."""
    flow = Flow()
    flow.running = {"kit", "wren", "rowan"}
    d, log = director(flow), []
    waiting = [asyncio.create_task(act(d, n, r, log)) for n, r in (("kit", 1), ("wren", 2))]
    for _ in range(20):  # cancel at many moments of the poll
        await asyncio.sleep(0.003)
    for t in waiting:
        t.cancel()
    done, pending = await asyncio.wait(waiting, timeout=2)
    assert not pending and all(t.cancelled() for t in done)
    flow.running = {"rowan"}
    await asyncio.wait_for(act(d, "rowan", 5, log), 2)  # the cancelled waits hold nothing
    assert log == ["rowan"]


async def test_a_hold_point_stops_the_cues_for_good_even_with_a_decision_open() -> None:
    """--showcase: once the hold point's state is there (checked when a cue would be granted, the
    flow quiet), no cue is granted again, whatever comes after; the hold is said once."""
    flow = Flow()
    flow.running = {"kit", "wren"}
    d, log = director(flow), []
    holds: list[int] = []
    d.hold_when(lambda waiting: log == ["kit"] and waiting == {"wren"}, lambda: holds.append(len(d.cues)))
    kit = asyncio.create_task(act(d, "kit", 1, log, flow))
    wren = asyncio.create_task(act(d, "wren", 2, log, flow))
    await asyncio.wait_for(kit, 2)
    await asyncio.sleep(0.1)
    assert log == ["kit"] and d.held and holds == [1]  # held after kit's cue, before wren's
    flow.user_waits = True  # (a decision the hold keeps open changes nothing either way)
    await asyncio.sleep(0.05)
    flow.user_waits = False
    await asyncio.sleep(0.05)
    assert not wren.done() and log == ["kit"] and len(holds) == 1
    wren.cancel()
    await asyncio.wait({wren}, timeout=2)
    assert wren.cancelled()
