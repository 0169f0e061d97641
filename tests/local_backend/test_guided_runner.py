"""Guided mode in the LocalRunner against the scripted HTTP server: honesty when no attempt
passes, repairs with the failure's summary, constrained replies and their fallback."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from foreman.backends.local.guided import GuidedStats
from foreman.backends.local.runner import LocalRunner

from .fakeserver import FakeOpenAI, error, last_user, text
from .helpers import FakeTools, git_repo, request, settings_for

CALC = "def add(a, b):\r\n    return a + b\r\n"  # CRLF: guided placement keeps it
TEST = "import calc\n\n\ndef test_sub():\n    assert calc.sub(3, 1) == 2\n"
GOAL = "Add sub(a, b) to calc.py: it returns a minus b."
CI = f"{sys.executable} -m pytest -q -p no:cacheprovider"


async def run(tmp_path: Path, responder, *, files: dict[str, str] | None = None, goal: str = GOAL, **profile):
    """Run one guided turn on a worktree of ``files`` (default: calc.py and its test) against the
    scripted server answering with ``responder``; return (result, tools, server, stats, repo).
    The asked test (``asked.py``) is off unless ``asked_test=True``, and a cut answer is not continued
    (``continuation.py``) unless ``ablate`` is given: these tests script the other steps, and what
    happens to an answer that stays cut."""
    repo = git_repo(tmp_path / "wt", files or {"calc.py": CALC, "test_calc.py": TEST})
    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url, ci=CI))
        runner.profile = replace(runner.profile, **{"mode": "guided", "temperature": 0.2, "asked_test": False,
                                                    "ablate": ("continue",), **profile})
        await runner.preflight()
        tools = FakeTools(repo)
        try:
            result = await runner.run_turn(request(repo, goal), tools)
        finally:
            await runner.close()
    stats = next(s for s in runner.stats.values() if isinstance(s, GuidedStats))
    return result, tools, server, stats, repo


async def test_no_attempt_passes_the_task_is_blocked_and_the_files_restored(tmp_path: Path) -> None:
    def responder(req):
        return text("```python\n# file: calc.py\ndef sub(a, b):\n    return b - a\n```")

    result, tools, server, stats, repo = await run(tmp_path, responder, attempts=2, repairs=1)
    assert result.ok and not stats.passed
    assert [(a.number, a.outcome, a.repairs) for a in stats.attempts] == [(1, "checks failed", 1),
                                                                          (2, "checks failed", 1)]
    assert [a.temperature for a in stats.attempts] == [0.2, 0.55]
    blocked = [args for name, args in tools.calls if name == "update_task"]
    assert blocked and blocked[-1]["status"] == "blocked"
    assert "none passed the checks" in blocked[-1]["note"] and "attempt 2" in blocked[-1]["note"]
    assert not any(args.get("status") == "review" for _, args in tools.calls)
    assert (repo / "calc.py").read_bytes() == CALC.encode()  # the same clean start, left clean
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""
    # the repair request carried the failure's summary and the file as it was then
    repair = server.requests[1]["messages"][-1]["content"]
    assert "The checks" in repair and "assert -2 == 2" in repair and "def sub(a, b):" in repair
    assert len(server.requests) == 4 and stats.replies == 4 and stats.checks_s > 0


async def test_guided_requests_carry_the_profile_seed(tmp_path: Path) -> None:
    replies = iter([text("calc.py\n```python\ndef sub(a, b):\n    return a - b\n```")])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), attempts=1, repairs=0, seed=5)
    chats = [r for r in server.requests if "messages" in r]
    assert stats.passed and chats and all(r.get("seed") == 5 for r in chats)


async def test_placement_failure_is_told_back_and_crlf_is_kept(tmp_path: Path) -> None:
    replies = iter([text("You should subtract b from a."),
                    text("calc.py\n```python\ndef sub(a, b):\n    return a - b\n```")])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), attempts=1, repairs=1)
    assert stats.passed and result.ok and "guided attempt 1/1" in result.text
    assert stats.placement_failures == 1 and stats.attempts[0].repairs == 1
    assert "holds no code block" in last_user(server.requests[1])
    data = (repo / "calc.py").read_bytes()
    assert b"def sub(a, b):\r\n    return a - b\r\n" in data and data.count(b"\n") == data.count(b"\r\n")
    assert ("update_task", {"status": "review", "note": result.text[:300]}) in tools.calls


async def test_constrained_replies_fall_back_to_text_when_the_endpoint_refuses(tmp_path: Path) -> None:
    def responder(req):
        if "response_format" in req:
            return error(400, "response_format type json_schema is not supported")
        return text("```python\n# file: calc.py\ndef sub(a, b):\n    return a - b\n```")

    result, tools, server, stats, repo = await run(tmp_path, responder, attempts=1, constrained="auto")
    assert stats.passed
    probes = [r for r in server.requests if "response_format" in r]
    assert len(probes) == 1 and not probes[0].get("stream")  # probed once, then free text
    assert all("response_format" not in r for r in server.requests if r.get("stream"))


async def test_constrained_replies_are_used_when_the_endpoint_enforces_them(tmp_path: Path) -> None:
    def responder(req):
        if "response_format" not in req:
            return text("no")
        if not req.get("stream"):
            return text('{"ok": true}')
        assert req["response_format"]["json_schema"]["name"] == "edits"
        return text(json.dumps({"edits": [{"file": "calc.py", "code": "def sub(a, b):\n    return a - b\n"}]}))

    result, tools, server, stats, repo = await run(tmp_path, responder, attempts=1, constrained="auto")
    assert stats.passed, stats.attempts
    edit = [r for r in server.requests if r.get("stream")][0]
    assert "Answer as JSON" in edit["messages"][-1]["content"]
    assert "def sub(a, b):" in (repo / "calc.py").read_text()


async def test_auto_mode_guides_after_the_agent_loop_fails_the_turn(tmp_path: Path) -> None:
    def responder(req):
        if req["messages"][0]["content"].startswith("You are a careful programmer"):  # guided
            return text("```python\n# file: calc.py\ndef sub(a, b):\n    return a - b\n```")
        return text("I would like to help with that.")  # the agent loop: no action, every time

    result, tools, server, stats, repo = await run(tmp_path, responder, mode="auto", small=False, attempts=1,
                                                   idle_limit=2)
    assert stats.passed and result.ok
    assert any("trying guided mode" in line for _, line in tools.logs)
    agent_requests = [r for r in server.requests if not r["messages"][0]["content"].startswith("You are a careful")]
    assert len(agent_requests) == 2  # the loop gave up after idle_limit replies, then guided took over


PROSE = text("You should subtract b from a.")
UNCHANGED = text("```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n```")
RIGHT = text("```python\n# file: calc.py\ndef sub(a, b):\n    return a - b\n```")


async def test_every_failure_kind_asks_for_a_repair_from_one_budget(tmp_path: Path) -> None:
    replies = iter([PROSE, UNCHANGED, RIGHT])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), attempts=1, repairs=2)
    assert stats.passed and [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 2)]
    assert last_user(server.requests[1]).startswith("That could not be applied: the answer holds no code block")
    assert last_user(server.requests[2]).startswith("That changed nothing.")
    assert "def sub(a, b):\r\n" in (repo / "calc.py").read_bytes().decode()


async def test_an_answer_that_changes_nothing_ends_the_attempt_when_no_repair_is_left(tmp_path: Path) -> None:
    replies = iter([PROSE, UNCHANGED, RIGHT])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), attempts=1, repairs=1)
    assert not stats.passed and len(server.requests) == 2
    assert [(a.outcome, a.detail, a.repairs) for a in stats.attempts] == [("no change", "the answer changed no file", 1)]
    blocked = [args for name, args in tools.calls if name == "update_task"]
    assert blocked[-1]["status"] == "blocked" and "no change" in blocked[-1]["note"]
    assert (repo / "calc.py").read_bytes() == CALC.encode()


async def test_an_edit_that_changes_nothing_is_repaired_before_tests_are_asked_for(tmp_path: Path) -> None:
    # the model repeats the file as it is; asking it for tests then would cost a reply and the
    # checks would fail on tests of code that does not exist
    def responder(req):
        if "pytest test functions" in last_user(req):
            return text("```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub():\n"
                        "    assert calc.sub(5, 2) == 3\n```")
        return next(edits)

    edits = iter([UNCHANGED, RIGHT])
    repo = git_repo(tmp_path / "wt", {"calc.py": CALC, "test_calc.py": TEST})
    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url, ci=CI))
        runner.profile = replace(runner.profile, mode="guided", attempts=1, repairs=1)
        await runner.preflight()
        try:
            result = await runner.run_turn(request(repo, GOAL + " Add a test in test_sub.py."), FakeTools(repo))
            assert result.ok
        finally:
            await runner.close()
    stats = next(s for s in runner.stats.values() if isinstance(s, GuidedStats))
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert asked[1].startswith("That changed nothing.") and "pytest test functions" in asked[2]
    assert len(asked) == 3 and stats.passed and stats.attempts[0].repairs == 1
    assert "def test_sub():" in (repo / "test_sub.py").read_text()


async def test_a_task_that_asks_for_a_test_does_not_pass_without_one(tmp_path: Path) -> None:
    """Bench s8-q05-c1: the 0.5B model's format_age and ``--limit`` answers changed the code, its
    answer to the test request put no test in the named test file (code again, or a bare def
    line), the repository's own tests passed, and both tasks were merged undone. Now the attempt
    fails "no test", and with no repair left the task ends blocked, its files restored."""
    def responder(req):
        if "pytest test functions" in last_user(req):
            return RIGHT  # code again, no test
        return next(edits)

    edits = iter([RIGHT])
    result, tools, server, stats, repo = await run(tmp_path, responder, goal=GOAL + " Add a test in test_sub.py.",
                                                   attempts=1, repairs=0)
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [("no test", "no test function was placed in test_sub.py")]
    assert not (repo / "test_sub.py").exists() and "def sub" not in (repo / "calc.py").read_text()


async def test_the_missing_test_is_asked_for_by_name_and_the_attempt_then_passes(tmp_path: Path) -> None:
    def responder(req):
        asked = last_user(req)
        if "pytest test functions" in asked:
            return text("```python\n# file: test_sub.py\ndef test_sub(self):\n```")  # a bare def line: refused
        if asked.startswith("The task asks for a test in test_sub.py, and no test function was placed there."):
            return text("```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_small():\n"
                        "    assert calc.sub(5, 2) == 3\n```")
        return RIGHT

    result, tools, server, stats, repo = await run(tmp_path, responder, goal=GOAL + " Add a test in test_sub.py.",
                                                   attempts=1, repairs=1)
    assert stats.passed and stats.attempts[0].repairs == 1
    assert "def test_sub_small():" in (repo / "test_sub.py").read_text()


async def test_a_test_that_cannot_import_the_asked_name_asks_for_the_code_not_the_test(tmp_path: Path) -> None:
    """Bench s8-q15-r2, word_count: the answer repeated the module without the new function plus a
    test importing it; the repair said every failure was in the new test, and all three attempts
    rewrote the test. Now the repair names the missing definition and its file."""
    only_test = text("```python\n# file: test_sub.py\nfrom calc import sub\n\n\ndef test_sub():\n"
                     "    assert sub(5, 2) == 3\n```")
    replies = iter([only_test, RIGHT])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies),
                                                   goal=GOAL + " Add a test in test_sub.py.", attempts=1, repairs=1)
    repair = [last_user(r) for r in server.requests if r.get("stream")][1]
    assert "cannot import name 'sub' from 'calc'" in repair
    assert "sub is not in calc.py: your answer did not define it. Send def sub complete" in repair
    assert "the test is wrong" not in repair
    assert stats.passed and stats.attempts[0].repairs == 1


BUGGY_ADD = {"calc.py": "def add(a, b):\n    return a - b\n", "test_calc.py": "def test_nothing():\n    assert True\n"}
ADD_GOAL = "In calc.py, add subtracts: make add(a, b) return a plus b. Add a test in test_add.py."


async def test_a_requested_test_that_passes_on_the_old_code_does_not_prove_the_change(tmp_path: Path) -> None:
    """Bench s8-q05-c1's format_age kind: the answer rewrote the function unchanged in meaning and
    a test that passes either way would let it merge. The requested test must fail on the code
    as it was (the changed files put back for one pytest run, then restored)."""
    def responder(req):
        if "pytest test functions" in last_user(req):
            return text("```python\n# file: test_add.py\nimport calc\n\n\ndef test_add():\n"
                        "    assert calc.add(2, 0) == 2\n```")  # true before and after
        return text("```python\n# file: calc.py\ndef add(a, b):\n    return (a - b)\n```")  # same meaning

    result, tools, server, stats, repo = await run(tmp_path, responder, files=BUGGY_ADD, goal=ADD_GOAL,
                                                   attempts=1, repairs=0)
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [("the new tests pass without the change", "test_add")]
    assert (repo / "calc.py").read_text() == BUGGY_ADD["calc.py"] and not (repo / "test_add.py").exists()


async def test_a_requested_test_that_fails_on_the_old_code_proves_the_change(tmp_path: Path) -> None:
    def responder(req):
        asked = last_user(req)
        if "pytest test functions" in asked:
            return text("```python\n# file: test_add.py\nimport calc\n\n\ndef test_add():\n"
                        "    assert calc.add(2, 0) == 2\n```")
        if asked.startswith("The checks pass, but test_add in test_add.py also pass on the code as it was"):
            return text("```python\n# file: test_add.py\nimport calc\n\n\ndef test_add():\n"
                        "    assert calc.add(2, 1) == 3\n```")
        return text("```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n```")

    result, tools, server, stats, repo = await run(tmp_path, responder, files=BUGGY_ADD, goal=ADD_GOAL,
                                                   attempts=1, repairs=1)
    assert stats.passed and stats.attempts[0].repairs == 1
    assert "calc.add(2, 1) == 3" in (repo / "test_add.py").read_text()
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"  # put back after each probe


async def test_a_fix_sent_back_unchanged_is_asked_for_the_named_function_only(tmp_path: Path) -> None:
    """The 0.5B model sent formatting.py back unchanged on every attempt of the format_age fix
    (bench q05-r1, 6 of 6 replies); the repair said only "That changed nothing". Now it names
    the definitions the task names, as they came back, and asks for those alone."""
    buggy = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    sent_back = text("```python\n# file: calc.py\n" + buggy + "```")
    fixed = text("```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n```")
    replies = iter([sent_back, fixed])
    result, tools, server, stats, repo = await run(
        tmp_path, lambda req: next(replies), files={"calc.py": buggy, "test_calc.py": "import calc\n\n\ndef test_add():\n"
                                                    "    assert calc.add(2, 1) == 3\n"},
        goal="In calc.py, add subtracts: make add(a, b) return a plus b.", attempts=1, repairs=1)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert asked[1].startswith("That changed nothing: add came back exactly as it is in calc.py.")
    assert "Send only add, complete" in asked[1] and "`# file: calc.py`" in asked[1]
    assert stats.passed and stats.attempts[0].repairs == 1
    assert "return a + b" in (repo / "calc.py").read_text() and "def mul" in (repo / "calc.py").read_text()


async def test_a_reply_cut_off_at_max_tokens_is_told_so_not_that_it_held_no_code(tmp_path: Path) -> None:
    """The 1.5B model repeated formatting.py whole and was cut at 512 tokens inside the new
    function (bench q15-b, is_blank); the repair said "the answer holds no code block" and the
    model sent the same whole file again. Now the repair says it was cut off and asks for the
    new function only."""
    cut = "```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return"
    replies = iter([text(cut, finish_reason="length"), RIGHT])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), attempts=1, repairs=1)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert asked[1].startswith("Your answer was cut off at the reply's length limit")
    assert "send only the new or changed functions" in asked[1]
    assert stats.passed and stats.attempts[0].repairs == 1


async def test_a_reply_without_code_that_was_not_cut_off_is_told_what_is_missing(tmp_path: Path) -> None:
    replies = iter([text("I would add a sub function."), RIGHT])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), attempts=1, repairs=1)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert asked[1].startswith("That could not be applied: the answer holds no code block")
    assert stats.passed


SHOUT_GOAL = "Add a function shout(text) to calc.py that returns the text in upper case. Add test_shout.py."
FILE_WITHOUT_SHOUT = text("```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n```\n"
                          "```python\n# file: test_shout.py\nfrom calc import shout\n\n\ndef test_shout():\n"
                          "    assert shout('hi') == 'HI'\n```")
SHOUT = text("```python\n# file: calc.py\ndef add(a, b):\n    return a * b\n\n\ndef shout(text):\n"
             "    return text.upper()\n```")  # with a made-up body for a function it was not asked for
ONLY_ADD = {"calc.py": "def add(a, b):\n    return a + b\n"}


async def test_an_answer_without_the_function_the_task_names_is_asked_for_it_alone_afresh(tmp_path: Path) -> None:
    """The 1.5B model sent calc.py's other functions back unchanged, without shout, beside a test
    importing it; each repair, shown the file and its own answer, repeated it (bench s9-q15-r1)."""
    replies = iter([FILE_WITHOUT_SHOUT, SHOUT])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), goal=SHOUT_GOAL,
                                                   files=ONLY_ADD, attempts=1, repairs=1)
    assert stats.passed and [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 1)]
    ask = server.requests[1]["messages"]
    assert [m["role"] for m in ask] == ["system", "user"]  # a fresh conversation: no earlier answer in it
    assert "Your answer did not write shout. Write only shout" in ask[1]["content"]
    assert "# calc.py\ndef add(a, b)" in ask[1]["content"] and "return a + b" not in ask[1]["content"]  # signatures
    # the def line the task states, as the start of the block (bench s12-q15-1: asked for shout alone,
    # the 1.5B model sent formatting.py's other functions, at 0.1, 0.45 and 0.8)
    assert ask[1]["content"].endswith("The block starts:\n```python\n# file: calc.py\ndef shout(text):\n```")
    assert "def shout" in (repo / "calc.py").read_text() and (repo / "test_shout.py").is_file()
    assert "return a + b" in (repo / "calc.py").read_text()  # only shout was placed from the answer to that ask


async def test_a_function_never_written_ends_the_attempt_so(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await run(tmp_path, lambda req: FILE_WITHOUT_SHOUT, goal=SHOUT_GOAL,
                                                   files=ONLY_ADD, attempts=1, repairs=1)
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [("function not written", "shout")]
    assert len(server.requests) == 2  # the edit and one ask; the checks never ran on code without shout
    assert not (repo / "test_shout.py").exists()  # the attempt's files put back


async def test_a_test_reply_cut_at_max_tokens_places_its_complete_tests(tmp_path: Path) -> None:
    """The 1.5B model's tests for `notes list --limit` ran one complete test after another until
    the 512-token cap; nothing was placed in two attempts of three (bench s9-q15-r1, task 6)."""
    cut = text("```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub():\n    assert calc.sub(5, 2) == 3\n\n\n"
               "def test_sub_negative():\n    assert calc.sub(1, 2) == -1\n    assert calc.sub(1, 2) == -1\n"
               "    assert calc.sub(", finish_reason="length")

    def responder(req):
        return cut if "pytest test functions" in last_user(req) else RIGHT

    result, tools, server, stats, repo = await run(tmp_path, responder, goal=GOAL + " Add a test in test_sub.py.",
                                                   attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    placed = (repo / "test_sub.py").read_text()
    assert "def test_sub():" in placed and "test_sub_negative" not in placed  # the cut one left out


AGE = ('def seconds_ago(delta):\n    """Whole seconds ago."""\n    seconds = delta.seconds\n    return seconds\n\n\n'
       'def twice(n):\n    return 2 * n\n')
AGE_FILES = {"calc.py": AGE, "test_calc.py": "import datetime\n\nimport calc\n\n\ndef test_age():\n"
                                              "    assert calc.seconds_ago(datetime.timedelta(days=1, seconds=5)) == 86405\n"}
AGE_GOAL = "In calc.py, seconds_ago uses delta.seconds, which ignores whole days. Use int(delta.total_seconds()) instead."



async def age_turn(tmp_path: Path, line_reply: str, *, repairs: int):
    """One attempt at AGE_GOAL: the file sent back unchanged, then ``line_reply`` to the line ask,
    then (when a repair is left) seconds_ago rewritten whole; returns what :func:`run` does."""
    replies = iter([text("```python\n# file: calc.py\n" + AGE + "```"), text(line_reply),
                    text("```python\n# file: calc.py\ndef seconds_ago(delta):\n    return int(delta.total_seconds())\n```")])
    return await run(tmp_path, lambda req: next(replies), files=AGE_FILES, goal=AGE_GOAL, attempts=1, repairs=repairs)

async def test_a_fix_sent_back_unchanged_is_asked_for_the_one_line_the_task_names_afresh(tmp_path: Path) -> None:
    """The 0.5B model sent formatting.py back unchanged in every attempt of the format_age fix, the
    named-definition repair included (s9-q05-m1, s9-q05-f1); told which line the task is about, it
    rewrote it at every temperature tried (probe, 2 December)."""
    result, tools, server, stats, repo = await age_turn(tmp_path, "```python\n3| seconds = int(delta.total_seconds())\n```",
                                                        repairs=1)
    ask = server.requests[1]["messages"]
    assert [m["role"] for m in ask] == ["system", "user"]  # a fresh conversation
    assert "calc.py, seconds_ago:\n```python\n1| def seconds_ago(delta):" in ask[1]["content"] and "def twice" not in ask[1]["content"]
    assert "The task is about line 3: `seconds = delta.seconds`. Rewrite line 3" in ask[1]["content"]
    assert stats.passed and [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 1)]
    assert (repo / "calc.py").read_text() == AGE.replace("delta.seconds", "int(delta.total_seconds())")


@pytest.mark.slow
async def test_a_line_sent_back_as_it_is_gets_the_named_definition_repair_next(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await age_turn(tmp_path, "```python\nseconds = delta.seconds\n```", repairs=2)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert "The task is about line 3" in asked[1]
    assert asked[2].startswith("That changed nothing: seconds_ago came back exactly as it is in calc.py.")
    assert stats.passed and stats.attempts[0].repairs == 2
    assert "return int(delta.total_seconds())" in (repo / "calc.py").read_text()


@pytest.mark.slow
async def test_an_answer_to_the_line_ask_that_is_not_a_line_is_told_so(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await age_turn(tmp_path, "```python\na = 1\nb = 2\nc = 3\nd = 4\n```", repairs=2)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert asked[2].startswith("That could not be applied: the answer was not line 3 alone, rewritten")
    assert stats.passed and (repo / "calc.py").read_text().count("a = 1") == 0


async def test_a_test_ask_names_the_functions_the_task_adds(tmp_path: Path) -> None:
    """The 0.5B model's tests for is_blank tested format_line, copied from the example's
    (s9-q05-f1); the 1.5B's asked tests for count_matches tested only search (probe, 2 December)."""
    tests = text("```python\n# file: test_shout.py\nfrom calc import shout\n\n\ndef test_shout():\n"
                 "    assert shout('hi') == 'HI'\n```")
    replies = iter([SHOUT, tests])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), goal=SHOUT_GOAL,
                                                   files=ONLY_ADD, attempts=1, repairs=1)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert asked[1].startswith("Task:\n") and asked[1].endswith("The task adds shout: call it in the tests.")
    assert stats.passed


