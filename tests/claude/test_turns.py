"""ClaudeRunner turns through the real claude-agent-sdk and the fake CLI (offline)."""

from __future__ import annotations

import json

import pytest

from foreman.backends.claude import RESUME_FAILED
from foreman.errors import PolicyError

from .conftest import RecordingTools, alive
from .fake_claude import opt

pytestmark = pytest.mark.timeout(60)

WORK_TURN = [
    {"text": "Looking at the code."},
    {"tool": "Read", "input": {"file_path": "src/app.py"}, "output": "print('hi')"},
    {"tool": "Edit", "input": {"file_path": "src/app.py", "old_string": "hi", "new_string": "hello"}},
    {"tool": "Bash", "input": {"command": "cd src && python -m pytest -q"}, "output": "1 passed"},
    {"tool": "Bash", "input": {"command": "git status --short"}},
    {"mcp": "update_task", "args": {"status": "review", "note": "done and tested"}},
    {"text": "All done: greeting changed and tested."},
]


async def test_scripted_turn_maps_tools_permissions_and_result(fake, make_runner, request_for, workdir):
    fake.script({"session_id": "sess-1", "cost": 0.42, "turns": [WORK_TURN]})
    runner = make_runner()
    tools = RecordingTools()
    req = request_for(model="sonnet", max_turns=12, env={"GIT_SAFETY": "on"})

    result = await runner.run_turn(req, tools)

    assert result.ok, result.error
    assert result.session_id == "sess-1"
    assert result.cost_usd == pytest.approx(0.42)
    assert result.text == "All done: greeting changed and tested."
    # every built-in tool call went to the policy exactly once; the Foreman tool went to call()
    assert [name for name, _ in tools.permits] == ["Read", "Edit", "Bash", "Bash"]
    assert tools.permits[2][1] == {"command": "cd src && python -m pytest -q"}
    assert tools.calls == [("update_task", {"status": "review", "note": "done and tested"})]
    assert [e["text"] for e in fake.events("mcp_result")] == ["update_task done"]
    # the read and the commands were gated by the PreToolUse hook (the real CLI would auto-allow a
    # read and a command it deems read-only), the rest by can_use_tool
    assert [(e["permission"], e["via"], e["behavior"]) for e in fake.events("permission")] == [
        ("Read", "hook", "allow"), ("Edit", "can_use_tool", "allow"), ("Bash", "hook", "allow"),
        ("Bash", "hook", "allow"), ("mcp__agentcraft__update_task", "can_use_tool", "allow")]
    # world mapping
    assert tools.activities == [("reading", "Read src/app.py"), ("editing", "Edit src/app.py"),
                                ("testing", "cd src && python -m pytest -q"), ("running", "git status --short")]
    assert ("text", "Looking at the code.") in tools.logs
    assert ("tool", "update_task: done and tested") not in tools.logs  # note is not the summary field
    assert any(kind == "tool" and text.startswith("update_task") for kind, text in tools.logs)


async def test_cli_options_isolation_and_own_session(fake, make_runner, request_for, workdir):
    fake.script({"turns": [[{"text": "ok"}]]})
    spawned = []
    runner = make_runner(effort="high", max_budget_usd=2.5, on_spawn=lambda agent, ref: spawned.append((agent, ref)))
    result = await runner.run_turn(request_for(model="opus", max_turns=7, system="Be a worker.",
                                               env={"GIT_CONFIG_NOSYSTEM": "1"}), RecordingTools())
    assert result.ok, result.error
    (start,) = fake.starts()
    argv = start["argv"]
    assert opt(argv, "--setting-sources") == ""  # no user/project/local settings
    assert opt(argv, "--model") == "opus"
    assert opt(argv, "--max-turns") == "7"
    assert opt(argv, "--effort") == "high"
    assert opt(argv, "--max-budget-usd") == "2.5"
    assert opt(argv, "--append-system-prompt") == "Be a worker."
    assert opt(argv, "--permission-prompt-tool") == "stdio"
    assert opt(argv, "--resume") is None
    assert opt(argv, "--strict-mcp-config") is True
    denied = set(str(opt(argv, "--disallowedTools")).split(","))
    assert {"Task", "Agent", "AskUserQuestion", "ScheduleWakeup", "Skill", "Workflow", "WebFetch"} <= denied
    assert opt(argv, "--tools") == "Read,Grep,Glob,Bash,Edit,Write"  # the worker's exact built-ins
    assert not denied & {"Read", "Grep", "Glob", "Bash", "Edit", "Write"}
    assert json.loads(str(opt(argv, "--mcp-config")))["mcpServers"]["agentcraft"]["type"] == "sdk"
    # the CLI runs in a session and process group of its own, led by the pid the SDK spawned
    assert start["sid"] == start["pid"] == start["pgid"]
    assert [(agent, ref.pid) for agent, ref in spawned] == [("kit", start["pid"])]
    assert start["cwd"] == str(workdir)
    assert start["env"]["GIT_CONFIG_NOSYSTEM"] == "1"
    assert start["env"]["ANTHROPIC_API_KEY"] == "<set>"
    assert alive([start["pid"]]) == []
    (init,) = fake.received("control_request", "initialize")
    (matcher,) = init["request"]["hooks"]["PreToolUse"]
    assert set(matcher["matcher"].split("|")) == {"Read", "Grep", "Glob", "LS", "NotebookRead", "Bash"}
    assert matcher["timeout"] >= 600  # a policy "ask" may wait for the user


