"""Pure parts of the claude backend: world mapping, permission gate, auth status, preflight."""

from __future__ import annotations

import asyncio
import os
import shlex
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from foreman.backends.claude import ClaudeRunner
from foreman.backends.claude.auth import MISSING_HINT, auth_status
from foreman.backends.claude.mapping import activity_for, is_test_command
from foreman.backends.claude.permissions import (
    LEAD_EDIT_REFUSAL,
    NOT_IN_SET_REFUSAL,
    SUBAGENT_REFUSAL,
    PermissionGate,
    SandboxedBash,
)
from foreman.errors import BackendError, PolicyError
from foreman.sandbox import Sandbox

from .conftest import RecordingTools


@pytest.mark.parametrize("command", [
    "pytest", "pytest -q tests/test_app.py", "python -m pytest -x", "python3 -m unittest discover",
    "cd pkg && pytest -q", "uv run pytest", "poetry run python -m pytest", "npm test", "npm run test:unit",
    "yarn test", "pnpm test", "cargo test --all", "go test ./...", "make test", "make -j4 check",
    "PYTHONPATH=src pytest", "timeout 60 pytest -q", "tox -e py311", "npx jest --ci", "bundle exec rspec",
    "dotnet test", "mvn -q test", "./gradlew test", "git stash && pytest; git stash pop",
    "python tests/test_x.py",
])
def test_test_commands_are_recognised(command):
    assert is_test_command(command)


@pytest.mark.parametrize("command", [
    "ls -la", "git status", "python app.py", "npm install", "cargo build", "go build ./...", "make",
    "echo pytest", "cat pytest.ini", "grep -r 'def test' .", "pip install pytest", "uv sync",
    "npm run build", "make install", "'unbalanced",
])
def test_other_commands_are_not_tests(command):
    assert not is_test_command(command)


def test_activity_mapping():
    assert activity_for("Read", {"file_path": "a.py"}) == ("reading", "Read a.py")
    assert activity_for("Grep", {"pattern": "TODO"}) == ("reading", "Grep TODO")
    assert activity_for("Glob", {"pattern": "**/*.py"})[0] == "reading"
    assert activity_for("Write", {"file_path": "b.py", "content": "x"}) == ("editing", "Write b.py")
    assert activity_for("MultiEdit", {"file_path": "b.py"})[0] == "editing"
    assert activity_for("Bash", {"command": "go test ./..."}) == ("testing", "go test ./...")
    assert activity_for("Bash", {"command": "ls"}) == ("running", "ls")
    assert activity_for("mcp__agentcraft__ask_user", {"question": "Why?"}) == ("waiting_user", "asking: Why?")
    assert activity_for("mcp__agentcraft__send_message", {"to": "lead", "text": "hi"}) is None
    assert activity_for("WebFetch", {"url": "https://x"}) is None


async def test_gate_asks_the_policy_once_per_tool_use():
    tools = RecordingTools()
    gate = PermissionGate(tools, lead=False)
    hook = await gate.pre_tool_hook({"tool_name": "Read", "tool_input": {"file_path": "a"}}, "toolu_1", None)
    assert hook["hookSpecificOutput"]["permissionDecision"] == "allow"
    again = await gate.can_use_tool("Read", {"file_path": "a"}, SimpleNamespace(tool_use_id="toolu_1"))
    assert again.behavior == "allow"
    assert tools.permits == [("Read", {"file_path": "a"})]


