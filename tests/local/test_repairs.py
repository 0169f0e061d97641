"""Lenient JSON, loop detection and bad-turn classification."""

from __future__ import annotations

import pytest

from foreman.backends.local.repairs import (
    BadModelTurn,
    LoopDetector,
    classify_server_error,
    is_degenerate_line,
    json_objects,
    loads_lenient,
    object_end,
)


@pytest.mark.parametrize(("text", "value", "repairs"), [
    ('{"a": 1}', {"a": 1}, []),
    ('{"a": [1, 2,],}', {"a": [1, 2]}, ["trailing_comma"]),
    ('```json\n{"a": 1}\n```', {"a": 1}, ["json_fence"]),
    ('{"a": "x\ny"}', {"a": "x\ny"}, ["raw_control_char"]),
    ("{'a': True, 'b': None}", {"a": True, "b": None}, ["python_literal"]),
    ('{"a": "keep, }"}', {"a": "keep, }"}, []),
    ('{"a": "comma ,}" ,}', {"a": "comma ,}"}, ["trailing_comma"]),
])
def test_loads_lenient(text: str, value, repairs: list[str]) -> None:
    assert loads_lenient(text) == (value, repairs)


@pytest.mark.parametrize("text", ["{a: 1}", "not json", "{'a': 1", "'just a string'"])
def test_loads_lenient_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError):
        loads_lenient(text)


def test_object_spans_ignore_braces_in_strings_and_unclosed_objects() -> None:
    text = 'x {"a": "}{"} y {"b": {"c": 1}} z {"open": 1'
    assert [text[s:e] for s, e in json_objects(text)] == ['{"a": "}{"}', '{"b": {"c": 1}}']
    assert object_end('{"a": 1', 0) is None
    assert object_end("{'it''s': 1}", 0) is not None


def test_degenerate_lines() -> None:
    assert is_degenerate_line("and then " * 9)
    assert not is_degenerate_line("-" * 80)
    assert not is_degenerate_line("0" * 64)
    assert not is_degenerate_line("short short short")
    assert not is_degenerate_line("def add(a, b): return a + b  # a normal line of code, not a loop")


def test_loop_detector_thresholds() -> None:
    same = LoopDetector()
    assert [same.push("again") for _ in range(6)] == [False] * 5 + [True]
    cycle = LoopDetector()
    results = [cycle.push(line) for line in ["a", "b"] * 4]
    assert results[-1] is True and not any(results[:-1])
    calm = LoopDetector()
    assert not any(calm.push(f"line {i}") for i in range(50))
    assert not LoopDetector().push("   ")


@pytest.mark.parametrize(("status", "body"), [
    (500, '{"error": {"code": 500, "message": "The model produced output that does not match the expected peg-native format", "type": "server_error"}}'),
    (500, b'{"error": {"message": "Failed to parse tool call arguments as JSON"}}'),
    (400, {"error": {"message": "Could not parse tool call: unexpected token"}}),
    (500, "failed to parse the function call"),
])
def test_unparseable_tool_output_is_a_bad_model_turn(status: int, body) -> None:
    verdict = classify_server_error(status, body)
    assert isinstance(verdict, BadModelTurn)
    assert verdict.reason == "unparseable_tool_output"
    assert verdict.detail


@pytest.mark.parametrize(("status", "body"), [
    (500, '{"error": {"message": "out of memory"}}'),
    (503, '{"error": {"message": "failed to parse tool call"}}'),
    (500, None),
    (404, "model not found"),
])
def test_other_server_errors_are_not_bad_turns(status: int, body) -> None:
    assert classify_server_error(status, body) is None
