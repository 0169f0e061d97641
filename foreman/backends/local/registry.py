"""The one tool registry of the local backend.

Every action an agent can take is a frozen pydantic model (:mod:`.actions`) whose ``kind``
is also the tool's name, listed here once with its spelling. Everything else is generated
from :data:`TOOLS`:

- :func:`render_instructions`: the text protocol a prompt teaches, for one role;
- :func:`openai_tools`: the native OpenAI ``tools`` list (JSON schema from the models);
- both decoders (:mod:`.textcodec`, :mod:`.nativecodec`) build actions through
  :func:`parse_action`, so a tool cannot exist in one spelling and not the other.

Actions are plain values: the agent loop executes them against a worktree. Paths are
relative to the worktree root; line numbers are 1-based and inclusive.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .actions import (  # re-exported: the registry is where callers look
    ROLES,
    Action,
    ActionBase,
    AskUser,
    Copy,
    Create,
    CreateTask,
    Delete,
    Edit,
    Final,
    Glob,
    Grep,
    List,
    ListTasks,
    Mkdir,
    Move,
    Read,
    ReadMemory,
    Rename,
    ReportStatus,
    RequestMerge,
    Role,
    Run,
    Search,
    SendMessage,
    UpdateTask,
    WriteMemory,
    parse_action,
)

__all__ = [
    "BY_NAME", "BY_WORD", "ROLES", "TOOLS", "Action", "ActionBase", "AskUser", "Copy", "Create", "CreateTask",
    "Delete", "Edit", "Final", "Glob", "Grep", "List", "ListTasks", "Mkdir", "Move", "Read", "ReadMemory",
    "Rename", "ReportStatus", "RequestMerge", "Role", "Run", "Search", "SendMessage", "ToolSpec", "UpdateTask",
    "WriteMemory", "openai_tools", "parse_action", "render_instructions", "tool_schema", "tools_for",
]


@dataclass(frozen=True)
class ToolSpec:
    """One entry of the registry.

    Attributes:
        model: the action model; its ``kind`` default is the tool name.
        group: "inspect", "change", "foreman" or "finish" (prompt sections).
        syntax: the text-protocol spelling taught in the prompt.
        word: the action word that starts the line (READ ...), or None when the tool is
            spelled ``TOOL name {json}`` (or is an edit/create block, or FINAL).
        primary: the field a bare string argument fills (router ``content``), or None.
        roles: roles that may use the tool.
    """

    model: type[ActionBase]
    group: str
    syntax: str
    word: str | None = None
    primary: str | None = None
    roles: frozenset[str] = frozenset(ROLES)

    @property
    def name(self) -> str:
        """The tool name, equal to the action ``kind``."""
        return str(self.model.model_fields["kind"].default)

    @property
    def summary(self) -> str:
        """One line describing the tool (the model's docstring)."""
        return (self.model.__doc__ or "").strip().splitlines()[0]


_LEAD = frozenset({"lead"})

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(Read, "inspect", "READ path[:start-end]", "READ", "path"),
    ToolSpec(List, "inspect", "LIST dir", "LIST", "path"),
    ToolSpec(Glob, "inspect", "GLOB pattern", "GLOB", "pattern"),
    ToolSpec(Grep, "inspect", "GREP regex", "GREP", "pattern"),
    ToolSpec(Search, "inspect", "SEARCH literal text", "SEARCH", "text"),
    ToolSpec(Edit, "change", "path, then a SEARCH/REPLACE block (below)"),
    ToolSpec(Create, "change", "path, then a block with an empty SEARCH part"),
    ToolSpec(Delete, "change", "DELETE path", "DELETE", "path"),
    ToolSpec(Mkdir, "change", "MKDIR path", "MKDIR", "path"),
    ToolSpec(Move, "change", "MOVE source -> destination", "MOVE"),
    ToolSpec(Copy, "change", "COPY source -> destination", "COPY"),
    ToolSpec(Rename, "change", "RENAME source -> destination", "RENAME"),
    ToolSpec(Run, "change", "RUN command", "RUN", "command"),
    ToolSpec(SendMessage, "foreman", 'TOOL send_message {"to": "lead", "text": "..."}', primary="text"),
    ToolSpec(AskUser, "foreman", 'TOOL ask_user {"question": "...", "options": ["yes", "no"]}',
             primary="question"),
    ToolSpec(WriteMemory, "foreman", 'TOOL write_memory {"name": "plan", "content": "..."}'),
    ToolSpec(ReadMemory, "foreman", 'TOOL read_memory {"name": "plan"}', primary="name"),
    ToolSpec(UpdateTask, "foreman", 'TOOL update_task {"status": "review", "note": "..."}',
             primary="status"),
    ToolSpec(ReportStatus, "foreman", 'TOOL report_status {"text": "..."}', primary="text"),
    ToolSpec(ListTasks, "foreman", "TOOL list_tasks {}"),
    ToolSpec(CreateTask, "foreman", 'TOOL create_task {"title": "...", "description": "...", '
             '"assignee": "kit"}', primary="title", roles=_LEAD),
    ToolSpec(RequestMerge, "foreman", 'TOOL request_merge {"task_id": "t1", "summary": "..."}',
             primary="task_id", roles=_LEAD),
    ToolSpec(Final, "finish", "FINAL summary (the rest of the reply)", primary="summary"),
)
"""Every tool, in prompt order."""

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
"""Tool specs by name (= action kind)."""

