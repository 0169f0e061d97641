"""Every tool call of a Claude turn goes through the Foreman's permission policy, once.

Two SDK entry points lead here:

* ``can_use_tool`` - the CLI asks it whenever its own rules say *ask* (Bash, Edit, Write,
  WebFetch, MCP tools ...). With ``setting_sources=[]`` no settings file can pre-allow a tool.
* a ``PreToolUse`` hook for the read-only tools (:data:`~.mapping.READ_TOOLS`), which the CLI
  auto-allows inside its working directory without asking ``can_use_tool``. The hook answers
  ``permissionDecision`` allow or deny from the same policy.

Both share one decision per ``tool_use_id``, so a call is never put to the policy (or the user)
twice. Fixed refusals come first: subagents (``Task``/``Agent``) are refused for everyone, the
lead never edits files, and a tool outside the turn's explicit set (:mod:`.toolset`) is refused,
never put to the policy or the user. The Foreman's own MCP tools are allowed here: their handlers check
who may call them (:meth:`AgentTools.call`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ...errors import ForemanError
from ..turns import AgentTools
from .mapping import EDIT_TOOLS, OWN_PREFIX, READ_TOOLS, SUBAGENT_TOOLS
from .toolset import denied_tools, is_allowed

logger = logging.getLogger(__name__)

SUBAGENT_REFUSAL = "subagents are not available here: do the work yourself, or coordinate with send_message"
LEAD_EDIT_REFUSAL = "the lead never edits files: create a task for a worker instead"
NOT_IN_SET_REFUSAL = "{tool} is not one of your tools here; use the tools you were given"
READ_HOOK_MATCHER = "|".join(sorted(READ_TOOLS))
"""The ``PreToolUse`` matcher (a tool-name regex) of the read gate."""
HOOK_TIMEOUT = 3600.0
"""Seconds the CLI waits for the read gate (a policy *ask* may wait for the user)."""


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
    """

    def __init__(self, tools: AgentTools, *, lead: bool) -> None:
        self.tools = tools
        self.lead = lead
        self._decided: dict[str, asyncio.Future[tuple[bool, str]]] = {}

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

    async def can_use_tool(self, tool_name: str, tool_input: dict[str, Any], context: Any) -> Any:
        """The SDK's ``can_use_tool`` callback: PermissionResultAllow / PermissionResultDeny."""
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        allowed, reason = await self.decide(tool_name, tool_input, getattr(context, "tool_use_id", None))
        if allowed:
            return PermissionResultAllow()
        return PermissionResultDeny(message=reason)

    async def read_hook(self, hook_input: Any, tool_use_id: str | None, context: Any) -> Any:
        """The ``PreToolUse`` hook for read-only tools: allow or deny from the policy."""
        tool = str(hook_input.get("tool_name", ""))
        args = hook_input.get("tool_input") or {}
        allowed, reason = await self.decide(tool, dict(args), tool_use_id or hook_input.get("tool_use_id"))
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "allow" if allowed else "deny",
                                       "permissionDecisionReason": reason}}

    def hooks(self) -> dict[str, list[Any]]:
        """The ``hooks`` option: the read gate as a ``PreToolUse`` matcher."""
        from claude_agent_sdk import HookMatcher

        return {"PreToolUse": [HookMatcher(matcher=READ_HOOK_MATCHER, hooks=[self.read_hook], timeout=HOOK_TIMEOUT)]}
