"""Execute one decoded action for the agent loop: the policy first, then the worktree or the Foreman.

Every file action and every command goes through ``tools.permit`` before it runs (``Read``,
``LS``, ``Glob``, ``Grep`` for inspection; ``Edit``/``Write`` for changes, asked with the path
of the proposed change after its in-memory preview; ``Bash`` for RUN). An ``ask`` outcome of
the policy becomes a permission decision there and waits for the user. Foreman tools go to
``tools.call``. The result is text for the model plus a status the loop's honesty and loop
rules read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ...errors import ForemanError
from ...policy import classify_command
from ...sandbox import rule_of
from ..turns import log_command
from . import commands
from .registry import (
    ActionBase,
    AskUser,
    CreateTask,
    Final,
    Glob,
    Grep,
    List,
    ListTasks,
    Read,
    ReadMemory,
    ReportStatus,
    RequestMerge,
    Run,
    Search,
    SendMessage,
    UpdateTask,
    WriteMemory,
)
from .workspace import Refused, Workspace

Status = Literal["ok", "failed", "refused", "committed", "deferred", "final"]
INSPECT = ("read", "list", "glob", "grep", "search")
CHANGES = ("edit", "create", "delete", "mkdir", "move", "copy", "rename")


@dataclass
class Outcome:
    """What one action did.

    Attributes:
        status: ``ok`` (ran), ``failed`` (ran and failed: a non-zero exit, a refused tool),
            ``refused`` (not run: policy, stale, bad path, repeat), ``committed`` (a change was
            written), ``deferred`` (a change held back until the model has seen its reads).
        text: the result shown to the model.
        read_key: for a read, its identity (path, sha, range).
    """

    status: Status
    text: str
    read_key: tuple[str, str, int | None, int | None] | None = None


def foreman_args(action: ActionBase) -> dict[str, Any]:
    """Map a Foreman-tool action to the argument names :class:`~foreman.flow.tools.DaemonTools` takes."""
    data = action.model_dump(mode="json", exclude={"kind"}, exclude_none=True)
    if isinstance(action, (WriteMemory, ReadMemory)):
        if "name" in data:
            data["note"] = data.pop("name")
        data["shared"] = data.pop("scope", "shared") == "shared"
    if isinstance(action, UpdateTask) and data.get("status") == "done":
        data["status"] = "review"
    if isinstance(action, (UpdateTask, RequestMerge)) and "task_id" in data:
        data["task"] = data.pop("task_id")
    if isinstance(action, CreateTask):
        data["deps"] = list(data.pop("depends_on", []))
    if isinstance(action, AskUser):
        data["options"] = list(data.get("options", []))
    return data


class Executor:
    """Runs actions for one turn.

    Args:
        workspace: the agent's worktree.
        tools: the turn's :class:`~foreman.backends.turns.AgentTools`.
        env: the environment for commands (the git safety environment).
        run_timeout: seconds before a RUN is killed.
        max_output: bytes of command output kept.
        sandbox: the OS sandbox RUN commands run in (:class:`foreman.sandbox.Sandbox`; None: unsandboxed).
    """

    def __init__(self, workspace: Workspace, tools: Any, *, env: dict[str, str] | None, run_timeout: float,
                 max_output: int, sandbox: Any = None) -> None:
        self.ws = workspace
        self.tools = tools
        self.env = env
        self.run_timeout = run_timeout
        self.max_output = max_output
        self.sandbox = sandbox

    async def _permit(self, tool: str, args: dict[str, Any]) -> str | None:
        allowed, reason = await self.tools.permit(tool, args)
        return None if allowed else reason

    async def inspect(self, action: ActionBase) -> Outcome:
        """Run read/list/glob/grep/search (after the policy)."""
        try:
            if isinstance(action, Read):
                rel = self.ws.rel(action.path)
                tool, args = "Read", {"file_path": str(self.ws.abs(rel))}
            elif isinstance(action, List):
                tool, args = "LS", {"path": str(self.ws.abs(self.ws.rel(action.path)))}
            elif isinstance(action, Glob):
                tool, args = "Glob", {"pattern": action.pattern, "path": str(self.ws.root)}
            else:
                assert isinstance(action, (Grep, Search))
                pattern = action.pattern if isinstance(action, Grep) else action.text
                tool, args = "Grep", {"pattern": pattern, "path": str(self.ws.root)}
            denied = await self._permit(tool, args)
            if denied:
                return Outcome("refused", f"not allowed: {denied}")
            self.tools.activity("reading", f"{action.kind} {getattr(action, 'path', '') or getattr(action, 'pattern', '') or getattr(action, 'text', '')}"[:200])
            if isinstance(action, Read):
                out = self.ws.read(action)
                return Outcome("ok", out.text, out.key)
            if isinstance(action, List):
                return Outcome("ok", self.ws.list(action.path))
            if isinstance(action, Glob):
                return Outcome("ok", self.ws.glob(action.pattern))
            if isinstance(action, Grep):
                return Outcome("ok", self.ws.grep(action.pattern))
            assert isinstance(action, Search)
            return Outcome("ok", self.ws.grep(action.text, literal=True))
        except Refused as exc:
            return Outcome("failed", str(exc))

    async def change(self, action: ActionBase) -> Outcome:
        """propose (diff in memory) -> approve (policy) -> revalidate + commit; return the region."""
        try:
            change = self.ws.propose(action)
        except Refused as exc:
            return Outcome("failed", f"not applied: {exc}")
        self.tools.log(f"{action.kind} preview:\n{change.preview[:1800]}", kind="tool")
        denied = await self._permit(change.tool, {"file_path": change.policy_path})
        if denied:
            return Outcome("refused", f"not applied: {denied}")
        self.tools.activity("editing", f"{action.kind} {change.policy_path.rsplit('/', 1)[-1]}")
        try:
            return Outcome("committed", self.ws.commit(change))
        except Refused as exc:
            return Outcome("failed", f"not applied: {exc}")

    async def run(self, action: Run) -> Outcome:
        """RUN a command (after the policy) in the worktree, bounded; killed as a tree on cancel."""
        denied = await self._permit("Bash", {"command": action.command})
        if denied:
            return Outcome("refused", f"not run: {denied}")
        testing = commands.is_test_command(action.command)
        self.tools.activity("testing" if testing else "running", action.command[:200])
        track = getattr(self.tools, "track_process", None)
        sandbox = self.sandbox
        if sandbox is not None:  # the network only for a command the policy says needs it (allowed above)
            sandbox = sandbox.with_network(classify_command(action.command, worktree=str(self.ws.root)).network)
        res = await commands.run_command(action.command, cwd=self.ws.root, env=self.env, timeout=self.run_timeout,
                                         max_output=self.max_output, on_start=track, sandbox=sandbox)
        head = ("timed out after %.0f s and was killed" % self.run_timeout if res.timed_out
                else f"exit {res.exit_code}")
        rule = None
        if sandbox is not None:
            rule = rule_of(res.output)
        log_command(self.tools, action.command, head, rule)
        return Outcome("ok" if res.exit_code == 0 and not res.timed_out else "failed",
                       f"{head}\n{res.output.rstrip()}" if res.output.strip() else head)

    async def foreman(self, action: ActionBase) -> Outcome:
        """A Foreman tool through ``tools.call``; a refusal is a failed action."""
        if isinstance(action, ReportStatus):
            self.tools.activity("thinking", action.text[:200])
            return Outcome("ok", "ok")
        args = foreman_args(action)
        if isinstance(action, ReadMemory) and action.scope == "agent" and action.name and "/" not in action.name:
            args["note"] = f"agents/{getattr(self.tools, 'agent', '')}/{action.name}"
        try:
            text = await self.tools.call(action.kind, args)
        except ForemanError as exc:
            return Outcome("failed", f"{action.kind} refused: {exc.message}")
        self.tools.log(f"{action.kind}: {text[:300]}", kind="tool")
        return Outcome("ok", text)

    async def execute(self, action: ActionBase) -> Outcome:
        """Run any non-final action."""
        if action.kind in INSPECT:
            return await self.inspect(action)
        if action.kind in CHANGES:
            return await self.change(action)
        if isinstance(action, Run):
            return await self.run(action)
        if isinstance(action, (SendMessage, AskUser, WriteMemory, ReadMemory, UpdateTask, ReportStatus, ListTasks,
                               CreateTask, RequestMerge)):
            return await self.foreman(action)
        if isinstance(action, Final):
            return Outcome("final", action.summary)
        return Outcome("refused", f"{action.kind} is not an action this backend runs")
