"""Every tool call of a Claude turn goes through the Foreman's permission policy, once.

Two SDK entry points lead here:

* ``can_use_tool`` - the CLI asks it whenever its own rules say *ask* (Bash, Edit, Write,
  WebFetch, MCP tools ...). With ``setting_sources=[]`` no settings file can pre-allow a tool.
* a ``PreToolUse`` hook for the read-only tools (:data:`~.mapping.READ_TOOLS`) and Bash. The
  CLI auto-allows reads inside its working directory and the commands it deems read-only
  (``ls``, ``git status`` ... in 2.1.332) without asking ``can_use_tool``; the hook runs before
  the CLI's own rules for every such call and answers ``permissionDecision`` allow or deny from
  the same policy.

With the OS sandbox on, the hook also hands back every allowed Bash command wrapped in the
Foreman's sandbox (``updatedInput``, :meth:`foreman.sandbox.Sandbox.wrap_shell`): the CLI runs
``bwrap ... -- bash -c <command>`` instead of the command, with the network only when the
command's verdict says it needs it; when such a command fails on a sandbox rule, a
``PostToolUseFailure`` hook tells the model which rule (``additionalContext``) and the agent's log
and the feed say it, as for the local backend's RUN. The CLI's own sandbox stays off (it mounts placeholder files
in the repository's shared ``.git`` while a command runs, which breaks a second worker's command
started at the same time; see ``docs/claude.md``).

Both share one decision per ``tool_use_id``, so a call is never put to the policy (or the user)
twice. Fixed refusals come first: subagents (``Task``/``Agent``) are refused for everyone, the
lead never edits files, and a tool outside the turn's explicit set (:mod:`.toolset`) is refused,
never put to the policy or the user. The Foreman's own MCP tools are allowed here: their handlers check
who may call them (:meth:`AgentTools.call`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import ForemanError
from ...policy import classify_command
from ...sandbox import RULE_PREFIX, Sandbox
from ...sandbox import explain as sandbox_explain
from ..turns import AgentTools, log_command
from .mapping import EDIT_TOOLS, OWN_PREFIX, READ_TOOLS, SUBAGENT_TOOLS
from .toolset import denied_tools, is_allowed

logger = logging.getLogger(__name__)

SUBAGENT_REFUSAL = "subagents are not available here: do the work yourself, or coordinate with send_message"
LEAD_EDIT_REFUSAL = "the lead never edits files: create a task for a worker instead"
NOT_IN_SET_REFUSAL = "{tool} is not one of your tools here; use the tools you were given"
HOOKED_TOOLS = frozenset(READ_TOOLS | {"Bash"})
"""Tools the ``PreToolUse`` gate decides (the CLI may run them without asking ``can_use_tool``)."""
HOOK_MATCHER = "|".join(sorted(HOOKED_TOOLS))
"""The ``PreToolUse`` matcher (a tool-name regex) of the gate."""
HOOK_TIMEOUT = 3600.0
"""Seconds the CLI waits for the gate's hook (a policy *ask* may wait for the user)."""


@dataclass(frozen=True)
class SandboxedBash:
    """How one turn's allowed Bash commands run in the OS sandbox.

    Args:
        box: the OS sandbox.
        cwd: the turn's working directory (a worker's worktree, or the lead's checkout).
        env: the environment the CLI's commands get (``HOME`` is hidden in the sandbox).
        writable: ``cwd`` is writable (False for the lead: the user's checkout stays read-only).
    """

    box: Sandbox
    cwd: Path
    env: Mapping[str, str]
    writable: bool = True

    def wrap(self, command: str) -> tuple[str, bool]:
        """Return ``(shell command line, network)``: ``command`` in the sandbox, with the network
        only when its verdict says it needs it (:attr:`foreman.policy.Verdict.network`)."""
        network = classify_command(command, worktree=str(self.cwd)).network
        return self.box.wrap_shell(command, worktree=self.cwd, env=self.env, network=network,
                                   writable=self.writable), network

    def explain(self, output: str, *, network: bool) -> str | None:
        """The sandbox rule a failed command's ``output`` points at, or None (:func:`foreman.sandbox.explain`)."""
        return sandbox_explain(output, home=self.env.get("HOME"), network=network)


def fixed_refusal(tool: str, *, lead: bool) -> str | None:
    """Return why ``tool`` is refused whatever the policy says, or None."""
    if tool in SUBAGENT_TOOLS:
        return SUBAGENT_REFUSAL
    if lead and tool in EDIT_TOOLS:
        return LEAD_EDIT_REFUSAL
    if not is_allowed(tool, lead=lead):
        return NOT_IN_SET_REFUSAL.format(tool=tool)
    return None


def disallowed_tools(*, lead: bool) -> list[str]:
    """Tools removed from the model's tool list entirely (``--disallowedTools``): every known CLI
    tool outside the role's explicit set (:func:`.toolset.denied_tools`)."""
    return denied_tools(lead=lead)


