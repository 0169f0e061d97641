"""The canonical text spelling of actions: what the transcript shows the model.

The agent loop never feeds a raw reply back; it feeds :func:`render_reply` of the decoded
turn, so a malformed marker or an invented block is not echoed into later turns.
"""

from __future__ import annotations

import json

from . import textlines as tl
from .calls import build_action
from .registry import ActionBase, Final


def _one_line(value: str) -> bool:
    return bool(value) and value == value.strip() and "\n" not in value and "\r" not in value


def _block_safe(value: str) -> bool:
    return "\r" not in value and all(tl.marker(line) is None for line in value.split("\n"))


_TAGS = ("<think>", "</think>", "<tool_call>")


def _tool_form(action: ActionBase) -> str:
    args = action.model_dump(mode="json", exclude={"kind"}, exclude_defaults=True)
    text = json.dumps(args, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    return f"TOOL {action.kind} {text}"


def _word_form(action: ActionBase, line: str) -> str | None:
    """Return ``line`` if it decodes back to exactly ``action`` with no repair, else None."""
    word = tl.word_line(line)
    if word is None or word.repairs or tl.normalise(line) in tl.default_fingerprints():
        return None
    outcome = build_action(word.name, word.args)
    return line if outcome.action == action and not outcome.repairs else None


def _path_line(path: str) -> bool:
    return tl.clean_path(path) == (path, []) and tl.marker(path) is None and not tl.starts_action(path)


def render_action(action: ActionBase, *, last: bool = True) -> str:
    """Render an action in the canonical text spelling (what the transcript shows the model).

    ``decode(render_action(a)).actions == (a,)`` for every action. Values the short spelling
    cannot carry (whitespace in a path, newlines in a command, marker lines in an edit) fall
    back to ``TOOL name {json}``. ``FINAL`` is used only when ``last`` is true, since its
    summary runs to the end of the reply.
    """
    data = action.to_dict()
    kind = action.kind
    line: str | None = None
    if kind == "read":
        span = ""
        if data["start"] is not None:
            span = f":{data['start']}" + ("" if data["end"] is None else f"-{data['end']}")
        line = _word_form(action, f"READ {data['path']}{span}")
    elif kind in ("list", "delete", "mkdir"):
        line = _word_form(action, f"{kind.upper()} {data['path']}")
    elif kind in ("glob", "grep", "search", "run"):
        value = str(data.get("pattern", data.get("text", data.get("command"))))
        line = _word_form(action, f"{kind.upper()} {value}") if _one_line(value) else None
    elif kind in ("move", "copy", "rename"):
        line = _word_form(action, f"{kind.upper()} {data['source']} -> {data['destination']}")
    elif kind == "edit" and _path_line(data["path"]) and _block_safe(data["search"]) \
            and _block_safe(data["replace"]):
        line = f"{data['path']}\n<<<<<<< SEARCH\n{data['search']}\n=======\n{data['replace']}\n>>>>>>> REPLACE"
    elif kind == "create" and _path_line(data["path"]) and _block_safe(data["content"]) and data["content"]:
        line = f"{data['path']}\n<<<<<<< SEARCH\n=======\n{data['content']}\n>>>>>>> REPLACE"
    elif isinstance(action, Final) and last and action.summary == action.summary.strip() \
            and "\r" not in action.summary:
        line = f"FINAL {action.summary}"
    if line is None or any(tag in line.split("\n", 1)[0] for tag in _TAGS):
        return _tool_form(action)
    return line


def render_reply(actions: list[ActionBase] | tuple[ActionBase, ...]) -> str:
    """Render a decoded turn canonically, one action after the other."""
    return "\n".join(render_action(action, last=index == len(actions) - 1) for index, action in enumerate(actions))
