"""The native codec: tool calls whole, streamed by index, cut, aliased, or missing."""

from __future__ import annotations

from types import SimpleNamespace

from foreman.backends.local.nativecodec import (
    NativeDecoder,
    ToolCall,
    as_tool_call,
    decode_tool_calls,
)
from foreman.backends.local.registry import parse_action

READ_A = parse_action({"kind": "read", "path": "a.py"})
RUN_T = parse_action({"kind": "run", "command": "pytest -q"})


def _chunk(content=None, tool_calls=None, finish_reason=None):
    """A ChatCompletionChunk look-alike with attribute access, as the openai SDK returns."""
    delta = SimpleNamespace(content=content, tool_calls=tool_calls)
    return SimpleNamespace(choices=[SimpleNamespace(delta=delta, finish_reason=finish_reason)])


def _delta(index, name=None, arguments=None, call_id=None):
    return SimpleNamespace(index=index, id=call_id, function=SimpleNamespace(name=name, arguments=arguments))


def test_streamed_calls_are_assembled_by_index_and_emitted_when_complete() -> None:
    decoder = NativeDecoder()
    assert decoder.feed_chunk(_chunk(tool_calls=[_delta(0, "read", "", "c0")])) == []
    assert decoder.feed_chunk(_chunk(tool_calls=[_delta(0, None, '{"path": ')])) == []
    assert decoder.feed_chunk(_chunk(tool_calls=[_delta(0, None, '"a.py"}')])) == []
    assert decoder.feed_chunk(_chunk(tool_calls=[_delta(1, "run", '{"command"', "c1")])) == [READ_A]
    assert decoder.feed_chunk(_chunk(tool_calls=[_delta(1, None, ': "pytest -q"}')], finish_reason="tool_calls")) == []
    result = decoder.finish()
    assert result.actions == (READ_A, RUN_T)
    assert result.reason is None and result.repairs == ()
    assert [call.to_dict() for call in decoder.tool_calls] == [
        {"id": "c0", "name": "read", "arguments": '{"path": "a.py"}'},
        {"id": "c1", "name": "run", "arguments": '{"command": "pytest -q"}'},
    ]


def test_dict_deltas_work_like_sdk_objects() -> None:
    decoder = NativeDecoder()
    decoder.feed_chunk({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "x", "function": {"name": "read", "arguments": '{"path":"a.py"}'}}]}, "finish_reason": "tool_calls"}]})
    assert decoder.finish().actions == (READ_A,)


def test_tolerant_arguments_and_aliases_are_counted() -> None:
    result = decode_tool_calls([ToolCall("read_file", '{"file_path": "a.py",}')])
    assert result.actions == (READ_A,)
    assert sorted(result.repairs) == ["field_alias", "tool_alias", "trailing_comma"]


def test_unknown_tool_and_bad_arguments_are_dropped_not_raised() -> None:
    result = decode_tool_calls([ToolCall("teleport", "{}"), ToolCall("read", '{"start": 1}'), ToolCall("read", "{not json")])
    assert result.actions == ()
    assert result.dropped == ("unknown_tool", "bad_arguments", "invalid_json")
    assert result.reason == "malformed"


def test_cut_reply_drops_only_an_incomplete_last_call() -> None:
    calls = [ToolCall("read", '{"path": "a.py"}'), ToolCall("run", '{"command": "pyt')]
    result = decode_tool_calls(calls, finish_reason="length")
    assert result.actions == (READ_A,)
    assert result.dropped == ("truncated_action",)
    only = decode_tool_calls(calls[1:], finish_reason="length")
    assert only.actions == () and only.reason == "truncated"


def test_no_tool_call_falls_back_to_the_text_content() -> None:
    decoder = NativeDecoder()
    decoder.feed_chunk(_chunk(content='<tool_call>\n{"name": "read", "arguments": {"path": "a.py"}}\n'))
    decoder.feed_chunk(_chunk(content="</tool_call>", finish_reason="stop"))
    result = decoder.finish()
    assert result.actions == (READ_A,)
    assert result.repairs == ("tool_call_in_content", "tool_call_xml")
    empty = NativeDecoder().finish("stop")
    assert empty.reason == "empty" and empty.repairs == ()


def test_role_limits_native_calls() -> None:
    result = decode_tool_calls([ToolCall("request_merge", '{"task_id": "t1"}')], role="worker")
    assert result.actions == () and result.dropped == ("not_allowed",)


def test_as_tool_call_accepts_openai_and_trace_shapes() -> None:
    openai_shape = {"id": "c", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.py"}'}}
    trace_shape = {"id": "c", "name": "read", "arguments": {"path": "a.py"}}
    assert as_tool_call(openai_shape) == ToolCall("read", '{"path": "a.py"}', "c")
    assert decode_tool_calls([trace_shape]).actions == (READ_A,)


def test_consecutive_identical_calls_are_kept_once() -> None:
    result = decode_tool_calls([ToolCall("read", '{"path": "a.py"}')] * 2)
    assert result.actions == (READ_A,) and result.repairs == ("duplicate_action",)