async def test_gate_hands_back_allowed_commands_wrapped_once_and_nothing_else(tmp_path):
    bash = SandboxedBash(Sandbox("/usr/bin/bwrap"), tmp_path, {"HOME": "/home/u", "PATH": "/usr/bin:/bin"})
    gate = PermissionGate(RecordingTools(), lead=False, bash=bash)
    hook = await gate.pre_tool_hook({"tool_name": "Bash", "tool_input": {"command": "ls -l", "timeout": 5}}, "t1", None)
    out = hook["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow"
    words = shlex.split(out["updatedInput"]["command"])
    assert words[0] == "/usr/bin/bwrap" and words[-3:-1] == ["/usr/bin/bash", "-c"] and words[-1] == "ls -l"
    assert "--unshare-net" in words and out["updatedInput"]["timeout"] == 5  # other fields kept
    assert words[words.index("--bind") + 1] == str(tmp_path.resolve())  # the worktree writable
    # should the CLI also ask can_use_tool about the same call (with the wrapped input), no second wrap
    again = await gate.can_use_tool("Bash", out["updatedInput"], SimpleNamespace(tool_use_id="t1"))
    assert again.behavior == "allow" and again.updated_input is None
    # a command seen first through can_use_tool is wrapped there; one whose verdict needs the network keeps it
    direct = await gate.can_use_tool("Bash", {"command": "curl -s https://example.com"}, SimpleNamespace(tool_use_id="t2"))
    assert "--unshare-net" not in shlex.split(direct.updated_input["command"])[:-1]
    # reads are never rewritten; a refused command is not wrapped
    read = await gate.pre_tool_hook({"tool_name": "Read", "tool_input": {"file_path": "a"}}, "t3", None)
    assert "updatedInput" not in read["hookSpecificOutput"]
    refused = PermissionGate(RecordingTools(deny={"Bash": "not that"}), lead=False, bash=bash)
    no = (await refused.pre_tool_hook({"tool_name": "Bash", "tool_input": {"command": "ls"}}, "t4", None))
    assert no["hookSpecificOutput"]["permissionDecision"] == "deny" and "updatedInput" not in no["hookSpecificOutput"]
    # the sandbox off: allowed as written
    plain = await PermissionGate(RecordingTools(), lead=False).pre_tool_hook(
        {"tool_name": "Bash", "tool_input": {"command": "ls"}}, "t5", None)
    assert plain["hookSpecificOutput"]["permissionDecision"] == "allow" and "updatedInput" not in plain["hookSpecificOutput"]
    # the lead's checkout is read-only
    lead = PermissionGate(RecordingTools("marlow"), lead=True, bash=SandboxedBash(Sandbox("/usr/bin/bwrap"), tmp_path,
                                                                                  {}, writable=False))
    ro = shlex.split((await lead.pre_tool_hook({"tool_name": "Bash", "tool_input": {"command": "ls"}}, "t6", None))
                     ["hookSpecificOutput"]["updatedInput"]["command"])
    at = ro.index("--setenv")
    assert "--bind" not in ro and ro[at - 3:at] == ["--ro-bind", str(tmp_path.resolve()), str(tmp_path.resolve())]


async def test_a_command_failing_on_a_sandbox_rule_is_explained_to_the_model_the_log_and_the_feed(tmp_path):
    tools = RecordingTools()
    gate = PermissionGate(tools, lead=False, bash=SandboxedBash(Sandbox("/usr/bin/bwrap"), tmp_path, {"HOME": "/home/u"}))
    wrapped = (await gate.pre_tool_hook({"tool_name": "Bash", "tool_input": {"command": "touch /etc/x"}}, "t1", None)
               )["hookSpecificOutput"]["updatedInput"]
    failed = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": wrapped, "tool_use_id": "t1",
              "error": "Exit code 1\ntouch: cannot touch '/etc/x': Read-only file system"}
    out = await gate.bash_failure_hook(failed, "t1", None)
    assert out["hookSpecificOutput"]["additionalContext"].startswith("[os sandbox] read-only file system: outside the worktree")
    assert any("touch /etc/x" in line and "the OS sandbox blocked it: read-only file system" in line
               for _, line in tools.logs)
    # a failure that is not the sandbox's, and a command the gate did not wrap, say nothing
    assert await gate.bash_failure_hook({**failed, "error": "Exit code 2\nno such test"}, "t1", None) == {}
    assert await gate.bash_failure_hook({**failed, "tool_input": {"command": "touch /etc/x"}}, "t1", None) == {}


