"""The one tool registry of the local backend.

Every action an agent can take is defined here once, as a frozen pydantic model whose
``kind`` is also the tool's name. Everything else is generated from :data:`TOOLS`:

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
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

Role = Literal["lead", "worker"]
ROLES: tuple[Role, ...] = ("lead", "worker")


class ActionBase(BaseModel):
    """Base of every action: frozen, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    def to_dict(self) -> dict[str, Any]:
        """Return the action as a JSON-ready dict (``kind`` first, then its fields)."""
        return self.model_dump(mode="json")


Path = Annotated[str, Field(min_length=1)]


# -- inspection ---------------------------------------------------------------------------
class Read(ActionBase):
    """Read a file, whole or a 1-based inclusive line range."""

    kind: Literal["read"] = "read"
    path: Path
    """File path relative to the worktree root."""
    start: int | None = Field(default=None, ge=1)
    """First line to read (1-based); omit to read from the top."""
    end: int | None = Field(default=None, ge=1)
    """Last line to read (inclusive); omit to read to the end."""

    @model_validator(mode="after")
    def _range_in_order(self) -> Read:
        if self.start is not None and self.end is not None and self.end < self.start:
            raise ValueError("end must not be before start")
        return self


class List(ActionBase):
    """List one directory level."""

    kind: Literal["list"] = "list"
    path: str = "."
    """Directory relative to the worktree root ("." for the root)."""


class Glob(ActionBase):
    """Find files whose path matches a glob pattern."""

    kind: Literal["glob"] = "glob"
    pattern: Path
    """Glob pattern such as **/*.py."""


class Grep(ActionBase):
    """Find lines matching a regular expression in every file."""

    kind: Literal["grep"] = "grep"
    pattern: Path
    """Regular expression to look for."""


class Search(ActionBase):
    """Find lines containing an exact literal text in every file."""

    kind: Literal["search"] = "search"
    text: Path
    """Literal text to look for."""


# -- changes ------------------------------------------------------------------------------
class Edit(ActionBase):
    """Replace one exact, unique passage of an existing file."""

    kind: Literal["edit"] = "edit"
    path: Path
    """File to change."""
    search: Path
    """Exact current text of the passage (copied from what you read)."""
    replace: str
    """Text that takes its place."""


class Create(ActionBase):
    """Create a new file with the given content."""

    kind: Literal["create"] = "create"
    path: Path
    """File to create; it must not exist yet."""
    content: str
    """The whole content of the new file."""


class Delete(ActionBase):
    """Delete a file or directory."""

    kind: Literal["delete"] = "delete"
    path: Path
    """File or directory to delete."""


class Mkdir(ActionBase):
    """Create a directory (and missing parents)."""

    kind: Literal["mkdir"] = "mkdir"
    path: Path
    """Directory to create."""


class Move(ActionBase):
    """Move a file or directory; the destination must not exist."""

    kind: Literal["move"] = "move"
    source: Path
    """Existing path."""
    destination: Path
    """New path."""


class Copy(ActionBase):
    """Copy a file or directory; the destination must not exist."""

    kind: Literal["copy"] = "copy"
    source: Path
    """Existing path."""
    destination: Path
    """Path of the copy."""


class Rename(ActionBase):
    """Rename a file or directory; the destination must not exist."""

    kind: Literal["rename"] = "rename"
    source: Path
    """Existing path."""
    destination: Path
    """New name (a path)."""


class Run(ActionBase):
    """Run a shell command in the worktree."""

    kind: Literal["run"] = "run"
    command: Path
    """The command line, e.g. python -m pytest -q."""


# -- Foreman tools ------------------------------------------------------------------------
class SendMessage(ActionBase):
    """Send a message to another agent (or "user")."""

    kind: Literal["send_message"] = "send_message"
    to: Path
    """Agent name, "lead", "user" or "all"."""
    text: Path
    """The message."""


class AskUser(ActionBase):
    """Ask the user a question and wait for the answer."""

    kind: Literal["ask_user"] = "ask_user"
    question: Path
    """The question."""
    options: tuple[str, ...] = ()
    """Suggested answers, if any."""


class WriteMemory(ActionBase):
    """Write a markdown note to memory."""

    kind: Literal["write_memory"] = "write_memory"
    name: Path
    """Note name."""
    content: str
    """Markdown text of the note."""
    scope: Literal["shared", "agent"] = "shared"
    """shared: the whole team reads it; agent: only you."""


class ReadMemory(ActionBase):
    """Read a memory note, or list the notes when no name is given."""

    kind: Literal["read_memory"] = "read_memory"
    name: str | None = None
    """Note name; omit to list the notes."""
    scope: Literal["shared", "agent"] = "shared"
    """Which memory to read."""


class UpdateTask(ActionBase):
    """Change your task's status (review when the work is done and tested)."""

    kind: Literal["update_task"] = "update_task"
    status: Literal["doing", "blocked", "review", "done"]
    """New status."""
    task_id: str | None = None
    """Task id; omit for your current task."""
    note: str = ""
    """Why, in one sentence."""


class ReportStatus(ActionBase):
    """Tell the team what you are doing now."""

    kind: Literal["report_status"] = "report_status"
    text: Path
    """One short sentence."""


class ListTasks(ActionBase):
    """List the tasks of the current goal."""

    kind: Literal["list_tasks"] = "list_tasks"


class CreateTask(ActionBase):
    """Create a task for a worker (lead only)."""

    kind: Literal["create_task"] = "create_task"
    title: Path
    """Short title."""
    description: str = ""
    """What to do and how to know it is done."""
    assignee: str | None = None
    """Worker name; omit to let the scheduler choose."""
    depends_on: tuple[str, ...] = ()
    """Ids of tasks that must be done first."""


class RequestMerge(ActionBase):
    """Ask the user to merge a reviewed task (lead only)."""

    kind: Literal["request_merge"] = "request_merge"
    task_id: Path
    """Task id."""
    summary: str = ""
    """What the change does and why it is ready."""


class Final(ActionBase):
    """Finish: the work is done (or cannot be done); say what happened."""

    kind: Literal["final"] = "final"
    summary: Path
    """What was done and how it was verified."""


Action = Annotated[
    Union[
        Read, List, Glob, Grep, Search, Edit, Create, Delete, Mkdir, Move, Copy, Rename, Run,
        SendMessage, AskUser, WriteMemory, ReadMemory, UpdateTask, ReportStatus, ListTasks,
        CreateTask, RequestMerge, Final,
    ],
    Field(discriminator="kind"),
]
"""Any action; ``kind`` tells which."""

_ACTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(Action)


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


def parse_action(data: dict[str, Any]) -> ActionBase:
    """Build an action from a dict that carries ``kind`` and the fields.

    Raises:
        pydantic.ValidationError: unknown kind, missing or bad field.
    """
    action: ActionBase = _ACTION_ADAPTER.validate_python(data)
    return action


# -- native schema ------------------------------------------------------------------------
def _strip(node: Any) -> Any:
    """Simplify a pydantic JSON schema for small models (no titles, no null unions)."""
    if isinstance(node, list):
        return [_strip(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _strip(value) for key, value in node.items() if key != "title"}
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
    schema = copy.deepcopy(spec.model.model_json_schema())
    schema["properties"].pop("kind", None)
    required = [name for name in schema.get("required", []) if name != "kind"]
    schema = _strip(schema)
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
