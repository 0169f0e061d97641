"""What a turn keeps of its text (pure apart from the log sink): streamed text logged a paragraph
at a time, and a conversation trimmed to the model's context budget."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class LineLog:
    """Collects streamed text and hands it to ``tools.log`` a paragraph at a time."""

    def __init__(self, sink: Callable[[str], None], size: int = 400) -> None:
        self.sink = sink
        self.size = size
        self.buffer = ""

    def add(self, text: str) -> None:
        self.buffer += text
        if len(self.buffer) >= self.size and "\n" in self.buffer:
            head, _, self.buffer = self.buffer.rpartition("\n")
            self.sink(head)

    def flush(self) -> None:
        if self.buffer.strip():
            self.sink(self.buffer)
        self.buffer = ""


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A rough token count (4 characters a token) of a message list."""
    return sum(len(str(m.get("content") or "")) + len(json.dumps(m.get("tool_calls") or "")) for m in messages) // 4


def trim(messages: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Drop the oldest exchanges after the system prompt and the first user message until the
    estimate fits ``budget`` tokens; never splits a tool call from its results."""
    if estimate_tokens(messages) <= budget or len(messages) <= 3:
        return messages
    head, rest = messages[:2], messages[2:]
    while rest and estimate_tokens(head + rest) > budget:
        rest = rest[1:]
        while rest and rest[0].get("role") == "tool":
            rest = rest[1:]
    note = {"role": "user", "content": "(Older steps of this conversation were dropped to fit the context.)"}
    return head + [note] + rest
