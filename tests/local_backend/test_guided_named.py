"""Guided mode when the task names several files and a passing answer changed only some (issue
13's false success): one bounded ask for the untouched file, from the repair budget; a file the
task asks to change (a target) left unchanged fails the attempt, a file named as context may stay
unchanged. Through the real LocalRunner, real git and the scripted HTTP server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local.guided import GuidedStats

from .fakeserver import last_user, text
from .helpers import FakeTools
from .test_guided_flow import guided_daemon
from .test_guided_runner import run as guided_turn

FILES = {
    "notes/__init__.py": "",
    "notes/search.py": "def find(items, word):\n    return [i for i in items if word in i]\n",
    "notes/commands/__init__.py": "",
    "notes/commands/search.py": "from notes.search import find\n\n\ndef run(items, word):\n"
                                "    return '\\n'.join(find(items, word))\n",
    "test_search.py": "from notes.search import find\n\n\ndef test_find():\n    assert find(['a b', 'c'], 'a') == ['a b']\n",
}
GOAL = ("Add count_matches(items, word) to notes/search.py: it returns how many items contain word. "
        "Make run in notes/commands/search.py end its output with a summary line 'N matches'.")
CONTEXT_GOAL = ("Add count_matches(items, word) to notes/search.py: it returns how many items contain word. "
                "See notes/commands/search.py for how the results are printed.")
UNCHANGED = text("UNCHANGED")
CI = f"{sys.executable} -m pytest -q -p no:cacheprovider"
SEARCH = text("```python\n# file: notes/search.py\ndef count_matches(items, word):\n"
              "    return len(find(items, word))\n```")
COMMAND = text("```python\n# file: notes/commands/search.py\ndef run(items, word):\n"
               "    from notes.search import count_matches\n"
               "    lines = find(items, word) + [f'{count_matches(items, word)} matches']\n"
               "    return '\\n'.join(lines)\n```")


async def run(tmp_path: Path, replies, goal: str = GOAL, **profile):
    """One guided turn, one attempt, on FILES with ``replies`` in order; the edit requests sent."""
    asked = iter(replies)
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(asked), files=FILES, goal=goal,
                                                           **{"attempts": 1, **profile})
    edits = [r for r in server.requests if r.get("stream")]
    return result, tools, edits, stats, repo


def review_note(tools: FakeTools) -> str:
    notes = [args["note"] for name, args in tools.calls if name == "update_task" and args["status"] == "review"]
    assert len(notes) == 1, tools.calls
    return notes[0]


def blocked_note(tools: FakeTools) -> str:
    notes = [args["note"] for name, args in tools.calls if name == "update_task" and args["status"] == "blocked"]
    assert len(notes) == 1 and not any(args.get("status") == "review" for _, args in tools.calls), tools.calls
    return notes[0]


def clean(repo: Path) -> bool:
    """The worktree holds nothing but its first commit (no change left, none committed)."""
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True).stdout
    return status == "" and count.strip() == "1"


def committed(repo: Path) -> list[str]:
    out = subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=repo, capture_output=True,
                         text=True, check=True).stdout
    return sorted(out.split())


async def test_a_passing_answer_that_skips_a_target_is_asked_for_it_once(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, COMMAND], repairs=2)
    assert stats.passed and len(edits) == 2
    ask = last_user(edits[1])
    assert "notes/commands/search.py" in ask and "did not change" in ask and "asks to change" in ask
    assert "UNCHANGED" not in ask  # a target is not offered the way out
    assert "notes/search.py," not in ask  # only the untouched file is asked for
    assert [(a.outcome, a.repairs) for a in stats.attempts] == [("passed", 1)]
    assert "count_matches" in (repo / "notes/search.py").read_text()
    assert "matches']" in (repo / "notes/commands/search.py").read_text()
    assert committed(repo) == ["notes/commands/search.py", "notes/search.py"]
    assert "left unchanged" not in review_note(tools)
    # the placed command really works (both halves of the task are in the commit)
    out = subprocess.run([sys.executable, "-c", "from notes.commands.search import run; print(run(['a b', 'c'], 'a'))"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["a b", "1 matches"]


async def test_the_ask_for_a_target_is_a_fresh_conversation_for_its_named_definitions_alone(tmp_path: Path) -> None:
    # the 1.5B model, asked in the conversation that held the asked test, pasted the test's
    # fixtures into the command file and sent run_search unchanged (bench s11-q15-1, task 5)
    pasted = text("```python\n# file: notes/commands/search.py\nITEMS = ['a b', 'c']\n\n\ndef find(items, word):\n"
                  "    return []\n\n\ndef run(items, word):\n    from notes.search import count_matches\n"
                  "    lines = find(items, word) + [f'{count_matches(items, word)} matches']\n"
                  "    return '\\n'.join(lines)\n```")
    goal = GOAL.replace("Make run in", "Make `run` in")  # named as code: a definition the task names
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, pasted], goal=goal, repairs=2)
    assert stats.passed and len(edits) == 2
    asked = edits[1]["messages"]
    assert [m["role"] for m in asked] == ["system", "user"]  # afresh: not the edit's conversation
    ask = asked[1]["content"]
    assert ask.startswith("Task:\n" + goal)
    assert "notes/commands/search.py now reads:" in ask and "5|     return '\\n'.join(find(items, word))" in ask
    assert "which your answer did not change: Make `run` in notes/commands/search.py end its output" in ask
    assert "Add count_matches" not in ask.split("did not change:")[1]  # the other file's sentence is not the ask
    assert "Send only run, complete" in ask
    command = (repo / "notes/commands/search.py").read_text()
    assert "matches']" in command and "ITEMS" not in command and "return []" not in command  # run alone placed
    out = subprocess.run([sys.executable, "-c", "from notes.commands.search import run; print(run(['a b', 'c'], 'a'))"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["a b", "1 matches"]


async def test_a_target_declined_every_time_blocks_the_task_naming_it(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, UNCHANGED, SEARCH, UNCHANGED], attempts=2,
                                                  repairs=2)
    assert result.ok and not stats.passed and len(edits) == 4
    assert [(a.outcome, a.detail) for a in stats.attempts] == [
        ("target left unchanged", "notes/commands/search.py (the model said no change is needed)")] * 2
    note = blocked_note(tools)
    assert "none passed the checks" in note and "left unchanged" in note and "notes/commands/search.py" in note
    assert clean(repo)  # the passing half was put back: nothing to merge
    assert (repo / "notes/search.py").read_text() == FILES["notes/search.py"]
    assert last_user(edits[2]).startswith("Task:")  # attempt 2 is a new attempt, not a repair of attempt 1


async def test_a_target_declined_once_then_changed_on_attempt_two_is_done(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, UNCHANGED, SEARCH, COMMAND], attempts=2,
                                                  repairs=2)
    assert stats.passed and len(edits) == 4
    assert [a.outcome for a in stats.attempts] == ["target left unchanged", "passed"]
    assert committed(repo) == ["notes/commands/search.py", "notes/search.py"]
    assert "left unchanged" not in review_note(tools)
    assert not any(args.get("status") == "blocked" for _, args in tools.calls)


async def test_a_context_file_may_stay_unchanged_and_the_note_says_so(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, UNCHANGED], goal=CONTEXT_GOAL, repairs=2)
    assert stats.passed and len(edits) == 2 and stats.placement_failures == 0
    assert "UNCHANGED" in last_user(edits[1])  # a context file is offered the marker
    note = review_note(tools)
    assert "named file(s) left unchanged: notes/commands/search.py" in note
    assert "the model said no change is needed" in note
    assert committed(repo) == ["notes/search.py"]
    assert (repo / "notes/commands/search.py").read_text() == FILES["notes/commands/search.py"]


async def test_an_ask_answer_that_cannot_be_placed_fails_the_attempt_saying_why(tmp_path: Path) -> None:
    unplaceable = text("```python\n# file: notes/commands/search.py\ndef run(items, word):\n"
                       "    return count_matches(items, word)\n```")  # count_matches is not imported there
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, unplaceable], repairs=1)
    assert not stats.passed and len(edits) == 2 and stats.placement_failures == 1
    assert stats.attempts[0].outcome == "target left unchanged"
    detail = stats.attempts[0].detail
    assert detail.startswith("notes/commands/search.py (the answer to the ask could not be placed: "
                             "notes/commands/search.py: run uses count_matches, which nothing defines")
    assert clean(repo)


async def test_an_ask_answer_that_only_adds_an_import_to_the_target_leaves_it_unchanged(tmp_path: Path) -> None:
    import_only = text("```python\n# file: notes/commands/search.py\nfrom notes.search import find, count_matches\n"
                       "\n\ndef run(items, word):\n    return '\\n'.join(find(items, word))\n```")
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, import_only], repairs=1)
    assert not stats.passed and len(edits) == 2
    assert stats.attempts[0].outcome == "target left unchanged"
    assert stats.attempts[0].detail.startswith("notes/commands/search.py (")
    assert clean(repo)


async def test_one_fence_with_both_files_places_each_and_passes(tmp_path: Path) -> None:
    both = text(SEARCH.text.rstrip("`\n") + "\n\n" + COMMAND.text.split("```python\n", 1)[1])
    result, tools, edits, stats, repo = await run(tmp_path, [both], repairs=1)
    assert stats.passed and len(edits) == 1
    assert committed(repo) == ["notes/commands/search.py", "notes/search.py"]
    assert "def run" not in (repo / "notes/search.py").read_text()


async def test_with_no_repair_left_a_target_left_unchanged_fails_the_attempt(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH], repairs=0)
    assert not stats.passed and len(edits) == 1
    assert [(a.outcome, a.detail) for a in stats.attempts] == [
        ("target left unchanged", "notes/commands/search.py (no repair left to ask)")]
    assert "notes/commands/search.py (no repair left to ask)" in blocked_note(tools) and clean(repo)


async def test_with_no_repair_left_a_context_file_is_noted(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH], goal=CONTEXT_GOAL, repairs=0)
    assert stats.passed and len(edits) == 1
    assert "named file(s) left unchanged: notes/commands/search.py (no repair left to ask)" in review_note(tools)


BROKEN = text("```python\n# file: notes/commands/search.py\ndef run(items, word):\n    raise ValueError(word)\n```"
              "\n```python\n# file: test_command.py\nfrom notes.commands.search import run\n\n\n"
              "def test_run():\n    assert run(['a'], 'a')\n```")


async def test_an_ask_whose_answer_breaks_the_checks_fails_the_attempt_for_a_target(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, BROKEN], repairs=1)
    assert not stats.passed and len(edits) == 2
    assert stats.attempts[0].outcome == "target left unchanged"
    assert "ended 'checks failed', the passing change was kept" in stats.attempts[0].detail
    assert "notes/commands/search.py" in blocked_note(tools)
    assert clean(repo) and not (repo / "test_command.py").exists()


async def test_an_ask_whose_answer_breaks_the_checks_keeps_the_passing_change(tmp_path: Path) -> None:
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH, BROKEN], goal=CONTEXT_GOAL, repairs=1)
    assert stats.passed and len(edits) == 2
    assert "ended 'checks failed', the passing change was kept" in review_note(tools)
    assert committed(repo) == ["notes/search.py"]
    assert "test_command.py" not in review_note(tools) and "count_matches" in review_note(tools)
    assert not (repo / "test_command.py").exists()
    assert (repo / "notes/commands/search.py").read_text() == FILES["notes/commands/search.py"]


async def test_a_task_whose_one_named_file_is_changed_costs_no_extra_round_trip(tmp_path: Path) -> None:
    goal = "Add count_matches(items, word) to notes/search.py: it returns how many items contain word."
    result, tools, edits, stats, repo = await run(tmp_path, [SEARCH], goal=goal, repairs=2)
    assert stats.passed and len(edits) == 1 and stats.attempts[0].repairs == 0
    assert "left unchanged" not in review_note(tools)


DEMO_GOAL = ("Add a function count_matches(notes, query) to pocket_notes/search.py that returns how many of the notes "
             "match the query (use search). Then make run_search in pocket_notes/commands/search.py print a last line "
             "'N matching notes' (N = how many were found) after the matching notes.")
DEMO_SEARCH = ("```python\n# file: pocket_notes/search.py\ndef count_matches(notes, query):\n"
               "    return len(search(notes, query))\n```")


@pytest.mark.slow
async def test_the_bench_false_success_ends_blocked_through_the_daemon_never_merged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 13's bench case ("Count search matches", Qwen2.5-Coder-1.5B): the checks pass with only
    pocket_notes/search.py changed and the model declines the command file every time."""
    def responder(req: dict):  # the ask for the command file (afresh, it names run_search) is declined
        return UNCHANGED if "which your answer did not change" in last_user(req) else text(DEMO_SEARCH)

    async with guided_daemon(tmp_path, monkeypatch, responder, attempts=2, repairs=1, ci=CI) as g:
        repo = g.repo
        main_before = subprocess.run(["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True).stdout
        task = g.task("Count search matches", DEMO_GOAL)
        await g.blocked(task)
    backend, server = g.backend, g.server
    stats = [s for s in backend.runners["juniper"].stats.values() if isinstance(s, GuidedStats)]
    assert len(stats) == 1 and not stats[0].passed
    assert [(a.outcome, a.detail) for a in stats[0].attempts] == [
        ("target left unchanged", "pocket_notes/commands/search.py (the model said no change is needed)")] * 2
    assert len(server.requests) == 4  # per attempt: the edit, then the one ask for the command file
    assert subprocess.run(["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True).stdout == main_before
    assert "def count_matches" not in subprocess.run(["git", "show", "main:pocket_notes/search.py"], cwd=repo,
                                                     capture_output=True, text=True, check=True).stdout
