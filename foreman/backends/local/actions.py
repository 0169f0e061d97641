"""The actions an agent can take, as frozen pydantic models (the values decoders produce).

Each model's ``kind`` is also its tool name. Paths are relative to the worktree root; line
numbers are 1-based and inclusive. :mod:`.registry` lists them with their spellings.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

Role = Literal["lead", "worker"]
ROLES: tuple[Role, ...] = ("lead", "worker")


class ActionBase(BaseModel):
    """Base of every action: frozen, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    kind: str
    """The tool name; each action narrows it to one literal."""

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
    Read | List | Glob | Grep | Search | Edit | Create | Delete | Mkdir | Move | Copy | Rename | Run | SendMessage | AskUser | WriteMemory | ReadMemory | UpdateTask | ReportStatus | ListTasks | CreateTask | RequestMerge | Final,
    Field(discriminator="kind"),
]
"""Any action; ``kind`` tells which."""

_ACTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(Action)


def parse_action(data: dict[str, Any]) -> ActionBase:
    """Build an action from a dict that carries ``kind`` and the fields.

    Raises:
        pydantic.ValidationError: unknown kind, missing or bad field.
    """
    action: ActionBase = _ACTION_ADAPTER.validate_python(data)
    return action
