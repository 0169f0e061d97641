"""Two workers on the real claude CLI in one goal, and the requested-changes path.

The daemon (``tests/claude_e2e/harness.Rig``) runs the claude backend with the bundled CLI
pointed at the scripted API. The lead plans two parallel tasks, one per worker; both workers edit
with Write/Edit and run the tests with Bash in their own worktrees at the same time. The lead's
review of Juniper's task requests the merge; its review of Kit's task requests changes
(``update_task`` status ``doing`` with a note), so the task goes back to Kit, whose next turn
resumes its real session with the note, fixes the code, and asks for review again; CI, the
lead's second review, ``request_merge``, the merge decision and the merge follow. Every agent
entity names the real CLI's version.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from foreman.backends.claude.toolset import builtin_tools, foreman_tools

from ..claude_e2e.harness import Rig, git, wait_for
from .conftest import RealCLI
from .scripted_api import Recorded, Reply, foreman, text, tool

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

GREET = "def greet():\n    return 'hello'\n"
FAREWELL = "def farewell():\n    return 'bye'\n"
FAREWELL_FIXED = "def farewell(who='you'):\n    return 'bye ' + who\n"
CHANGES = "let farewell take a name"


def unit_test(name: str, call: str, expected: str) -> str:
    return (f"import unittest\nfrom {name} import {name}\n\n\nclass T(unittest.TestCase):\n"
            f"    def test_{name}(self):\n        self.assertEqual({call}, {expected!r})\n")


def bash(command: str) -> Reply:
    return tool("Bash", {"command": command, "description": command[:40]})


def work(name: str, body: str, test: str) -> list[Reply]:
    """A worker's first turn: Read, Write the code and its test, Bash the tests, commit, review."""
    return [
        tool("Read", {"file_path": "proj.py"}, say=f"I will add {name}.py."),
        tool("Write", {"file_path": f"{name}.py", "content": body}),
        tool("Write", {"file_path": f"tests/test_{name}.py", "content": test}),
        bash("python3 -m unittest -q"),
        bash(f"git add -A && git commit -q -m 'Add {name}'"),
        foreman("update_task", status="review", note=f"{name} added and tested"),
        text(f"{name} is in, tested and committed."),
    ]


class Lead:
    """The lead's review replies: Kit's farewell gets one request for changes, the rest a merge request."""

    def __init__(self) -> None:
        self.reviewed: list[str] = []

    def review(self, request: Recorded) -> Reply:
        found = re.search(r"Review task (t\d+): (.+)", request.last_user_text())
        assert found, request.last_user_text()[:300]
        task, title = found.groups()
        self.reviewed.append(task)
        if title.startswith("Add farewell") and self.reviewed.count(task) == 1:
            return foreman("update_task", task=task, status="doing", note=CHANGES)
        return foreman("request_merge", task=task, summary="small and tested")


def script(api, lead: Lead) -> None:
    review = [lead.review, text("Reviewed.")]
    api.script("marlow", [
        foreman("write_memory", note="plan", text="Plan: greet() by Juniper, farewell() by Kit, in parallel."),
        foreman("create_task", title="Add greet", description="greet.py with greet() and a test", assignee="juniper"),
        foreman("create_task", title="Add farewell", description="farewell.py with farewell() and a test",
                assignee="kit"),
        text("Two tasks planned."),
    ], review, review, review)
    api.script("juniper", work("greet", GREET, unit_test("greet", "greet()", "hello")))
    api.script("kit", work("farewell", FAREWELL, unit_test("farewell", "farewell()", "bye")), [
        tool("Edit", {"file_path": "farewell.py", "old_string": FAREWELL, "new_string": FAREWELL_FIXED},
             say="Changes requested: farewell takes a name."),
        tool("Edit", {"file_path": "tests/test_farewell.py", "old_string": "farewell(), 'bye'",
                      "new_string": "farewell('Ann'), 'bye Ann'"}),
        bash("python3 -m unittest -q"),
        bash("git add -A && git commit -q -m 'farewell takes a name'"),
        foreman("update_task", status="review", note="farewell takes a name now"),
        text("Revised."),
    ])


