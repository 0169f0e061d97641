"""What OpenAI-compatible servers really send (issue 13 item 5), each through real HTTP and the
real ``openai`` client: the endpoint and the native decoder take every variant."""

from __future__ import annotations

import pytest

from foreman.backends.local.endpoint import Endpoint
from foreman.backends.local.nativecodec import NativeDecoder
from foreman.errors import BackendError

from .fakeserver import FakeOpenAI, Reply


async def _stream(server: FakeOpenAI, endpoint: Endpoint | None = None):
    endpoint = endpoint or Endpoint(server.url)
    decoder = NativeDecoder(role="worker")
    try:
        reply = await endpoint.stream(model="fake-coder", messages=[{"role": "user", "content": "go"}], max_tokens=64,
                                      temperature=0, on_content=decoder.feed_content,
                                      on_tool_delta=decoder.feed_tool_call_delta)
    finally:
        await endpoint.close()
    return reply, decoder.finish(reply.finish_reason)


def _call(index, name=None, arguments=None, call_id=None):
    delta: dict = {"function": {}}
    if index is not None:
        delta["index"] = index
    if call_id:
        delta["id"], delta["type"] = call_id, "function"
    if name is not None:
        delta["function"]["name"] = name
    if arguments is not None:
        delta["function"]["arguments"] = arguments
    return {"tool_calls": [delta]}


async def test_tool_call_arguments_sent_as_an_object() -> None:
    reply = Reply(deltas=[_call(0, "read_file", {"path": "calc.py"}, "c1")], finish_reason="tool_calls")
    with FakeOpenAI(lambda req: reply) as server:
        _, result = await _stream(server)
    assert [a.to_dict() for a in result.actions] == [{"kind": "read", "path": "calc.py", "start": None, "end": None}]


async def test_several_calls_sharing_index_0() -> None:
    reply = Reply(deltas=[_call(0, "read_file", '{"path": "a.py"}', "c1"), _call(0, "read_file", '{"path": "b.py"}', "c2")],
                  finish_reason="tool_calls")
    with FakeOpenAI(lambda req: reply) as server:
        _, result = await _stream(server)
    assert [a.path for a in result.actions] == ["a.py", "b.py"]


async def test_deltas_without_index_and_the_name_repeated_in_every_delta() -> None:
    reply = Reply(deltas=[_call(None, "read_file", '{"pa'), _call(None, "read_file", 'th": "a.py"}'),
                          _call(None, "list", '{"path": "."}')], finish_reason="tool_calls")
    with FakeOpenAI(lambda req: reply) as server:
        _, result = await _stream(server)
    assert [a.to_dict()["kind"] for a in result.actions] == ["read", "list"]
    assert result.actions[0].path == "a.py"


async def test_reasoning_content_with_empty_content_is_a_think_block() -> None:
    reply = Reply(deltas=[{"content": "", "reasoning_content": "Let me think about calc.py."},
                          {"reasoning_content": " Still thinking."}])
    with FakeOpenAI(lambda req: reply) as server:
        got, result = await _stream(server)
    assert got.content == "<think>Let me think about calc.py. Still thinking.</think>"
    assert result.actions == () or list(result.actions) == []
    assert result.reason == "only_thinking"


async def test_http_200_with_an_error_body_shows_the_servers_message() -> None:
    with FakeOpenAI(lambda req: Reply(error_in_body="upstream model overloaded")) as server:
        with pytest.raises(BackendError, match="upstream model overloaded"):
            await _stream(server)


async def test_preflight_catches_an_error_body_with_status_200() -> None:
    bad = Reply(error_in_body="no such deployment")
    with FakeOpenAI(lambda req: Reply(text="hi"), preflight=bad) as server:
        endpoint = Endpoint(server.url)
        try:
            with pytest.raises(BackendError, match="no such deployment"):
                await endpoint.preflight(["fake-coder"])
        finally:
            await endpoint.close()


async def test_a_server_rejecting_stream_options_is_retried_without_it() -> None:
    with FakeOpenAI(lambda req: Reply(text="READ calc.py"), reject_stream_options=True) as server:
        endpoint = Endpoint(server.url)
        got, _ = await _stream(server, endpoint)
        assert got.content == "READ calc.py" and endpoint.no_stream_options
        assert all("stream_options" not in r for r in server.requests)
