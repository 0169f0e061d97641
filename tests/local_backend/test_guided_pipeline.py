"""Guided mode's pipeline checks end to end: the LocalRunner against the scripted HTTP server, real
pytest runs in a real git worktree. Each check is shown working, and switched off by ``ablate``."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local import continuation

from .fakeserver import error, last_user, text
from .test_guided_runner import CALC, RIGHT, TEST
from .test_guided_runner import run as guided_turn

GOAL_TEST = "Add sub(a, b) to calc.py: it returns a minus b. Add a test in test_sub.py."
SUB_TEST = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_small():\n    assert calc.sub(5, 2) == 3\n```"


def asks(server) -> list[str]:
    return [last_user(r) for r in server.requests if r.get("stream")]


async def test_a_cut_answer_is_continued_and_the_joined_answer_is_placed(tmp_path: Path) -> None:
    head = "```python\n# file: calc.py\ndef sub(a, b):\n    ret"
    replies = iter([text(head, finish_reason="length"), text("urn a - b\n```")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=1,
                                                           repairs=0, ablate=())
    assert stats.passed, stats.attempts
    assert "def sub(a, b):\n    return a - b" in (repo / "calc.py").read_text().replace("\r\n", "\n")
    second = server.requests[1]
    # the answer so far is the final assistant message, which the server continues (a prefill), not
    # a user message asking for the rest (small models then start the whole answer over)
    assert second["messages"][-1] == {"role": "assistant", "content": head}
    assert second["messages"][:-1] == server.requests[0]["messages"]
    assert (second.get("continue_final_message"), second.get("add_generation_prompt")) == (True, False)
    assert stats.stages["propose: continued"] == 1 and stats.stages["propose: edit: cut"] == 1
    assert stats.stages["commit: committed, to review"] == 1


async def test_a_server_that_streams_the_prefill_back_first_is_joined_once(tmp_path: Path) -> None:
    """llama.cpp's server without the ``continue_final_message`` flag streams the prefill back,
    then what it adds: the answer is the prefill once, then the rest."""
    head = "```python\n# file: calc.py\ndef sub(a, b):\n    ret"
    replies = iter([text(head, finish_reason="length"), text(head + "urn a - b\n```")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=1,
                                                           repairs=0, ablate=())
    assert stats.passed, stats.attempts
    assert (repo / "calc.py").read_text().replace("\r\n", "\n").count("def sub(a, b):\n    return a - b\n") == 1


async def test_a_server_that_refuses_the_prefill_is_asked_for_the_rest_in_a_user_message(tmp_path: Path) -> None:
    head = "```python\n# file: calc.py\ndef sub(a, b):\n    ret"

    def responder(req):
        if req.get("continue_final_message"):
            return error(400, "unknown field: continue_final_message")
        return text(head, finish_reason="length") if len(req["messages"]) == 2 else text("urn a - b\n```")
    result, tools, server, stats, repo = await guided_turn(tmp_path, responder, attempts=1, repairs=0, ablate=())
    assert stats.passed, stats.attempts
    assert "def sub(a, b):\n    return a - b" in (repo / "calc.py").read_text().replace("\r\n", "\n")
    asked = server.requests[-1]["messages"]
    assert asked[-2] == {"role": "assistant", "content": head} and "Continue it exactly where it stopped" in \
        asked[-1]["content"]


def test_a_cut_test_answer_holds_enough_tests_after_two_complete_ones() -> None:
    one = "```python\n# file: t.py\nimport calc\n\n\ndef test_a():\n    assert calc.sub(2, 1) == 1\n\n\ndef test_b():\n    as"
    assert not continuation.enough_tests(one)  # test_b is cut: one complete
    two = one + "sert calc.sub(3, 1) == 2\n\n\n    async def test_c(self):\n        x ="
    assert continuation.enough_tests(two)
    assert not continuation.enough_tests("```python\ndef helper_test():\n    pass\n\ndef test_x():\n    pa")


async def test_a_cut_test_answer_with_enough_complete_tests_is_not_continued(tmp_path: Path) -> None:
    """A model asked for two or three tests writes more of the same until the limit: a continuation
    costs a whole reply for tests the answer does not need; its complete tests are kept."""
    tests = ("```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_small():\n    assert calc.sub(5, 2) == 3\n\n\n"
             "def test_sub_negative():\n    assert calc.sub(2, 5) == -3\n\n\ndef test_sub_zero():\n    assert calc.s")
    replies = iter([RIGHT, text(tests, finish_reason="length")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), goal=GOAL_TEST,
                                                           attempts=1, repairs=0, ablate=())
    assert stats.passed, stats.attempts
    assert len(server.requests) == 2  # the edit, the tests: no continuation
    test = (repo / "test_sub.py").read_text()
    assert "def test_sub_small" in test and "def test_sub_negative" in test and "test_sub_zero" not in test
    assert stats.stages["propose: tests: cut"] == 1 and "propose: continued" not in stats.stages


async def test_ablated_a_cut_answer_is_not_continued(tmp_path: Path) -> None:
    head = "```python\n# file: calc.py\ndef sub(a, b):\n    ret"
    replies = iter([text(head, finish_reason="length")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=1,
                                                           repairs=0, ablate=("continue",))
    assert not stats.passed and len(server.requests) == 1 and stats.attempts[0].outcome == "nothing placed"
    assert f"cut off at max_tokens ({server.requests[0]['max_tokens']})" in stats.attempts[0].detail  # the real limit
    assert stats.stages["commit: task blocked"] == 1


def _tests_then_right(test_replies: list[str]):
    """Edit answers RIGHT; test asks get ``test_replies`` in order (the last one again after them)."""
    tests = iter(test_replies)
    last = {"reply": test_replies[-1]}

    def responder(req):
        if "test" in last_user(req).lower() and "# file: calc.py" not in last_user(req) and (
                "Now write" in last_user(req) or "test_sub.py" in last_user(req)):
            last["reply"] = next(tests, last["reply"])
            return text(last["reply"])
        return RIGHT
    return responder


async def test_a_new_test_repeating_an_existing_one_is_refused_and_a_new_one_asked(tmp_path: Path) -> None:
    files = {"calc.py": CALC, "test_calc.py": TEST + "\n\ndef test_sub_again():\n    assert calc.sub(5, 2) == 3\n"}
    copy = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_mine():\n    assert calc.sub(5, 2) == 3\n```"
    fresh = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_mine():\n    assert calc.sub(9, 4) == 5\n```"
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, _tests_then_right([copy, fresh]), files=files, goal=GOAL_TEST, attempts=1, repairs=1)
    assert stats.passed, stats.attempts
    assert any("repeats a test the repository already has" in a for a in asks(server)), asks(server)
    assert stats.stages["check: test repeated"] == 1
    assert "calc.sub(9, 4) == 5" in (repo / "test_sub.py").read_text()


async def test_ablated_a_repeated_test_counts_as_new(tmp_path: Path) -> None:
    files = {"calc.py": CALC, "test_calc.py": TEST + "\n\ndef test_sub_again():\n    assert calc.sub(5, 2) == 3\n"}
    copy = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_mine():\n    assert calc.sub(5, 2) == 3\n```"
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, _tests_then_right([copy]), files=files, goal=GOAL_TEST, attempts=1, repairs=1,
        ablate=("continue", "repeat-test"))
    assert stats.passed and not any("repeats a test" in a for a in asks(server))


async def test_a_new_test_that_cannot_run_on_its_own_goes_back_as_the_tests_fault(tmp_path: Path) -> None:
    broken = ("```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_small(numbers):\n"
              "    assert calc.sub(*numbers) == 3\n```")  # a fixture nobody defines
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, _tests_then_right([broken, SUB_TEST]), goal=GOAL_TEST, attempts=1, repairs=1)
    assert stats.passed, (result, stats.attempts)
    told = [a for a in asks(server) if "fail on their own, before they test anything" in a]
    assert told and "fixture 'numbers' not found" in told[0]
    assert stats.stages["check: test broken"] == 1


async def test_ablated_a_broken_new_test_fails_the_checks_instead(tmp_path: Path) -> None:
    broken = ("```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_small(numbers):\n"
              "    assert calc.sub(*numbers) == 3\n```")
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, _tests_then_right([broken, SUB_TEST]), goal=GOAL_TEST, attempts=1, repairs=1,
        ablate=("continue", "test-alone"))
    assert not any("fail on their own" in a for a in asks(server))
    assert stats.stages["check: test broken"] == 0 and stats.stages["validate: checks failed"] >= 1


async def test_a_continuation_that_starts_over_replaces_the_cut_answer(tmp_path: Path) -> None:
    """A server that does not continue a final assistant message answers anew: that answer replaces
    the cut one, and the endpoint's later continuations are asked in a user message."""
    head = "```python\n# file: calc.py\ndef sub(a, b):\n    ret"
    again = "```python\n# file: calc.py\ndef sub(a, b):\n    result = a - b\n    re"
    replies = iter([text(head, finish_reason="length"), text(again, finish_reason="length"),
                    text("turn result\n```")])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: next(replies), attempts=1,
                                                           repairs=0, ablate=())
    assert len(server.requests) == 3 and stats.stages["propose: continuation restarted"] == 1
    assert stats.passed, stats.attempts  # the whole new answer, not the two joined (which would not parse)
    third = server.requests[2]
    assert third["messages"][-2] == {"role": "assistant", "content": again} and "continue_final_message" not in third
    assert "    result = a - b\n    return result" in (repo / "calc.py").read_text().replace("\r\n", "\n")


