"""The whole daemon on the real claude CLI, offline: goal -> plan -> work -> CI -> review -> merge.

The daemon (``tests/claude_e2e/harness.Rig``: a real WebSocket client, real git) runs the claude
backend with the bundled CLI pointed at the scripted API. The lead plans two dependent tasks for
one worker; the worker edits with Write/Edit, runs the tests with Bash, meets a permission
question three times (Deny, Allow, Always allow), has every disguised push refused by the
policy, commits and asks for review; CI runs; the lead reviews and requests the merge; the user
merges; the dependent task follows the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from foreman.core.records import Session
from foreman.backends.claude.toolset import builtin_tools, foreman_tools

from ..claude_e2e.harness import Rig, git, wait_for
from .conftest import RealCLI, running
from .scripted_api import Recorded, Reply, foreman, result_text, text, tool

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

GREET = "def greet():\n    return 'hello'\n"
TEST_GREET = ("import unittest\nfrom greet import greet\n\n\nclass G(unittest.TestCase):\n"
              "    def test_greet(self):\n        self.assertEqual(greet(), 'hello')\n")
PUSHES = ["git push origin HEAD", "bash -c 'git push -f origin HEAD:main'", "git -c core.hooksPath=/dev/null push",
          "env GIT_TRACE=1 git push --all"]


def bash(command: str) -> Reply:
    return tool("Bash", {"command": command, "description": command[:40]})


def review(request: Recorded) -> Reply:
    """The lead's review: request the merge of the task its prompt names."""
    task = re.search(r"Review task (t\d+)", request.last_user_text())
    assert task, request.last_user_text()[:300]
    return foreman("request_merge", task=task.group(1), summary="small and tested")


def script(api, repo: Path) -> None:
    api.script("marlow", [
        tool("Read", {"file_path": str(repo / "proj.py")}, say="Reading the repository."),
        foreman("write_memory", note="plan", text="Plan: greet() first, then its test."),
        foreman("create_task", title="Add greet", description="greet.py with greet()", assignee="kit"),
        lambda r: foreman("create_task", title="Test greet", description="tests for greet()", assignee="kit",
                          deps=[re.search(r"\b(t\d+)\b", result_text(r.tool_results()[0])).group(1)]),
        text("Two tasks planned."),
    ], [review, text("Ready to merge.")], [review, text("Ready to merge.")])
    api.script("kit", [
        tool("Read", {"file_path": "proj.py"}, say="I will add greet.py."),
        tool("Write", {"file_path": "greet.py", "content": GREET}),
        bash("mkdir -p build && touch build/keep"),
        bash("rm -r build"),  # ask -> Deny
        bash("rm -r build"),  # ask -> Allow
        bash("mkdir -p build"),
        bash("rm -r build"),  # ask -> Always allow for this agent
        *[bash(p) for p in PUSHES],  # refused by the policy, never a question
        bash("python3 -m unittest -q"),
        bash("git add -A && git commit -q -m 'Add greet'"),
        foreman("update_task", status="review", note="greet added and tested"),
        text("greet is in, tested and committed."),
    ], [
        tool("Write", {"file_path": "tests/test_greet.py", "content": TEST_GREET}),
        tool("Edit", {"file_path": "greet.py", "old_string": "def greet():", "new_string": "def greet() -> str:"}),
        bash("mkdir -p build && rm -r build"),  # the grant holds: no question
        bash("python3 -m unittest -q"),
        bash("git add -A && git commit -q -m 'Test greet'"),
        foreman("update_task", status="review"),
        text("Tested."),
    ])


def worktree_path(request: Recorded) -> str:
    found = re.search(r"Primary working directory: (\S+)", request.all_text())
    return found.group(1) if found else ""


