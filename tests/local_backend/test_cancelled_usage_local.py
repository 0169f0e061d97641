"""A local turn cancelled midway (pause, stop) hands over the usage of the replies it received,
against the scripted OpenAI-compatible server: the reply still streaming when the cancel came
is not counted (the server had not reported it), the ones before it are, with their price."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from foreman.backends.local.runner import LocalRunner

from .fakeserver import FakeOpenAI, text
from .helpers import FakeTools, git_repo, request, settings_for

pytestmark = pytest.mark.timeout(60)


class CancelTools(FakeTools):
    """FakeTools with the ``turn_cancelled`` hook."""

    def __init__(self, cwd: Path) -> None:
        super().__init__(cwd)
        self.cancelled: list = []

    def turn_cancelled(self, partial) -> None:
        self.cancelled.append(partial)


async def cancel_after(runner: LocalRunner, repo: Path, server: FakeOpenAI, release: threading.Event, *,
                       requests: int) -> CancelTools:
    """Start a turn, cancel it once the server has seen ``requests`` requests (the turn must be
    cancelled, not end), let the server go and close the runner; return the turn's tools."""
    tools = CancelTools(repo)
    task = asyncio.ensure_future(runner.run_turn(request(repo), tools))
    try:
        deadline = time.monotonic() + 20
        while len(server.requests) < requests:
            assert time.monotonic() < deadline and not task.done(), (task.done() and task.result())
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        release.set()
        await runner.close()
    return tools


async def test_a_cancelled_turn_hands_over_the_replies_received(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "wt", {"calc.py": "def add(a, b):\n    return a + b\n"})
    release = threading.Event()
    replies = iter([text("I look first.\nREAD calc.py\n"), text("READ calc.py\n")])

    def responder(req):
        reply = next(replies, None)
        if reply is None:  # the third call: the model "thinks" until the test lets go
            release.wait(30)
            return text("FINAL never seen")
        return reply

    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url))
        runner.profile = replace(runner.profile, mode="agent", price_in_per_mtok=2.0, price_out_per_mtok=10.0)
        await runner.preflight()
        tools = await cancel_after(runner, repo, server, release, requests=3)
    (partial,) = tools.cancelled
    assert len(server.usage_sent) >= 2
    sent = server.usage_sent[:2]  # the two replies the turn received
    tokens_in = sum(u["prompt_tokens"] for _, u in sent)
    tokens_out = sum(u["completion_tokens"] for _, u in sent)
    assert partial.aborted and not partial.ok
    assert (partial.input_tokens, partial.output_tokens) == (tokens_in, tokens_out) and tokens_in > 0
    assert partial.cost_usd == pytest.approx((tokens_in * 2.0 + tokens_out * 10.0) / 1_000_000)
    assert partial.model == "fake-coder"


async def test_a_turn_cancelled_before_any_reply_hands_over_no_tokens(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "wt", {"calc.py": "x = 1\n"})
    release = threading.Event()

    def responder(req):
        release.wait(30)
        return text("FINAL never seen")

    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url))
        await runner.preflight()
        tools = await cancel_after(runner, repo, server, release, requests=1)
    (partial,) = tools.cancelled
    assert partial.aborted and (partial.input_tokens, partial.output_tokens) == (None, None) and partial.cost_usd == 0
