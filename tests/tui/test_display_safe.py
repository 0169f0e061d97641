"""The line-mode views and transcript show bidi and control characters escaped (issue 37 item 9;
docs/protocol.md, "Display-safe text"); the app's panes are tested in test_app.py."""

from __future__ import annotations

import io

import protocol as p
from foreman.tui import views
from foreman.tui.mirror import Mirror
from foreman.tui.transcript import Transcript

RLO, NUL, ESC, CSI = "\u202e", "\x00", "\x1b", "\x9b"


def _mirror() -> Mirror:
    m = Mirror()
    m.apply(p.Snapshot(
        seq=1, status=p.Status(version="0", backend="sim", auth="none", profile="sim", user_name="you"),
        agents=[p.Agent(name="kit", title="Kit", activity=f"run {CSI}2J")],
        goals=[p.Goal(id="g1", text=f"Add {RLO}tags")],
        tasks=[p.Task(id="t1", title=f"t{NUL}itle", status="blocked", blocked_reason=f"hook{ESC}[31m refused")],
        decisions=[p.Decision(id="d1", kind="question", prompt=f"Ok{RLO}?", options=["Yes", f"N{RLO}o"],
                              asked_by="kit", detail=f"a\r\nb{NUL}")],
        feed=[p.FeedItem(id=1, text=f"feed {RLO}x")], messages=[p.Message(id=1, sender="kit", to="user", text=f"m{NUL}")],
    ))
    return m


def test_every_view_line_is_escaped_by_safe() -> None:
    m = _mirror()
    lines = (views.status_view(m) + views.tasks_view(m) + views.agents_view(m) + views.decisions_view(m)
             + views.feed_view(m) + [views.message_line(x) for x in m.messages])
    shown = [views.safe(line) for line in lines]
    text = "\n".join(shown)
    for raw, escaped in ((RLO, "<U+202E>"), (NUL, "<U+0000>"), (ESC, "<U+001B>"), (CSI, "<U+009B>")):
        assert raw not in text and escaped in text
    assert "Ok<U+202E>?" in text and "N<U+202E>o" in text and "hook<U+001B>[31m refused" in text
    assert "    a" in text and "    b<U+0000>" in text  # the detail's CRLF is a line break


def test_the_transcript_writes_no_raw_bidi_or_control_character() -> None:
    out = io.StringIO()
    t = Transcript([out], lambda: 0.0)
    m = _mirror()
    t.lines(views.decisions_view(m) + views.feed_view(m))
    t.write(f"message kit -> user: {RLO}x{NUL}{ESC}[2J")
    written = out.getvalue()
    assert not any(ch in written for ch in (RLO, NUL, ESC, CSI, "\r"))
    assert "message kit -> user: <U+202E>x<U+0000><U+001B>[2J" in written


def test_one_line_places_show_newlines_and_tabs_as_blanks() -> None:
    assert views.one_line(f"a\nb\tc{RLO}") == "a b c<U+202E>"
