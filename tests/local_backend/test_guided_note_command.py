"""The review note of a passed guided attempt names its check command by the interpreter's name,
not its path: a checkout in a deep folder (a fresh clone under /tmp/...) made the venv's absolute
path eat the note's 300 characters, and what the attempt did was cut off."""

from __future__ import annotations

from foreman.backends.local.guided import _short


def test_an_interpreter_path_is_shown_by_its_name() -> None:
    deep = "/tmp/" + "x" * 200 + "/.venv/bin/python"
    assert _short(f"{deep} -m unittest discover -s tests") == "python -m unittest discover -s tests"
    assert _short("python -m pytest -q") == "python -m pytest -q"  # (already short: as it is)
    assert _short("make test") == "make test"
    assert _short(deep) == "python"
