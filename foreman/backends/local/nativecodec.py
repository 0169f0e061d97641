"""The native codec: OpenAI tool calls (whole or streamed as deltas) into registry actions.

A streamed tool call arrives as deltas keyed by ``index``: the first carries the id and the
name, later ones carry pieces of the JSON ``arguments`` string. Call ``i`` is complete when a
delta for a later index arrives or the stream ends; only then is it decoded (its terminator
has arrived). A reply cut by finish_reason "length" never yields its last call unless its
arguments form a complete JSON object.

When the reply carries no tool call at all, its text content is decoded with the text
protocol (repair ``tool_call_in_content``): servers put unparsed tool calls there.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .calls import build_action
from .registry import ActionBase
from .repairs import object_end
from .result import DecodeResult
from .textcodec import decode as decode_text

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model sent it.

    Attributes:
        name: the function name.
        arguments: the raw JSON arguments text.
        id: the call id, if the server gave one.
    """

    name: str
    arguments: str = ""
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"id", "name", "arguments"}`` (the trace format)."""
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


def _get(obj: Any, key: str) -> Any:
    """Read a field from a dict or an SDK object alike."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def as_tool_call(obj: Any) -> ToolCall:
    """Convert a complete tool call (dict, SDK object or :class:`ToolCall`) to a ToolCall.

    Accepts ``{"id", "function": {"name", "arguments"}}`` (OpenAI) and the flat
    ``{"id", "name", "arguments"}`` (trace records). Arguments given as an object are dumped
    back to JSON text.
    """
    if isinstance(obj, ToolCall):
        return obj
    function = _get(obj, "function") or obj
    arguments = _get(function, "arguments")
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(name=_get(function, "name") or "", arguments=arguments or "", id=_get(obj, "id"))


def _complete(arguments: str) -> bool:
    text = arguments.strip()
    return not text or (text.startswith("{") and object_end(text, 0) == len(text))


