"""Display-safe text (issue 37 item 9): titles and names refuse bidi and control characters with
``bad_text``, whatever path they come by; bodies keep them and every client shows them escaped.
The rule is ``protocol/text.py``, documented in ``docs/protocol.md`` ("Display-safe text")."""

from __future__ import annotations

import json

import pytest

from foreman.core.core import Core
from foreman.errors import BadText
from foreman.memory import Memory
from protocol.text import BIDI_CONTROLS, TITLE_FIELDS, display, title_problem, unsafe

from .test_core_rules import refused
from .worlds import T0, team_core

#: Every character the rule names, and a few spellings of each kind.
UNSAFE = [*BIDI_CONTROLS, "\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x1b", "\x1f", "\x7f", "\x85", "\x9b"]
SAFE = ["\n", "\t", " ", "é", "日本", "\u00a0", "🙂", "<U+202E>", "a\\u202e"]


@pytest.mark.parametrize("ch", UNSAFE)
def test_every_bidi_and_control_character_is_unsafe_and_shown_escaped(ch: str) -> None:
    assert unsafe(ch)
    shown = display(f"Merge{ch}t2")
    assert ch not in shown and shown == f"Merge<U+{ord(ch):04X}>t2"
    assert title_problem("a task title", f"x{ch}") is not None


@pytest.mark.parametrize("text", SAFE)
def test_newline_tab_and_ordinary_text_are_safe_and_shown_as_they_are(text: str) -> None:
    assert display(text) == text
    assert title_problem("a task title", text) is None


def test_a_line_break_keeps_its_cr_hidden_and_a_lone_cr_is_shown() -> None:
    assert display("a\r\nb\x00") == "a\nb<U+0000>"
    assert display("a\rb\x1b[2Jc") == "a<U+000D>b<U+001B>[2Jc"


def test_the_refusal_names_the_character_its_position_and_the_text_as_shown() -> None:
    problem = title_problem("a task title", "Fix \u202egnp.exe")
    assert problem is not None
    assert "<U+202E>" in problem and "RIGHT-TO-LEFT OVERRIDE" in problem and "character 5" in problem
    assert "'Fix <U+202E>gnp.exe'" in problem


# ---- the daemon's core refuses titles and names, whoever sends them ------------------------------
_TITLE_INPUTS = {
    "a task title": lambda c, bad: c.create_task(f"Tag {bad}storage", T0, goal="g1"),
    "a goal's text": lambda c, bad: c.submit_goal(f"Add {bad}tags", T0),
    "an agent's title": lambda c, bad: c.add_agent("ash", T0, title=f"Ash{bad}"),
    "a decision's option": lambda c, bad: c.open_decision("question", "Which?", ["Merge", f"Re{bad}ject"], T0,
                                                          asked_by="kit"),
}


@pytest.mark.parametrize("what", list(_TITLE_INPUTS))
@pytest.mark.parametrize("bad", ["\u202e", "\u2066", "\u200f", "\u061c", "\x00", "\x1b", "\r", "\x7f", "\x9b"])
def test_a_title_or_name_with_a_bidi_or_control_character_is_refused_and_nothing_changes(what: str, bad: str) -> None:
    core = team_core()
    err = refused(core, lambda c: _TITLE_INPUTS[what](c, bad), BadText)
    assert err.code == "bad_text"
    assert what in err.message and f"<U+{ord(bad):04X}>" in err.message


@pytest.mark.parametrize("what", list(_TITLE_INPUTS))
def test_titles_may_hold_newline_tab_and_any_other_character(what: str) -> None:
    core = team_core()
    _TITLE_INPUTS[what](core, "\t日本 é\n")


def test_bodies_keep_the_text_as_stored() -> None:
    core: Core = team_core()
    body = "see \u202eevil\x00 here"
    core.send_message("kit", "user", body, T0)
    core.feed(body, T0)
    t = core.create_task("plain title", T0, goal="g1", description=body)
    d = core.open_decision("question", body, ["Yes", "No"], T0, asked_by="kit", detail=body)
    assert core.world.tasks[t.id].description == body
    assert core.world.decisions[d.id].prompt == body and core.world.decisions[d.id].detail == body


def test_memory_note_names_stay_plain_ids_and_a_hand_made_file_with_others_is_no_note(tmp_path) -> None:
    mem = Memory(tmp_path)
    mem.write("shared/plan", "ok")
    (tmp_path / "shared" / "pl\u202ean.md").write_text("spoof")
    (tmp_path / "agents" / "kit").mkdir()
    (tmp_path / "agents" / "kit" / "no\x1bte.md").write_text("spoof")
    assert mem.index() == ["shared/plan"]
    with pytest.raises(Exception):
        mem.write("shared/pl\u202ean", "x")


def test_the_title_fields_are_wire_fields() -> None:
    import protocol

    for field in TITLE_FIELDS:
        model, name = field.split(".")
        assert name in getattr(protocol, model).model_fields, field


def test_the_protocol_doc_states_the_rule() -> None:
    from foreman.protodoc import DOCS_DIR

    doc = (DOCS_DIR / "protocol.md").read_text(encoding="utf-8")
    section = doc.split("## Display-safe text", 1)[1].split("\n## ", 1)[0]
    for needle in ("`bad_text`", "<U+XXXX>", "U+202A..U+202E", "U+2066..U+2069", "U+200E..U+200F", "U+061C",
                   "U+0000..U+0008", "U+000B..U+001F", "Minecraft mod", *(f"`{f}`" for f in TITLE_FIELDS)):
        assert needle in section, needle
    codes = [line.split("`")[1] for line in doc.split("### Error codes", 1)[1].splitlines() if line.startswith("| `")]
    assert "bad_text" in codes
    assert json.loads((DOCS_DIR / "protocol.schema.json").read_text(encoding="utf-8"))["x-protocol-version"] == 1
