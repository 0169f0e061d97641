"""What one claude turn tells the SDK and the CLI: the ``ClaudeAgentOptions`` of a turn.

The options name the working directory and the session to resume, the Foreman's system prompt
appended to Claude Code's preset, no filesystem settings (:data:`.toolset.SETTING_SOURCES`),
the exact tool list and the denied names (:mod:`.toolset`), the permission gate's callback and
hooks (:mod:`.permissions`), the Foreman's in-process MCP server (:mod:`.agent_mcp`), the CLI's
environment (daemon, turn, :data:`.toolset.CLI_ENV` and the session wrapper's pidfile). The
CLI's own sandbox stays off: with the OS sandbox on, the gate wraps each allowed Bash command in
the Foreman's (:mod:`.permissions`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..turns import AgentTools, TurnRequest
from . import cliproc
from .agent_mcp import build_server
from .mapping import SERVER_NAME
from .permissions import PermissionGate, disallowed_tools
from .toolset import CLI_ENV, SETTING_SOURCES, builtin_tools

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The SDK's ``max_buffer_size``: the longest stdout line of the CLI (one JSON message) the SDK
reads. Its default, 1 MiB, ends the session with ``CLIJSONDecodeError`` on one large message
(a model answer or tool input of many megabytes); 64 MiB covers them (tested with 20 MiB)."""


def agent_options(sdk: Any, request: TurnRequest, tools: AgentTools, gate: PermissionGate, *,
                  env: Mapping[str, str], wrapper: Path, pidfile: Path,
                  effort: str | None, max_budget_usd: float | None, stderr: Callable[[str], None]) -> Any:
    """The ``sdk.ClaudeAgentOptions`` of one turn.

    Args:
        sdk: the imported ``claude_agent_sdk`` module (imported lazily by the caller).
        request: the turn (cwd, session to resume, model, max turns, system text, role, env).
        tools: the agent's tools, served to the CLI as the in-process MCP server.
        gate: the turn's permission gate (``can_use_tool`` and the hooks).
        env: the daemon's environment; the turn's ``request.env``, :data:`.toolset.CLI_ENV` and
            the session wrapper's pidfile variable go on top, in that order.
        wrapper: the session wrapper the SDK starts instead of the CLI (``cli_path``).
        pidfile: where the wrapper writes the CLI's pid.
        effort: reasoning effort or None for the model's default.
        max_budget_usd: cap in USD per turn or None.
        stderr: called with each line the CLI writes to stderr.
    """
    cli_env = {**env, **request.env, **CLI_ENV, cliproc.PIDFILE_ENV: str(pidfile)}
    return sdk.ClaudeAgentOptions(
        cwd=str(request.cwd),
        resume=request.session_id,
        model=request.model,
        max_turns=request.max_turns,
        system_prompt={"type": "preset", "preset": "claude_code", "append": request.system},
        setting_sources=list(SETTING_SOURCES),
        strict_mcp_config=True,
        env=cli_env,
        cli_path=str(wrapper),
        can_use_tool=gate.can_use_tool,
        hooks=gate.hooks(),
        mcp_servers={SERVER_NAME: build_server(tools, lead=request.lead)},
        tools=builtin_tools(lead=request.lead),
        disallowed_tools=disallowed_tools(lead=request.lead),
        effort=effort,
        max_budget_usd=max_budget_usd,
        max_buffer_size=MAX_LINE_BYTES,
        stderr=stderr,
    )

