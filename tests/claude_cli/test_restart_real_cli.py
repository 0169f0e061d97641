"""``foreman start --backend claude`` on the real CLI, SIGKILLed in the middle of the lead's plan,
of a worker's turn (during a command, and while its answer streams), of an open question and of
a review: the CLI dies with it, and the restarted daemon resumes each real CLI session (its
session file under CLAUDE_CONFIG_DIR) with its job kind; the resumed request carries the killed
turn's conversation. The CLI appends that file on a 100 ms timer, after it has run a call: a kill
inside the window leaves a session without the call, or none; an open question and its answer
still reach the agent's next request then (the file cut as such a kill leaves it)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import psutil
import pytest

from ..claude_e2e.harness import DaemonProcess, git, make_repo, wait_for
from .conftest import RealCLI, running
from .scripted_api import Recorded, foreman, text, tool

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


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
        # (the CLI appends its session file on a 100 ms timer: the killed turn's call is in it first)
        await wait_for(lambda: recorded_calls(claude_cli, session, "mcp__agentcraft__write_memory"), 15,
                       "the plan's first call in its CLI session file")
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
        return running("slow_job.py", tmp_path)

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


def review_of(request: Recorded) -> str:
    """The task a review turn is about (its prompt, or for a resumed turn the history's first prompt)."""
    found = re.search(r"Review task (t\d+)", request.all_text())
    assert found, request.all_text()[:300]
    return found.group(1)


def session_of(api, agent: str, turn: int) -> str:
    return api.of(agent, turn=turn)[0].headers["x-claude-code-session-id"]


def recorded_calls(claude_cli: RealCLI, session: str, tool_name: str) -> list[dict]:
    """The ``tool_name`` calls the CLI has appended to ``session``'s file so far (its JSONL under
    ``CLAUDE_CONFIG_DIR/projects/<cwd>/<session>.jsonl``, one assistant row per model reply)."""
    calls = []
    for path in (claude_cli.home / ".claude" / "projects").glob(f"*/{session}.jsonl"):
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a torn last line
            content = (row.get("message") or {}).get("content") if row.get("type") == "assistant" else None
            calls += [b for b in content or [] if isinstance(b, dict) and b.get("name") == tool_name]
    return calls


async def test_sigkill_during_work_question_and_review_resumes_each_real_session(
        tmp_path: Path, claude_cli: RealCLI) -> None:
    """Killed while Juniper's work turn streams and Kit's question waits for the user, then again
    during the lead's review: each resumes its real CLI session with its job kind (the resumed
    request carries the killed turn's conversation), and the goal ends with both tasks merged."""
    api = claude_cli.api
    merge = [lambda r: foreman("request_merge", task=review_of(r), summary="reviewed"), text("Ready to merge.")]
    api.script("marlow", [
        foreman("create_task", title="Add greet", description="greet.py", assignee="juniper"),
        foreman("create_task", title="Add farewell", description="farewell.py", assignee="kit"),
        text("Planned."),
    ], [
        tool("Read", {"file_path": "greet.py"}, say="Reviewing the diff."),
        text("still reviewing", hold=300),  # killed here (2)
    ], merge, merge)
    api.script("juniper", [
        tool("Write", {"file_path": "greet.py", "content": "def greet():\n    return 'greet'\n"}),
        tool("Bash", {"command": "git add -A && git commit -q -m 'Add greet'", "description": "commit"}),
        text("still working", hold=300),  # killed here (1)
    ], [foreman("update_task", status="review", note="committed before the restart"), text("In review.")])
    api.script("kit", [
        foreman("ask_user", question="Which word for farewell?", options=["Bye", "Farewell"]),  # open at (1), (2)
    ], [
        tool("Write", {"file_path": "farewell.py", "content": "def farewell():\n    return 'Farewell'\n"}),
        tool("Bash", {"command": "git add -A && git commit -q -m 'Add farewell'", "description": "commit"}),
        foreman("update_task", status="review"),
        text("Done, with the user's word."),
    ])
    repo = make_repo(tmp_path)
    daemon = DaemonProcess(tmp_path, claude_cli, repo, "--workers", "juniper,kit")
    c = await daemon.start(60)
    try:
        # 1. killed during Juniper's work turn (committed, its next answer streaming) and Kit's open question
        goal = (await c.ok({"type": "goal.submit", "text": "greet and farewell", "repo": "proj"}))["result"]
        await asyncio.to_thread(api.wait, lambda: len(api.of("juniper", turn=0)) == 3, 120, "juniper's stalled answer")
        question = (await wait_for(lambda: c.open_decisions("question", askedBy="kit"), 90, "kit's question"))[0]
        # The CLI runs a call before its transcript has it: it appends to the session file on a
        # 100 ms timer (2.1.x: FLUSH_INTERVAL_MS), so a kill right after the question opens can
        # resume a session without the call (or, on a first reply, find no session at all). The
        # Foreman restates the question and the answer in the resumed prompt either way (asserted
        # below); the kill waits for the files so that the calls in the resumed histories are certain.
        await wait_for(lambda: recorded_calls(claude_cli, session_of(api, "juniper", 0), "Bash"), 15,
                       "juniper's commit in its CLI session file")
        await wait_for(lambda: recorded_calls(claude_cli, session_of(api, "kit", 0), "mcp__agentcraft__ask_user"),
                       15, "kit's question in its CLI session file")
        tasks = {t["title"]: t["id"] for t in c.tasks.values()}
        await c.close()
        daemon.kill()
        await wait_for(lambda: not cli_pids(claude_cli), 15, "the CLIs gone with the daemon")
        # the killed daemon fails Kit's open ask_user call; its dying CLI may ask the API once more
        dying = list(api.problems)
        assert set(dying) <= {"kit: no reply scripted for turn 0 step 1"}, dying

        # 2. Juniper's work resumes and goes to review; the question is still open; killed during the review
        c = await daemon.start(60)
        assert c.decisions[question["id"]]["status"] == "open"
        await asyncio.to_thread(api.wait, lambda: len(api.of("marlow", turn=1)) == 2, 120, "the review's stalled answer")
        assert c.decisions[question["id"]]["status"] == "open"
        await wait_for(lambda: recorded_calls(claude_cli, session_of(api, "marlow", 1), "Read"), 15,
                       "the review's first call in its CLI session file")
        # one CLI, the lead's: Kit's resumed turn waits for the answer before it starts one
        await wait_for(lambda: len(cli_pids(claude_cli)) == 1, 15, "only the lead's CLI")
        await c.close()
        daemon.kill()
        await wait_for(lambda: not cli_pids(claude_cli), 15, "the CLI gone with the daemon")

        # 3. the review resumes and ends in a merge decision; the question, open across two restarts,
        #    is answered and Kit's session resumes with the answer
        c = await daemon.start(60)
        greet = (await wait_for(lambda: c.open_decisions("merge", task=tasks["Add greet"]), 120,
                                "the resumed review's merge decision"))[0]
        await c.answer(c.decisions[question["id"]], 1)  # Farewell
        bye = (await wait_for(lambda: c.open_decisions("merge", task=tasks["Add farewell"]), 120,
                              "kit's merge decision"))[0]
        await c.answer(greet, 0)
        await c.answer(bye, 0)
        await wait_for(lambda: c.goals[goal]["status"] == "done", 60, "the goal done")
        assert [d["kind"] for d in c.decisions.values()].count("question") == 1
        assert [d["kind"] for d in c.decisions.values()].count("merge") == 2
    finally:
        await c.close()
        await daemon.stop()

    assert api.problems == dying, api.problems
    # work: the same real session, its killed turn's Write and commit in the resumed history
    assert session_of(api, "juniper", 1) == session_of(api, "juniper", 0)
    history = json.dumps(api.of("juniper", turn=1)[0].messages)
    assert "def greet()" in history and "git add -A && git commit -q -m 'Add greet'" in history
    assert "The Foreman restarted" in api.of("juniper", turn=1)[0].last_user_text()
    # review: the same real session (resumed twice over the restarts), the diff it read in the history
    assert session_of(api, "marlow", 2) == session_of(api, "marlow", 1) != session_of(api, "marlow", 0)
    history = json.dumps(api.of("marlow", turn=2)[0].messages)
    assert f"Review task {tasks['Add greet']}" in history and "Reviewing the diff." in history
    assert api.of("marlow", turn=2)[0].reply.startswith("mcp__agentcraft__request_merge")
    # question: the same real session, the question it asked in the history, the user's answer in its prompt
    assert session_of(api, "kit", 1) == session_of(api, "kit", 0)
    resumed = api.of("kit", turn=1)[0]
    asked = [b for m in resumed.messages if m["role"] == "assistant" and isinstance(m["content"], list)
             for b in m["content"] if b.get("name") == "mcp__agentcraft__ask_user"]
    assert len(asked) == 1 and asked[0]["input"]["question"] == "Which word for farewell?"  # the killed turn's call
    answered = [b for m in resumed.messages if m["role"] == "user" and isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result" and b.get("tool_use_id") == asked[0]["id"]]
    assert len(answered) == 1 and answered[0].get("is_error")  # the CLI closed the call it never got an answer to
    prompt = resumed.last_user_text()  # the question and its answer restated, whatever the CLI recorded
    assert '"Which word for farewell?"' in prompt and "The user answered: Farewell" in prompt, prompt
    # the repository: both merged, each committed by its worker
    assert git(repo, "show", "main:greet.py") == "def greet():\n    return 'greet'\n"
    assert git(repo, "show", "main:farewell.py") == "def farewell():\n    return 'Farewell'\n"
    log = git(repo, "log", "--format=%an: %s", "main").splitlines()
    assert {"AgentCraft Juniper: Add greet", "AgentCraft Kit: Add farewell"} <= set(log), log


def cut_session_file(claude_cli: RealCLI, session: str, lost: str) -> None:
    """Leave ``session``'s file as a kill inside the CLI's 100 ms append window can: without
    the model's reply (``lost == "call"``: the prompt rows only) or not created at all (``"file"``)."""
    [path] = (claude_cli.home / ".claude" / "projects").glob(f"*/{session}.jsonl")
    if lost == "file":
        path.unlink()
        return
    rows = path.read_text().splitlines()
    first = next(i for i, line in enumerate(rows) if json.loads(line).get("type") == "assistant")
    path.write_text("".join(line + "\n" for line in rows[:first]))


@pytest.mark.parametrize("lost", ["call", "file"])
async def test_a_question_the_cli_never_recorded_still_reaches_the_session_with_its_answer(
        tmp_path: Path, claude_cli: RealCLI, lost: str) -> None:
    """Killed while Kit's question is open, its CLI not having recorded the call (``call``: the
    session resumes without it) or its session at all (``file``: the real CLI cannot resume it,
    the user starts a fresh one): the question and the user's answer reach Kit's next request."""
    api = claude_cli.api
    api.script("marlow", [foreman("create_task", title="Add farewell", description="farewell.py", assignee="kit"),
                          text("Planned.")])
    api.script("kit", [foreman("ask_user", question="Which word for farewell?", options=["Bye", "Farewell"])],
               [foreman("update_task", status="blocked", note="resumed"), text("Blocked.")])
    repo = make_repo(tmp_path)
    daemon = DaemonProcess(tmp_path, claude_cli, repo, "--workers", "kit", "--no-lead-review")
    c = await daemon.start(60)
    try:
        await c.ok({"type": "goal.submit", "text": "farewell", "repo": "proj"})
        question = (await wait_for(lambda: c.open_decisions("question", askedBy="kit"), 90, "kit's question"))[0]
        session = session_of(api, "kit", 0)
        await wait_for(lambda: recorded_calls(claude_cli, session, "mcp__agentcraft__ask_user"), 15,
                       "kit's question in its CLI session file")
        # Marlow's plan runs beside Kit's work: on a loaded machine its last request can still be
        # on the way when Kit asks, and a kill then makes Marlow's dying CLI ask once more
        await wait_for(lambda: len(api.of("marlow", turn=0)) >= 2 and c.agents.get("marlow", {}).get("state") in (
            "idle", "done"), 60, "marlow's planning turn over")
        await c.close()
        daemon.kill()
        await wait_for(lambda: not cli_pids(claude_cli), 15, "the CLI gone with the daemon")
        # the killed daemon fails the CLI's open ask_user call; the CLI, dying too, may ask the API
        # once more in that turn before it goes (a race: seen in CI runs)
        dying = list(api.problems)
        assert set(dying) <= {"kit: no reply scripted for turn 0 step 1"}, dying
        cut_session_file(claude_cli, session, lost)

        c = await daemon.start(60)
        await c.answer(c.decisions[question["id"]], 1)  # Farewell
        if lost == "file":
            fresh = (await wait_for(lambda: c.open_decisions("question", askedBy="foreman"), 60,
                                    "the question about the lost session"))[0]
            assert "could not be resumed" in fresh["prompt"] and "No conversation found" in fresh["prompt"]
            await c.answer(fresh, 0)  # Start a fresh session
        await wait_for(lambda: any(t["status"] == "blocked" for t in c.tasks.values()), 90, "kit's next turn")
    finally:
        await c.close()
        await daemon.stop()

    assert api.problems == dying, api.problems
    after = api.of("kit", turn=1)[0]
    asked = [b for m in after.messages if m["role"] == "assistant" and isinstance(m["content"], list)
             for b in m["content"] if b.get("name") == "mcp__agentcraft__ask_user"]
    assert asked == []  # the CLI never recorded it
    prompt = after.last_user_text()
    assert '"Which word for farewell?"' in prompt and "The user answered: Farewell" in prompt, prompt
    if lost == "call":
        assert after.headers["x-claude-code-session-id"] == session  # the same real session, resumed
    else:
        assert after.headers["x-claude-code-session-id"] != session
        assert "Your task t1: Add farewell" in prompt, prompt  # a fresh session is told its job again
