"""The Foreman's agent tools as an in-process SDK MCP server named ``agentcraft``.

The model sees them as ``mcp__agentcraft__<name>``. Each handler calls
``await tools.call(name, args)`` (:class:`~foreman.backends.turns.AgentTools`); a refused call
(:class:`~foreman.errors.ForemanError`) becomes an ``is_error`` tool result the model can read,
never a protocol error. The SDK validates arguments against :data:`TOOL_SCHEMAS` (jsonschema)
before a handler runs. Argument names follow :mod:`foreman.flow.tools`.
"""

from __future__ import annotations

import logging
from typing import Any

from ...errors import ForemanError
from ..turns import AgentTools
from .mapping import SERVER_NAME

logger = logging.getLogger(__name__)


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_STR = {"type": "string"}

TOOL_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "send_message": (("Send a message to a teammate (a name, \"lead\" or \"all\"). It reaches them with "
                      "their next tool result or turn."),
                     _obj({"to": {"type": "string", "description": "agent name, \"lead\" or \"all\""},
                           "text": {"type": "string", "description": "the message"}}, ["to", "text"])),
    "ask_user": ("Ask the user a question only they can answer, and wait for the answer.",
                 _obj({"question": _STR,
                       "options": {"type": "array", "items": _STR,
                                   "description": "suggested answers (default Yes / No)"}}, ["question"])),
    "write_memory": ("Write a markdown note to memory (shared with the team unless shared is false).",
                     _obj({"note": {"type": "string", "description": "note name, e.g. plan"},
                           "text": {"type": "string", "description": "markdown text"},
                           "append": {"type": "boolean", "description": "append instead of replacing"},
                           "shared": {"type": "boolean", "description": "false: a note of your own"}},
                          ["note", "text"])),
    "read_memory": ("Read a memory note; without a note name, list the notes.",
                    _obj({"note": {"type": "string", "description": "note name; omit to list"}}, [])),
    "update_task": (("Change a task's status: review when the work is done, tested and committed; blocked "
                     "with a note when you cannot go on; cancelled (the lead only) drops a task of the plan."),
                    _obj({"task": {"type": "string", "description": "task id; omit for your current task"},
                          "status": {"type": "string", "enum": ["review", "blocked", "todo", "doing", "cancelled"]},
                          "note": {"type": "string", "description": "why, in one sentence"}}, ["status"])),
    "report_status": ("Tell the team what you are doing now.",
                      _obj({"activity": {"type": "string", "description": "one short sentence"},
                            "state": {"type": "string",
                                      "enum": ["thinking", "reading", "editing", "testing", "running", "blocked"]}},
                           ["activity"])),
    "list_tasks": ("List the tasks of the current goal with status, assignee and dependencies.", _obj({}, [])),
    "create_task": ("Create a task for a worker (lead only).",
                    _obj({"title": {"type": "string", "description": "short title"},
                          "description": {"type": "string", "description": "what to do and how to know it is done"},
                          "assignee": {"type": "string", "description": "worker name; omit to let the scheduler choose"},
                          "deps": {"type": "array", "items": _STR, "description": "ids of tasks that must be done first"},
                          "priority": {"type": "integer"}}, ["title", "description"])),
    "request_merge": ("Ask the user to merge a task you reviewed and found ready (lead only).",
                      _obj({"task": {"type": "string", "description": "task id"},
                            "summary": {"type": "string", "description": "what the change does, why it is ready"}},
                           ["task"])),
}
"""Tool name -> (description, JSON Schema of its input)."""

WORKER_TOOL_NAMES = ("send_message", "ask_user", "write_memory", "read_memory", "update_task", "report_status",
                     "list_tasks")
LEAD_TOOL_NAMES = WORKER_TOOL_NAMES + ("create_task", "request_merge")


def tool_names(lead: bool) -> tuple[str, ...]:
    """The Foreman tools an agent gets (the lead also plans and requests merges)."""
    return LEAD_TOOL_NAMES if lead else WORKER_TOOL_NAMES


def _make_handler(tools: AgentTools, name: str):
    async def handler(args: dict[str, Any]) -> dict[str, Any]:
        try:
            text = await tools.call(name, dict(args))
        except ForemanError as exc:
            return {"content": [{"type": "text", "text": exc.message}], "is_error": True}
        return {"content": [{"type": "text", "text": text or "ok"}]}

    handler.__name__ = f"agentcraft_{name}"
    return handler


def build_server(tools: AgentTools, *, lead: bool) -> Any:
    """Return the SDK MCP server config (``McpSdkServerConfig``) for one turn's tools.

    Args:
        tools: the turn's agent tools; every handler calls ``tools.call``.
        lead: include the lead-only tools.

    Raises:
        ImportError: claude-agent-sdk is not installed.
    """
    import claude_agent_sdk as sdk  # (the claude extra: loaded when a claude turn runs, about a second)

    defs = []
    for name in tool_names(lead):
        description, schema = TOOL_SCHEMAS[name]
        defs.append(sdk.tool(name, description, schema)(_make_handler(tools, name)))
    return sdk.create_sdk_mcp_server(name=SERVER_NAME, version="1.0.0", tools=defs)
