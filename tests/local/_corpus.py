"""Load the recorded-style replies of tests/local/corpus/ with their expectations."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parent / "corpus"


@dataclass(frozen=True)
class Case:
    """One corpus reply: raw text plus what it must decode to."""

    name: str
    text: str
    expected: dict[str, Any]

    @property
    def finish_reason(self) -> str:
        return str(self.expected.get("finish_reason", "stop"))

    @property
    def role(self) -> str | None:
        return self.expected.get("role")


def load_cases() -> list[Case]:
    """Return every ``NNN-name.txt`` with its ``NNN-name.expected.json``, in name order."""
    cases = []
    for path in sorted(CORPUS.glob("*.txt")):
        expected = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
        text = path.read_bytes().decode("utf-8")
        cases.append(Case(path.stem, text, expected))
    return cases
