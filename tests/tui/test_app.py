"""The Textual app through Pilot, against a real WebSocket server with hand-made state."""

import asyncio

import pytest
from textual.widgets import DataTable, Input, RichLog, Static

import protocol as p
from foreman.tui.app import ForemanApp
from foreman.tui.screens import AnswerScreen, TextScreen

pytestmark = pytest.mark.timeout(60)


async def until(pilot, predicate, timeout: float = 20.0) -> None:
    """Let the app run until ``predicate()`` holds."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await pilot.pause(0.02)


def cells(app, table_id: str) -> dict[str, list[str]]:
    table = app.query_one(f"#{table_id}", DataTable)
    return {row.key.value: [str(c) for c in table.get_row(row.key)] for row in table.ordered_rows}


def banner(app) -> str:
    return str(app.query_one("#banner", Static).render())


def console(app) -> str:
    return "\n".join(line.text for line in app.query_one("#console", RichLog).lines)


async def test_panes_show_the_snapshot_and_follow_upserts(daemon):
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        assert cells(app, "agents")["kit"] == ["kit", "editing@desk", "t2", "editing notes.py", "$0.0000"]
        assert list(cells(app, "tasks")) == ["t2", "t3", "t1"]  # doing, todo, done
        assert cells(app, "tasks")["t2"] == ["t2", "doing", "show tags", "t1", "kit", "$0.0000"]
        assert cells(app, "decisions")["d1"][:3] == ["d1", "merge", "marlow"]
        assert "YOU ARE NEEDED: d1 merge" in banner(app)
        assert app.query_one("#banner").has_class("needed")

        kit = daemon.mirror.agents["kit"].model_copy(update={"state": "testing", "station": "testbench", "activity": "npm test"})
        await daemon.push(p.AgentUpsert(seq=0, agent=kit))
        await until(pilot, lambda: cells(app, "agents")["kit"][1] == "testing@testbench")
        assert cells(app, "agents")["kit"][3] == "npm test"
        assert cells(app, "agents")["wren"][1] == "idle@lounge"  # other rows untouched

        t3 = daemon.mirror.tasks["t3"].model_copy(update={"status": "doing", "assignee": "wren"})
        await daemon.push(p.TaskUpsert(seq=0, task=t3))
        await until(pilot, lambda: cells(app, "tasks")["t3"][1] == "doing")
        assert list(cells(app, "tasks")) == ["t2", "t3", "t1"] and cells(app, "tasks")["t3"][4] == "wren"

        await daemon.feed("kit ran the tests", kind="ci", agent="kit")
        feed = app.query_one("#feed", RichLog)
        await until(pilot, lambda: any("kit ran the tests" in line.text for line in feed.lines))


async def test_a_decision_is_answered_from_the_keyboard(daemon):
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "d1" in cells(app, "decisions"))
        bells = []
        app.bell = lambda: bells.append(1)
        await daemon.open_decision(p.Decision(id="d2", kind="permission", prompt="Allow npm install?",
                                              options=["Allow", "Deny", "Always allow"], asked_by="kit", created_at=1.0))
        await until(pilot, lambda: "d2" in cells(app, "decisions"))
        assert bells == [1]
        assert list(cells(app, "decisions")) == ["d2", "d1"]  # oldest first
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen))
        assert app.screen.decision.id == "d2"
        await pilot.press("down", "enter")
        await until(pilot, lambda: "d2" not in cells(app, "decisions"))
        assert daemon.mirror.decisions["d2"].answer.label == "Deny"
        assert "ok: answer d2: 2 Deny" in console(app)
        # The number keys pick directly; Escape cancels without sending.
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AnswerScreen))
        assert daemon.mirror.decisions["d1"].status == "open"
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen))
        await pilot.press("3")
        await until(pilot, lambda: daemon.mirror.decisions["d1"].status == "answered")
        assert daemon.mirror.decisions["d1"].answer.label == "Reject"
        await until(pilot, lambda: "nothing needs you" in banner(app))
        assert not app.query_one("#banner").has_class("needed")


async def test_commands_typed_with_completion_and_a_diff_opens(daemon):
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        command = app.query_one("#command", Input)
        await pilot.press(*"/pause @k")
        await until(pilot, lambda: command._suggestion == "/pause @kit")
        await pilot.press("right", "enter")
        await until(pilot, lambda: "ok: pause kit" in console(app))
        assert daemon.received[-1] == p.AgentPause(id=daemon.received[-1].id, agent="kit")
        await until(pilot, lambda: "(paused)" in cells(app, "agents")["kit"][1])

        await pilot.press(*"/stop @marlow", "enter")  # the lead: its feedback warns and says how to undo
        await until(pilot, lambda: "ok: stop marlow" in console(app))
        assert daemon.received[-1] == p.AgentStop(id=daemon.received[-1].id, agent="marlow")
        assert "new goals will not be planned" in console(app) and "/spawn @marlow" in console(app)

        await pilot.press(*"/answer d9", "enter")
        await until(pilot, lambda: "there is no decision d9" in console(app))
        await pilot.press(*"/tasks", "enter")
        await until(pilot, lambda: "t2 [doing] show tags (kit) after t1" in console(app))

        await pilot.press(*"/diff kit-t2", "enter")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        text = "\n".join(line.text for line in app.screen.query_one(RichLog).lines)
        assert "+print('tags')" in text and "# notes.py (modified, +1 -1)" in text
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TextScreen))
        await pilot.press("f3")  # the oldest decision's diff
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        assert app.screen.title_text == "diff d1"


async def test_the_app_reconnects_when_the_daemon_restarts(daemon):
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        port = daemon.port
        await daemon.stop()
        await until(pilot, lambda: "reconnecting" in banner(app))
        wren = daemon.mirror.agents["wren"].model_copy(update={"state": "reading", "station": "library"})
        await daemon.push(p.AgentUpsert(seq=0, agent=wren))
        await daemon.start(port)
        await until(pilot, lambda: cells(app, "agents")["wren"][1] == "reading@library")
        assert daemon.hellos[-1].since == 0


async def test_f2_answers_the_decision_selected_in_the_focused_pane(daemon):
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await daemon.open_decision(p.Decision(id="d2", kind="question", prompt="Emoji?", options=["Yes", "No"],
                                              asked_by="kit", created_at=daemon.mirror.decisions["d1"].created_at + 1))
        await until(pilot, lambda: list(cells(app, "decisions")) == ["d1", "d2"])
        app.query_one("#decisions", DataTable).focus()
        await pilot.press("down", "f2")
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen))
        assert app.screen.decision.id == "d2"
        await pilot.press("tab")  # to the note
        await pilot.press(*"short", "enter")
        await until(pilot, lambda: daemon.mirror.decisions["d2"].status == "answered")
        assert daemon.mirror.decisions["d2"].answer == p.DecisionAnswer(option=0, label="Yes", text="short")


async def test_output_flushed_while_the_app_runs_reaches_textual(daemon):
    """Textual captures stdout and stderr while the app runs and calls ``App._flush(stderr=...)``
    when they are flushed; the app's pane refresh once had that name and raised TypeError there."""
    import sys

    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        print("flushed while the app runs", flush=True)
        sys.stderr.flush()
        kit = daemon.mirror.agents["kit"].model_copy(update={"activity": "after the flush"})
        await daemon.push(p.AgentUpsert(seq=0, agent=kit))
        await until(pilot, lambda: cells(app, "agents")["kit"][3] == "after the flush")


