"""Every name the daemon's code uses is defined: pyflakes over ``foreman/`` and ``protocol/``.

A module split once left a counter behind in another module; every claude turn then raised
NameError during its set-up, and its tests hung in a fixture's teardown instead of failing. A
static check names such a mistake in seconds."""

from __future__ import annotations

from pathlib import Path

from pyflakes import api, messages, reporter

ROOT = Path(__file__).resolve().parents[1]


class _Collect(reporter.Reporter):
    def __init__(self) -> None:
        super().__init__(None, None)
        self.found: list[str] = []

    def flake(self, message) -> None:  # type: ignore[no-untyped-def]
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)):
            self.found.append(str(message))

    def syntaxError(self, filename, msg, lineno, offset, text) -> None:  # type: ignore[no-untyped-def]
        self.found.append(f"{filename}:{lineno}: syntax error: {msg}")

    def unexpectedError(self, filename, msg) -> None:  # type: ignore[no-untyped-def]
        self.found.append(f"{filename}: {msg}")


def test_no_undefined_names_in_the_daemon_or_the_protocol() -> None:
    collect = _Collect()
    files = sorted(p for d in ("foreman", "protocol") for p in (ROOT / d).rglob("*.py"))
    assert len(files) > 100
    for path in files:
        api.checkPath(str(path), collect)
    assert collect.found == []


def test_the_check_catches_an_undefined_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import itertools\n\ndef pid():\n    return next(_PIDFILES)\n")
    collect = _Collect()
    api.checkPath(str(bad), collect)
    assert len(collect.found) == 1 and "undefined name '_PIDFILES'" in collect.found[0]
