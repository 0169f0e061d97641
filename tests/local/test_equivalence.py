"""The same intent in the text spelling and the native spelling decodes to the same action."""

from __future__ import annotations

import json

import pytest

from foreman.backends.local.nativecodec import (
    NativeDecoder,
    ToolCall,
    decode_tool_calls,
)
from foreman.backends.local.registry import TOOLS
from foreman.backends.local.textcodec import decode

EDIT_TEXT = "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"

# kind -> (text spelling, native tool name, native arguments)
SPELLINGS: dict[str, tuple[str, str, dict]] = {
    "read": ("READ src/calc.py:3-9\n", "read", {"path": "src/calc.py", "start": 3, "end": 9}),
    "list": ("LIST src\n", "list", {"path": "src"}),
    "glob": ("GLOB **/*.py\n", "glob", {"pattern": "**/*.py"}),
    "grep": ("GREP def \\w+\\(\n", "grep", {"pattern": "def \\w+\\("}),
    "search": ("SEARCH return a - b\n", "search", {"text": "return a - b"}),
    "edit": (EDIT_TEXT, "edit", {"path": "calc.py", "search": "    return a - b", "replace": "    return a + b"}),
    "create": ("t.py\n<<<<<<< SEARCH\n=======\nimport calc\n>>>>>>> REPLACE\n", "create",
               {"path": "t.py", "content": "import calc"}),
    "delete": ("DELETE build\n", "delete", {"path": "build"}),
    "mkdir": ("MKDIR src/util\n", "mkdir", {"path": "src/util"}),
    "move": ("MOVE a.py -> b/a.py\n", "move", {"source": "a.py", "destination": "b/a.py"}),
    "copy": ("COPY a.py -> a_copy.py\n", "copy", {"source": "a.py", "destination": "a_copy.py"}),
    "rename": ("RENAME a.py -> z.py\n", "rename", {"source": "a.py", "destination": "z.py"}),
    "run": ("RUN python -m pytest -q\n", "run", {"command": "python -m pytest -q"}),
    "send_message": ('TOOL send_message {"to": "lead", "text": "done"}\n', "send_message", {"to": "lead", "text": "done"}),
    "ask_user": ('TOOL ask_user {"question": "Keep it?", "options": ["yes", "no"]}\n', "ask_user",
                 {"question": "Keep it?", "options": ["yes", "no"]}),
    "write_memory": ('TOOL write_memory {"name": "plan", "content": "step 1"}\n', "write_memory",
                     {"name": "plan", "content": "step 1"}),
    "read_memory": ('TOOL read_memory {"name": "plan"}\n', "read_memory", {"name": "plan"}),
    "update_task": ('TOOL update_task {"status": "review", "note": "green"}\n', "update_task",
                    {"status": "review", "note": "green"}),
    "report_status": ('TOOL report_status {"text": "testing"}\n', "report_status", {"text": "testing"}),
    "list_tasks": ("TOOL list_tasks\n", "list_tasks", {}),
    "create_task": ('TOOL create_task {"title": "Fix add", "assignee": "kit"}\n', "create_task",
                    {"title": "Fix add", "assignee": "kit"}),
    "request_merge": ('TOOL request_merge {"task_id": "t1", "summary": "ok"}\n', "request_merge",
                      {"task_id": "t1", "summary": "ok"}),
    "final": ("FINAL Fixed add; 3 tests pass.\n", "final", {"summary": "Fixed add; 3 tests pass."}),
}


def test_every_registry_tool_has_a_spelling_pair() -> None:
    assert set(SPELLINGS) == {spec.name for spec in TOOLS}


@pytest.mark.parametrize("kind", sorted(SPELLINGS))
def test_text_and_native_decode_to_the_same_action(kind: str) -> None:
    text, name, arguments = SPELLINGS[kind]
    from_text = decode(text)
    from_native = decode_tool_calls([ToolCall(name, json.dumps(arguments), "call_1")], finish_reason="tool_calls")
    assert from_text.reason is None and from_native.reason is None
    assert len(from_text.actions) == 1
    assert from_text.actions == from_native.actions
    assert from_text.actions[0].kind == kind
    assert from_text.repairs == () and from_native.repairs == ()


@pytest.mark.parametrize("kind", sorted(SPELLINGS))
def test_streamed_native_deltas_decode_like_the_text(kind: str) -> None:
    text, name, arguments = SPELLINGS[kind]
    raw = json.dumps(arguments)
    decoder = NativeDecoder()
    decoder.feed_tool_call_delta({"index": 0, "id": "call_1", "function": {"name": name, "arguments": ""}})
    for start in range(0, len(raw), 3):
        assert decoder.feed_tool_call_delta({"index": 0, "function": {"arguments": raw[start:start + 3]}}) == []
    assert decoder.finish("tool_calls").actions == decode(text).actions
