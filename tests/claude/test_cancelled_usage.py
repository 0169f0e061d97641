"""A claude turn cancelled midway (pause, stop) hands over the usage it reported so far: the
CLI's result after the interrupt (tokens and cost), else the usage of the assistant messages
received (tokens; a CLI that never answers the interrupt sends no result)."""

from __future__ import annotations

import asyncio
import time

import pytest

from .conftest import RecordingTools

pytestmark = pytest.mark.timeout(60)


class CancelTools(RecordingTools):
    """RecordingTools with the ``turn_cancelled`` hook."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled: list = []

    def turn_cancelled(self, partial) -> None:
        self.cancelled.append(partial)


async def _cancel_after(fake, runner, request, assistants: int) -> CancelTools:
    tools = CancelTools()
    task = asyncio.ensure_future(runner.run_turn(request, tools))
    deadline = time.monotonic() + 15
    while sum(r["data"].get("type") == "assistant" for r in fake.entries("out")) < assistants:
        assert time.monotonic() < deadline and not task.done(), "the fake never spoke"
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return tools


async def test_a_cancelled_turn_hands_over_the_clis_result_usage_and_cost(fake, make_runner, request_for):
    fake.script({"cost": 0.25, "turns": [[{"text": "working"}, {"hang": True}]]})
    runner = make_runner(abort_grace=5.0, eof_grace=5.0, kill_grace=5.0)
    tools = await _cancel_after(fake, runner, request_for(), 1)
    (partial,) = tools.cancelled
    results = [r["data"] for r in fake.entries("out") if r["data"].get("type") == "result"]
    assert results and results[-1]["terminal_reason"] == "aborted_streaming"  # the CLI answered the interrupt
    assert partial.aborted and not partial.ok
    assert (partial.input_tokens, partial.output_tokens) == (10, 5)  # the result's usage
    assert partial.cost_usd == pytest.approx(0.25)


async def test_without_a_result_the_assistant_messages_usage_is_handed_over(fake, make_runner, request_for):
    fake.script({"ignore_interrupt": True, "cost": 0.25,
                 "turns": [[{"text": "one"}, {"text": "two"}, {"text": "three"}, {"hang": True}]]})
    runner = make_runner()
    tools = await _cancel_after(fake, runner, request_for(), 3)
    assert not [r for r in fake.entries("out") if r["data"].get("type") == "result"]
    (partial,) = tools.cancelled
    assert partial.aborted and partial.cost_usd is None  # only a result says the cost
    assert (partial.input_tokens, partial.output_tokens) == (30, 15)  # 3 responses x (10 in, 5 out)


async def test_a_turn_that_ends_normally_hands_nothing_over(fake, make_runner, request_for):
    fake.script({"turns": [[{"text": "done"}]]})
    tools = CancelTools()
    result = await make_runner().run_turn(request_for(), tools)
    assert result.ok and (result.input_tokens, result.output_tokens) == (10, 5) and tools.cancelled == []


def test_streamed_usage_sums_each_response_once() -> None:
    from foreman.backends.claude.results import streamed_usage

    assert streamed_usage([]) == {"input_tokens": None, "output_tokens": None, "cache_read_tokens": None,
                                  "cache_write_tokens": None}
    got = streamed_usage([{"input_tokens": 3, "output_tokens": 7, "cache_read_input_tokens": 100},
                          {"input_tokens": 2, "output_tokens": 1, "cache_creation_input_tokens": 40, "service_tier": "x"}])
    assert got == {"input_tokens": 5, "output_tokens": 8, "cache_read_tokens": 100, "cache_write_tokens": 40}


def test_transcript_counts_a_response_once_over_its_content_blocks() -> None:
    import claude_agent_sdk as sdk

    from foreman.backends.claude.mapping import Transcript

    said = Transcript(None)
    for usage in ({"input_tokens": 4, "output_tokens": 1}, {"input_tokens": 4, "output_tokens": 9}):  # one response, two blocks
        said.count(sdk, sdk.AssistantMessage(content=[], model="m", usage=usage, message_id="msg_a"))
    said.count(sdk, sdk.AssistantMessage(content=[], model="m", usage={"input_tokens": 2, "output_tokens": 3},
                                         message_id="msg_b", parent_tool_use_id="toolu_1"))  # a subagent's, paid too
    said.count(sdk, sdk.AssistantMessage(content=[], model="m", usage=None, message_id="msg_c"))
    assert list(said.streamed) == ["msg_a", "msg_b"] and said.streamed["msg_a"]["output_tokens"] == 9
