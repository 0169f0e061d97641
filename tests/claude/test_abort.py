"""Aborting a claude turn: interrupt, then the whole process tree dies; the next turn waits."""

from __future__ import annotations

import asyncio
import time

import pytest

from .conftest import FAST, RecordingTools, alive, fake_processes

pytestmark = pytest.mark.timeout(60)

STUBBORN = {
    "ignore_sigterm": True, "ignore_eof": True, "ignore_interrupt": True,
    "turns": [[{"text": "starting"},
               {"spawn": {"ignore_sigterm": True}},                   # a child (a grandchild of the daemon)
               {"spawn": {"ignore_sigterm": True, "orphan": True}},   # re-parented away, still in the session
               {"hang": True}]],
}


async def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


async def test_abort_kills_a_stubborn_cli_tree_and_the_next_turn_waits(fake, make_runner, request_for):
    fake.script({**STUBBORN, "pids_file": str(fake.pids_path)},
                {"check_dead": str(fake.pids_path), "turns": [[{"text": "fresh start"}]]})
    runner = make_runner()
    tools = RecordingTools()
    first = asyncio.ensure_future(runner.run_turn(request_for(), tools))
    await _wait_for(lambda: len(fake.events("spawned")) == 2)
    tree = fake.pids()
    assert len(tree) == 3 and alive(tree) == tree  # the CLI, its child, the orphan
    assert sorted(fake_processes(fake)) == sorted(tree)
    cli_ref = runner.cli_process("kit")
    assert cli_ref is not None and cli_ref.pid == tree[0]

    started = time.monotonic()
    first.cancel()
    # the agent's next turn is asked for at once; it must not start before the clean-up is over
    second = asyncio.ensure_future(runner.run_turn(request_for(), RecordingTools()))
    with pytest.raises(asyncio.CancelledError):
        await first
    elapsed = time.monotonic() - started
    assert alive(tree) == []
    assert fake_processes(fake) == []
    assert elapsed < FAST["abort_grace"] + FAST["eof_grace"] + 2 * FAST["kill_grace"] + 3.0
    assert fake.events("interrupt"), "the turn was interrupted first"

    result = await second
    assert result.ok, result.error
    (check,) = fake.events("check_dead")
    assert check["check_dead"] == tree
    assert check["alive"] == []  # when the second CLI started, nothing of the first was left
    assert fake.starts()[1]["t"] > fake.starts()[0]["t"]
    assert runner.cli_process("kit") is None


async def test_abort_of_a_cooperative_cli_ends_on_the_interrupt(fake, make_runner, request_for):
    fake.script({"session_id": "s-coop", "pids_file": str(fake.pids_path),
                 "turns": [[{"text": "working"}, {"hang": True}]]},
                {"expect_resume": "s-coop", "turns": [[{"text": "resumed"}]]})
    runner = make_runner(abort_grace=5.0, eof_grace=5.0, kill_grace=5.0)
    task = asyncio.ensure_future(runner.run_turn(request_for(), RecordingTools()))
    await _wait_for(lambda: any(r["data"].get("type") == "assistant" for r in fake.entries("out")))
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2.0  # no grace period was used up: interrupt, result, EOF, exit
    assert alive(fake.pids()) == []
    results = [r["data"] for r in fake.entries("out") if r["data"].get("type") == "result"]
    assert results[-1]["terminal_reason"] == "aborted_streaming"
    # the interrupted session resumes
    again = await runner.run_turn(request_for(session_id="s-coop"), RecordingTools())
    assert (again.ok, again.text) == (True, "resumed")


