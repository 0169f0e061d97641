"""The Foreman's agent tools, bound to one agent's turn (the :class:`AgentTools` contract).

Every call is refused once the turn is stale (aborted, or a newer turn of the agent started)
or the agent went off shift: stop is immediate for anything a lingering session still tries.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..backends.prompts import unread_block
from ..backends.turns import TurnResult
from ..core.rules import PERMISSION_OPTIONS
from ..errors import Conflict, ForemanError, PolicyError, StateError
from .host import FlowHost

logger = logging.getLogger(__name__)

WORKER_TOOLS = ("send_message", "ask_user", "write_memory", "read_memory", "update_task", "report_status", "list_tasks")
LEAD_TOOLS = WORKER_TOOLS + ("create_task", "request_merge")


class DaemonTools:
    """Tools for one turn of one agent.

    Args:
        daemon: the running daemon, as the flow sees it (:class:`.host.FlowHost`).
        agent: the agent's name.
        turn_id: the turn these tools belong to.
        lead: the agent is the lead.
        cwd: the agent's working directory (worktree, or the user's checkout for the lead).
        task: the task the turn works on.
        goal: the goal the turn plans.
        is_current: returns False once this turn is no longer the agent's current turn.
        on_merge_request: called with a task id when the lead requests a merge.
        on_session: called with the backend session id as soon as the runner knows it.
        on_process: called with the pid of each process the runner starts for the turn.
        on_question: called with a question's decision id as soon as ``ask_user`` opens it (the
            turn's session is then waiting for it, across a restart too).
    """

    def __init__(self, daemon: FlowHost, agent: str, turn_id: str, *, lead: bool, cwd: Path, task: str | None = None,
                 goal: str | None = None, is_current: Callable[[], bool] = lambda: True,
                 on_merge_request: Callable[[str, str], Awaitable[str]] | None = None,
                 on_session: Callable[[str], None] | None = None,
                 on_process: Callable[[int], None] | None = None,
                 on_question: Callable[[str], None] | None = None) -> None:
        self.d = daemon
        self.agent = agent
        self.turn_id = turn_id
        self.lead = lead
        self.cwd = Path(cwd)
        self.task = task
        self.goal = goal
        self.is_current = is_current
        self.on_merge_request = on_merge_request
        self.on_session = on_session
        self.on_process = on_process
        self.on_question = on_question
        self.merge_requested = False
        self.changes_requested = False
        self.cancelled: TurnResult | None = None
        """The usage a cancelled turn reported before it was cut off (a ``TurnResult``), if any."""

    # ------------------------------------------------------------------ guards
    def _live(self) -> None:
        a = self.d.core.world.agents.get(self.agent)
        if a is None or not a.active or not self.is_current():
            raise PolicyError(f"{self.agent}'s turn {self.turn_id} is over; the call was refused")

    def _with_unread(self, text: str) -> str:
        return text + unread_block(self.unread())

    # ------------------------------------------------------------------ AgentTools
    def unread(self) -> list[str]:
        """Return and clear the agent's unread messages as ``from: text`` lines."""
        if not self.is_current():
            return []
        msgs = self.d.act(lambda c, now: c.take_unread(self.agent))
        return [f"{m.sender}: {m.text}" for m in msgs]

    def pending(self) -> list[tuple[int, str]]:
        """The agent's unread messages as ``(message id, "from: text")``, left unread (a remote turn
        marks read only what its node confirms it handed to the runner: :meth:`mark_read`)."""
        if not self.is_current():
            return []
        mine = self.d.core.world.meta.get("unread", {}).get(self.agent, [])  # (wire dicts: the sender is "from")
        return [(m["id"], f"{m['from']}: {m['text']}") for m in mine]

    def mark_read(self, ids: list[int]) -> None:
        """Mark the messages ``ids`` read (the node handed them to the runner); the rest stay unread."""
        if ids and self.is_current():  # (a stale turn's reads do not count: its messages stay for the next)
            self.d.act(lambda c, now: c.mark_read(self.agent, ids))

    def session_started(self, session_id: str) -> None:
        """Record the backend session id as soon as the runner learns it (e.g. the CLI's init
        message), so a turn aborted midway (pause, restart) resumes that same session.
        Ignored for a stale turn or an empty id."""
        if session_id and self.on_session is not None and self.is_current():
            self.on_session(session_id)

    def track_process(self, pid: int) -> None:
        """Register a process the runner started for this turn (e.g. the agent CLI). The
        runner still kills it when the turn ends; this record lets a Foreman restarted after a
        crash kill it if it survived."""
        if self.on_process is not None:
            self.on_process(pid)

    def turn_cancelled(self, partial: TurnResult) -> None:
        """Keep what the cancelled turn reported so far (a ``TurnResult``: tokens, cost); the
        conductor records it as the turn's usage. Kept even for a stale turn: the usage was spent."""
        self.cancelled = partial

    def activity(self, state: str, activity: str, *, station: str | None = None) -> None:
        """Show what the agent does; ignored for a stale turn."""
        if not self.is_current():
            return
        try:
            self.d.act(lambda c, now: c.set_activity(self.agent, state, now, station=station, activity=activity[:200]))
        except ForemanError as exc:
            logger.debug("activity refused: %s", exc)

    def log(self, text: str, *, kind: str = "text") -> None:
        """Append a log line (long text is cut at 2,000 characters)."""
        if not self.is_current() or not text.strip():
            return
        self.d.act(lambda c, now: c.log(self.agent, text[:2000], now, kind=kind))

    def feed(self, text: str) -> None:
        """Put a line about this agent (and its task) in the activity feed; ignored for a stale turn."""
        if self.is_current() and text.strip():
            self.d.act(lambda c, now: c.feed(text[:500], now, kind="agent", agent=self.agent, task=self.task))

    def placed(self, node: str | None) -> None:
        """Say on the agent entity where this turn runs (``node``: a cluster node's label, None
        for the daemon's machine); ignored for a stale turn."""
        if self.is_current():
            self.d.act(lambda c, now: c.set_agent_node(self.agent, node))

    async def permit(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        """Ask the policy (and if it says ask, the user) whether a tool call may run."""
        try:
            self._live()
        except PolicyError as exc:
            return False, exc.message

        from ..policy import classify_tool  # (at the first tool call: start-up does not load the policy's tables)

        grants = list(self.d.core.world.meta.get("grants", {}).get(self.agent, []))
        base_branches = [r.base_branch for r in self.d.core.world.repos.values() if r.base_branch]
        verdict = classify_tool(tool, args, worktree=str(self.cwd), lead=self.lead, granted=grants,
                                protected_refs=base_branches)
        if verdict.outcome == "allow":
            return True, verdict.reason
        if verdict.outcome == "deny":
            self.log(f"denied {tool}: {verdict.reason}", kind="error")
            return False, verdict.reason
        what = args.get("command") or args.get("file_path") or args.get("path") or args.get("url") or str(args)[:200]
        scope = verdict.scope or f'"Always allow for this agent" covers: {", ".join(verdict.keys)}'
        detail = verdict.reason + (f"\n{scope}" if verdict.keys else "")  # (the policy's scope says it once)
        prev = self.d.core.agent(self.agent)
        self.activity("waiting_user", f"asking to run {tool}")
        d = await self.d.ask("permission", f"{prev.title} wants to use {tool}: {what}", list(PERMISSION_OPTIONS),
                             asked_by=self.agent, task=self.task, detail=detail)
        if not self.is_current():
            return False, "the turn is over"
        if d.status != "answered" or d.answer is None or d.answer.option == 1:
            return False, "the user denied it" if d.answer else "the request was withdrawn"
        if d.answer.option == 2 and verdict.keys:
            grants_all = {k: list(v) for k, v in self.d.core.world.meta.get("grants", {}).items()}
            mine = grants_all.setdefault(self.agent, [])
            mine.extend(k for k in verdict.keys if k not in mine)
            self.d.act(lambda c, now: c.set_meta("grants", grants_all))
        self.activity(prev.state, prev.activity, station=prev.station)
        return True, "the user allowed it"

    async def call(self, name: str, args: dict[str, Any], *, unread: bool = True) -> str:
        """Run a Foreman tool; see :data:`LEAD_TOOLS`. Raises ForemanError for a refused call.
        ``unread``: follow the result with the agent's unread messages, taken (see
        :meth:`AgentTools.call`); False leaves them unread.

        Argument names have aliases models commonly use: ``task_id`` for ``task``, ``content``
        for ``text``, ``depends_on`` for ``deps``, ``name`` for ``note``, ``scope: agent`` for
        ``shared: false``.
        """
        self._live()
        args = dict(args)
        for alias, canonical in (("task_id", "task"), ("content", "text"), ("depends_on", "deps"), ("message", "text")):
            if alias in args and canonical not in args:
                args[canonical] = args.pop(alias)
        if args.get("scope") in ("agent", "private", "own"):
            args["shared"] = False
        allowed = LEAD_TOOLS if self.lead else WORKER_TOOLS
        if name not in allowed:
            raise PolicyError(f"{name} is not a tool {self.agent} may use ({', '.join(allowed)})")
        handler = getattr(self, f"_t_{name}")
        result = await handler(args)
        return self._with_unread(result) if unread else result

    # ------------------------------------------------------------------ tools
    async def _t_send_message(self, a: dict[str, Any]) -> str:
        msg = self.d.act(lambda c, now: c.send_message(self.agent, str(a.get("to", "")), str(a.get("text", "")), now))
        return f"sent message {msg.id} to {msg.to}"

    async def _t_ask_user(self, a: dict[str, Any]) -> str:
        options = [str(o) for o in a.get("options") or []] or ["Yes", "No"]
        prev = self.d.core.agent(self.agent)
        self.activity("waiting_user", "waiting for your answer")
        on_question = self.on_question
        opened = (lambda dec: on_question(dec.id)) if on_question is not None else None
        task, goal = self.task, self.goal
        if "task" in a and not a["task"] and self.lead:  # the lead asks about the goal, not the task it reviews
            goal = goal or (self.d.core.task(self.task).goal if self.task else None)
            task = None
        d = await self.d.ask("question", str(a.get("question", "")), options, asked_by=self.agent, task=task,
                             goal=goal if not task else None, on_open=opened)
        self.activity(prev.state if prev.state != "waiting_user" else "thinking", prev.activity)
        if d.status != "answered" or d.answer is None:
            return "The question was withdrawn; carry on with your best judgement."
        return f"The user answered: {d.answer.label}" + (f" ({d.answer.text})" if d.answer.text else "")

    async def _t_write_memory(self, a: dict[str, Any]) -> str:
        name = str(a.get("note") or a.get("name") or "notes")
        note = name if "/" in name else (f"shared/{name}" if a.get("shared", True) else f"agents/{self.agent}/{name}")
        if not (note.startswith("shared/") or note.startswith(f"agents/{self.agent}/")):
            raise PolicyError("agents write shared notes or their own notes only")
        self.d.memory.write(note, str(a.get("text", "")), append=bool(a.get("append", False)))
        return f"wrote memory note {note}"

    async def _t_read_memory(self, a: dict[str, Any]) -> str:
        note = a.get("note")
        if not note:
            return "Notes: " + (", ".join(self.d.memory.index()) or "none")
        note = str(note) if "/" in str(note) else f"shared/{note}"
        return self.d.memory.read(note)

    async def _t_update_task(self, a: dict[str, Any]) -> str:
        tid = str(a.get("task") or self.task or "")
        status = str(a.get("status", ""))
        note = a.get("note")
        task = self.d.core.task(tid)
        if not self.lead and task.assignee != self.agent:
            raise PolicyError(f"{tid} is not {self.agent}'s task")
        if self.lead and status == "doing" and task.status == "review":
            self.changes_requested = True
            self.d.act(lambda c, now: c.set_task_status(tid, "doing", now, who=self.agent, reason=None))
            assignee = task.assignee
            if note and assignee:
                self.d.act(lambda c, now: c.send_message(self.agent, assignee, f"Changes requested on {tid}: {note}", now))
            return f"{tid} goes back to {task.assignee} for changes"
        if self.lead and status == "cancelled":  # the lead drops a task of its plan (a stretch goal, rejected work)
            self.d.act(lambda c, now: c.cancel_task(tid, now, who=self.agent, reason=str(note) if note else ""))
            return f"{tid} is now cancelled"
        if status not in ("review", "blocked", "todo", "doing"):
            allowed = "review, blocked, todo, doing or cancelled" if self.lead else "review, blocked, todo or doing"
            raise StateError(f"status must be {allowed} (got {status!r})")
        if status == task.status:
            return f"{tid} is already {status}"
        self.d.act(lambda c, now: c.set_task_status(tid, status, now, who=self.agent, reason=str(note) if note else None))
        return f"{tid} is now {status}"

    async def _t_report_status(self, a: dict[str, Any]) -> str:
        state = str(a.get("state") or "thinking")
        self.activity(state, str(a.get("activity") or a.get("text") or ""))
        return "ok"

    async def _t_list_tasks(self, a: dict[str, Any]) -> str:
        rows = [f"{t.id} [{t.status}] {t.title} (assignee {t.assignee or '-'}; deps {','.join(t.deps) or '-'})"
                for t in self.d.core.world.tasks.values() if not self.goal or t.goal == self.goal or not t.goal]
        return "\n".join(rows) or "no tasks"

    async def _t_create_task(self, a: dict[str, Any]) -> str:
        goal = self.goal or (self.d.core.task(self.task).goal if self.task else None)
        deps = a.get("deps") or []
        if isinstance(deps, str):
            deps = [d.strip() for d in deps.split(",") if d.strip()]
        t = self.d.act(lambda c, now: c.create_task(
            str(a.get("title", "")), now, goal=goal, description=str(a.get("description", "")), deps=deps,
            assignee=a.get("assignee") or None, priority=int(a.get("priority") or 0), who=self.agent))
        return f"created {t.id}: {t.title}"

    async def _t_request_merge(self, a: dict[str, Any]) -> str:
        tid = str(a.get("task") or self.task or "")
        task = self.d.core.task(tid)
        if task.status != "review":
            raise Conflict(f"{tid} is {task.status}; only a task in review can be merged")
        self.merge_requested = True
        if self.on_merge_request is None:
            raise StateError("merges are not handled by this backend")
        return str(await self.on_merge_request(tid, str(a.get("summary") or "")))
