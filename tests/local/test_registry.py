"""The registry is the one source of the prompt, the native schema and the decoders."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from foreman.backends.local.registry import (
    TOOLS,
    openai_tools,
    parse_action,
    render_instructions,
    tools_for,
)
from foreman.backends.local.textcodec import decode, render_action, render_reply


def test_every_tool_is_an_action_kind_and_a_native_function() -> None:
    names = [spec.name for spec in TOOLS]
    assert len(names) == len(set(names))
    native = {tool["function"]["name"] for tool in openai_tools("lead")}
    assert native == set(names)


def test_native_schema_is_generated_from_the_models() -> None:
    by_name = {tool["function"]["name"]: tool["function"] for tool in openai_tools("lead")}
    read = by_name["read"]["parameters"]
    assert read["required"] == ["path"]
    assert read["properties"]["start"] == {
        "type": "integer", "minimum": 1, "description": "First line to read (1-based); omit to read from the top.",
    }
    assert read["additionalProperties"] is False
    edit = by_name["edit"]["parameters"]
    assert sorted(edit["required"]) == ["path", "replace", "search"]
    assert by_name["update_task"]["parameters"]["properties"]["status"]["enum"] == ["doing", "blocked", "review", "done"]
    assert by_name["list_tasks"]["parameters"]["properties"] == {}
    for function in by_name.values():
        assert "kind" not in function["parameters"]["properties"]
        assert function["description"]
        assert not _has_key(function["parameters"], "title")
    create_task = by_name["create_task"]["parameters"]
    assert create_task["required"] == ["title"] and create_task["properties"]["title"]["type"] == "string"


def _has_key(node, key: str) -> bool:
    """True when a schema holds ``key`` as a keyword (property names do not count)."""
    if isinstance(node, list):
        return any(_has_key(item, key) for item in node)
    if not isinstance(node, dict):
        return False
    for name, value in node.items():
        if name == "properties":
            if any(_has_key(sub, key) for sub in value.values()):
                return True
        elif name == key or _has_key(value, key):
            return True
    return False


def test_lead_only_tools_are_not_offered_to_workers() -> None:
    worker = {tool["function"]["name"] for tool in openai_tools("worker")}
    assert "create_task" not in worker and "request_merge" not in worker
    assert "create_task" not in render_instructions("worker")
    assert "TOOL create_task" in render_instructions("lead")
    with pytest.raises(ValueError):
        tools_for("boss")


@pytest.mark.parametrize("role", ["lead", "worker"])
def test_instructions_teach_every_tool_of_the_role(role: str) -> None:
    text = render_instructions(role)
    for spec in tools_for(role):
        assert spec.syntax in text
    assert "<<<<<<< SEARCH" in text and ">>>>>>> REPLACE" in text


def test_parse_action_validates() -> None:
    assert parse_action({"kind": "read", "path": "a.py", "start": 2}).to_dict() == {
        "kind": "read", "path": "a.py", "start": 2, "end": None,
    }
    for bad in ({"kind": "read"}, {"kind": "read", "path": "a", "start": 5, "end": 2},
                {"kind": "fly"}, {"kind": "run", "command": "ls", "shell": "bash"},
                {"kind": "update_task", "status": "finished"}):
        with pytest.raises(ValidationError):
            parse_action(bad)


def test_actions_are_frozen_values() -> None:
    action = parse_action({"kind": "run", "command": "ls"})
    with pytest.raises(ValidationError):
        action.command = "rm -rf /"  # type: ignore[misc]
    assert action == parse_action({"kind": "run", "command": "ls"})
    assert hash(action) == hash(parse_action({"kind": "run", "command": "ls"}))


# -- canonical rendering round-trips through the decoder -----------------------------------
FRAGMENTS = ["a", "b.py", "src/", " ", "  ", "\n", "\t", "x y", "-", "->", ":", "3-9", "`", '"', "'", "{", "}",
             "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "<think>", "</think>", "<tool_call>", "```", "READ ",
             "RUN ", "FINAL", "TOOL ", "#", "**", "é", "\r", "\\", "0", "1"]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join)
nonempty = texts.filter(lambda value: len(value) > 0)
lines = st.integers(1, 500)


@st.composite
def actions(draw):
    kind = draw(st.sampled_from([spec.name for spec in TOOLS]))
    fields = {
        "read": lambda: {"path": draw(nonempty), "start": draw(st.none() | lines), "end": None},
        "list": lambda: {"path": draw(nonempty)},
        "glob": lambda: {"pattern": draw(nonempty)},
        "grep": lambda: {"pattern": draw(nonempty)},
        "search": lambda: {"text": draw(nonempty)},
        "edit": lambda: {"path": draw(nonempty), "search": draw(nonempty), "replace": draw(texts)},
        "create": lambda: {"path": draw(nonempty), "content": draw(texts)},
        "delete": lambda: {"path": draw(nonempty)},
        "mkdir": lambda: {"path": draw(nonempty)},
        "move": lambda: {"source": draw(nonempty), "destination": draw(nonempty)},
        "copy": lambda: {"source": draw(nonempty), "destination": draw(nonempty)},
        "rename": lambda: {"source": draw(nonempty), "destination": draw(nonempty)},
        "run": lambda: {"command": draw(nonempty)},
        "send_message": lambda: {"to": draw(nonempty), "text": draw(nonempty)},
        "ask_user": lambda: {"question": draw(nonempty), "options": draw(st.lists(texts, max_size=3))},
        "write_memory": lambda: {"name": draw(nonempty), "content": draw(texts)},
        "read_memory": lambda: {"name": draw(st.none() | nonempty)},
        "update_task": lambda: {"status": draw(st.sampled_from(["doing", "review"])), "note": draw(texts)},
        "report_status": lambda: {"text": draw(nonempty)},
        "list_tasks": dict,
        "create_task": lambda: {"title": draw(nonempty), "depends_on": draw(st.lists(nonempty, max_size=2))},
        "request_merge": lambda: {"task_id": draw(nonempty), "summary": draw(texts)},
        "final": lambda: {"summary": draw(nonempty)},
    }[kind]()
    if kind == "read" and fields["start"] is not None and draw(st.booleans()):
        fields["end"] = fields["start"] + draw(st.integers(0, 50))
    return parse_action({"kind": kind, **fields})


@settings(max_examples=600, deadline=None)
@given(action=actions())
def test_render_then_decode_gives_the_same_action(action) -> None:
    result = decode(render_action(action))
    assert result.actions == (action,)
    assert result.repairs == ()


@settings(max_examples=200, deadline=None)
@given(turn=st.lists(actions(), min_size=1, max_size=5))
def test_a_rendered_turn_decodes_back(turn) -> None:
    deduped = [action for index, action in enumerate(turn) if index == 0 or turn[index - 1] != action]
    result = decode(render_reply(turn))
    assert list(result.actions) == deduped


def test_package_init_stays_light() -> None:
    """Importing the package (as the daemon does lazily) loads none of its modules."""
    import subprocess
    import sys

    code = (
        "import sys, foreman.backends; before = set(sys.modules); import foreman.backends.local; "
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['foreman.backends.local']"