async def test_abort_while_waiting_for_a_permission_cancels_it(fake, make_runner, request_for):
    fake.script({"turns": [[{"tool": "Bash", "input": {"command": "rm -rf build"}}, {"text": "never"}]]})
    asked = asyncio.Event()

    class SlowTools(RecordingTools):
        async def permit(self, tool, args):
            asked.set()
            await asyncio.sleep(3600)  # the user never answers
            return True, ""

    runner = make_runner()
    task = asyncio.ensure_future(runner.run_turn(request_for(), SlowTools()))
    await asyncio.wait_for(asked.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fake.received("control_response", "success")  # handshake only; the permission got no answer
    cancels = [r["data"] for r in fake.entries("out") if r["data"].get("type") == "control_cancel_request"]
    assert len(cancels) == 1
    assert alive([s["pid"] for s in fake.starts()]) == []


async def test_abort_before_the_handshake_kills_the_spawned_cli(fake, make_runner, request_for):
    fake.script({"ignore_sigterm": True, "hang_at_start": True, "pids_file": str(fake.pids_path),
                 "spawn_at_start": [{"ignore_sigterm": True, "orphan": True}]})
    runner = make_runner()
    task = asyncio.ensure_future(runner.run_turn(request_for(), RecordingTools()))
    await _wait_for(lambda: bool(fake.events("hang_at_start")))
    tree = fake.pids()
    assert len(tree) == 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert alive(tree) == []


async def test_cancelled_twice_the_clean_up_goes_on_and_wait_clean_waits(fake, make_runner, request_for):
    fake.script({**STUBBORN, "pids_file": str(fake.pids_path)})
    runner = make_runner()
    task = asyncio.ensure_future(runner.run_turn(request_for(), RecordingTools()))
    await _wait_for(lambda: len(fake.events("spawned")) == 2)
    tree = fake.pids()
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()  # e.g. shutdown while a pause is cleaning up
    with pytest.raises(asyncio.CancelledError):
        await task
    assert alive(tree)  # the clean-up is still in its grace periods
    await asyncio.wait_for(runner.wait_clean("kit"), 10)
    assert alive(tree) == []


async def test_timeout_through_wait_for_cleans_up(fake, make_runner, request_for):
    fake.script({**STUBBORN, "pids_file": str(fake.pids_path)})
    runner = make_runner()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(runner.run_turn(request_for(), RecordingTools()), timeout=1.0)
    assert fake.pids()  # at least the CLI itself
    assert alive(fake.pids()) == []


DAEMON = """
import asyncio, sys
from pathlib import Path
from foreman.backends.claude import ClaudeRunner
from foreman.backends.turns import TurnRequest
from tests.claude.conftest import RecordingTools

async def main():
    runner = ClaudeRunner(cli_path=sys.argv[1], use_claude_login=False, effort=None, max_budget_usd=None,
                          env={"FAKE_CLAUDE_SCENARIO": sys.argv[2]})
    req = TurnRequest(turn_id="k:1", agent="kit", lead=False, job="work", prompt="go", system="s", cwd=Path(sys.argv[3]))
    await runner.run_turn(req, RecordingTools())

asyncio.run(main())
"""


async def test_the_cli_dies_with_the_daemon(fake, workdir):
    import os
    import signal
    import sys

    fake.script({"ignore_sigterm": True, "ignore_eof": True, "pids_file": str(fake.pids_path),
                 "turns": [[{"hang": True}]]})
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    daemon = await asyncio.create_subprocess_exec(sys.executable, "-c", DAEMON, str(fake.cli), str(fake.scenario_path),
                                                  str(workdir), cwd=root)
    try:
        await _wait_for(lambda: bool(fake.entries("out")), timeout=30)
        cli = fake.pids()
        assert alive(cli) == cli
    finally:
        daemon.send_signal(signal.SIGKILL)  # no clean-up code runs in the daemon
        await daemon.wait()
    await _wait_for(lambda: alive(cli) == [], timeout=5)  # PR_SET_PDEATHSIG in the session wrapper


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.04])
async def test_abort_at_any_early_moment_leaves_nothing(fake, make_runner, request_for, delay):
    fake.script({"ignore_sigterm": True, "hang_at_start": True, "pids_file": str(fake.pids_path),
                 "spawn_at_start": [{"ignore_sigterm": True, "orphan": True}]})
    runner = make_runner()
    task = asyncio.ensure_future(runner.run_turn(request_for(), RecordingTools()))
    await asyncio.sleep(delay)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await runner.wait_clean("kit")
    await asyncio.sleep(0.3)  # a CLI that was still starting would have spawned by now
    assert alive(fake.pids()) == []
    assert fake_processes(fake) == []  # nothing that inherited the scenario's environment either


async def test_a_turn_whose_set_up_fails_releases_the_agent_for_its_next_turn(fake, make_runner, request_for,
                                                                              monkeypatch):
    """An error while a turn is set up (before any CLI starts) reaches the caller, and the agent's
    next turn starts instead of waiting forever for a clean-up that never comes."""
    from foreman.backends.claude import runner as runner_module

    fake.script({"turns": [[{"text": "second"}]]})
    runner = make_runner()
    real = runner_module.ClaudeTurn

    def broken(*args, **kwargs):
        raise RuntimeError("set-up failed")

    monkeypatch.setattr(runner_module, "ClaudeTurn", broken)
    with pytest.raises(RuntimeError, match="set-up failed"):
        await runner.run_turn(request_for(), RecordingTools())
    monkeypatch.setattr(runner_module, "ClaudeTurn", real)
    await asyncio.wait_for(runner.wait_clean("kit"), 5)
    result = await asyncio.wait_for(runner.run_turn(request_for(), RecordingTools()), 30)
    assert result.ok and result.text == "second"