def test_a_loop_of_cases_numbered_in_comments_is_a_loop() -> None:
    """A small model's test loops as "# Test case N: ..." above the same two lines; the numbered
    comment made no two cycles equal, and the loop was continued twice (two more minutes)."""
    case = '    # Test case {n}: a long match and a case-insensitivity\n    r = inv.search("a and b")\n    assert r == []\n'
    head = "```python\n# file: tests/test_store.py\ndef test_search(inv):\n"
    assert continuation.looping(head + "".join(case.format(n=n) for n in range(1, 6)) + "    # Test ca")
    different = "".join(f'    # Test case {n}\n    r = inv.search("{n}")\n    assert r == [{n}]\n' for n in range(1, 6))
    assert not continuation.looping(head + different + "    # Test ca")


def test_a_runaway_table_of_one_shape_is_a_loop_and_a_short_one_is_not() -> None:
    """A test answer cut while each assert grew a little on the one before ('1,25,67', then
    '1,25,67,89', ...): no two lines the same, and it was continued twice (two more minutes)."""
    head = "```python\n# file: tests/test_money.py\ndef test_parse():\n"
    grow = "".join(f"    assert parse_money('1,25{',67' * i}') == 12550\n" for i in range(continuation.RUNAWAY))
    assert continuation.looping(head + grow + "    assert pa")
    short = "".join(f"    assert parse_money('{i},25') == {i}25\n" for i in range(continuation.RUNAWAY - 1))
    assert not continuation.looping(head + short + "    assert pa")
    pairs = "".join(f"    r = f('{i}')\n    assert r == [{i}]\n" for i in range(continuation.RUNAWAY * 3 // 4))
    assert continuation.looping(head + pairs + "    r = ")
