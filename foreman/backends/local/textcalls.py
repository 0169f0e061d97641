"""Tool calls written inside a text reply, and the bare-JSON fallback.

Three spellings reach a tool without an action word, and this module reads their bodies
for the decoder (:mod:`.textcodec`), which finds where each starts and ends:

- ``TOOL name {json}``: the JSON arguments may run over several lines (:class:`JsonArguments`);
- a ``<tool_call>`` block or a ``<function=name>`` block with ``<parameter=...>`` children
  (Qwen/Hermes chat templates; :func:`parse_tool_call`);
- a reply with no protocol action at all: its bare JSON objects (tool calls or the router
  form), the last complete one wins (:func:`json_fallback`).

Every function returns the call and its repair ids; building the action is :mod:`.calls`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .calls import build_action, call_from_object
from .registry import ActionBase
from .repairs import BraceScanner, json_objects, loads_lenient

_FUNCTION_RE = re.compile(r"<function=\s*([^>\s]+)\s*>(.*?)(?:</function>|$)", re.DOTALL)
_PARAM_RE = re.compile(r"<parameter=\s*([^>\s]+)\s*>\n?(.*?)\n?(?:</parameter>|(?=<parameter=)|$)", re.DOTALL)


class JsonArguments:
    """The JSON arguments of one ``TOOL name {json}`` call, gathered line by line.

    Args:
        name: the tool name written after ``TOOL``.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._lines: list[str] = []
        self._scanner = BraceScanner()
        self._seen = 0

    def feed(self, line: str) -> str | None:
        """Add one line (without its newline; the first starts with ``{``).

        Returns:
            None while the object is open; once its closing brace has arrived, the text of
            the object (anything after the brace on that line is ignored).
        """
        piece = line if not self._lines else "\n" + line
        self._lines.append(line)
        self._seen += len(piece)
        end = self._scanner.feed(piece)
        if end is None:
            return None
        end += self._seen - len(piece)
        return "\n".join(self._lines)[:end]


def _param_value(value: str) -> Any:
    stripped = value.strip()
    if stripped[:1] in ("[", "{"):
        try:
            return json.loads(stripped)
        except ValueError:
            return value
    return value


def parse_tool_call(body: str) -> tuple[str, Any, list[str]] | None:
    """Read the body of a ``<tool_call>`` or ``<function=...>`` block.

    The body is either the XML function form (``<function=name><parameter=key>value
    </parameter>...``; a parameter value starting with ``[`` or ``{`` is read as JSON when it
    parses) or a JSON call object in any form :func:`.calls.call_from_object` accepts.

    Returns:
        ``(name, args, repairs)`` (``function_xml`` for the XML form, the lenient-JSON and
        call-shape repairs otherwise), or None when the body is neither (the decoder drops it
        as ``invalid_json``).
    """
    body = body.strip()
    function = _FUNCTION_RE.search(body)
    if function:
        args: dict[str, Any] = {}
        for name, value in _PARAM_RE.findall(function.group(2)):
            args[name] = _param_value(value)
        return function.group(1), args, ["function_xml"]
    try:
        value, more = loads_lenient(body)
    except ValueError:
        return None
    call = call_from_object(value)
    if call is None:
        return None
    name, args_value, call_repairs = call
    return name, args_value, more + call_repairs


@dataclass
class Fallback:
    """What :func:`json_fallback` found.

    Attributes:
        action: the last complete JSON call that built a valid action, or None.
        repairs: the repairs to record with ``action`` (``json_decision`` first).
        drops: drop ids of JSON calls that failed to build, to record when ``action`` is None.
    """

    action: ActionBase | None
    repairs: list[str] = field(default_factory=list)
    drops: list[str] = field(default_factory=list)


def json_fallback(text: str, *, role: str | None) -> Fallback:
    """Find a decision in the bare JSON objects of a reply that had no protocol action.

    Args:
        text: the reply's chatter lines joined with newlines.
        role: drop tools this role may not use; None allows all.

    Returns:
        The last JSON object that is a call building a valid action (``last_json_wins`` when
        there were several; ``json_fence`` when it sat inside a code fence), else the drops
        of the calls that failed.
    """
    candidates = []
    failures: list[str] = []
    for start, end in json_objects(text):
        try:
            value, repairs = loads_lenient(text[start:end])
        except ValueError:
            continue
        call = call_from_object(value)
        if call is None:
            continue
        outcome = build_action(call[0], call[1], role=role)
        if outcome.action is None:
            failures.append(outcome.drop or "bad_arguments")
        else:
            if text[:start].count("```") % 2 == 1:
                repairs = ["json_fence", *repairs]
            candidates.append((outcome.action, repairs + call[2] + outcome.repairs))
    if not candidates:
        return Fallback(action=None, drops=failures)
    action, repairs = candidates[-1]
    return Fallback(action=action, repairs=["json_decision", *(["last_json_wins"] if len(candidates) > 1 else []),
                                            *repairs])
