"""One ClaudeRunner turn at a time on the real claude CLI against the scripted API.

Each test is one or two real CLI processes (a few seconds each on 2 cores)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreman.backends.claude import RESUME_FAILED
from foreman.backends.claude.toolset import builtin_tools, foreman_tools

from ..claude.conftest import RecordingTools
from .conftest import RealCLI
from .scripted_api import foreman, result_text, text, tool

pytestmark = pytest.mark.timeout(120)


async def test_worker_turn_tools_usage_and_session(claude_cli: RealCLI, make_runner, request_for, workdir: Path):
    api = claude_cli.api
    api.script("kit", [
        tool("Read", {"file_path": str(workdir / "app.py")}, say="Reading first."),
        tool("Edit", {"file_path": str(workdir / "app.py"), "old_string": "return 41", "new_string": "return 42"}),
        tool("Write", {"file_path": str(workdir / "test_app.py"),
                       "content": "import app\nassert app.answer() == 42\nprint('answer ok')\n"}),
        tool("Bash", {"command": "python3 test_app.py", "description": "run the test"}),
        foreman("update_task", status="review", note="answer is 42"),
        text("Done: answer() returns 42.", input_tokens=1000, output_tokens=50, cache_read=200),
    ])
    tools = RecordingTools("kit")
    runner = make_runner()
    result = await runner.run_turn(request_for("kit"), tools)

    assert result.ok, (result.error, api.problems)
    assert result.text == "Done: answer() returns 42."
    # the tools really ran in the working directory
    assert (workdir / "app.py").read_text() == "def answer():\n    return 42\n"
    assert (workdir / "test_app.py").exists()
    requests = api.of("kit")
    assert len(requests) == 6 and api.problems == []
    results = [result_text(b) for r in requests[1:] for b in r.tool_results()]
    assert "answer ok" in results[3]
    assert "update_task done" in results[4]  # the Foreman tool's answer reached the model
    # every call went through the Foreman's gate once (Read through the hook, the rest through can_use_tool)
    assert [name for name, _ in tools.permits] == ["Read", "Edit", "Write", "Bash"]
    assert tools.calls == [("update_task", {"status": "review", "note": "answer is 42"})]
    # the worker's exact tool list, MCP tools presented directly (no ToolSearch)
    expected = set(builtin_tools(lead=False)) | set(foreman_tools(lead=False))
    assert all(set(r.tool_names) == expected for r in requests), requests[0].tool_names
    assert "You are Kit, a worker" in requests[0].system_text
    # what the CLI reported: the session, usage and cost of the turn
    assert result.session_id == requests[0].headers["x-claude-code-session-id"]
    assert result.output_tokens is not None and result.output_tokens >= 50
    assert result.input_tokens is not None and result.input_tokens >= 1000
    assert result.cache_read_tokens == 200
    assert result.model == "claude-sonnet-4-5"
    assert result.cost_usd is not None and result.cost_usd > 0
    assert all(r.body.get("stream") is True and r.query == {"beta": ["true"]} for r in requests)
    assert runner.cli_version() == claude_cli.version


async def test_lead_tool_list_and_refusals(claude_cli: RealCLI, make_runner, request_for, workdir: Path):
    """The lead's exact list; tools outside it are refused without asking anyone; a resumed turn
    continues the real CLI's session."""
    api = claude_cli.api
    api.script("marlow", [
        tool("Workflow", {"script": "x"}),
        tool("ScheduleWakeup", {"delaySeconds": 60, "prompt": "wake up"}),
        tool("Edit", {"file_path": str(workdir / "app.py"), "old_string": "41", "new_string": "0"}),
        foreman("write_memory", note="plan", text="Plan: one task."),
        foreman("create_task", title="Fix answer", description="make it 42", deps=[]),
        text("Planned."),
    ], [
        foreman("list_tasks"),
        text("Still planned."),
    ])
    tools = RecordingTools("marlow")
    runner = make_runner()
    first = await runner.run_turn(request_for("marlow"), tools)
    assert first.ok, (first.error, api.problems)
    requests = api.of("marlow", turn=0)
    expected = set(builtin_tools(lead=True)) | set(foreman_tools(lead=True))
    assert set(requests[0].tool_names) == expected
    refused = [b for r in requests[1:4] for b in r.tool_results()]
    assert all(b.get("is_error") for b in refused), refused
    for block, name in zip(refused, ["Workflow", "ScheduleWakeup", "Edit"], strict=True):
        assert name in result_text(block)
    assert (workdir / "app.py").read_text() == "def answer():\n    return 41\n"  # the lead never edits
    assert tools.permits == []  # nothing outside the set was put to the policy (or the user)
    assert [name for name, _ in tools.calls] == ["write_memory", "create_task"]

    second = await runner.run_turn(request_for("marlow", prompt="Check the plan.", session_id=first.session_id),
                                   tools)
    assert second.ok, second.error
    assert second.session_id == first.session_id
    resumed = api.of("marlow", turn=1)[0]
    history = json.dumps(resumed.messages)
    assert "Plan: one task." in history and "Check the plan." in history  # the real session was resumed
    assert [name for name, _ in tools.calls][-1] == "list_tasks"


async def test_an_unknown_session_is_a_resume_failure_whichever_the_sdk_sees_first(
        claude_cli: RealCLI, make_runner, request_for) -> None:
    """The real CLI answers an unknown --resume id before the SDK's handshake: an error result on
    stdout, the same line on stderr, exit 1. When it has exited before the SDK writes, the SDK
    raises 'Cannot write to terminated process' instead of reading the result (seen with the fake
    CLI in a loaded suite run); either way the turn is a resume failure, which the conductor
    answers with a fresh session. Which ordering a run takes is timing: here the result was read
    first in each of 15 runs without the stderr rule, so that rule's own case is the unit test
    tests/claude/test_turns.py::test_resume_failure_reads_the_clis_stderr."""
    runner = make_runner()
    for n in range(3):
        session = f"00000000-0000-4000-8000-00000000000{n}"
        result = await runner.run_turn(request_for("kit", session_id=session), RecordingTools("kit"))
        assert not result.ok and result.error.startswith(f"{RESUME_FAILED} {session}: "), result.error
        assert f"No conversation found with session ID: {session}" in result.error
    assert claude_cli.api.of("kit") == []  # the CLI never reached the API
