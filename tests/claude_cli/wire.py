"""The scripted API's vocabulary: replies a test scripts, requests the server recorded.

Shapes follow the Anthropic Messages API (https://docs.anthropic.com/en/api/messages): content
blocks ``text`` and ``tool_use``; requests carry ``system``, ``tools`` and ``messages``.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_USAGE = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


# ---------------------------------------------------------------------- replies
@dataclass
class Reply:
    """One scripted model answer.

    Attributes:
        content: content blocks as the API returns them (``{"type": "text", "text": ...}``,
            ``{"type": "tool_use", "id": ..., "name": ..., "input": {...}}``).
        stop_reason: ``end_turn``, ``tool_use``, ``max_tokens`` ...; None: ``tool_use`` when a block
            is a tool use, else ``end_turn``.
        input_tokens / output_tokens / cache_read / cache_write: the usage reported (None: estimated).
        delay: seconds to wait between two SSE events (a slow stream).
        hold: seconds to wait after ``message_start`` before the blocks (a stalled stream).
        status: an HTTP error status instead of a message (429, 500, 529 ...).
        error_type: the API error type with ``status`` (``overloaded_error``, ``api_error`` ...).
        mid_stream_error: stream ``message_start`` and then an ``error`` event (the API's
            in-stream failure) instead of the blocks.
        headers: extra response headers (``retry-after`` ...).
    """

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read: int = 0
    cache_write: int = 0
    delay: float = 0.0
    hold: float = 0.0
    status: int = 200
    error_type: str = ""
    mid_stream_error: str = ""
    headers: dict[str, str] = field(default_factory=dict)


ReplyLike = Reply | Callable[["Recorded"], Reply]

_tool_ids = itertools.count(1)


def text(words: str, **kw: Any) -> Reply:
    """A reply of one text block (``end_turn``)."""
    return Reply([{"type": "text", "text": words}], **kw)


def tool(name: str, tool_input: dict[str, Any] | None = None, *, say: str = "", **kw: Any) -> Reply:
    """A reply calling one tool (``stop_reason`` ``tool_use``), optionally after a text block."""
    blocks = [{"type": "text", "text": say}] if say else []
    blocks.append({"type": "tool_use", "id": f"toolu_scripted_{next(_tool_ids):04d}_{uuid.uuid4().hex[:8]}",
                   "name": name, "input": tool_input or {}})
    return Reply(blocks, **kw)


def foreman(name: str, **args: Any) -> Reply:
    """A reply calling one of the Foreman's tools (``mcp__agentcraft__<name>``)."""
    return tool(f"mcp__agentcraft__{name}", args)


def error(status: int, error_type: str, message: str = "", **kw: Any) -> Reply:
    """An HTTP error answer as the API sends it (``429 rate_limit_error``, ``529 overloaded_error`` ...)."""
    return Reply([{"type": "text", "text": message or error_type}], status=status, error_type=error_type, **kw)


# ---------------------------------------------------------------------- recorded requests
@dataclass
class Recorded:
    """One request the server received.

    Attributes:
        method / path / query: the HTTP request line (``query`` parsed, e.g. ``{"beta": ["true"]}``).
        headers: the request headers (names lower-cased).
        body: the JSON body (``{}`` when none or not JSON).
        agent: the agent it was attributed to (None: a side request or another endpoint).
        turn / step: the agent's turn index and the reply index in it (0-based; -1 when none).
        reply: what was answered (a short description).
        t: when it arrived (``time.time()``).
    """

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]
    agent: str | None = None
    turn: int = -1
    step: int = -1
    reply: str = ""
    t: float = 0.0

    @property
    def is_messages(self) -> bool:
        """A ``POST /v1/messages`` (not count_tokens)."""
        return self.method == "POST" and self.path == "/v1/messages"

    @property
    def system_text(self) -> str:
        """The system prompt as one string (its text blocks joined)."""
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered to the model, in request order."""
        return [t.get("name", "") for t in self.body.get("tools") or []]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation sent."""
        return list(self.body.get("messages") or [])

    def tool_results(self) -> list[dict[str, Any]]:
        """The ``tool_result`` blocks of the last user message (what the tools answered)."""
        last = next((m for m in reversed(self.messages) if m.get("role") in ("user", "assistant")), {})
        if last.get("role") != "user":
            return []
        content = last.get("content")
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []

    def last_user_text(self) -> str:
        """The text of the last user message (the turn's prompt, with any system reminders)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""

    def all_text(self) -> str:
        """Every text of the conversation (prompts, results, reminders), for searches."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages)


def is_prompt(message: dict[str, Any]) -> bool:
    """A user message carrying a prompt: text other than system reminders (a resumed session's
    new prompt may share the message with the last tool results of the killed turn)."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return not content.lstrip().startswith("<system-reminder>")
    return any(isinstance(b, dict) and b.get("type") == "text" and
               not b.get("text", "").lstrip().startswith("<system-reminder>") for b in content or [])


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            parts.append(_content_text(block.get("content")))
    return "\n".join(parts)


def result_text(block: dict[str, Any]) -> str:
    """The text of a ``tool_result`` block."""
    return _content_text(block.get("content"))


def describe(reply: Reply) -> str:
    """A short description of a reply (for failure messages)."""
    if reply.status != 200:
        return f"HTTP {reply.status} {reply.error_type}"
    return ", ".join(b.get("name", "") if b["type"] == "tool_use" else f"text {b.get('text', '')[:30]!r}"
                     for b in reply.content) or "(empty)"
