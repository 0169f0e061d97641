"""The turn contract shared by the real backends (claude, local).

A *turn* is one run of an agent on a job: ``plan`` (the lead turns a goal into tasks),
``work`` (a worker changes files in its worktree), ``review`` (the lead reviews a task's diff
and CI result) or ``followup`` (an agent answers a message, a nudge, a CI failure or requested
changes). The conductor (:mod:`foreman.flow.conductor`) decides which turns run; a
:class:`TurnRunner` runs one turn with a model and reports through :class:`AgentTools`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..core.roster import title

JobKind = Literal["plan", "work", "review", "followup"]


@dataclass(frozen=True)
class TurnRequest:
    """One turn to run.

    Attributes:
        turn_id: unique id of this turn (``kit:t3:4``); signals from older turns carry their own
            id and are ignored once a newer turn started.
        agent: the agent's name.
        lead: True for the lead (read-only in the user's checkout, never edits files).
        job: the job kind.
        prompt: the user-turn text (task, history, unread messages ...).
        system: the system prompt (role, rules, tools).
        cwd: where the agent works: its worktree, or the user's checkout for the lead.
        session_id: a backend session to resume, or None for a new one.
        task: the task id, if the turn works on one.
        goal: the goal id, if the turn plans one.
        model: the model id/alias to use, if the backend has one.
        max_turns: the cap on model round trips in this turn.
        env: the environment for every process the turn starts (the git safety environment).
    """

    turn_id: str
    agent: str
    lead: bool
    job: JobKind
    prompt: str
    system: str
    cwd: Path
    session_id: str | None = None
    task: str | None = None
    goal: str | None = None
    model: str | None = None
    max_turns: int = 40
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class TurnResult:
    """How a turn ended.

    Attributes:
        ok: the turn ended normally (False: API error, max turns, timeout, crash).
        session_id: the backend session to resume next time (None if there is none).
        error: why the turn failed, for people (None when ok).
        cost_usd: the turn's cost in USD when the backend reports one (a difference of the
            cumulative cost, never the cumulative figure).
        text: the agent's final text.
        aborted: the turn was aborted (pause, stop, cancel, shutdown).
        input_tokens / output_tokens: the turn's token usage when the backend reports it (None:
            not reported); input excludes the cache figures.
        cache_read_tokens / cache_write_tokens: input tokens read from / written to the prompt cache.
        model: the model the backend says answered (e.g. ``claude-sonnet-4-5``), if reported.
    """

    ok: bool
    session_id: str | None = None
    error: str | None = None
    cost_usd: float | None = None
    text: str = ""
    aborted: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    model: str | None = None


class AgentTools(Protocol):
    """The Foreman's tools and hooks as one agent's turn sees them.

    Every call is refused (``PolicyError``/``Conflict`` raised, or a refusal string returned)
    once the turn was aborted or the agent went off shift. Results are short strings for the
    model; unread messages ride along on every result.
    """

    agent: str
    turn_id: str

    async def call(self, name: str, args: dict[str, Any], *, unread: bool = True) -> str:
        """Run a Foreman tool by name (``send_message``, ``ask_user``, ``write_memory``,
        ``read_memory``, ``update_task``, ``report_status``, ``list_tasks``, lead-only
        ``create_task`` and ``request_merge``); return the result text for the model, followed
        by the agent's unread messages (taken: marked read), unless ``unread`` is False (a remote
        turn's node adds the ones it holds and confirms each to the daemon).

        Raises:
            ForemanError: the tool is unknown, not allowed for this agent, or its input is bad
                (the runner turns it into a tool error for the model).
        """
        ...

    async def permit(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        """Ask the permission policy whether a built-in tool call may run (Bash, Read, Write,
        Edit, Glob, Grep, WebFetch ...). An ``ask`` outcome opens a permission decision and
        waits for the user. Returns ``(allowed, reason)``."""
        ...

    def activity(self, state: str, activity: str, *, station: str | None = None) -> None:
        """Show what the agent does (``reading``, ``editing``, ``testing``, ``running`` ...)."""
        ...

    def log(self, text: str, *, kind: str = "text") -> None:
        """Append a line to the agent's log (streamed text, tool use, results)."""
        ...

    def unread(self) -> list[str]:
        """Return and clear the agent's unread messages, formatted for the model."""
        ...

    def session_started(self, session_id: str) -> None:
        """Record the backend session id as soon as the runner learns it, so a turn aborted
        midway (pause, crash) resumes that same session."""
        ...

    def track_process(self, pid: int) -> None:
        """Record a process the runner started (its CLI, a command), so a Foreman restarted
        after a crash can kill it if it survived (checked by creation time)."""
        ...

    def turn_cancelled(self, partial: TurnResult) -> None:
        """Take what a cancelled turn reported before it was cut off (tokens, cost: the usage
        the model service already counted), so the Foreman records it. The runner calls it
        just before re-raising ``CancelledError``; optional (see :func:`hand_over_cancelled`)."""
        ...


class TurnRunner(Protocol):
    """Runs turns with one kind of model (the claude SDK, an OpenAI-compatible endpoint)."""

    name: str

    def status(self) -> tuple[str, str]:
        """Return ``(auth, detail)`` for the banner (``("api-key", "")``, ``("missing", "set ANTHROPIC_API_KEY")``)."""
        ...

    async def preflight(self) -> None:
        """Check the model service before any agent starts. Raises BackendError naming the problem."""
        ...

    async def run_turn(self, request: TurnRequest, tools: AgentTools) -> TurnResult:
        """Run one turn to its end. Never raises for model failures: returns ``ok=False``.

        Cancellation (``asyncio.CancelledError``) aborts the turn; the runner must kill the
        process tree it started (if any) and hand the usage reported so far to
        :func:`hand_over_cancelled` before re-raising.
        """
        ...

    async def close(self) -> None:
        """Release clients and processes."""
        ...


def hand_over_cancelled(tools: Any, partial: TurnResult) -> None:
    """Give a cancelled turn's usage so far to ``tools.turn_cancelled`` when the tools have that
    hook (:class:`AgentTools`); never raises (the runner is about to re-raise ``CancelledError``)."""
    hook = getattr(tools, "turn_cancelled", None)
    if callable(hook):
        try:
            hook(partial)
        except Exception:  # noqa: BLE001 - the cancellation must go on
            logging.getLogger(__name__).exception("recording a cancelled turn's usage failed")


def log_command(tools: Any, command: str, head: str, rule: str | None) -> None:
    """Log an agent's command and how it ended (``$ <command> -> <head>``); when the OS sandbox
    blocked it (``rule``: :func:`foreman.sandbox.rule_of` / :func:`~foreman.sandbox.explain`), the
    line says which rule and so does the feed (``tools.feed``, when the tools have it), as it does
    for CI (``flow/ci.py``)."""
    tools.log(f"$ {command} -> {head}" + (f"; the OS sandbox blocked it: {rule}" if rule else ""),
              kind="error" if rule else "result")
    feed = getattr(tools, "feed", None)
    if rule and callable(feed):
        shown = command if len(command) <= 80 else command[:79] + "…"
        feed(f"{title(tools.agent)}'s command `{shown}` failed; the OS sandbox blocked it: {rule}")
