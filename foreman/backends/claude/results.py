"""What a claude turn's ``ResultMessage`` says, in the Foreman's terms (pure, no I/O)."""

from __future__ import annotations

from typing import Any


def usage_fields(res: Any) -> dict[str, Any]:
    """The TurnResult usage fields from a ``ResultMessage`` (its ``usage``: the API's token counts
    summed over the turn's requests; ``model_usage``: per model)."""
    usage = res.usage if res is not None and isinstance(res.usage, dict) else {}

    def count(key: str) -> int | None:
        value = usage.get(key)
        return int(value) if isinstance(value, (int, float)) else None

    models = list(res.model_usage or {}) if res is not None and isinstance(res.model_usage, dict) else []
    return {"input_tokens": count("input_tokens"), "output_tokens": count("output_tokens"),
            "cache_read_tokens": count("cache_read_input_tokens"),
            "cache_write_tokens": count("cache_creation_input_tokens"),
            "model": models[0] if len(models) == 1 else (",".join(models) or None)}


def describe_failure(res: Any, max_turns: int, api_error: str | None) -> str:
    """A person-readable reason for an ``is_error`` result."""
    subtype = res.subtype
    if subtype == "error_max_turns" or res.terminal_reason == "max_turns":
        return f"the turn reached its limit of {max_turns} model round trips (max turns)"
    if subtype == "error_max_budget_usd" or res.terminal_reason == "budget_exhausted":
        return "the turn reached its budget (--max-budget)"
    detail = res.result if isinstance(res.result, str) and res.result.strip() else "; ".join(res.errors or [])
    if res.api_error_status or res.terminal_reason == "api_error" or api_error:
        status = f" {res.api_error_status}" if res.api_error_status else ""
        return f"Claude API error{status}: {detail or api_error or 'unknown'}"
    return detail or f"the turn failed ({subtype})"