def test_the_adds_sentence_names_every_function_asked_for_by_name() -> None:
    from foreman.backends.local.guided_text import adds_sentence
    assert adds_sentence("Add a function count_matches(notes, query) and a method `size(self)`.") == (
        " The task adds count_matches, size: call them in the tests.")
    assert adds_sentence("In formatting.py, format_age uses delta.seconds.") == ""


CLASS_FILES = {"calc.py": "def add(a, b):\n    return a + b\n",
               "tests/test_calc.py": "import unittest\n\nimport calc\n\n\nclass CalcTest(unittest.TestCase):\n"
                                     "    def setUp(self):\n        self.one = 1\n\n    def test_add(self):\n"
                                     "        self.assertEqual(calc.add(self.one, 1), 2)\n"}
CLASS_GOAL = "Add a function sub(a, b) to calc.py that returns a minus b. Add a test in tests/test_sub.py."


async def test_beside_an_example_that_stands_on_its_setup_the_tests_are_asked_as_its_class(tmp_path: Path) -> None:
    """Asked for "test functions" beside test_cli.py's excerpt (its setUp makes self.path), the 1.5B
    model's --limit tests listed "notes.json" without adding a note, in every attempt (s10-q15-1)."""
    sub = text("```python\n# file: calc.py\ndef sub(a, b):\n    return a - b\n```")
    tests = text("```python\n# file: tests/test_sub.py\nimport unittest\n\nimport calc\n\n\n"
                 "class SubTest(unittest.TestCase):\n    def setUp(self):\n        self.one = 1\n\n"
                 "    def test_sub(self):\n        self.assertEqual(calc.sub(self.one, 1), 0)\n```")
    replies = iter([sub, tests])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), files=CLASS_FILES,
                                                   goal=CLASS_GOAL, attempts=1, repairs=0)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert "holding one unittest.TestCase class with the same setUp, tearDown and helper methods as the example's CalcTest" in asked[1]
    assert "pytest test functions" not in asked[1] and asked[1].endswith("The task adds sub: call it in the tests.")
    assert stats.passed and "class SubTest" in (repo / "tests/test_sub.py").read_text()


