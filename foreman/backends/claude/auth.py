"""Which credentials the Claude CLI will use (pure: reads a mapping, no I/O).

Sources, first match wins (the switches are Claude Code's own environment variables):

* ``ANTHROPIC_API_KEY`` - an API key;
* ``CLAUDE_CODE_USE_BEDROCK`` / ``CLAUDE_CODE_USE_VERTEX`` / ``CLAUDE_CODE_USE_FOUNDRY`` set to a
  true value - the cloud provider's own credentials;
* ``--use-claude-login`` - the local CLI login (personal use; opt-in so a shared daemon never
  spends someone's subscription by accident).
"""

from __future__ import annotations

from collections.abc import Mapping

MISSING_HINT = "set ANTHROPIC_API_KEY or use --use-claude-login"

_PROVIDERS = (
    ("CLAUDE_CODE_USE_BEDROCK", "bedrock", "Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK)"),
    ("CLAUDE_CODE_USE_VERTEX", "vertex", "Google Vertex AI (CLAUDE_CODE_USE_VERTEX)"),
    ("CLAUDE_CODE_USE_FOUNDRY", "foundry", "Microsoft Foundry (CLAUDE_CODE_USE_FOUNDRY)"),
)


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in {"", "0", "false", "no", "off"}


def auth_status(env: Mapping[str, str], *, use_claude_login: bool) -> tuple[str, str]:
    """Return ``(auth, detail)`` for the status banner.

    Args:
        env: the environment the CLI will inherit.
        use_claude_login: the user opted in to the local CLI login.

    Returns:
        ``("api-key", ...)``, ``("bedrock" | "vertex" | "foundry", ...)``, ``("claude-login", ...)``
        or ``("missing", MISSING_HINT)``.
    """
    if env.get("ANTHROPIC_API_KEY", "").strip():
        return "api-key", "ANTHROPIC_API_KEY"
    for var, name, detail in _PROVIDERS:
        if _truthy(env.get(var)):
            return name, detail
    if use_claude_login:
        return "claude-login", "the local claude login (--use-claude-login)"
    return "missing", MISSING_HINT
