"""Recorded model replies: the recorder, the reader and the replay score.

Format: one JSON object per line in ``<dir>/*.jsonl`` (the backend writes one file per agent
session under ``<home>/<profile>/traces/``). Each record, version 1::

    {"v": 1,                      format version
     "time": 1754300000.25,       unix seconds when the reply ended
     "agent": "kit", "role": "worker", "turn": 3,      optional context (null when unknown)
     "protocol": "text",          "text" or "native"
     "finish_reason": "stop",     as the endpoint said ("stop", "length", "tool_calls", ...)
     "reply": "...",              the reply text exactly as received (content)
     "tool_calls": [{"id": "call_1", "name": "read", "arguments": "{...}"}],   native only
     "actions": [...], "repairs": [...], "dropped": [...], "reason": null}     decoded at record time

Guided mode (:mod:`.guided`) writes its answers under ``<traces>/guided/`` as records with
``"kind": "guided"`` (plus ``task``, ``attempt``, ``step``, ``temperature``); replay scores
them apart, by whether they hold code the harness could place.

Lines are written with ASCII escapes, so any received text (even unpaired surrogates) comes
back byte for byte. ``foreman replay`` re-decodes ``reply``/``tool_calls`` with the current
decoder and compares: a figure that moves only when the decoder changes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...private import append_private
from .answers import unusable_reason
from .nativecodec import ToolCall, decode_tool_calls
from .result import DecodeResult
from .textcodec import decode as decode_text

TRACE_VERSION = 1


@dataclass(frozen=True)
class TraceRecord:
    """One recorded model reply (see the module docstring for the JSON shape)."""

    reply: str
    finish_reason: str | None
    protocol: str = "text"
    tool_calls: tuple[ToolCall, ...] = ()
    actions: tuple[dict[str, Any], ...] = ()
    repairs: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    reason: str | None = None
    time: float = 0.0
    agent: str | None = None
    role: str | None = None
    turn: int | None = None
    kind: str = "agent"
    """"agent" (the loop's replies, decoded into actions) or "guided" (guided mode's answers,
    scored with :func:`.answers.unusable_reason`; see :mod:`.guided`)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the record as the JSON object written to the trace file."""
        return {
            "v": TRACE_VERSION, "time": self.time, "agent": self.agent, "role": self.role, "turn": self.turn,
            "protocol": self.protocol, "finish_reason": self.finish_reason, "reply": self.reply,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "actions": list(self.actions), "repairs": list(self.repairs), "dropped": list(self.dropped),
            "reason": self.reason, **({"kind": self.kind} if self.kind != "agent" else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TraceRecord:
        """Build a record from its JSON object.

        Raises:
            ValueError: not a version-1 record, or a field of the wrong type.
        """
        if data.get("v") != TRACE_VERSION or not isinstance(data.get("reply"), str):
            raise ValueError("not a version 1 trace record")
        calls = tuple(
            ToolCall(name=str(call.get("name") or ""), arguments=str(call.get("arguments") or ""), id=call.get("id"))
            for call in data.get("tool_calls") or ()
        )
        return cls(
            reply=data["reply"], finish_reason=data.get("finish_reason"), protocol=data.get("protocol", "text"),
            tool_calls=calls, actions=tuple(data.get("actions") or ()), repairs=tuple(data.get("repairs") or ()),
            dropped=tuple(data.get("dropped") or ()), reason=data.get("reason"), time=float(data.get("time") or 0),
            agent=data.get("agent"), role=data.get("role"), turn=data.get("turn"),
            kind="guided" if data.get("kind") == "guided" else "agent",
        )

    def redecode(self) -> DecodeResult:
        """Decode the recorded reply again with the current decoder (no model, no I/O)."""
        if self.protocol == "native":
            return decode_tool_calls(self.tool_calls, content=self.reply, finish_reason=self.finish_reason,
                                     role=self.role)
        return decode_text(self.reply, self.finish_reason, role=self.role)


class TraceRecorder:
    """Append one record per model reply to a ``.jsonl`` file (pure file I/O).

    Args:
        path: the trace file; its directory is created on first write.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def record(self, reply: str, result: DecodeResult, *, finish_reason: str | None, now: float,
               protocol: str = "text", tool_calls: Sequence[ToolCall] = (), agent: str | None = None,
               role: str | None = None, turn: int | None = None) -> TraceRecord:
        """Append a record of one reply and what it decoded to; return the record.

        Args:
            reply: the reply's text content exactly as received.
            result: what the decoder made of it.
            finish_reason: the endpoint's finish_reason.
            now: unix seconds (passed in, so tests choose the clock).
            protocol: "text" or "native".
            tool_calls: the native tool calls, if any.
            agent, role, turn: optional context.

        Raises:
            OSError: the file cannot be written.
        """
        decoded = result.to_dict()
        record = TraceRecord(
            reply=reply, finish_reason=finish_reason, protocol=protocol, tool_calls=tuple(tool_calls),
            actions=tuple(decoded["actions"]), repairs=tuple(decoded["repairs"]), dropped=tuple(decoded["dropped"]),
            reason=decoded["reason"], time=now, agent=agent, role=role, turn=turn,
        )
        append_private(self.path, json.dumps(record.to_dict(), ensure_ascii=True) + "\n", "ascii")  # 0600, in 0700
        return record