class PermissionGate:
    """One turn's gate between the CLI's permission requests and :meth:`AgentTools.permit`.

    Args:
        tools: the turn's agent tools.
        lead: the agent is the lead.
        bash: how allowed Bash commands run in the OS sandbox, or None (the sandbox is off: a
            command runs as written).
    """

    def __init__(self, tools: AgentTools, *, lead: bool, bash: SandboxedBash | None = None) -> None:
        self.tools = tools
        self.lead = lead
        self.bash = bash
        self._decided: dict[str, asyncio.Future[tuple[bool, str]]] = {}
        self._wrapped: dict[str, tuple[str, bool]] = {}  # wrapped command -> (as written, network)

    async def decide(self, tool: str, args: dict[str, Any], tool_use_id: str | None) -> tuple[bool, str]:
        """Return ``(allowed, reason)`` for one call; asks the policy at most once per ``tool_use_id``."""
        if tool_use_id:
            pending = self._decided.get(tool_use_id)
            if pending is not None:
                return await asyncio.shield(pending)
            fut: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
            self._decided[tool_use_id] = fut
            try:
                outcome = await self._ask(tool, args)
            except BaseException:
                self._decided.pop(tool_use_id, None)
                fut.cancel()  # a second asker of the same call (if any) fails too
                raise
            fut.set_result(outcome)
            return outcome
        return await self._ask(tool, args)

    async def _ask(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        refusal = fixed_refusal(tool, lead=self.lead)
        if refusal is not None:
            self.tools.log(f"refused {tool}: {refusal}", kind="error")
            return False, refusal
        if tool.startswith(OWN_PREFIX):
            return True, "a Foreman tool"
        try:
            allowed, reason = await self.tools.permit(tool, args)
        except ForemanError as exc:
            return False, exc.message
        return bool(allowed), reason or ("allowed" if allowed else "denied by the permission policy")

    def sandboxed(self, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The input an allowed call runs with instead of ``args``, or None to run it as written:
        a Bash command wrapped by :attr:`bash` (once: a command this gate produced is never
        wrapped again, should the CLI ask twice about one call)."""
        command = args.get("command")
        if tool != "Bash" or self.bash is None or not isinstance(command, str) or command in self._wrapped:
            return None
        wrapped, network = self.bash.wrap(command)
        self._wrapped[wrapped] = (command, network)
        return {**args, "command": wrapped}

    async def can_use_tool(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        """The SDK's ``can_use_tool`` callback: PermissionResultAllow (with the sandboxed input,
        if any) / PermissionResultDeny."""
        # (the claude extra: loaded when a claude turn runs, about a second)
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        allowed, reason = await self.decide(tool_name, tool_input, getattr(context, "tool_use_id", None))
        if allowed:
            return PermissionResultAllow(updated_input=self.sandboxed(tool_name, tool_input))
        return PermissionResultDeny(message=reason)

    async def pre_tool_hook(self, hook_input: Any, tool_use_id: str | None, context: Any) -> Any:
        """The ``PreToolUse`` hook for :data:`HOOKED_TOOLS`: allow (with the sandboxed input, if
        any: ``updatedInput``) or deny from the policy."""
        tool = str(hook_input.get("tool_name", ""))
        args = dict(hook_input.get("tool_input") or {})
        allowed, reason = await self.decide(tool, args, tool_use_id or hook_input.get("tool_use_id"))
        out: dict[str, Any] = {"hookEventName": "PreToolUse", "permissionDecision": "allow" if allowed else "deny",
                               "permissionDecisionReason": reason}
        if allowed and (updated := self.sandboxed(tool, args)) is not None:
            out["updatedInput"] = updated
        return {"hookSpecificOutput": out}

    async def bash_failure_hook(self, hook_input: Any, tool_use_id: str | None, context: Any) -> Any:
        """The ``PostToolUseFailure`` hook for Bash: when a sandboxed command failed on a sandbox
        rule (its ``error`` text, :func:`foreman.sandbox.explain`), say which rule to the model
        (``additionalContext``: ``[os sandbox] <rule>``), in the agent's log and in the feed."""
        command = str((hook_input.get("tool_input") or {}).get("command", ""))
        if self.bash is None or command not in self._wrapped:
            return {}
        written, network = self._wrapped[command]
        rule = self.bash.explain(str(hook_input.get("error") or ""), network=network)
        if not rule:
            return {}
        log_command(self.tools, written, "failed", rule)
        return {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure",
                                       "additionalContext": f"{RULE_PREFIX}{rule}"}}

    def hooks(self) -> dict[str, list[Any]]:
        """The ``hooks`` option: the gate as a ``PreToolUse`` matcher for :data:`HOOKED_TOOLS`
        and, with the OS sandbox on, the Bash failure hook."""
        from claude_agent_sdk import HookMatcher  # (the claude extra: loaded when a claude turn runs, about a second)

        hooks: dict[str, list[Any]] = {
            "PreToolUse": [HookMatcher(matcher=HOOK_MATCHER, hooks=[self.pre_tool_hook], timeout=HOOK_TIMEOUT)]}
        if self.bash is not None:
            hooks["PostToolUseFailure"] = [HookMatcher(matcher="Bash", hooks=[self.bash_failure_hook])]
        return hooks
