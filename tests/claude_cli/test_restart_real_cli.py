"""``foreman start --backend claude`` on the real CLI, SIGKILLed in the middle of the lead's plan:
the CLI dies with it, and the restarted daemon resumes the real CLI's session (its session file
under CLAUDE_CONFIG_DIR) with the plan job, which then completes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psutil
import pytest

from ..claude_e2e.harness import DaemonProcess, make_repo, wait_for
from .conftest import RealCLI, running
from .scripted_api import foreman, text, tool

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


def cli_pids(claude_cli: RealCLI) -> list[int]:
    """Live real-CLI processes of this test (their environment names the test's API)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("ANTHROPIC_BASE_URL") == claude_cli.env["ANTHROPIC_BASE_URL"] and \
                    proc.exe() == str(claude_cli.cli) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except psutil.Error:
            pass
    return found


async def test_sigkill_during_a_plan_resumes_the_real_session(tmp_path: Path, claude_cli: RealCLI) -> None:
    api = claude_cli.api
    api.script("marlow", [
        foreman("write_memory", note="plan", text="Plan: one task for kit."),
        text("still thinking", hold=300),  # the daemon is killed while this answer streams
    ], [
        foreman("create_task", title="Add greet", description="greet.py", assignee="kit"),
        text("Planned after the restart."),
    ])
    api.script("kit", [text("(not reached)")])
    repo = make_repo(tmp_path)
    daemon = DaemonProcess(tmp_path, claude_cli, repo, "--workers", "kit")
    c = await daemon.start(60)
    try:
        await c.ok({"type": "goal.submit", "text": "greet", "repo": "proj"})
        await asyncio.to_thread(api.wait, lambda: len(api.of("marlow", turn=0)) == 2, 90, "the stalled answer")
        before = cli_pids(claude_cli)
        assert len(before) == 1
        session = api.of("marlow", turn=0)[0].headers["x-claude-code-session-id"]
        await c.close()
        daemon.kill()
        await wait_for(lambda: not cli_pids(claude_cli), 15, "the CLI gone with the daemon")

        c = await daemon.start(60)
        await wait_for(lambda: any(t["title"] == "Add greet" for t in c.tasks.values()), 90, "the plan resumed")
        resumed = api.of("marlow", turn=1)
        assert resumed, [(r.agent, r.turn, r.step) for r in api.requests]
        assert resumed[0].headers["x-claude-code-session-id"] == session  # the same real session, resumed
        history = json.dumps(resumed[0].messages)
        assert "Plan: one task for kit." in history  # what the killed turn did is in the resumed history
        assert "New goal" in history
        assert api.problems == [] or all(p.startswith("kit:") for p in api.problems), api.problems
    finally:
        await c.close()
        await daemon.stop()


async def test_sigkill_during_a_command_leaves_no_orphan_after_restart(tmp_path: Path, claude_cli: RealCLI) -> None:
    api = claude_cli.api
    api.script("kit", [
        foreman("report_status", activity="starting"),
        tool("Write", {"file_path": "slow_job.py", "content": "import time\ntime.sleep(120)\n"}),
        tool("Bash", {"command": "python3 slow_job.py", "description": "a long job"}),
        text("(never)"),
    ], *[[foreman("update_task", status="blocked", note="resumed"), text("Blocked.")]] * 3)
    api.script("marlow", [foreman("create_task", title="Long work", description="run the job", assignee="kit"),
                          text("Planned.")], *[[text("Nothing to do.")]] * 3)
    repo = make_repo(tmp_path)
    daemon = DaemonProcess(tmp_path, claude_cli, repo, "--workers", "kit", "--no-lead-review")
    c = await daemon.start(60)

    def jobs() -> list[psutil.Process]:
        return running("slow_job.py")

    try:
        await c.ok({"type": "goal.submit", "text": "long work", "repo": "proj"})
        launched = await wait_for(jobs, 90, "the long command running")
        await c.close()
        daemon.kill()
        await wait_for(lambda: not cli_pids(claude_cli), 15, "the CLI gone with the daemon")
        c = await daemon.start(60)
        await wait_for(lambda: any(t["status"] == "blocked" for t in c.tasks.values()), 90, "the resumed turn")
        left = [p for p in launched if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        for proc in left:
            proc.kill()
        assert left == [], "a command of the killed CLI outlived the restart"
    finally:
        for proc in jobs():
            proc.kill()
        await c.close()
        await daemon.stop()