async def test_permission_waits_for_a_slow_answer(fake, make_runner, request_for):
    import asyncio

    class Deliberating(RecordingTools):
        async def permit(self, tool, args):
            await asyncio.sleep(0.3)  # the user thinks it over
            return await super().permit(tool, args)

    fake.script({"turns": [[{"tool": "Edit", "input": {"file_path": "a.py", "old_string": "1", "new_string": "2"},
                             "output": "done"}, {"text": "ok"}]]})
    result = await make_runner().run_turn(request_for(), Deliberating())
    assert result.ok
    (perm,) = fake.events("permission")
    assert (perm["via"], perm["behavior"], perm["updatedInput"]) == (
        "can_use_tool", "allow", {"file_path": "a.py", "old_string": "1", "new_string": "2"})


async def test_tool_lists_differ_for_lead_and_worker(fake, make_runner, request_for):
    fake.script({"turns": [[{"text": "w"}]]}, {"turns": [[{"text": "l"}]]})
    runner = make_runner()
    assert (await runner.run_turn(request_for("kit"), RecordingTools("kit"))).ok
    assert (await runner.run_turn(request_for("lead"), RecordingTools("lead"))).ok
    listed = fake.events("mcp_tools")
    worker = {t["name"] for t in listed[0]["tools"]}
    lead = {t["name"] for t in listed[1]["tools"]}
    assert worker == {"send_message", "ask_user", "write_memory", "read_memory", "update_task", "report_status",
                      "list_tasks"}
    assert lead == worker | {"create_task", "request_merge"}
    schema = next(t for t in listed[1]["tools"] if t["name"] == "create_task")["inputSchema"]
    assert schema["required"] == ["title", "description"]
    lead_argv = fake.starts()[1]["argv"]
    assert {"Edit", "Write", "MultiEdit", "NotebookEdit"} <= set(str(opt(lead_argv, "--disallowedTools")).split(","))


async def test_resume_passes_session_id_and_costs_per_turn(fake, make_runner, request_for):
    fake.script({"session_id": "s-A", "cost": 0.25, "turns": [[{"text": "first"}]]},
                {"expect_resume": "s-A", "cost": 0.1, "turns": [[{"text": "second"}]]})
    runner = make_runner()
    first = await runner.run_turn(request_for(), RecordingTools())
    second = await runner.run_turn(request_for(session_id=first.session_id), RecordingTools())
    assert (first.ok, first.session_id, first.text) == (True, "s-A", "first")
    assert second.ok, second.error
    assert (second.session_id, second.text) == ("s-A", "second")
    # each CLI process counts its cost from zero: the resumed turn costs its own 0.1, not 0.1 - 0.25
    assert second.cost_usd == pytest.approx(0.1)
    assert opt(fake.starts()[1]["argv"], "--resume") == "s-A"


def test_turn_cost_takes_differences_within_one_process():
    from foreman.backends.claude import ClaudeRunner
    from foreman.procs import ProcRef

    runner = ClaudeRunner(cli_path=None, use_claude_login=False, effort=None, max_budget_usd=None, env={})
    one, two = ProcRef(10, 1.0), ProcRef(11, 2.0)
    assert runner.turn_cost("s", one, 0.3) == pytest.approx(0.3)
    assert runner.turn_cost("s", one, 0.5) == pytest.approx(0.2)
    assert runner.turn_cost("s", two, 0.05) == pytest.approx(0.05)  # a new process starts at zero
    assert runner.turn_cost("s", two, None) is None


