"""The real CLI under API errors, a huge message, and an abort in the middle of a stream."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from pathlib import Path

import psutil
import pytest

from ..claude.conftest import RecordingTools
from .conftest import FAST, RealCLI
from .scripted_api import error, text, tool

pytestmark = pytest.mark.timeout(120)


async def test_overload_is_retried_and_server_errors_fail_the_turn(claude_cli: RealCLI, make_runner, request_for):
    api = claude_cli.api
    api.script("kit", [error(429, "rate_limit_error", "Slow down", headers={"retry-after": "1"}),
                       error(529, "overloaded_error", "Overloaded"), text("Fine after a retry.")],
               [error(500, "api_error", "Internal server error")] * 3)
    runner = make_runner()
    started = time.monotonic()
    first = await runner.run_turn(request_for("kit"), RecordingTools())
    assert first.ok, first.error
    assert first.text == "Fine after a retry."
    retried = api.of("kit", turn=0)
    assert [r.reply for r in retried] == ["HTTP 429 rate_limit_error", "HTTP 529 overloaded_error",
                                          "text 'Fine after a retry.'"]
    assert retried[0].messages == retried[1].messages == retried[2].messages  # the same request again: retries

    second = await runner.run_turn(request_for("kit", prompt="Again."), RecordingTools())
    elapsed = time.monotonic() - started
    assert not second.ok and not second.aborted
    assert "500" in (second.error or ""), second.error
    assert len(api.of("kit", turn=1)) == 3  # CLAUDE_CODE_MAX_RETRIES=2: three tries, then a failed turn
    assert elapsed < 60, f"errors took {elapsed:.1f} s"


async def test_a_20_mib_message_does_not_end_the_session(claude_cli: RealCLI, make_runner, request_for):
    """One stdout line of the CLI over 20 MiB (the model's answer, then echoed in the result)."""
    huge = "x" * (20 * 1024 * 1024)
    api = claude_cli.api
    api.script("kit", [
        tool("Bash", {"command": "echo still here"}, say=huge),
        text("After the big one."),
    ])
    result = await make_runner().run_turn(request_for("kit"), RecordingTools())
    assert result.ok, result.error
    assert result.text == "After the big one."
    assert "still here" in str(api.of("kit")[1].tool_results())


def _session_members(sid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.pid != sid and psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE and \
                    os.getsid(proc.pid) == sid:
                found.append(proc)
    return found


async def test_abort_mid_stream_and_mid_command_kills_the_cli_tree(claude_cli: RealCLI, make_runner, request_for,
                                                                  workdir: Path, caplog):
    """Pause in the middle of a streamed answer, then in the middle of a Bash command: the real CLI
    and what it started are gone in bounded time, and the next turn starts after that."""
    caplog.set_level(logging.INFO, logger="foreman.backends.claude")
    api = claude_cli.api
    api.script("kit", [text("Thinking very slowly...", hold=60)],
               [tool("Bash", {"command": "python3 -c 'import time; time.sleep(300)'", "description": "a long job",
                          "timeout": 600000}), text("never")],
               [text("Back again.")])
    spawned = []
    runner = make_runner(on_spawn=lambda agent, ref: spawned.append(ref))
    bound = FAST["abort_grace"] + FAST["eof_grace"] + FAST["kill_grace"] + 5.0

    # 1. mid-stream: the API holds the answer open
    turn = asyncio.ensure_future(runner.run_turn(request_for("kit"), RecordingTools()))
    await asyncio.to_thread(api.wait, lambda: api.of("kit", turn=0), 60, "the first request")
    cli = spawned[0]
    assert psutil.Process(cli.pid).exe() == str(claude_cli.cli)  # the wrapper exec'd the real CLI, same pid
    assert os.getsid(cli.pid) == cli.pid  # in a session of its own
    started = time.monotonic()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert time.monotonic() - started < bound
    assert not psutil.pid_exists(cli.pid) or psutil.Process(cli.pid).status() == psutil.STATUS_ZOMBIE

    # 2. mid-command: a Bash child of the CLI is running
    turn = asyncio.ensure_future(runner.run_turn(request_for("kit", prompt="Wait."), RecordingTools()))
    cli = await asyncio.to_thread(lambda: api.wait(lambda: len(spawned) == 2 and spawned[1], 60, "the second CLI"))

    def sleeping() -> list[psutil.Process]:
        with contextlib.suppress(psutil.Error):
            tree = psutil.Process(cli.pid).children(recursive=True)
            return [p for p in tree if "time.sleep(300)" in " ".join(p.cmdline())]
        return []

    children = await asyncio.to_thread(lambda: api.wait(sleeping, 60, "the Bash command running"))
    # (the CLI starts Bash commands detached, in a session of their own: found as its descendants)
    started = time.monotonic()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert time.monotonic() - started < bound
    assert _session_members(cli.pid) == []
    assert not [p for p in children if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]

    # 3. the next turn runs normally
    result = await runner.run_turn(request_for("kit", prompt="Again."), RecordingTools())
    assert result.ok and result.text == "Back again."
    # the pid the wrapper reported is the pid the real CLI announces in its initialize answer
    announced = [r.getMessage() for r in caplog.records if "claude CLI pid" in r.getMessage()]
    assert len(announced) == 3 and all(f"pid {ref.pid}, announced {ref.pid} " in line
                                       for ref, line in zip(spawned, announced, strict=True)), announced