@dataclass
class TraceScan:
    """Records read from a traces directory, and how many lines could not be read."""

    records: list[TraceRecord] = field(default_factory=list)
    files: int = 0
    bad_lines: int = 0


def read_traces(directory: Path | str) -> TraceScan:
    """Read every ``*.jsonl`` file of a directory and its subdirectories (guided mode writes
    under ``guided/``), in path order, line by line.

    Unreadable lines (bad JSON, another format) are counted and skipped.

    Raises:
        FileNotFoundError: the directory does not exist.
    """
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"no traces directory at {root}")
    scan = TraceScan()
    for path in sorted(root.rglob("*.jsonl")):
        scan.files += 1
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    scan.records.append(TraceRecord.from_dict(json.loads(line)))
                except (ValueError, TypeError, AttributeError):
                    scan.bad_lines += 1
    return scan


@dataclass
class ReplayReport:
    """The replay score: how many recorded replies the current decoder turns into actions.

    Attributes:
        total: replies replayed.
        converted: replies that became at least one action.
        repaired: converted or not, replies where at least one repair was applied.
        repairs: repair id -> times applied.
        reasons: no-action reason -> replies.
        dropped: drop id -> times.
        changed: replies whose actions differ from the ones recorded.
        guided_total / guided_converted: guided-mode replies, and those holding code to place.
        guided_reasons: why the others did not (:func:`.answers.unusable_reason`).
    """

    total: int = 0
    converted: int = 0
    repaired: int = 0
    repairs: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    changed: int = 0
    guided_total: int = 0
    guided_converted: int = 0
    guided_reasons: Counter[str] = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        """Converted share in percent (0.0 when there is nothing to replay)."""
        return 100.0 * self.converted / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data (counters sorted by name)."""
        return {
            "total": self.total, "converted": self.converted, "rate": round(self.rate, 2),
            "repaired": self.repaired, "changed": self.changed,
            "repairs": dict(sorted(self.repairs.items())), "reasons": dict(sorted(self.reasons.items())),
            "dropped": dict(sorted(self.dropped.items())),
            **({"guided": {"total": self.guided_total, "converted": self.guided_converted,
                           "rate": round(self.guided_rate, 2), "reasons": dict(sorted(self.guided_reasons.items()))}}
               if self.guided_total else {}),
        }

    @property
    def guided_rate(self) -> float:
        """Share of guided replies holding code to place, in percent (0.0 when there are none)."""
        return 100.0 * self.guided_converted / self.guided_total if self.guided_total else 0.0


def replay(records: Iterable[TraceRecord]) -> ReplayReport:
    """Re-decode recorded replies and score the current decoder (pure, contacts no model)."""
    report = ReplayReport()
    for record in records:
        if record.kind == "guided":
            if not record.reply and record.finish_reason is None:
                continue  # a harness step's record (a test probe's outcomes), not a model reply
            report.guided_total += 1
            why = unusable_reason(record.reply, record.finish_reason)
            if why is None:
                report.guided_converted += 1
            else:
                report.guided_reasons[why] += 1
            continue
        result = record.redecode()
        report.total += 1
        report.converted += result.usable
        report.repaired += bool(result.repairs)
        report.repairs.update(result.repairs)
        report.dropped.update(result.dropped)
        if result.reason:
            report.reasons[result.reason] += 1
        if [action.to_dict() for action in result.actions] != list(record.actions):
            report.changed += 1
    return report