async def test_unknown_session_is_reported_as_resume_failure(fake, make_runner, request_for):
    fake.script({"turns": [[{"text": "never"}]]})
    result = await make_runner().run_turn(request_for(session_id="gone-123"), RecordingTools())
    assert not result.ok
    assert result.error.startswith(f"{RESUME_FAILED} gone-123")
    assert "No conversation found with session ID: gone-123" in result.error


async def test_denied_permission_reaches_the_cli_as_deny(fake, make_runner, request_for):
    fake.script({"turns": [[{"tool": "Bash", "input": {"command": "curl http://example.com"}},
                            {"tool": "Read", "input": {"file_path": "/etc/shadow"}},
                            {"text": "I could not do it."}]]})
    tools = RecordingTools(deny={"Bash": "network access is not allowed", "Read": "outside the worktree"})
    result = await make_runner().run_turn(request_for(), tools)
    assert result.ok
    perms = fake.events("permission")
    assert [(p["permission"], p["behavior"], p["message"]) for p in perms] == [
        ("Bash", "deny", "network access is not allowed"), ("Read", "deny", "outside the worktree")]
    results = [r["data"] for r in fake.entries("out") if r["data"].get("type") == "user"]
    assert [c["content"][0]["is_error"] for c in (r["message"] for r in results)] == [True, True]


async def test_lead_cannot_edit_and_subagents_are_refused(fake, make_runner, request_for):
    fake.script({"turns": [[{"tool": "Edit", "input": {"file_path": "a.py", "old_string": "a", "new_string": "b"}},
                            {"tool": "Task", "input": {"description": "x", "prompt": "do it"}},
                            {"text": "ok"}]]})
    tools = RecordingTools("lead")
    result = await make_runner().run_turn(request_for("lead", job="plan"), tools)
    assert result.ok
    assert tools.permits == []  # fixed refusals never reach the policy
    messages = [p["message"] for p in fake.events("permission")]
    assert "the lead never edits files" in messages[0]
    assert "subagents are not available" in messages[1]


async def test_can_use_tool_path_when_hooks_are_not_applied(fake, make_runner, request_for):
    fake.script({"hooks": False, "auto_allow_reads": False,
                 "turns": [[{"tool": "Grep", "input": {"pattern": "TODO"}}, {"text": "ok"}]]})
    tools = RecordingTools(deny={"Grep": "no grepping"})
    result = await make_runner().run_turn(request_for(), tools)
    assert result.ok
    assert tools.permits == [("Grep", {"pattern": "TODO"})]
    assert [(p["via"], p["behavior"]) for p in fake.events("permission")] == [("can_use_tool", "deny")]


async def test_foreman_tool_errors_reach_the_model_as_tool_errors(fake, make_runner, request_for):
    fake.script({"turns": [[{"mcp": "update_task", "args": {"status": "review"}},
                            {"mcp": "send_message", "args": {"to": "lead"}},
                            {"text": "ok"}]]})
    tools = RecordingTools(fail={"update_task": PolicyError("t3 is not kit's task")})
    result = await make_runner().run_turn(request_for(), tools)
    assert result.ok
    first, second = fake.events("mcp_result")
    assert (first["is_error"], first["text"]) == (True, "t3 is not kit's task")
    assert second["is_error"] and "'text' is a required property" in second["text"]  # schema checked by the SDK
    assert [name for name, _ in tools.calls] == ["update_task"]


async def test_ask_user_shows_waiting_user(fake, make_runner, request_for):
    fake.script({"turns": [[{"mcp": "ask_user", "args": {"question": "Tabs or spaces?", "options": ["Tabs", "Spaces"]}},
                            {"text": "ok"}]]})
    tools = RecordingTools()
    assert (await make_runner().run_turn(request_for(), tools)).ok
    assert tools.activities == [("waiting_user", "asking: Tabs or spaces?")]
    assert tools.calls == [("ask_user", {"question": "Tabs or spaces?", "options": ["Tabs", "Spaces"]})]


