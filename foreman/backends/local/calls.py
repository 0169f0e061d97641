"""Turn a tool name plus arguments into an action, tolerating the names small models use.

Both codecs end here: a ``TOOL name {json}`` line, a ``<tool_call>`` block, a bare JSON object
and a native OpenAI tool call all become ``build_action(name, args)``. That is what makes the
two spellings decode to the same action.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .registry import BY_NAME, ActionBase, ToolSpec, parse_action
from .repairs import loads_lenient

TOOL_ALIASES: dict[str, str] = {
    "read_file": "read", "view": "read", "view_file": "read", "cat": "read", "open": "read",
    "ls": "list", "list_dir": "list", "list_files": "list", "list_directory": "list",
    "find": "glob", "find_files": "glob", "glob_files": "glob",
    "grep_search": "grep", "rg": "grep", "search_files": "grep", "search_code": "search",
    "shell": "run", "bash": "run", "exec": "run", "execute": "run", "run_command": "run",
    "terminal": "run", "command": "run", "run_shell": "run",
    "edit_file": "edit", "str_replace": "edit", "replace_in_file": "edit", "apply_edit": "edit",
    "create_file": "create", "write_file": "create", "write": "create", "new_file": "create",
    "delete_file": "delete", "remove": "delete", "rm": "delete",
    "make_dir": "mkdir", "create_directory": "mkdir", "mv": "move", "move_file": "move",
    "cp": "copy", "copy_file": "copy", "rename_file": "rename",
    "message": "send_message", "send": "send_message", "ask": "ask_user",
    "final_answer": "final", "finish": "final", "done": "final", "answer": "final",
    "complete": "final", "task_complete": "final",
}
"""Tool name alias -> registry name (repair ``tool_alias``)."""

FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("file_path", "filepath", "file", "filename", "file_name", "dir",
                     "directory", "folder", "target_file"), ("path",)),
    **dict.fromkeys(("cmd", "shell", "script", "bash", "command_line"), ("command",)),
    **dict.fromkeys(("old", "old_string", "old_str", "old_text", "find", "original"), ("search",)),
    **dict.fromkeys(("new", "new_string", "new_str", "new_text", "replacement"), ("replace",)),
    **dict.fromkeys(("src", "from", "source_path", "old_path"), ("source",)),
    **dict.fromkeys(("dst", "dest", "to", "target", "destination_path", "new_path"), ("destination",)),
    **dict.fromkeys(("data", "contents", "file_content", "code"), ("content",)),
    **dict.fromkeys(("message", "content"), ("text", "summary")),
    **dict.fromkeys(("answer", "result"), ("summary",)),
    "text": ("content", "summary"),
    "body": ("content", "text"),
    **dict.fromkeys(("query", "regex", "glob", "expression"), ("pattern", "text")),
    **dict.fromkeys(("recipient", "agent"), ("to",)),
    **dict.fromkeys(("id", "task"), ("task_id",)),
    **dict.fromkeys(("start_line", "line_start", "first_line", "from_line", "offset"), ("start",)),
    **dict.fromkeys(("end_line", "line_end", "last_line", "to_line"), ("end",)),
    **dict.fromkeys(("deps", "dependencies"), ("depends_on",)),
    **dict.fromkeys(("assign_to", "worker"), ("assignee",)),
    "choices": ("options",),
    "key": ("name",),
}
"""Argument name alias -> candidate fields, first one the tool has wins (``field_alias``)."""

_NAME_KEYS = ("name", "tool", "action", "function", "tool_name")
_ARGS_KEYS = ("arguments", "args", "parameters", "input", "params")


@dataclass
class CallOutcome:
    """The result of :func:`build_action`: an action, or the drop id saying why not."""

    action: ActionBase | None
    repairs: list[str] = field(default_factory=list)
    drop: str | None = None


def resolve_tool(name: str) -> tuple[ToolSpec | None, list[str]]:
    """Return the spec for a tool name or alias (case-insensitive), and the repairs used."""
    key = name.strip().lower().replace("-", "_")
    if key in BY_NAME:
        return BY_NAME[key], []
    if key in TOOL_ALIASES:
        return BY_NAME[TOOL_ALIASES[key]], ["tool_alias"]
    return None, []


def _range(value: Any) -> tuple[int, int] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    if isinstance(value, str) and "-" in value:
        start, _, end = value.partition("-")
        if start.strip().isdigit() and end.strip().isdigit():
            return int(start), int(end)
    return None


def _normalise(spec: ToolSpec, args: dict[str, Any], repairs: list[str]) -> dict[str, Any]:
    fields = spec.model.model_fields
    out = {key: value for key, value in args.items() if key in fields and key != "kind"}
    for key, value in args.items():
        if key in fields:
            continue
        if spec.name == "read" and key in ("lines", "range", "line_range"):
            span = _range(value)
            if span:
                out.setdefault("start", span[0])
                out.setdefault("end", span[1])
                repairs.append("range_fields")
                continue
        target = next((name for name in FIELD_ALIASES.get(key, ()) if name in fields and name not in out), None)
        if target:
            out[target] = value
            repairs.append("field_alias")
        elif key != "kind" and spec.primary and spec.primary not in out and isinstance(value, str) \
                and key == "content":
            out[spec.primary] = value
            repairs.append("primary_argument")
        elif key != "kind":
            repairs.append("extra_argument")
    for name, value in list(out.items()):
        annotation = fields[name].annotation
        if typing.get_origin(annotation) is tuple and isinstance(value, str):
            out[name] = (value,)
    return out


_PLACEHOLDER_RE = re.compile(r"^<(?:the[ _-])?(?:path|file|file[ _-]?path|filename|command|cmd|pattern|regex|text|query|"
                             r"dir|directory|folder|name|content|contents|summary|old|new|src|dst|source|"
                             r"destination|arg|args|argument|arguments|message|note|status|task|start|end)>$",
                             re.IGNORECASE)


def build_action(name: str, args: Any, *, role: str | None = None) -> CallOutcome:
    """Build an action from a tool name and its arguments.

    Args:
        name: tool name or a known alias (see :data:`TOOL_ALIASES`).
        args: a dict of arguments, a JSON string of one, a bare string (fills the tool's
            primary field), or None.
        role: when given, tools the role may not use are dropped as ``not_allowed``.

    Returns:
        A :class:`CallOutcome`; ``drop`` is a :data:`.result.DROPS` id when no action came out.
    """
    spec, repairs = resolve_tool(name)
    if spec is None:
        return CallOutcome(None, repairs, "unknown_tool")
    if role is not None and role not in spec.roles:
        return CallOutcome(None, repairs, "not_allowed")
    if isinstance(args, str):
        stripped = args.strip()
        if stripped.startswith(("{", "```")):
            try:
                args, more = loads_lenient(stripped)
            except ValueError:
                return CallOutcome(None, repairs, "invalid_json")
            repairs += more
        elif spec.primary and stripped:
            args = {spec.primary: stripped}
            repairs.append("primary_argument")
        elif not stripped:
            args = {}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return CallOutcome(None, repairs, "bad_arguments")
    if any(isinstance(v, str) and _PLACEHOLDER_RE.match(v.strip()) for v in args.values()):
        return CallOutcome(None, repairs, "placeholder_argument")  # an echoed instruction, never an action
    values = _normalise(spec, args, repairs)
    if spec.name == "edit" and values.get("search") == "" and "path" in values:
        spec = BY_NAME["create"]
        values = {"path": values["path"], "content": values.get("replace", "")}
        repairs.append("empty_search_is_create")
    try:
        action = parse_action({"kind": spec.name, **values})
    except (ValidationError, ValueError, TypeError):
        return CallOutcome(None, repairs, "bad_arguments")
    return CallOutcome(action, repairs)


def _router(obj: dict[str, Any]) -> tuple[str, Any, list[str]] | None:
    """Map the router form of seed 002, ``{"tool": ..., "content": ...}``."""
    tool = obj.get("tool")
    if not isinstance(tool, str) or "content" not in obj:
        return None
    content = obj["content"]
    extra = {key: value for key, value in obj.items() if key not in ("tool", "content", "done")}
    key = tool.strip().lower()
    if key == "chat":
        if obj.get("done", True) is False:
            return "report_status", {"text": content}, ["router_json"]
        return "final", {"summary": content}, ["router_json"]
    if key == "shell":
        return "run", {"command": content, **extra}, ["router_json"]
    if key == "git" and isinstance(content, str):
        command = content if content.strip().startswith("git") else f"git {content.strip()}"
        return "run", {"command": command}, ["router_json"]
    if key == "code":
        return "create", {"content": content, **extra}, ["router_json"]
    if key == "files" and isinstance(content, str):
        return ("list" if content.strip().endswith(("/", ".")) else "read"), {"path": content}, ["router_json"]
    if isinstance(content, dict):
        return tool, {**content, **extra}, ["router_json"]
    spec, _ = resolve_tool(tool)
    if spec is not None and spec.primary and spec.primary not in extra:
        return tool, {spec.primary: content, **extra}, ["router_json"]
    return tool, {"content": content, **extra}, ["router_json"]


def call_from_object(obj: Any) -> tuple[str, Any, list[str]] | None:
    """Recognise a tool call in a decoded JSON value.

    Accepted shapes: ``{"name", "arguments"}`` (OpenAI/Qwen, arguments an object or a JSON
    string), ``{"type": "function", "function": {...}}``, the router form ``{"tool", "content"}``,
    ``{"tool"|"action"|"function": name, "args"|"input"|...: {...}}``, ``{"tool": name, **fields}``
    and an action dict ``{"kind": ..., **fields}``.

    Returns:
        ``(name, args, repairs)``, or None when the value is not a tool call.
    """
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict) and "name" in obj["function"]:
        obj = obj["function"]
    if isinstance(obj.get("kind"), str):
        return obj["kind"], {k: v for k, v in obj.items() if k != "kind"}, []
    routed = _router(obj) if not any(key in obj for key in _ARGS_KEYS) else None
    if routed is not None:
        return routed
    name_key = next((key for key in _NAME_KEYS if isinstance(obj.get(key), str)), None)
    if name_key is None:
        return None
    args_key = next((key for key in _ARGS_KEYS if key in obj), None)
    if args_key is None:
        return obj[name_key], {k: v for k, v in obj.items() if k != name_key}, []
    args = obj[args_key]
    repairs = ["arguments_string"] if isinstance(args, str) and args.strip().startswith("{") else []
    return obj[name_key], args, repairs
