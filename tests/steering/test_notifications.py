"""Notifications: a decision opening notifies; the settings resolve; a headless machine degrades."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import pytest

from foreman.cli import build_parser
from foreman.config import resolve
from foreman.notifier import SILENT_HINTS, Notifier

from .harness import Rig, Turn, wait_for


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def settings_of(argv: list[str], env: dict[str, str], tmp: Path) -> Any:
    """Resolve settings exactly as ``foreman start`` does (argparse, then flags > env > default)."""
    args = build_parser().parse_args(["start", "--home", str(tmp), *argv])
    return resolve({k: v for k, v in vars(args).items() if k != "command"}, env=env)


@pytest.mark.parametrize(("argv", "env", "notify", "silent"), [
    (["--backend", "claude"], {}, True, False),
    (["--backend", "local"], {}, True, False),
    (["--backend", "sim"], {}, False, False),
    ([], {}, False, False),
    (["--backend", "claude", "--no-notify"], {}, False, False),
    (["--backend", "sim", "--notify"], {}, True, False),
    ([], {"AGENTCRAFT_NOTIFY": "1"}, True, False),
    (["--backend", "claude"], {"AGENTCRAFT_NOTIFY": "off"}, False, False),
    (["--no-notify"], {"AGENTCRAFT_NOTIFY": "true"}, False, False),
    (["--backend", "claude", "--toast-silent"], {}, True, True),
    (["--backend", "claude"], {"AGENTCRAFT_TOAST_SILENT": "yes"}, True, True),
])
def test_notify_settings_resolve(tmp_path: Path, argv: list[str], env: dict[str, str], notify: bool, silent: bool) -> None:
    s = settings_of(argv, env, tmp_path)
    assert (s.notify, s.toast_silent) == (notify, silent)


def test_notify_from_the_config_file_and_its_source(tmp_path: Path) -> None:
    (tmp_path / "claude").mkdir()
    (tmp_path / "claude" / "config.json").write_text('{"notify": false, "toastSilent": true}')
    s = settings_of(["--backend", "claude"], {}, tmp_path)
    assert (s.notify, s.toast_silent) == (False, True) and s.sources["notify"] == "file"
    s = settings_of(["--backend", "claude"], {"AGENTCRAFT_NOTIFY": "1"}, tmp_path)
    assert s.notify and s.sources["notify"] == "env"


def test_headless_machine_degrades_to_bell_and_log(caplog: pytest.LogCaptureFixture) -> None:
    term = Terminal()
    notifier = Notifier(enabled=True, stream=term)
    with caplog.at_level(logging.INFO, logger="foreman.notifier"):
        thread = notifier.notify("kit needs you", "Tabs or spaces?")
        assert thread is not None
        thread.join(10)
    assert term.getvalue() == "\a"
    assert notifier.sent == [("kit needs you", "Tabs or spaces?")]
    text = caplog.text
    assert "you are needed: kit needs you: Tabs or spaces?" in text
    assert "desktop notification unavailable" in text  # no dbus, no notify-send here


def test_toast_arguments_and_silent_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import plyer

    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(plyer.notification, "notify", lambda **kw: calls.append(kw))
    for silent in (False, True):
        notifier = Notifier(enabled=True, silent=silent, stream=io.StringIO())
        notifier.notify("wren needs you", "x" * 400).join(10)
    assert [c["hints"] for c in calls] == [{}, SILENT_HINTS]
    assert all(c["title"] == "wren needs you" and len(c["message"]) == 250 for c in calls)


def test_disabled_notifier_only_logs(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import plyer

    monkeypatch.setattr(plyer.notification, "notify", lambda **kw: pytest.fail("toast sent while disabled"))
    term = Terminal()
    with caplog.at_level(logging.INFO, logger="foreman.notifier"):
        assert Notifier(enabled=False, stream=term).notify("a", "b") is None
    assert term.getvalue() == "" and "you are needed: a: b" in caplog.text


def test_broken_terminal_is_not_an_error() -> None:
    stream = Terminal()
    stream.close()
    Notifier(enabled=False).notify("a", "b")
    thread = Notifier(enabled=True, stream=stream).notify("a", "b")
    assert thread is not None
    thread.join(10)


async def test_an_opening_decision_notifies_the_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import plyer

    toasts: list[dict[str, Any]] = []
    monkeypatch.setattr(plyer.notification, "notify", lambda **kw: toasts.append(kw))
    rig = Rig(tmp_path, notify=True, toast_silent=True)

    async def ask(turn: Turn) -> None:
        await turn.tools.call("ask_user", {"question": "Ship it on Friday?", "options": ["Yes", "No"]})
        await turn.tools.permit("Bash", {"command": "curl https://example.com"})
        import asyncio

        await asyncio.Event().wait()

    rig.puppet.on(("kit", "work"), ask)
    try:
        client = await rig.start()
        assert rig.d.notifier.enabled and rig.d.notifier.silent
        rig.task("Ask first", assignee="kit")
        d1 = await wait_for(lambda: next((d for d in rig.world.decisions.values() if d.status == "open"), None))
        await wait_for(lambda: toasts)
        assert rig.d.notifier.sent == [("kit needs you", "Ship it on Friday?")]
        assert toasts[0]["title"] == "kit needs you" and toasts[0]["hints"] == SILENT_HINTS
        await client.ok({"type": "decision.answer", "decision": d1.id, "option": 0})
        await wait_for(lambda: len(rig.d.notifier.sent) == 2)
        assert rig.d.notifier.sent[1][1].startswith("Kit wants to use Bash: curl https://example.com")
    finally:
        await rig.stop()
