"""The local runner with the native protocol (OpenAI tool calls streamed as deltas)."""

from __future__ import annotations

import json
from pathlib import Path

from foreman.backends.local.runner import LocalRunner

from .fakeserver import FakeOpenAI, calls, error, text
from .helpers import FakeTools, git_repo, request, settings_for

CALC = "def add(a, b):\n    return a + b\n"
EDIT = {"path": "calc.py", "search": "    return a + b", "replace": "    return a + b\n\n\ndef sub(a, b):\n    return a - b"}


def script(*replies):
    queue = list(replies)

    def responder(req):
        item = queue.pop(0)
        return item(req) if callable(item) else item

    return responder


async def run(tmp_path: Path, responder, **kw):
    repo = git_repo(tmp_path / "wt", {"calc.py": CALC})
    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url), endpoint=None)
        runner.profile = runner.profile.__class__(**{**runner.profile.__dict__, "protocol": "native"})
        tools = FakeTools(repo)
        try:
            result = await runner.run_turn(request(repo, **kw), tools)
        finally:
            await runner.close()
    return result, tools, server, repo


def tool_results(req) -> list[str]:
    return [m["content"] for m in req["messages"] if m["role"] == "tool"]


async def test_native_turn_transcript_is_canonical(tmp_path: Path) -> None:
    responder = script(calls(("read_file", {"file_path": "calc.py"})), calls(("edit", EDIT)),
                       calls(("final_answer", {"answer": "added sub"})))
    result, tools, server, repo = await run(tmp_path, responder)
    assert result.ok and result.text == "added sub"
    first = server.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} >= {"read", "edit", "run", "final", "update_task"}
    assert "request_merge" not in {t["function"]["name"] for t in first["tools"]}  # worker tools only
    second = server.requests[1]["messages"]
    # aliases (read_file, file_path) are fed back under the registry's names, with content "" (never null)
    assert second[-2]["content"] == "" and second[-2]["tool_calls"][0]["function"]["name"] == "read"
    assert json.loads(second[-2]["tool_calls"][0]["function"]["arguments"])["path"] == "calc.py"
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == second[-2]["tool_calls"][0]["id"]
    assert "def sub" in (repo / "calc.py").read_text()


async def test_native_stale_edit_refused(tmp_path: Path) -> None:
    holder = {}

    def touch(req):
        (holder["repo"] / "calc.py").write_text(CALC + "# moved\n")
        return calls(("edit", EDIT))

    responder = script(calls(("read", {"path": "calc.py"})), touch, calls(("read", {"path": "calc.py"})),
                       calls(("edit", EDIT)), calls(("final", {"summary": "added sub"})))
    repo = git_repo(tmp_path / "wt", {"calc.py": CALC})
    holder["repo"] = repo
    with FakeOpenAI(responder) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url))
        runner.profile = runner.profile.__class__(**{**runner.profile.__dict__, "protocol": "native"})
        result = await runner.run_turn(request(repo), FakeTools(repo))
        await runner.close()
    assert "stale edit refused" in tool_results(server.requests[2])[-1]
    assert result.ok and "def sub" in (repo / "calc.py").read_text()


async def test_native_false_final_rejected(tmp_path: Path) -> None:
    bad = {"path": "calc.py", "search": "return a * b", "replace": "return a - b"}
    responder = script(calls(("read", {"path": "calc.py"})), calls(("edit", bad), ("final", {"summary": "done"})),
                       calls(("edit", EDIT)), calls(("final", {"summary": "added sub"})))
    result, tools, server, repo = await run(tmp_path, responder)
    results = tool_results(server.requests[2])
    assert "does not match" in results[-2] and "FINAL rejected" in results[-1]
    assert result.ok and result.text == "added sub"


async def test_native_loop_stopped(tmp_path: Path) -> None:
    responder = script(*[calls(("glob", {"pattern": "**/*.py"}))] * 8)
    result, tools, server, _ = await run(tmp_path, responder)
    assert not result.ok and "stopped a loop" in (result.error or "")
    assert len(server.requests) == 4


async def test_native_text_fallback_and_idle_cap(tmp_path: Path) -> None:
    responder = script(text("I think the answer is 42."), text(""), error(500, "Failed to parse tool call"))
    result, tools, server, _ = await run(tmp_path, responder)
    assert not result.ok and "no usable action 3 times" in (result.error or "")