async def test_api_error_result_fails_the_turn(fake, make_runner, request_for):
    fake.script({"turns": [[{"text": "thinking"}, {"api_error": {"status": 529, "message": "Overloaded"}}]]})
    result = await make_runner().run_turn(request_for(), RecordingTools())
    assert not result.ok
    assert "529" in result.error and "Overloaded" in result.error


async def test_api_error_then_exit_fails_the_turn(fake, make_runner, request_for):
    fake.script({"turns": [[{"api_error": {"status": 401, "message": "invalid x-api-key", "exit": 1}}]]})
    result = await make_runner().run_turn(request_for(), RecordingTools())
    assert not result.ok
    assert "401" in result.error


async def test_max_turns_fails_the_turn(fake, make_runner, request_for):
    fake.script({"turns": [[{"tool": "Bash", "input": {"command": "ls"}}] * 5]})
    tools = RecordingTools()
    result = await make_runner().run_turn(request_for(max_turns=2), tools)
    assert not result.ok
    assert "max turns" in result.error
    assert len(tools.permits) == 1  # the fake counts the prompt's own round trip too


async def test_crash_mid_turn_fails_without_hanging(fake, make_runner, request_for):
    fake.script({"pids_file": str(fake.pids_path),
                 "turns": [[{"text": "working"}, {"spawn": {"orphan": True}}, {"crash": 3}]]})
    tools = RecordingTools()
    result = await make_runner().run_turn(request_for(), tools)
    assert not result.ok
    assert "exited with code 3" in result.error
    assert ("text", "working") in tools.logs
    assert len(fake.pids()) == 2
    assert alive(fake.pids()) == []  # the orphan left in the CLI's session was swept


async def test_corrupt_output_fails_the_turn(fake, make_runner, request_for):
    fake.script({"turns": [[{"garbage": "{this is not json"}, {"hang": True}]]})
    result = await make_runner().run_turn(request_for(), RecordingTools())
    assert not result.ok
    assert "not JSON" in result.error


async def test_crash_at_start_fails_the_turn(fake, make_runner, request_for):
    fake.script({"crash_at_start": 5})
    result = await make_runner().run_turn(request_for(), RecordingTools())
    assert not result.ok
    assert result.error


async def test_three_agents_run_concurrently(fake, make_runner, request_for):
    import asyncio

    fake.script({"turns": [[{"sleep": 0.2}, {"text": "a"}]]}, repeat_last=True)
    runner = make_runner()
    results = await asyncio.gather(*(runner.run_turn(request_for(name), RecordingTools(name))
                                     for name in ("lead", "kit", "wren")))
    assert all(r.ok for r in results)
    assert len({r.session_id for r in results}) == 3
    assert len({s["pid"] for s in fake.starts()}) == 3


async def test_a_refused_log_line_does_not_end_the_turn(fake, make_runner, request_for):
    class Stale(RecordingTools):
        def log(self, text, *, kind="text"):
            raise PolicyError("kit's turn is over")

    fake.script({"session_id": "s-x", "turns": [[{"text": "hello"}, {"tool": "Bash", "input": {"command": "ls"}},
                                                 {"text": "bye"}]]})
    result = await make_runner().run_turn(request_for(), Stale())
    assert (result.ok, result.session_id, result.text) == (True, "s-x", "bye")


@pytest.mark.parametrize(("error", "stderr", "resumed", "expected"), [
    # the SDK lost the race with the CLI's exit: the stderr line says why
    ("the claude CLI failed: Cannot write to terminated process (exit code: 1)",
     ["No conversation found with session ID: s-9"], "s-9",
     "could not resume session s-9: No conversation found with session ID: s-9 (the claude CLI failed: "
     "Cannot write to terminated process (exit code: 1))"),
    # already worded from the result: unchanged
    ("could not resume session s-9: No conversation found", ["No conversation found"], "s-9",
     "could not resume session s-9: No conversation found"),
    # not resuming, or the CLI said something else: unchanged
    ("the claude CLI failed: x", ["No conversation found with session ID: s-9"], None, "the claude CLI failed: x"),
    ("the claude CLI failed: x", ["Invalid API key"], "s-9", "the claude CLI failed: x"),
])
def test_resume_failure_reads_the_clis_stderr(error, stderr, resumed, expected):
    from foreman.backends.claude.results import resume_failure

    assert resume_failure(error, stderr, resumed) == expected