def test_the_fixture_class_is_the_excerpts_class_when_it_has_a_setup() -> None:
    from foreman.backends.local.examples import fixture_class
    from foreman.backends.sim.demo_files_cli import TEST_CLI, TEST_FORMATTING
    assert fixture_class(TEST_CLI, "Add a --limit N option to the `list` subcommand") == "CliTest"
    assert fixture_class(TEST_FORMATTING, "Fix format_age") is None  # a class without setUp
    assert fixture_class("def test_x():\n    assert 1\n", "x") is None
    assert fixture_class("def (", "x") is None


ERROR_GOAL = ("Stock.remove() in stock.py lets the quantity go below zero. Removing more than is in stock should "
              "raise a new error `InsufficientStock` (define it in stock.py as a subclass of StockError) and leave the "
              "quantity as it was. Add test_stock.py.")
STOCK_FILES = {"stock.py": "class StockError(Exception):\n    pass\n\n\nclass Stock:\n    def __init__(self, qty):\n"
                           "        self.qty = qty\n\n    def remove(self, n):\n        self.qty -= n\n"}
STOCK_UNCHANGED = text("```python\n# file: stock.py\nclass StockError(Exception):\n    pass\n```")
ERROR_CLASS = text("```python\n# file: stock.py\nclass InsufficientStock(StockError):\n    pass\n\n\n"
                   "class StockError(Exception):\n    '''made up'''\n```")


