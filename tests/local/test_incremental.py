"""Streaming: any chunking decodes like one shot; a cut reply never yields half an action."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from foreman.backends.local.nativecodec import (
    NativeDecoder,
    ToolCall,
    decode_tool_calls,
)
from foreman.backends.local.textcodec import TextDecoder, decode

from ._corpus import load_cases

CASES = load_cases()
EDIT = (
    "I will fix it.\n"
    "calc.py\n```python\n<<<<<<< SEARCH\ndef add(a, b):\n    return a - b\n=======\n"
    "def add(a, b):\n    return a + b\n>>>>>>> REPLACE\n```\n"
)


def _stream(text: str, cuts: list[int], finish_reason: str, role: str | None = None):
    decoder = TextDecoder(role=role)
    streamed = []
    last = 0
    for cut in sorted(set(cuts)) + [len(text)]:
        streamed += decoder.feed(text[last:cut])
        last = cut
    return streamed, decoder.finish(finish_reason)


def test_char_by_char_matches_one_shot_for_the_whole_corpus() -> None:
    for case in CASES:
        streamed, result = _stream(case.text, list(range(len(case.text))), case.finish_reason, case.role)
        assert result == decode(case.text, case.finish_reason, role=case.role), case.name
        assert tuple(streamed) == result.actions[:len(streamed)], case.name


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_random_chunks_match_one_shot(data) -> None:
    case = data.draw(st.sampled_from(CASES))
    cuts = data.draw(st.lists(st.integers(0, len(case.text)), max_size=30))
    streamed, result = _stream(case.text, cuts, case.finish_reason, case.role)
    assert result == decode(case.text, case.finish_reason, role=case.role)
    assert tuple(streamed) == result.actions[:len(streamed)]


def test_streamed_actions_wait_for_their_terminator() -> None:
    decoder = TextDecoder()
    assert decoder.feed("READ calc.py") == []
    assert [a.kind for a in decoder.feed("\nRUN pytest")] == ["read"]
    assert decoder.feed(" -q") == []
    body = EDIT[:-len(">>>>>>> REPLACE\n```\n")]
    assert [a.kind for a in decoder.feed("\n" + body)] == ["run"]
    assert decoder.feed(">>>>>>> REPL") == []
    assert [a.kind for a in decoder.feed("ACE\n")] == ["edit"]


PROTOCOL_CASES = [case for case in CASES if case.finish_reason == "stop" and "json_decision" not in case.expected["repairs"]]


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_length_cut_yields_a_prefix_of_the_full_actions(data) -> None:
    case = data.draw(st.sampled_from(PROTOCOL_CASES))
    cut = data.draw(st.integers(0, len(case.text)))
    full = decode(case.text, "stop", role=case.role)
    partial = decode(case.text[:cut], "length", role=case.role)
    assert partial.actions == full.actions[:len(partial.actions)]


def test_length_cut_never_yields_half_an_edit() -> None:
    full = decode(EDIT).actions
    assert len(full) == 1
    complete_at = EDIT.index(">>>>>>> REPLACE\n") + len(">>>>>>> REPLACE\n")
    for cut in range(len(EDIT) + 1):
        result = decode(EDIT[:cut], "length")
        assert result.actions == (full if cut >= complete_at else ()), cut
        if cut < complete_at and cut > EDIT.index("calc.py"):
            assert result.reason == "truncated"


def test_length_cut_native_arguments_never_yield_half_a_call() -> None:
    arguments = json.dumps({"path": "calc.py", "search": "return a - b", "replace": "return a + b"})
    whole = decode_tool_calls([ToolCall("edit", arguments)]).actions
    for cut in range(len(arguments) + 1):
        decoder = NativeDecoder()
        decoder.feed_tool_call_delta({"index": 0, "id": "c1", "function": {"name": "edit", "arguments": arguments[:cut]}})
        result = decoder.finish("length")
        assert result.actions == (whole if cut == len(arguments) else ()), cut


def test_decoding_stays_fast_on_pathological_text() -> None:
    """Unclosed braces in prose once made the JSON scan quadratic (11 s for 100 kB)."""
    import time

    braces = "\n".join(f"In f{i} we do {{ x = {i}; if (y) {{ z(); " for i in range(2000))
    note = 'TOOL write_memory {"name": "n", "content": "' + "\n".join(f"line {i}" for i in range(3000)) + '"}\n'
    started = time.perf_counter()
    assert decode(braces).reason == "no_action"
    assert [a.kind for a in decode(note).actions] == ["write_memory"]
    assert time.perf_counter() - started < 3.0
