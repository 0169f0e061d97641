"""The local runner against the scripted HTTP server, text protocol: the agent loop's rules."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local.runner import LocalRunner
from foreman.backends.local.trace import read_traces

from .fakeserver import FakeOpenAI, error, last_user, text
from .helpers import FakeTools, git_repo, request, settings_for

CALC = "def add(a, b):\n    return a + b\n"
TEST = "import calc\n\n\ndef test_sub():\n    assert calc.sub(3, 1) == 2\n"
EDIT = ("calc.py\n<<<<<<< SEARCH\n    return a + b\n=======\n    return a + b\n\n\ndef sub(a, b):\n"
        "    return a - b\n>>>>>>> REPLACE\n")


def script(*replies):
    queue = list(replies)
    seen: list[str] = []

    def responder(req):
        seen.append(last_user(req))
        item = queue.pop(0)
        return item(req) if callable(item) else item

    responder.seen = seen  # type: ignore[attr-defined]
    responder.queue = queue  # type: ignore[attr-defined]
    return responder


async def run(tmp_path: Path, responder, *, tools_kw=None, **req_kw):
    repo = git_repo(tmp_path / "wt", {"calc.py": CALC, "test_calc.py": TEST})
    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url))
        await runner.preflight()
        tools = FakeTools(repo, **(tools_kw or {}))
        try:
            result = await runner.run_turn(request(repo, **req_kw), tools)
        finally:
            await runner.close()
    return result, tools, server, runner, repo


async def test_read_edit_run_final(tmp_path: Path) -> None:
    responder = script(
        text("First I look.\n- READ: calc.py\n"),
        text(EDIT),
        text("RUN python -m pytest -q -p no:cacheprovider test_calc.py\n"),
        text("FINAL Added sub(a, b); checked it returns 2 for sub(3, 1)."),
    )
    result, tools, server, runner, repo = await run(tmp_path, responder)
    assert result.ok, result.error
    assert result.text.startswith("Added sub(a, b)")
    assert "def sub(a, b):" in (repo / "calc.py").read_text()
    # the result of the edit is the resulting region, not just "applied"
    assert "edited calc.py" in responder.seen[2] and "def sub(a, b):" in responder.seen[2]
    assert "exit 0" in responder.seen[3] and "1 passed" in responder.seen[3]
    # canonical transcript: the repaired "- READ: calc.py" is fed back as "READ calc.py"
    second = server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "READ calc.py"}
    # worker finish: committed and moved to review
    log = __import__("subprocess").run(["git", "log", "--format=%s", "-1"], cwd=repo, capture_output=True, text=True).stdout
    assert log.startswith("t1: Added sub")
    assert ("update_task", {"status": "review", "note": result.text}) in tools.calls
    states = [s for s, _ in tools.activities]
    assert "reading" in states and "editing" in states and "testing" in states
    assert server.requests[0]["stream"] is True
    scan = read_traces(runner.traces_dir)
    assert len(scan.records) == 4 and scan.records[0].reply == "First I look.\n- READ: calc.py\n"
    assert "action_colon" in scan.records[0].repairs or "list_bullet" in scan.records[0].repairs
    # where the time went: the model's requests and the RUN (a pytest process: well over 50 ms)
    (stats,) = runner.stats.values()
    assert stats.model_s > 0 and stats.checks_s > 0.05


async def test_stale_edit_is_refused(tmp_path: Path) -> None:
    repo_holder = {}

    def change_on_disk(req):
        (repo_holder["repo"] / "calc.py").write_text(CALC + "\n# touched by someone else\n")
        return text(EDIT)

    responder = script(text("READ calc.py"), change_on_disk, text("READ calc.py"), text(EDIT),
                       text("FINAL added sub"))
    repo = git_repo(tmp_path / "wt", {"calc.py": CALC})
    repo_holder["repo"] = repo
    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url))
        tools = FakeTools(repo)
        result = await runner.run_turn(request(repo), tools)
        await runner.close()
    assert "stale edit refused" in responder.seen[2]
    assert "lines 1-" in responder.seen[3]  # re-reading a changed file is allowed
    assert result.ok
    body = (repo / "calc.py").read_text()
    assert "def sub" in body and "touched by someone else" in body


async def test_false_final_is_rejected(tmp_path: Path) -> None:
    bad = ("calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n    return a - b\n>>>>>>> REPLACE\n"
           "FINAL Changed add to subtract.")
    responder = script(text("READ calc.py"), text(bad), text(EDIT), text("FINAL added sub"))
    result, tools, server, _runner, repo = await run(tmp_path, responder)
    assert "FINAL rejected" in responder.seen[2] and "does not match calc.py" in responder.seen[2]
    assert "closest passage starts at line 2" in responder.seen[2]
    assert result.ok and result.text == "added sub"
    assert "def sub" in (repo / "calc.py").read_text()


async def test_final_without_any_change_is_rejected_once(tmp_path: Path) -> None:
    responder = script(text("FINAL All done."), text("READ calc.py\nFINAL done"),
                       text("FINAL Nothing to change: add already exists."))
    result, *_ = await run(tmp_path, responder)
    assert "have not read or changed anything" in responder.seen[1]
    assert "have not changed any file" in responder.seen[2]
    assert result.ok and result.text.startswith("Nothing to change")


async def test_loop_is_stopped(tmp_path: Path) -> None:
    responder = script(*[text("LIST .")] * 10)
    result, tools, server, *_ = await run(tmp_path, responder)
    assert not result.ok and "stopped a loop" in (result.error or "")
    assert len(server.requests) == 4
    assert "already did exactly this" in responder.seen[3]


async def test_reread_unchanged_refused_and_deferred_edit(tmp_path: Path) -> None:
    responder = script(text("READ calc.py\n" + EDIT), text("READ calc.py"), text(EDIT), text("FINAL added sub"))
    result, tools, server, _runner, repo = await run(tmp_path, responder)
    assert "deferred" in responder.seen[1]
    assert "already read calc.py" in responder.seen[2]
    assert result.ok and "def sub" in (repo / "calc.py").read_text()


async def test_ranged_read_does_not_allow_whole_replacement(tmp_path: Path) -> None:
    whole = "calc.py\n<<<<<<< SEARCH\n=======\ndef add(a, b):\n    return b + a\n>>>>>>> REPLACE\n"
    responder = script(text("READ calc.py:1-1"), text(whole), text("FINAL gave up"), text("FINAL gave up"))
    result, tools, server, _runner, repo = await run(tmp_path, responder)
    assert "have not read all of it" in responder.seen[2]
    assert (repo / "calc.py").read_text() == CALC


async def test_unparseable_tool_output_is_a_bad_turn(tmp_path: Path) -> None:
    peg = "The model produced output that does not match the expected peg-native format"
    responder = script(error(500, peg), text("READ calc.py"), text(EDIT), text("FINAL added sub"))
    result, tools, server, runner, _ = await run(tmp_path, responder)
    assert result.ok
    assert "could not parse your last reply" in responder.seen[1]
    assert runner.stats["kit:1"].bad_turns == 1


async def test_endpoint_failure_is_a_failed_turn(tmp_path: Path) -> None:
    responder = script(error(503, "loading model"))
    result, *_ = await run(tmp_path, responder)
    assert not result.ok and "503" in (result.error or "")


async def test_lead_edits_are_denied_by_the_policy(tmp_path: Path) -> None:
    responder = script(text("READ calc.py"), text(EDIT), text("TOOL request_merge {\"task_id\": \"t1\"}\nFINAL merge asked"))
    result, tools, *_ = await run(tmp_path, responder, tools_kw={"lead": True, "agent": "marlow"}, agent="marlow",
                                  lead=True, job="review")
    assert "never edits files" in responder.seen[2]
    assert ("request_merge", {"task": "t1", "summary": ""}) in tools.calls
    assert result.ok


async def test_network_command_asks_and_denial_is_fed_back(tmp_path: Path) -> None:
    responder = script(text("RUN curl http://example.com/x"), text("READ calc.py"), text(EDIT), text("FINAL ok"))
    result, tools, *_ = await run(tmp_path, responder)
    assert ("Bash", {"command": "curl http://example.com/x"}, "ask") in tools.permits
    assert "not run: the user denied it" in responder.seen[1]


async def test_repeated_false_finals_end_the_turn(tmp_path: Path) -> None:
    responder = script(*[text("FINAL done")] * 10)
    result, tools, server, *_ = await run(tmp_path, responder)
    assert not result.ok and "FINAL was rejected 4 times" in (result.error or "")
    assert len(server.requests) == 4


async def test_at_most_eight_actions_run_per_reply(tmp_path: Path) -> None:
    reads = "\n".join(f"LIST d{i}" for i in range(12))
    responder = script(text(reads), text("READ calc.py"), text(EDIT), text("FINAL added sub"))
    result, *_ = await run(tmp_path, responder)
    assert responder.seen[1].count("skipped: at most 8 actions") == 4
    assert result.ok


async def test_several_bare_json_calls_say_which_one_ran(tmp_path: Path) -> None:
    """Issue 13 item 5: several bare JSON calls in one reply are never dropped silently."""
    responder = script(
        text('{"name": "read", "arguments": {"path": "test_calc.py"}}\n'
             '{"name": "read", "arguments": {"path": "calc.py"}}'),
        text("FINAL Read both; nothing to change."),
    )
    result, tools, server, runner, repo = await run(tmp_path, responder, job="followup", task=None)
    results = responder.seen[1]
    assert "only the last one ran (READ calc.py)" in results and "def add(a, b):" in results
