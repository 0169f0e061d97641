"""The exact tools a Claude turn may use, and every other CLI tool named and denied (pure, no I/O).

The claude CLI ships tools that would work around the Foreman: they schedule work
(``ScheduleWakeup``, ``Cron*``, ``Monitor``), start subagents or workflows (``Agent``/``Task``,
``Workflow``), switch worktrees (``EnterWorktree``), message other sessions (``SendMessage``),
load skills (``Skill``), reach the web (``WebFetch``, ``WebSearch``) or change the CLI's own mode
(``EnterPlanMode``). Some of them run without ever asking ``can_use_tool``. So each turn passes
the CLI the *exact* list of built-in tools it gets (the SDK's ``tools`` option, ``--tools``) and
denies every other known name (``disallowed_tools``, ``--disallowedTools``); MCP tools are
presented directly rather than deferred behind ``ToolSearch`` (``ENABLE_TOOL_SEARCH=false`` in the
CLI's environment, Claude Code's own switch). A name outside the set that still reaches
``can_use_tool`` is refused (:func:`is_allowed`).

=========  =========================================  ==========================================
role       built-in tools                             why
=========  =========================================  ==========================================
lead       Read, Grep, Glob, Bash                     reads and inspects; never edits files
worker     Read, Grep, Glob, Bash, Edit, Write        changes files in its own worktree
both       the Foreman's ``mcp__agentcraft__*``       plan, message, ask, memory, task status
=========  =========================================  ==========================================

Bash is put to the permission policy on every call (push, reset, force ... are refused there).
:data:`DENIED_TOOLS` is the classification of every other tool the tested CLI versions offer;
``tests/claude_cli`` fails when a newer CLI offers a name that is in neither list.
"""

from __future__ import annotations

from .agent_mcp import tool_names
from .mapping import OWN_PREFIX

LEAD_BUILTINS: tuple[str, ...] = ("Read", "Grep", "Glob", "Bash")
"""The lead's built-in tools."""
WORKER_BUILTINS: tuple[str, ...] = LEAD_BUILTINS + ("Edit", "Write")
"""A worker's built-in tools."""

DENIED_TOOLS: dict[str, str] = {
    # subagents and workflows: work the Foreman would not see or gate
    "Agent": "runs a subagent", "Task": "runs a subagent (older name of Agent)",
    "Workflow": "runs scripted subagents", "ListAgents": "lists subagents",
    "ReportFindings": "a subagent's report channel", "TaskStop": "stops a background task",
    "TaskOutput": "reads a background task", "KillShell": "stops a background shell",
    "BashOutput": "reads a background shell",
    # scheduling: the conductor decides when an agent runs
    "ScheduleWakeup": "schedules a later turn", "CronCreate": "schedules recurring turns",
    "CronDelete": "schedules recurring turns", "CronList": "schedules recurring turns",
    "Monitor": "watches and wakes the agent",
    # other sessions, worktrees, modes
    "SendMessage": "messages other sessions (send_message is the Foreman's)",
    "EnterWorktree": "switches worktrees (the Foreman owns them)", "ExitWorktree": "switches worktrees",
    "EnterPlanMode": "changes the CLI's permission mode", "ExitPlanMode": "changes the CLI's permission mode",
    "AskUserQuestion": "asks the user outside the Foreman (ask_user is the Foreman's)",
    # skills, deferred loading, the web
    "Skill": "loads bundled skills that run their own steps", "ToolSearch": "loads deferred tools",
    "DeferredToolPlaceholder": "keeps deferred tool loading on", "WebFetch": "reaches the web",
    "WebSearch": "reaches the web",
    # tools the Foreman does not map (edits go through Edit/Write)
    "NotebookEdit": "edits notebooks (not mapped)", "NotebookRead": "not mapped", "MultiEdit": "not mapped",
    "LS": "not mapped (Glob lists files)", "TodoWrite": "a private to-do list (report_status is shared)",
    "TodoRead": "a private to-do list", "LSP": "a language server the Foreman does not start",
}
"""Every CLI tool a Foreman agent never gets, with the reason (names from Claude Code 2.1.332)."""


def builtin_tools(*, lead: bool) -> list[str]:
    """The built-in tools of a role (the ``tools`` option)."""
    return list(LEAD_BUILTINS if lead else WORKER_BUILTINS)


def foreman_tools(*, lead: bool) -> list[str]:
    """The Foreman's MCP tools of a role as the model sees them (``mcp__agentcraft__<name>``)."""
    return [OWN_PREFIX + name for name in tool_names(lead)]


def allowed_tools(*, lead: bool) -> frozenset[str]:
    """Every tool name a role's model may be offered and may call."""
    return frozenset(builtin_tools(lead=lead)) | frozenset(foreman_tools(lead=lead))


def denied_tools(*, lead: bool) -> list[str]:
    """The deny list (``disallowed_tools``): every classified name outside the role's set."""
    allowed = allowed_tools(lead=lead)
    extra = () if not lead else ("Edit", "Write")
    return sorted({*DENIED_TOOLS, *extra} - allowed)


def is_allowed(tool: str, *, lead: bool) -> bool:
    """True when ``tool`` is in the role's explicit set (anything else is refused, never asked)."""
    return tool in allowed_tools(lead=lead)


CLI_ENV = {"ENABLE_TOOL_SEARCH": "false"}
"""Environment for the CLI: MCP tools are offered directly, not deferred behind ``ToolSearch``."""

SETTING_SOURCES: list[str] = []
"""The SDK's ``setting_sources`` (``--setting-sources=``): no filesystem settings at all.

``"user"`` would load the user's own ``~/.claude`` settings and ``CLAUDE.md``; ``"project"``
would load the repository's ``CLAUDE.md`` but also its ``.claude/settings.json`` and
``.claude/settings.local.json``, whose ``hooks`` run shell commands the policy never sees and
whose ``permissions.allow`` rules let calls past ``can_use_tool`` (and a worker can write those
files in its worktree). The repository's instructions (``AGENTS.md``/``CLAUDE.md``) reach the
model through the system prompt instead (:func:`foreman.backends.prompts.repo_instructions`)."""
