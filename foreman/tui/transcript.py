"""The plain-text account of a line-mode session: what was sent, what happened, every decision.

The :class:`Transcript` is fed every server message (after the mirror applied it) and the
runner's own notes. It prints only what is new in this session: the history a first snapshot
carries is not repeated, and a snapshot after a reconnect prints only what was missed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TextIO

import protocol as p

from . import views
from .mirror import Mirror, Outcome

logger = logging.getLogger(__name__)


class Transcript:
    """Write timestamped lines to every output.

    Args:
        outputs: text streams to write to (a file, stdout); each line is flushed.
        clock: returns seconds (monotonic); lines are stamped with the time since creation.
    """

    def __init__(self, outputs: list[TextIO], clock: Callable[[], float]) -> None:
        self.outputs = outputs
        self.clock = clock
        self.start = clock()
        self._open_seen: set[str] = set()
        self._ended_seen: set[str] = set()
        self._goal_state: dict[str, tuple[str, int]] = {}
        self._feed_after: int | None = None
        self._message_after: int | None = None
        self.decisions_opened = 0
        self.decisions_answered = 0
        self.closed = False

    def close(self, text: str) -> None:
        """Write the last line; what arrives later (the connection winding down) is dropped."""
        self.write(text)
        self.closed = True

    def write(self, text: str, indent: int = 0) -> None:
        """Write one stamped line (``text`` may hold several lines; each is stamped)."""
        if self.closed:
            return
        elapsed = self.clock() - self.start
        stamp = f"[{int(elapsed // 60):02d}:{elapsed % 60:04.1f}]"
        # display-safe (views.safe): a bidi control, NUL or escape sequence from the daemon is shown as <U+XXXX>
        for line in views.safe(text).splitlines() or [""]:
            out = f"{stamp} {' ' * indent}{line}\n"
            for stream in self.outputs:
                stream.write(out)
                stream.flush()

    def lines(self, lines: list[str], indent: int = 2) -> None:
        """Write several lines, indented."""
        for line in lines:
            self.write(line, indent)

    def on_message(self, msg: p.ServerMessage, outcome: Outcome, mirror: Mirror) -> None:
        """Account for one server message (call after ``mirror.apply``)."""
        if outcome is not Outcome.APPLIED:
            return
        match msg:
            case p.Snapshot():
                self._snapshot(mirror)
            case p.DecisionUpsert(decision=decision):
                self._decision(decision)
            case p.GoalUpsert(goal=goal):
                self._goal(goal)
            case p.FeedAppend(item=item):
                self._feed([item])
            case p.MessageAppend(message=message):
                self._messages([message])
            case p.StatusMessage():
                self.write(f"status: backend {msg.backend}, {views.credentials_text(msg.auth)}")

    def _snapshot(self, mirror: Mirror) -> None:
        first = self._feed_after is None
        if first and mirror.status is not None:
            s = mirror.status
            self.write(f"connected: foreman {s.version}, backend {s.backend} ({views.credentials_text(s.auth)}), profile {s.profile}, seq {mirror.seq}")
        elif not first:
            self.write(f"resynchronised from a snapshot at seq {mirror.seq}")
        if first:
            self._feed_after = max((i.id for i in mirror.feed), default=0)
            self._message_after = max((m.id for m in mirror.messages), default=0)
            self._goal_state = {g.id: (g.status, g.progress) for g in mirror.goals.values()}
            self._ended_seen = {d.id for d in mirror.decisions.values() if d.status != "open"}
        else:
            self._feed(list(mirror.feed))
            self._messages(list(mirror.messages))
            for goal in mirror.goals.values():
                self._goal(goal)
        for decision in sorted(mirror.decisions.values(), key=lambda d: (d.created_at, d.id)):
            self._decision(decision)

    def _decision(self, d: p.Decision) -> None:
        if d.status == "open":
            if d.id not in self._open_seen:
                self._open_seen.add(d.id)
                self._ended_seen.discard(d.id)
                self.decisions_opened += 1
                lines = views.decision_lines(d)
                self.write("DECISION " + lines[0])
                self.lines(lines[1:], 4)
            return
        if d.id not in self._ended_seen:
            self._ended_seen.add(d.id)
            self._open_seen.discard(d.id)
            if d.status == "answered":
                self.decisions_answered += 1
            self.write("DECIDED " + views.answer_text(d))

    def _goal(self, goal: p.Goal) -> None:
        state = (goal.status, goal.progress)
        if self._goal_state.get(goal.id) != state:
            self._goal_state[goal.id] = state
            self.write(f"goal {goal.id} {goal.status} {goal.progress}%: {goal.text}")

    def _feed(self, items: list[p.FeedItem]) -> None:
        for item in items:
            if self._feed_after is None or item.id > self._feed_after:
                self._feed_after = item.id
                self.write("feed " + views.feed_line(item).split(" ", 1)[1])

    def _messages(self, messages: list[p.Message]) -> None:
        for m in messages:
            if self._message_after is None or m.id > self._message_after:
                self._message_after = m.id
                self.write(f"message {m.sender} -> {m.to}: {m.text}")