class NativeDecoder:
    """Accumulate one streamed chat completion and decode its tool calls.

    Args:
        role: drop tools this role may not use; None allows all.
        prompt_text: extra prompt text for leak detection in the content fallback.
    """

    def __init__(self, *, role: str | None = None, prompt_text: str | None = None) -> None:
        self._role = role
        self._prompt_text = prompt_text
        self._calls: dict[int, dict[str, Any]] = {}
        self._content: list[str] = []
        self._emitted_calls = 0
        self._emitted_actions = 0
        self._finish_reason: str | None = None
        self._result: DecodeResult | None = None

    @property
    def content(self) -> str:
        """The text content received so far."""
        return "".join(self._content)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls accumulated so far, by index."""
        return [ToolCall(c["name"], "".join(c["arguments"]), c["id"]) for _, c in sorted(self._calls.items())]

    def feed_content(self, text: str | None) -> None:
        """Add a piece of the message's text content."""
        if text:
            self._content.append(text)

    def feed_tool_call_delta(self, delta: Any) -> list[ActionBase]:
        """Add one tool-call delta (``index``, ``id``, ``function.name``, ``function.arguments``).

        Returns:
            Actions of earlier calls completed by this delta (a later index started).
        """
        function = _get(delta, "function")
        name, arguments, call_id = _get(function, "name") or "", _get(function, "arguments"), _get(delta, "id")
        if arguments is not None and not isinstance(arguments, str):  # an object, not a JSON string
            arguments = json.dumps(arguments)
        index = _get(delta, "index")
        last = max(self._calls) if self._calls else -1
        if index is None:  # no index: the current call, unless this delta starts another
            index = last if last >= 0 and not self._starts_new(self._calls[last], name, call_id) else last + 1
        else:
            index = int(index)
            if index in self._calls and self._starts_new(self._calls[index], name, call_id):
                index = last + 1  # several calls sharing one index
        call = self._calls.setdefault(index, {"name": "", "arguments": [], "id": None})
        call["id"] = call_id or call["id"]
        if name and not call["name"].endswith(name) or not call["name"]:
            call["name"] += name  # a name repeated in every delta is kept once
        call["arguments"].append(arguments or "")
        ready = [i for i in sorted(self._calls) if i < index]
        return self._emit_upto(len(ready))

    @staticmethod
    def _starts_new(call: dict[str, Any], name: str, call_id: str | None) -> bool:
        """A delta starts a new call when it carries another id, or a name after the current
        call's arguments already form a complete JSON object."""
        if call_id and call["id"] and call_id != call["id"]:
            return True
        if not name or not call["name"]:
            return False
        text = "".join(call["arguments"]).strip()
        if not text:
            return False
        try:
            json.loads(text)
        except ValueError:
            return False
        return True

    def feed_chunk(self, chunk: Any) -> list[ActionBase]:
        """Add one streamed ``ChatCompletionChunk`` (SDK object or dict); return completed actions."""
        actions: list[ActionBase] = []
        for choice in _get(chunk, "choices") or []:
            delta = _get(choice, "delta")
            self.feed_content(_get(delta, "content"))
            for tool_delta in _get(delta, "tool_calls") or []:
                actions += self.feed_tool_call_delta(tool_delta)
            if _get(choice, "finish_reason"):
                self._finish_reason = _get(choice, "finish_reason")
        return actions

    def _emit_upto(self, count: int) -> list[ActionBase]:
        """Decode the first ``count`` (complete) calls; return the actions not returned before."""
        if count <= self._emitted_calls:
            return []
        result = decode_tool_calls(self.tool_calls[:count], role=self._role)
        fresh = list(result.actions[self._emitted_actions:])
        self._emitted_calls, self._emitted_actions = count, len(result.actions)
        return fresh

    def finish(self, finish_reason: str | None = None) -> DecodeResult:
        """End the stream and return the authoritative result (idempotent).

        Args:
            finish_reason: the stream's finish_reason; defaults to the one seen in the chunks.
        """
        if self._result is None:
            reason = finish_reason or self._finish_reason or "stop"
            self._result = decode_tool_calls(self.tool_calls, content=self.content, finish_reason=reason,
                                             role=self._role, prompt_text=self._prompt_text)
        return self._result


def decode_tool_calls(tool_calls: Iterable[Any], *, content: str = "", finish_reason: str | None = "stop",
                      role: str | None = None, prompt_text: str | None = None) -> DecodeResult:
    """Decode a reply's complete tool calls (and fall back to its text when there are none).

    Args:
        tool_calls: ToolCall objects, OpenAI dicts/SDK objects, or flat trace dicts.
        content: the message text content.
        finish_reason: "stop", "tool_calls", "length", ...
        role: drop tools this role may not use; None allows all.
        prompt_text: extra prompt text for leak detection in the content fallback.
    """
    calls = [as_tool_call(call) for call in tool_calls]
    if not calls:
        result = decode_text(content, finish_reason, role=role, prompt_text=prompt_text)
        if result.actions:
            return DecodeResult(result.actions, ("tool_call_in_content", *result.repairs), result.dropped,
                                None, result.chatter_lines)
        return result
    actions: list[ActionBase] = []
    repairs: list[str] = []
    dropped: list[str] = []
    for position, call in enumerate(calls):
        if finish_reason == "length" and position == len(calls) - 1 and not _complete(call.arguments):
            dropped.append("truncated_action")
            continue
        outcome = build_action(call.name, call.arguments, role=role)
        repairs += outcome.repairs
        if outcome.action is None:
            dropped.append(outcome.drop or "bad_arguments")
        elif actions and actions[-1] == outcome.action:
            repairs.append("duplicate_action")
        else:
            actions.append(outcome.action)
    reason = None
    if not actions:
        reason = "truncated" if finish_reason == "length" else "malformed"
    logger.debug("native decode: %d calls -> %d actions", len(calls), len(actions))
    return DecodeResult(tuple(actions), tuple(repairs), tuple(dropped), reason)

