"""The claude backend's real runner on a Ray node: the real claude-agent-sdk drives the suite's
scripted fake ``claude`` CLI there (stream-json over the CLI's pipes on the node); its Write and
Bash go through the permission hook to the daemon's policy and back, its Foreman tool call
(``update_task``) is answered by the daemon, its commit comes back as the agent's branch, CI
runs on the node and the merge decision opens in the daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foreman.backends.claude import ClaudeRunner
from foreman.daemon import Daemon

from ..claude.conftest import FAST
from ..claude.fake_claude import FakeClaude
from ..conductor.scripted import ScriptedRig, done
from ..rig import git, wait_for
from .conftest import RAY, Nodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


class ClaudeKitRig(ScriptedRig):
    """Kit runs on a ClaudeRunner pointed at the fake CLI; the rest of the team is scripted."""

    def __init__(self, tmp: Path, runner: ClaudeRunner, **flags: Any) -> None:
        super().__init__(tmp, lambda req: (lambda r, t: done()), **{"lead_review": False, "ci": "true", **flags})
        self.kit = runner

    def make_daemon(self, **kw: Any) -> Daemon:
        from foreman.flow.conductor import ALL_WORKERS, LEAD, Conductor

        runners: dict[str, Any] = {n: self.runner for n in (LEAD, *ALL_WORKERS)}
        runners["kit"] = self.kit
        return Daemon(self.settings, backend=Conductor(self.settings, runners, backend_name="scripted"))


async def test_a_claude_turn_through_the_fake_cli_on_a_node(tmp_path: Path, ray_nodes: Nodes) -> None:
    fake = FakeClaude(tmp_path / "fake")
    fake.script({"real_tools": True, "turns": [[
        {"text": "Writing greet.py."},
        {"tool": "Write", "input": {"file_path": "greet.py", "content": "def greet():\n    return 'hi'\n"}},
        {"tool": "Bash", "input": {"command": "git add greet.py && git commit -q -m 'Add greet' && echo committed"}},
        {"mcp": "update_task", "args": {"status": "review"}},
        {"text": "greet() is in."}]]})
    runner = ClaudeRunner(env={"ANTHROPIC_API_KEY": "test-key", **fake.env}, cli_path=str(fake.cli),
                          use_claude_login=False, effort=None, max_budget_usd=None, **FAST)
    rig = ClaudeKitRig(tmp_path, runner, ray_address=ray_nodes.address, os_sandbox="off", **RAY)
    await rig.start()
    try:
        rig.task("Add greet", assignee="kit")
        try:
            await wait_for(lambda: rig.open_decision("t1") is not None, 150, "the merge decision")
        except AssertionError:
            raise AssertionError("no merge decision; feed:\n" + "\n".join(rig.c.feed())) from None
        ex = rig.backend.executor
        assert [(p["what"], p["agent"]) for p in ex.placements] == [("turn", "kit"), ("ci", "kit")]
        assert ex.placements[0]["node_id"] in ray_nodes.tmp
        # the CLI ran on the node, in the node's worktree (its own temporary folder), not here
        cwd = Path(fake.starts()[0]["cwd"])
        assert cwd.is_relative_to(ray_nodes.tmp[ex.placements[0]["node_id"]]), cwd
        # its Write and Foreman tool call (the SDK's can_use_tool) and its Bash (the PreToolUse hook): the
        # node's tools ask the daemon, whose policy allowed each
        decided = fake.events("permission")
        assert [(e["permission"], e["via"], e["behavior"]) for e in decided] == [
            ("Write", "can_use_tool", "allow"), ("Bash", "hook", "allow"),
            ("mcp__agentcraft__update_task", "can_use_tool", "allow")], decided
        wt = rig.worktree("kit", "t1")
        assert git(wt, "log", "-1", "--format=%s").strip() == "Add greet"
        assert git(wt, "show", "HEAD:greet.py") == "def greet():\n    return 'hi'\n"
        assert rig.world.tasks["t1"].status == "review"  # (update_task answered by the daemon)
        assert rig.world.agents["kit"].node and ex.placements[0]["node_id"][:8] in rig.world.agents["kit"].node
    finally:
        await rig.stop()