# Issue 37 item 9: text from the daemon that holds bidi or control characters is shown escaped
# (docs/protocol.md, "Display-safe text") in every pane, the banner, the answer dialog and the feed.
RLO, NUL, ESC = "\u202e", "\x00", "\x1b"


async def test_bidi_and_control_characters_are_shown_escaped_everywhere(daemon):
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        kit = daemon.mirror.agents["kit"].model_copy(update={"activity": f"editing {RLO}yp.tset"})
        await daemon.push(p.AgentUpsert(seq=0, agent=kit))
        t3 = daemon.mirror.tasks["t3"].model_copy(update={"title": f"old{NUL}title"})  # stored before the rule
        await daemon.push(p.TaskUpsert(seq=0, task=t3))
        await daemon.open_decision(p.Decision(id="d2", kind="question", prompt=f"Ship it?{RLO}on", options=["Yes", f"N{ESC}[31mo"],
                                              asked_by="kit", detail=f"why{NUL}\nline two", created_at=0.5))
        await daemon.feed(f"kit says {RLO}evil{ESC}[2J", agent="kit")
        await daemon.push(p.MessageAppend(seq=0, message=p.Message(id=1, at=1.0, sender="kit", to="user", text=f"hi{RLO}")))
        await until(pilot, lambda: "d2" in cells(app, "decisions"))
        await until(pilot, lambda: "<U+202E>yp.tset" in cells(app, "agents")["kit"][3])
        assert cells(app, "tasks")["t3"][2] == "old<U+0000>title"
        assert cells(app, "decisions")["d2"][3] == "Ship it?<U+202E>on"
        assert "N<U+001B>[31mo" in cells(app, "decisions")["d2"][4]
        assert "Ship it?<U+202E>on" in banner(app)
        feed = app.query_one("#feed", RichLog)
        await until(pilot, lambda: any("kit says <U+202E>evil<U+001B>[2J" in line.text for line in feed.lines))
        messages = app.query_one("#messages", RichLog)
        await until(pilot, lambda: any("hi<U+202E>" in line.text for line in messages.lines))
        shown = [c for t in ("agents", "tasks", "decisions") for row in cells(app, t).values() for c in row]
        shown += [line.text for log in (feed, messages) for line in log.lines] + [banner(app)]
        assert not any(ch in text for text in shown for ch in (RLO, NUL, ESC))
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, AnswerScreen))
        dialog = [str(w.render()) for w in app.screen.query(Static)]
        assert any("Ship it?<U+202E>on" in t for t in dialog) and any("why<U+0000>" in t for t in dialog)
        assert not any(ch in t for t in dialog for ch in (RLO, NUL, ESC))