async def test_an_answer_without_the_class_the_task_names_is_asked_for_it_alone_from_its_class_line(
        tmp_path: Path) -> None:
    """A raise-error task's new error class: the answer sent the errors' file back unchanged, twice
    (dev trace of a package task); asked for alone, the block starts with the class line the task
    states, base included."""
    test = text("```python\n# file: test_stock.py\nimport pytest\nfrom stock import InsufficientStock, Stock\n\n\n"
                "def test_remove_too_many():\n    s = Stock(3)\n    with pytest.raises(InsufficientStock):\n"
                "        s.remove(5)\n    assert s.qty == 3\n```")
    fix = text("```python\n# file: stock.py\n    def remove(self, n):\n        if n > self.qty:\n"
               "            raise InsufficientStock(n)\n        self.qty -= n\n```")
    replies = iter([STOCK_UNCHANGED, ERROR_CLASS, test, fix])
    result, tools, server, stats, repo = await run(tmp_path, lambda req: next(replies), goal=ERROR_GOAL,
                                                   files=STOCK_FILES, attempts=1, repairs=2)
    assert stats.passed, stats.attempts
    ask = server.requests[1]["messages"]
    assert [m["role"] for m in ask] == ["system", "user"]
    assert "Your answer did not write InsufficientStock. Write only InsufficientStock" in ask[1]["content"]
    assert ask[1]["content"].endswith(
        "The block starts:\n```python\n# file: stock.py\nclass InsufficientStock(StockError):\n```")
    placed = (repo / "stock.py").read_text()
    assert "class InsufficientStock(StockError):" in placed and "made up" not in placed  # the asked class alone
    assert stats.stages["check: function not written"] == 1
