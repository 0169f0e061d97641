"""Every tool the real CLI offers by default is classified: in a role's explicit set, or denied.

A newer CLI that adds a tool fails here until the tool is put in
:data:`foreman.backends.claude.toolset.DENIED_TOOLS` (or, deliberately, in a role's set)."""

from __future__ import annotations

import asyncio
import re
import subprocess

import pytest

from foreman.backends.claude.toolset import DENIED_TOOLS, allowed_tools, denied_tools

from .conftest import RealCLI

pytestmark = pytest.mark.timeout(120)

DEFERRED = re.compile(r"deferred tools are now available via ToolSearch.*?:\n((?:[A-Za-z0-9_]+\n)+)", re.S)


def run_print_mode(claude_cli: RealCLI, cwd, **env: str) -> subprocess.CompletedProcess[str]:
    """``claude -p`` with the CLI's default tools, as the SDK would start it (``sdk-py``)."""
    return subprocess.run([str(claude_cli.cli), "-p", "hello", "--output-format", "json", "--setting-sources", ""],
                          env={"PATH": "/usr/bin:/bin", **claude_cli.env, "CLAUDE_CODE_ENTRYPOINT": "sdk-py", **env},
                          cwd=cwd, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)


async def test_every_default_cli_tool_is_classified(claude_cli: RealCLI, tmp_path) -> None:
    direct = await asyncio.to_thread(run_print_mode, claude_cli, tmp_path, ENABLE_TOOL_SEARCH="false")
    deferred = await asyncio.to_thread(run_print_mode, claude_cli, tmp_path)
    assert direct.returncode == 0 and deferred.returncode == 0, (direct.stderr, deferred.stderr)
    first, second = [r for r in claude_cli.api.requests if r.is_messages][:2]
    offered = set(first.tool_names) | set(second.tool_names)
    found = DEFERRED.search(second.all_text())
    assert found, "the CLI no longer lists its deferred tools the way this test reads them"
    names = offered | set(found.group(1).split())
    print(f"claude CLI {claude_cli.version} offers by default: {sorted(names)}")
    assert {"Bash", "Read", "Edit", "Write", "ScheduleWakeup", "Skill", "Workflow"} <= names  # the test reads lists
    known = allowed_tools(lead=False) | set(DENIED_TOOLS)
    assert sorted(names - known) == [], f"classify these tools of claude CLI {claude_cli.version} in toolset.py"
    # whatever a role does not get is on its deny list
    for lead in (True, False):
        assert names - allowed_tools(lead=lead) <= set(denied_tools(lead=lead))


def test_the_guard_names_tools_outside_the_set() -> None:
    """The check every real-CLI test ends with (conftest): a tool outside a role's set is named."""
    from .conftest import tools_outside_the_set
    from .scripted_api import Recorded, ScriptedAPI

    def request(agent: str, *names: str) -> Recorded:
        return Recorded("POST", "/v1/messages", {}, {}, {"tools": [{"name": n} for n in names]}, agent=agent)

    api = ScriptedAPI()
    api.requests = [request("kit", "Read", "Edit", "mcp__agentcraft__update_task"),
                    request("marlow", "Read", "mcp__agentcraft__create_task"), request(None, "Skill")]
    assert tools_outside_the_set(api) == {}
    api.requests += [request("kit", "Read", "ScheduleWakeup", "mcp__agentcraft__create_task"),
                     request("marlow", "Edit", "Workflow")]
    assert tools_outside_the_set(api) == {"kit": ["ScheduleWakeup", "mcp__agentcraft__create_task"],
                                          "marlow": ["Edit", "Workflow"]}