async def test_goal_to_merge_on_the_real_cli(tmp_path: Path, claude_cli: RealCLI, monkeypatch) -> None:
    api = claude_cli.api
    rig = Rig(tmp_path, claude_cli, monkeypatch, workers=["kit"])
    script(api, rig.repo)
    c = await rig.start()
    try:
        goal = (await c.ok({"type": "goal.submit", "text": "a greet function with tests", "repo": "proj"}))["result"]
        answered: list[str] = []
        for option in (1, 0, 2):  # Deny, Allow, Always allow for this agent
            dec = await wait_for(lambda: [d for d in c.open_decisions("permission", askedBy="kit")
                                          if d["id"] not in answered], 90, "a permission decision")
            assert "rm -r build" in dec[0]["prompt"]
            answered.append(dec[0]["id"])
            await c.answer(dec[0], option)
        first = await wait_for(lambda: c.open_decisions("merge"), 90, "the first merge decision")
        t1 = first[0]["task"]
        assert c.tasks[t1]["title"] == "Add greet"
        await c.answer(first[0], 0)  # Merge
        second = await wait_for(lambda: [d for d in c.open_decisions("merge") if d["task"] != t1], 120,
                                "the second merge decision")
        t2 = second[0]["task"]
        assert c.tasks[t2]["deps"] == [t1]
        await c.answer(second[0], 0)
        await wait_for(lambda: c.goals[goal]["status"] == "done", 60, "the goal done")

        assert api.problems == []
        # the real repository: both changes merged into main by the user
        assert git(rig.repo, "show", "main:greet.py") == GREET.replace("def greet():", "def greet() -> str:")
        assert "class G(" in git(rig.repo, "show", "main:tests/test_greet.py")
        assert git(rig.repo, "log", "-1", "--format=%an", "main").strip() == "User One"
        assert "Plan: greet() first" in rig.d.memory.read("shared/plan")
        assert f"CI passed on {t1}" in c.feed() and f"CI passed on {t2}" in c.feed()

        kit = api.of("kit", turn=0)
        answers = {r.step: r.tool_results() for r in kit}
        # Deny: refused and not run; Allow: ran; Always: ran and granted for later turns
        assert answers[4][0].get("is_error") and "denied" in result_text(answers[4][0])
        assert not answers[5][0].get("is_error") and not answers[7][0].get("is_error")
        assert rig.world.meta["grants"]["kit"] == ["Bash:rm -r"]
        # every push, however disguised, refused by the policy without a question
        pushes = [answers[8 + i][0] for i in range(len(PUSHES))]
        assert all(b.get("is_error") and "push" in result_text(b) for b in pushes), pushes
        assert not [d for d in c.decisions.values() if "push" in d["prompt"]]
        assert len([d for d in c.decisions.values() if d["kind"] == "permission"]) == 3

        # the tool lists offered, per role, on every request
        lead_set = set(builtin_tools(lead=True)) | set(foreman_tools(lead=True))
        worker_set = set(builtin_tools(lead=False)) | set(foreman_tools(lead=False))
        assert all(set(r.tool_names) == lead_set for r in api.of("marlow"))
        assert all(set(r.tool_names) == worker_set for r in api.of("kit"))
        # the worker ran in its worktree, the lead in the user's checkout
        assert worktree_path(kit[0]) == str(rig.worktree("kit", t1))
        assert worktree_path(api.of("marlow", turn=0)[0]) == str(rig.repo)
        # the sessions the CLI reported were recorded; costs came from the CLI's results
        sessions = rig.d.core.records(Session)
        assert sessions["marlow:g1"].session_id == api.of("marlow", turn=0)[0].headers["x-claude-code-session-id"]
        assert rig.world.meta["costs"]["goal"][goal] > 0
    finally:
        await rig.stop()


async def test_pause_mid_command_kills_the_tree_and_resume_continues_the_session(
        tmp_path: Path, claude_cli: RealCLI, monkeypatch) -> None:
    import asyncio
    import time

    import psutil

    api = claude_cli.api
    api.script("kit", [
        tool("Write", {"file_path": "notes.md", "content": "started\n"}),
        tool("Write", {"file_path": "slow_job.py", "content": "import time\ntime.sleep(300)\n"}),
        bash("python3 slow_job.py"),
        text("(never: paused)"),
    ], [
        foreman("update_task", status="blocked", note="paused work resumed"),
        text("Blocked until told."),
    ])
    rig = Rig(tmp_path, claude_cli, monkeypatch, workers=["kit"], lead_review=False)
    c = await rig.start()
    try:
        t1 = rig.task("Long work", assignee="kit")
        children = await wait_for(lambda: running("slow_job.py", tmp_path), 90, "the long command running")
        cli = rig.d.backend.runners["kit"].cli_process("kit")
        assert cli is not None
        started = time.monotonic()
        await c.ok({"type": "agent.pause", "agent": "kit"})
        await c.ok({"type": "agent.resume", "agent": "kit"})  # at once: the next turn waits for the clean-up
        await wait_for(lambda: c.tasks.get(t1, {}).get("status") == "blocked", 90, "the resumed turn")
        await asyncio.sleep(0)
        assert not [p for p in children if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert not psutil.pid_exists(cli.pid) or psutil.Process(cli.pid).status() == psutil.STATUS_ZOMBIE
        assert time.monotonic() - started < 60
        first, resumed = api.of("kit", turn=0), api.of("kit", turn=1)
        assert resumed[0].headers["x-claude-code-session-id"] == first[0].headers["x-claude-code-session-id"]
        assert "notes.md" in json.dumps(resumed[0].messages)  # the paused turn's work is in the resumed history
        assert (rig.worktree("kit", t1) / "notes.md").read_text() == "started\n"
    finally:
        await rig.stop()