async def test_two_workers_and_requested_changes_on_the_real_cli(tmp_path: Path, claude_cli: RealCLI,
                                                                  monkeypatch) -> None:
    api = claude_cli.api
    lead = Lead()
    script(api, lead)
    rig = Rig(tmp_path, claude_cli, monkeypatch, workers=["juniper", "kit"])
    c = await rig.start()
    try:
        # every agent names the real CLI it runs (the runner asks the bundled CLI for its version)
        versions = await wait_for(lambda: {n: a.get("cliVersion") for n, a in c.agents.items()}
                                  if all(a.get("cliVersion") for a in c.agents.values()) else None,
                                  60, "the CLI version on every agent")
        assert set(versions.values()) == {claude_cli.version} and {"marlow", "juniper", "kit"} <= set(versions), versions
        assert re.fullmatch(r"\d+\.\d+\.\d+", claude_cli.version)

        goal = (await c.ok({"type": "goal.submit", "text": "greet and farewell", "repo": "proj"}))["result"]
        tasks = await wait_for(lambda: {t["title"]: t["id"] for t in c.tasks.values()}
                               if len(c.tasks) == 2 else None, 90, "the plan's two tasks")
        greet, bye = tasks["Add greet"], tasks["Add farewell"]
        first = await wait_for(lambda: c.open_decisions("merge", task=greet), 120, "greet's merge decision")
        await c.answer(first[0], 0)  # Merge
        # the lead asked for changes on farewell: Kit revised it, and it comes back for a merge
        second = await wait_for(lambda: c.open_decisions("merge", task=bye), 150, "farewell's merge decision")
        await c.answer(second[0], 0)
        await wait_for(lambda: c.goals[goal]["status"] == "done", 60, "the goal done")

        assert api.problems == [], [r.last_user_text()[-600:] for r in api.unscripted]
        # both workers ran at the same time, each in its own worktree
        jun, kit = api.of("juniper", turn=0), api.of("kit", turn=0)
        assert jun[0].t < kit[-1].t and kit[0].t < jun[-1].t, "the two workers' turns overlapped"
        assert f"Primary working directory: {rig.worktree('juniper', greet)}" in jun[0].all_text() + jun[0].system_text
        assert f"Primary working directory: {rig.worktree('kit', bye)}" in kit[0].all_text() + kit[0].system_text
        # the tools ran for real: the tests passed in each worktree (Bash), both files committed
        for turn in (jun, kit):
            ran = {r.step: r.tool_results() for r in turn}
            assert not ran[4][0].get("is_error") and "OK" in json.dumps(ran[4][0]), ran[4]
            assert not ran[5][0].get("is_error"), ran[5]  # the worker's own commit
        # the review's verdicts: merge greet; changes on farewell, then merge
        assert lead.reviewed.count(bye) == 2 and lead.reviewed.count(greet) == 1, lead.reviewed
        assert any(f"{bye} goes back to kit" in json.dumps(r.tool_results()) for r in api.of("marlow"))
        # Kit's next turn resumed its real session, with the lead's note and its earlier work in it
        revised = api.of("kit", turn=1)
        assert revised[0].headers["x-claude-code-session-id"] == kit[0].headers["x-claude-code-session-id"]
        assert CHANGES in revised[0].last_user_text()
        assert "farewell added and tested" in json.dumps(revised[0].messages)  # the first turn's update_task
        assert not any(b.get("is_error") for r in revised for b in r.tool_results()), json.dumps(
            [r.tool_results() for r in revised], indent=1)
        # the real repository: both merged by the user, farewell as revised
        assert git(rig.repo, "show", "main:greet.py") == GREET
        assert git(rig.repo, "show", "main:farewell.py") == FAREWELL_FIXED
        assert "farewell('Ann')" in git(rig.repo, "show", "main:tests/test_farewell.py")
        assert git(rig.repo, "log", "-1", "--format=%an", "main").strip() == "User One"
        # the workers' own commits (git add -A in the CLI's sandbox), none made for them by the Foreman
        log = git(rig.repo, "log", "--format=%an: %s", "main").splitlines()
        assert {"AgentCraft Juniper: Add greet", "AgentCraft Kit: Add farewell",  # noqa
                "AgentCraft Kit: farewell takes a name"} <= set(log), (log, json.dumps([r.tool_results() for r in kit]))
        assert not [line for line in log if "left uncommitted" in line], log
        feed = c.feed()
        assert f"CI passed on {greet}" in feed and feed.count(f"CI passed on {bye}") >= 1
        assert len([d for d in c.decisions.values() if d["kind"] == "merge"]) == 2
        # the tool lists offered per role, on every request of every agent
        lead_set = set(builtin_tools(lead=True)) | set(foreman_tools(lead=True))
        worker_set = set(builtin_tools(lead=False)) | set(foreman_tools(lead=False))
        assert all(set(r.tool_names) == lead_set for r in api.of("marlow"))
        assert all(set(r.tool_names) == worker_set for r in api.of("juniper") + api.of("kit"))
    finally:
        await rig.stop()