async def test_gate_shares_a_pending_decision():
    release = asyncio.Event()

    class Slow(RecordingTools):
        async def permit(self, tool, args):
            self.permits.append((tool, args))
            await release.wait()
            return False, "no"

    tools = Slow()
    gate = PermissionGate(tools, lead=False)
    first = asyncio.ensure_future(gate.decide("Bash", {"command": "x"}, "toolu_9"))
    second = asyncio.ensure_future(gate.decide("Bash", {"command": "x"}, "toolu_9"))
    await asyncio.sleep(0.01)
    release.set()
    assert await first == await second == (False, "no")
    assert len(tools.permits) == 1


async def test_gate_fixed_refusals_and_policy_errors():
    class Raising(RecordingTools):
        async def permit(self, tool, args):
            raise PolicyError("kit's turn is over")

    lead = PermissionGate(RecordingTools("lead"), lead=True)
    assert await lead.decide("Edit", {}, "a") == (False, LEAD_EDIT_REFUSAL)
    assert await lead.decide("Agent", {}, "b") == (False, SUBAGENT_REFUSAL)
    assert await lead.decide("mcp__agentcraft__create_task", {}, "c") == (True, "a Foreman tool")
    # a tool outside the explicit set is refused without asking the policy (or the user)
    for n, name in enumerate(["Workflow", "ScheduleWakeup", "Skill", "SomeToolOfANewerCLI", "mcp__other__x"]):
        allowed, reason = await lead.decide(name, {}, f"u{n}")
        assert not allowed and name in reason
    assert lead.tools.permits == []
    worker_gate = PermissionGate(RecordingTools(), lead=False)
    assert await worker_gate.decide("mcp__agentcraft__create_task", {}, "w") == (
        False, NOT_IN_SET_REFUSAL.format(tool="mcp__agentcraft__create_task"))
    worker = PermissionGate(Raising(), lead=False)
    assert await worker.decide("Edit", {}, "d") == (False, "kit's turn is over")
    deny = await worker.can_use_tool("Bash", {"command": "ls"}, SimpleNamespace(tool_use_id="e"))
    assert (deny.behavior, deny.message) == ("deny", "kit's turn is over")


@pytest.mark.parametrize(("env", "login", "expected"), [
    ({"ANTHROPIC_API_KEY": "k"}, False, "api-key"),
    ({"ANTHROPIC_API_KEY": "k"}, True, "api-key"),
    ({"CLAUDE_CODE_USE_BEDROCK": "1"}, False, "bedrock"),
    ({"CLAUDE_CODE_USE_VERTEX": "true"}, False, "vertex"),
    ({"CLAUDE_CODE_USE_FOUNDRY": "1"}, False, "foundry"),
    ({"CLAUDE_CODE_USE_BEDROCK": "0"}, False, "missing"),
    ({"ANTHROPIC_API_KEY": " "}, True, "claude-login"),
    ({}, False, "missing"),
])
def test_auth_status(env, login, expected):
    auth, detail = auth_status(env, use_claude_login=login)
    assert auth == expected
    if expected == "missing":
        assert detail == MISSING_HINT


def _runner(tmp_path: Path, monkeypatch, cli: str | None, **env: str) -> ClaudeRunner:
    for var in ("ANTHROPIC_API_KEY", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"):
        monkeypatch.delenv(var, raising=False)
    return ClaudeRunner(cli_path=cli, use_claude_login=False, effort=None, max_budget_usd=None, env=env)


async def test_preflight_checks_cli_and_credentials(tmp_path, monkeypatch, fake):
    with pytest.raises(BackendError, match="no such file"):
        await _runner(tmp_path, monkeypatch, str(tmp_path / "nope"), ANTHROPIC_API_KEY="k").preflight()
    plain = tmp_path / "claude-plain"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(BackendError, match="not executable"):
        await _runner(tmp_path, monkeypatch, str(plain), ANTHROPIC_API_KEY="k").preflight()
    missing = _runner(tmp_path, monkeypatch, str(fake.cli))
    assert missing.status() == ("missing", MISSING_HINT)
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):
        await missing.preflight()
    good = _runner(tmp_path, monkeypatch, str(fake.cli), ANTHROPIC_API_KEY="k")
    await good.preflight()
    assert good.status() == ("api-key", "ANTHROPIC_API_KEY")
    await good.close()