BY_WORD: dict[str, ToolSpec] = {spec.word: spec for spec in TOOLS if spec.word}
"""Tool specs by text action word (READ, RUN, ...)."""


def tools_for(role: str) -> tuple[ToolSpec, ...]:
    """Return the tools a role may use, in prompt order.

    Raises:
        ValueError: ``role`` is not "lead" or "worker".
    """
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    return tuple(spec for spec in TOOLS if role in spec.roles)


# -- native schema ------------------------------------------------------------------------
def _strip(node: Any) -> Any:
    """Simplify a pydantic JSON schema for small models (no titles, no null unions)."""
    if isinstance(node, list):
        return [_strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {
        key: ({name: _strip(sub) for name, sub in value.items()} if key == "properties" else _strip(value))
        for key, value in node.items()
        if key != "title"
    }
    options = node.get("anyOf")
    if isinstance(options, list):
        concrete = [option for option in options if option != {"type": "null"}]
        if len(concrete) == 1 and len(concrete) < len(options):
            del node["anyOf"]
            node.update(concrete[0])
            if node.get("default", 0) is None:
                del node["default"]
    return node


def tool_schema(spec: ToolSpec) -> dict[str, Any]:
    """Return the JSON schema of a tool's arguments (the model's schema without ``kind``)."""
    raw = copy.deepcopy(spec.model.model_json_schema())
    raw["properties"].pop("kind", None)
    required = [name for name in raw.get("required", []) if name != "kind"]
    schema: dict[str, Any] = _strip(raw)
    schema.pop("description", None)
    schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def openai_tools(role: str) -> list[dict[str, Any]]:
    """Return the OpenAI ``tools`` list for a role, generated from the registry.

    Returns:
        ``[{"type": "function", "function": {"name", "description", "parameters"}}, ...]``.
    """
    return [
        {
            "type": "function",
            "function": {"name": spec.name, "description": spec.summary, "parameters": tool_schema(spec)},
        }
        for spec in tools_for(role)
    ]


# -- prompt -------------------------------------------------------------------------------
_INTRO = (
    "Act by writing actions, each at the start of its own line. You may write several actions",
    "in one reply. Text that is not an action is ignored, so keep explanations short.",
)
_EDIT_HELP = (
    "To change a file, write its path alone on a line, then this block:",
    "<<<<<<< SEARCH",
    "exact lines copied from the file",
    "=======",
    "the lines that replace them",
    ">>>>>>> REPLACE",
    "The SEARCH part must match the file exactly and only once; read the file first.",
    "To create a new file, leave the SEARCH part empty.",
)
_TOOL_HELP = "Foreman tools take a JSON object on the same line: TOOL name {json}."
_FINAL_HELP = (
    "When the work is done and verified, write FINAL and a summary; everything after FINAL is",
    "the summary. Do not write FINAL if an action failed and nothing changed.",
)
_GROUP_TITLES = {"inspect": "Look around:", "change": "Change the worktree:",
                 "foreman": "Work with the team:", "finish": "Finish:"}


def render_instructions(role: str) -> str:
    """Render the text-protocol instructions for a role (part of the system prompt).

    Every line comes from the registry, so the prompt teaches exactly the tools the decoders
    accept. The lines are also what :mod:`.textcodec` recognises as leaked prompt text.

    Raises:
        ValueError: unknown role.
    """
    lines: list[str] = [*_INTRO]
    specs = tools_for(role)
    for group, title in _GROUP_TITLES.items():
        members = [spec for spec in specs if spec.group == group]
        if not members:
            continue
        lines += ["", title]
        for spec in members:
            lines.append(f"  {spec.syntax}  - {spec.summary}")
        if group == "change":
            lines += ["", *_EDIT_HELP]
        elif group == "foreman":
            lines += ["", _TOOL_HELP]
        elif group == "finish":
            lines += [*_FINAL_HELP]
    return "\n".join(lines) + "\n"
