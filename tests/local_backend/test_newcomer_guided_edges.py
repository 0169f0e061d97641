"""Guided mode's continuation end to end, edge cases from a newcomer's adversarial pass: the
scripted server, real pytest runs in a real git worktree."""

from __future__ import annotations

import json
from pathlib import Path

from foreman.backends.local import continuation

from .fakeserver import error, last_user, text
from .test_guided_pipeline import _tests_then_right
from .test_guided_runner import run as guided_turn

WHOLE = "```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


async def test_a_bad_turn_while_continuing_keeps_the_answer_so_far(tmp_path: Path) -> None:
    replies = iter([text(WHOLE + "```\n\nThis adds", finish_reason="length"),
                    error(500, "Failed to parse input: does not match the expected peg-native format")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=1,
                                                           repairs=0, ablate=())
    assert stats.passed, stats.attempts
    assert "return a - b" in (repo / "calc.py").read_text()


async def test_a_full_context_while_continuing_keeps_the_answer_so_far(tmp_path: Path) -> None:
    replies = iter([text(WHOLE + "```\n\nThis adds", finish_reason="length"),
                    error(400, "the request exceeds the available context size, try increasing it")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=1,
                                                           repairs=0, ablate=())
    assert stats.passed, (result, stats.attempts)
    assert "return a - b" in (repo / "calc.py").read_text()


async def test_a_cut_constrained_reply_is_not_continued_into_a_second_json_object(tmp_path: Path) -> None:
    whole = json.dumps({"edits": [{"file": "calc.py", "code": "def sub(a, b):\n    return a - b\n"}]})
    streamed = iter([text(whole[:40], finish_reason="length"), text(whole), text(whole)])

    def responder(req):
        return text('{"ok": true}') if not req.get("stream") else next(streamed)

    result, tools, server, stats, repo = await guided_turn(tmp_path, responder, attempts=1, repairs=1,
                                                           constrained="auto", ablate=())
    asks = [r for r in server.requests if r.get("stream")]
    # the schema makes every reply a whole object: a continuation cannot continue the cut one
    assert not any(continuation.CONTINUE_ASK in r["messages"][-1]["content"] for r in asks), \
        [r["messages"][-1]["content"][:60] for r in asks]
    assert stats.passed, stats.attempts


GOAL_TEST = "Add sub(a, b) to calc.py: it returns a minus b. Add a test in test_sub.py."
SUB_TEST = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_small():\n    assert calc.sub(5, 2) == 3\n```"


def _asks(server) -> list[str]:
    return [last_user(r) for r in server.requests if r.get("stream")]


async def test_a_broken_unittest_style_new_test_goes_back_as_the_tests_fault(tmp_path: Path) -> None:
    broken = ("```python\n# file: test_sub.py\nimport unittest\n\nimport calc\n\n\nclass SubTest(unittest.TestCase):\n"
              "    def test_sub_small(self):\n        self.assertEqual(calc.sub(5, TWO), 3)\n```")
    fixed = broken.replace("TWO", "2")
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, _tests_then_right([broken, fixed]), goal=GOAL_TEST, attempts=1, repairs=1)
    assert stats.passed, (result, stats.attempts)
    told = [a for a in _asks(server) if "fail on their own, before they test anything" in a]
    assert told and "NameError" in told[0] and "SubTest.test_sub_small" in told[0], _asks(server)


async def test_a_new_test_file_that_does_not_parse_is_not_a_pass(tmp_path: Path) -> None:
    bad = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_small(:\n    assert calc.sub(5, 2) == 3\n```"
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, _tests_then_right([bad, SUB_TEST]), goal=GOAL_TEST, attempts=1, repairs=1)
    assert stats.passed, (result, stats.attempts)
    assert "def test_sub_small():" in (repo / "test_sub.py").read_text()


async def test_a_reply_cut_in_a_repetition_loop_is_not_continued(tmp_path: Path) -> None:
    # the small models' most common cut: one line repeated until the limit; continuing it only
    # buys more of the loop, at the sized (larger) reply limit
    loop = "```python\n# file: calc.py\ndef sub(a, b):\n" + "    return a - b  # minus\n" * 200
    replies = iter([text(loop, finish_reason="length"), text(loop, finish_reason="length"),
                    text(loop, finish_reason="length")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=1,
                                                           repairs=0, ablate=())
    assert len([r for r in server.requests if r.get("stream")]) == 1, stats.stages
    assert stats.stages["propose: continued"] == 0


LOOP = "```python\n# file: calc.py\ndef sub(a, b):\n" + "    return a - b  # minus\n" * 200
RIGHT = "```python\n# file: calc.py\ndef sub(a, b):\n    return a - b\n```"


async def test_after_a_reply_that_looped_the_asks_carry_a_repetition_penalty(tmp_path: Path) -> None:
    """Asked again alike, even at a higher temperature, a small model falls into the same loop."""
    replies = iter([text(LOOP, finish_reason="length"), text(RIGHT)])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=2,
                                                           repairs=0, ablate=())
    asks = [r for r in server.requests if r.get("stream")]
    assert len(asks) == 2 and stats.passed, stats.stages
    assert not any(k in asks[0] for k in continuation.UNLOOP)  # the first ask: the server's own sampling
    assert {k: asks[1].get(k) for k in continuation.UNLOOP} == continuation.UNLOOP
    assert stats.stages["propose: looped"] == 1


async def test_the_repetition_penalty_is_switched_off_by_its_name_and_dropped_when_a_server_refuses_it(
        tmp_path: Path) -> None:
    replies = iter([text(LOOP, finish_reason="length"), text(RIGHT)])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=2,
                                                           repairs=0, ablate=("unloop",))
    asks = [r for r in server.requests if r.get("stream")]
    assert stats.passed and not any(k in ask for ask in asks for k in continuation.UNLOOP)

    def strict(req):  # a server that refuses fields it does not know
        if "dry_multiplier" in req:
            return error(400, "unknown field: dry_multiplier")
        return next(again)
    again = iter([text(LOOP, finish_reason="length"), text(RIGHT)])
    result, tools, server, stats, repo = await guided_turn(tmp_path / "strict", strict, attempts=2, repairs=0,
                                                           ablate=())
    asks = [r for r in server.requests if r.get("stream")]
    assert stats.passed, stats.attempts
    assert ["dry_multiplier" in ask for ask in asks] == [False, True, False]