async def test_preflight_finds_the_bundled_cli(tmp_path, monkeypatch):
    runner = _runner(tmp_path, monkeypatch, None, ANTHROPIC_API_KEY="k")
    await runner.preflight()
    wrapper = runner._wrapper
    assert wrapper is not None and os.access(wrapper, os.X_OK)
    assert "_bundled" in wrapper.read_text()
    await runner.close()
    assert not wrapper.exists()


def test_cli_version_from_the_stamp_or_the_cli(tmp_path):
    from foreman.backends.claude.cliproc import bundled_cli, cli_version

    bundled = bundled_cli()
    if bundled is not None:  # the wheel's stamp beside the binary ("2.1.332 (Claude Code)")
        stamp = (bundled.parent / "claude.version").read_text()
        assert cli_version(None) == stamp.split()[0]
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\necho '9.8.7 (Claude Code)'\n")
    script.chmod(0o755)
    assert cli_version(str(script)) == "9.8.7"
    script.write_text("#!/bin/sh\necho 'no version here'\n")
    assert cli_version(str(script)) is None
    assert cli_version(str(tmp_path / "missing")) is None


def test_spawned_ref_reads_the_wrappers_pidfile(tmp_path):
    import os

    from foreman.backends.claude.cliproc import server_info_pid, spawned_ref

    pidfile = tmp_path / "cli.pid"
    assert spawned_ref(pidfile) is None
    pidfile.write_text("garbage")
    assert spawned_ref(pidfile) is None
    pidfile.write_text(str(os.getpid()))
    ref = spawned_ref(pidfile)
    assert ref is not None and ref.pid == os.getpid()
    assert server_info_pid({"pid": 42, "commands": []}) == 42
    assert server_info_pid({"commands": []}) is None and server_info_pid(None) is None


def test_tool_sets_per_role():
    from foreman.backends.claude.toolset import DENIED_TOOLS, allowed_tools, builtin_tools, denied_tools

    assert builtin_tools(lead=True) == ["Read", "Grep", "Glob", "Bash"]
    assert builtin_tools(lead=False) == ["Read", "Grep", "Glob", "Bash", "Edit", "Write"]
    assert "mcp__agentcraft__create_task" in allowed_tools(lead=True)
    assert "mcp__agentcraft__create_task" not in allowed_tools(lead=False)
    for lead in (True, False):
        assert not set(denied_tools(lead=lead)) & allowed_tools(lead=lead)
        assert {"ScheduleWakeup", "Skill", "Workflow", "Agent", "Task", "WebFetch", "ToolSearch"} <= set(
            denied_tools(lead=lead))
    assert {"Edit", "Write"} <= set(denied_tools(lead=True))
    assert not set(DENIED_TOOLS) & set(builtin_tools(lead=False))


def test_doctor_names_the_claude_cli_version(tmp_path):
    import os
    import subprocess
    import sys

    from foreman.backends.claude.cliproc import cli_version

    env = {**os.environ, "ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path)}
    fake_cli = tmp_path / "claude"
    fake_cli.write_text("#!/bin/sh\necho '3.4.5 (Claude Code)'\n")
    fake_cli.chmod(0o755)
    found = cli_version(None)
    for extra, expected in (([], f"[ok] claude CLI {found}" if found else "claude CLI not found"),
                            (["--claude-cli", str(fake_cli)], "[ok] claude CLI 3.4.5")):
        out = subprocess.run([sys.executable, "-m", "foreman", "doctor", "--backend", "claude", "--home",
                              str(tmp_path / "home"), "--port", "0", *extra], env=env, capture_output=True,
                             text=True, timeout=60).stdout
        assert expected in out, out
