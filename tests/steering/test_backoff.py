"""The scheduler's self-healing retry: pure Backoff rules, and the conductor on a fake clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from foreman.core.backoff import Backoff
from foreman.repos.worktrees import worktree_path

from .harness import Rig, wait_for


def test_delays_double_from_two_seconds_up_to_a_minute() -> None:
    b = Backoff()
    now, delays = 1000.0, []
    for _ in range(8):
        at = b.failed("t1", now)
        delays.append(at - now)
        assert not b.ready("t1", at - 0.001) and b.ready("t1", at)
        now = at
    assert delays == [2, 4, 8, 16, 32, 60, 60, 60]
    assert b.delay("t1") == 60


def test_keys_are_independent_and_success_forgets() -> None:
    b = Backoff()
    assert b.ready("a", 0) and b.next_due() is None and b.delay("a") == 0
    b.failed("a", 100.0)
    b.failed("a", 102.0)  # a: 4 s, due 106
    b.failed("b", 101.0)  # b: 2 s, due 103
    assert b.next_due() == 103.0
    assert not b.ready("a", 105.9) and b.ready("b", 103.0)
    b.succeeded("b")
    assert b.next_due() == 106.0 and b.ready("b", 0)
    b.succeeded("a")
    assert b.next_due() is None
    assert b.failed("a", 200.0) == 202.0  # starts over after a success


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=20))
def test_delay_is_bounded_and_monotonic(gaps: list[float]) -> None:
    b, now, last = Backoff(), 0.0, 0.0
    for gap in gaps:
        now += gap
        at = b.failed("k", now)
        delay = b.delay("k")
        assert at == now + delay
        assert 2.0 <= delay <= 60.0 and delay >= last
        last = delay


class FakeClock:
    """Time that moves only when the test says; sleepers wake when their deadline passes."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start
        self.requested: list[float] = []
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def __call__(self) -> float:
        return self.t

    async def sleep(self, delay: float) -> None:
        self.requested.append(delay)
        fut = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.t + delay, fut))
        await fut

    def sleeping(self) -> bool:
        """True while someone waits on this clock (advancing before that would be lost on it)."""
        return any(not fut.done() for _, fut in self._sleepers)

    def advance(self, seconds: float) -> None:
        self.t += seconds
        for deadline, fut in self._sleepers:
            if deadline <= self.t and not fut.done():
                fut.set_result(None)
        self._sleepers = [(d, f) for d, f in self._sleepers if not f.done()]


async def test_a_task_whose_start_fails_is_retried_with_backoff_on_its_own(tmp_path: Path) -> None:
    clock = FakeClock()
    rig = Rig(tmp_path, workers=["kit"])
    try:
        await rig.start(clock=clock, sleep=clock.sleep)
        t0 = clock()
        # a lock on the task's branch ref, as another git process holds it while it writes: git refuses
        # to make the branch until the lock goes (a cause that passes: retried, not blocked)
        blocker = rig.repo / ".git" / "refs" / "heads" / "agentcraft" / "kit" / "t1-blocked-by-a-lock.lock"
        blocker.parent.mkdir(parents=True, exist_ok=True)
        blocker.write_text("")
        t1 = rig.task("Blocked by a lock", assignee="kit")

        def failures() -> list[float]:
            return [f.at - t0 for f in rig.world.feed if f.task == t1 and "could not start" in f.text]

        await wait_for(lambda: len(failures()) == 1, what="the first failed start")
        expected = [0.0]
        for delay in (2, 4, 8, 16, 32, 60, 60):
            await wait_for(clock.sleeping, what="the scheduler waiting out its backoff")
            await asyncio.sleep(0.1)
            assert len(failures()) == len(expected), "retried before its time"
            clock.advance(delay - 0.5)
            await asyncio.sleep(0.1)
            assert len(failures()) == len(expected), "retried before its time"
            clock.advance(0.5)
            expected.append(expected[-1] + delay)
            await wait_for(lambda: len(failures()) == len(expected), what=f"the retry after {delay} s")
        assert failures() == expected
        assert rig.world.tasks[t1].status == "todo" and rig.world.tasks[t1].assignee == "kit"
        assert "git worktree add" in next(f.text for f in rig.world.feed if f.task == t1 and "could not start" in f.text)
        assert 60 in clock.requested and max(clock.requested) <= 60

        blocker.unlink()
        await wait_for(clock.sleeping, what="the scheduler waiting out its backoff")  # (flaky under load without)
        clock.advance(60)
        turn = await rig.turn("kit")
        assert turn.req.task == t1 and rig.world.tasks[t1].status == "doing"
        assert rig.d.backend.backoff.next_due() is None
    finally:
        await rig.stop()


async def test_a_start_that_can_never_succeed_is_blocked_at_once_naming_the_holder_and_the_fix(tmp_path: Path) -> None:
    """Issue 37 item 7: a folder that is not the task's worktree holds its path (or its branch is
    checked out elsewhere): retrying cannot help, so the task is blocked on the first try (it used
    to be retried with backoff for about three minutes), and /task retry starts it once fixed."""
    clock = FakeClock()
    rig = Rig(tmp_path, workers=["kit"])
    try:
        await rig.start(clock=clock, sleep=clock.sleep)
        blocker = worktree_path(rig.settings.profile_dir, "proj", "kit", "t1")
        blocker.parent.mkdir(parents=True, exist_ok=True)
        blocker.write_text("a file where the worktree should go\n")
        t1 = rig.task("Blocked by a file", assignee="kit")
        await rig.wait_status(t1, "blocked")
        reason = rig.world.tasks[t1].blocked_reason or ""
        assert str(blocker) in reason and "move or delete it" in reason and reason.startswith("could not start:")
        assert not [f for f in rig.world.feed if f.task == t1 and "retrying" in f.text]
        assert clock.requested == [] or max(clock.requested) < 2  # no backoff was waited out
        blocker.unlink()
        await rig.c.ok({"type": "task.retry", "task": t1})
        turn = await rig.turn("kit")
        assert turn.req.task == t1 and rig.world.tasks[t1].status == "doing"
    finally:
        await rig.stop()
