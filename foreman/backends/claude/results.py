"""What a claude turn's ``ResultMessage`` says, in the Foreman's terms (pure, no I/O).

The runner collects what the message stream said (the ``ResultMessage``, the assistant's texts,
an API error) and an error of its own; :func:`turn_result` makes the :class:`~..turns.TurnResult`
of it, :func:`describe_failure` words an ``is_error`` result, :func:`result_error` an SDK
``ResultError`` and :func:`resume_failure` a CLI that did not know the session to resume.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict

from ..turns import TurnResult

RESUME_FAILED = "could not resume session"
"""Start of :attr:`TurnResult.error` when the CLI does not know the session to resume."""
_UNKNOWN_SESSION = "No conversation found"
"""What the CLI says (in its error result and on stderr) of a session id it does not know."""


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


class StreamedUsage(TypedDict):
    """The token fields of a :class:`~..turns.TurnResult` that :func:`streamed_usage` sums."""

    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None


def streamed_usage(usages: Iterable[Mapping[str, Any]]) -> StreamedUsage:
    """The TurnResult token fields summed over the API usage of the model responses a turn
    received (assistant messages' ``usage``): what a turn cut off before its ``ResultMessage``
    used. Each field is None when no response reported it."""
    fields = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
              "cache_read_tokens": "cache_read_input_tokens", "cache_write_tokens": "cache_creation_input_tokens"}
    out: dict[str, int | None] = dict.fromkeys(fields)
    for usage in usages:
        for name, key in fields.items():
            value = usage.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[name] = (out[name] or 0) + int(value)
    return StreamedUsage(input_tokens=out["input_tokens"], output_tokens=out["output_tokens"],
                         cache_read_tokens=out["cache_read_tokens"], cache_write_tokens=out["cache_write_tokens"])


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


def result_error(exc: Any, resumed: str | None) -> str:
    """The error text of the SDK's ``ResultError`` ``exc`` (its ``errors`` and ``result``).

    The CLI answers ``No conversation found`` when the session to resume (``resumed``) is unknown
    to it; that text starts with :data:`RESUME_FAILED` and the session id so the caller can tell.
    """
    text = " ".join([*(exc.errors or []), exc.result or ""]).strip() or str(exc)
    if _UNKNOWN_SESSION in text and resumed:
        return f"{RESUME_FAILED} {resumed}: {text}"
    return text


def resume_failure(error: str, stderr: Iterable[str], resumed: str | None) -> str:
    """``error`` worded as a resume failure (:data:`RESUME_FAILED`, the session id, the CLI's line)
    when the turn resumed ``resumed`` and the CLI wrote ``No conversation found`` on stderr
    (``stderr``: its last lines); else ``error`` unchanged.

    The real CLI (2.1.332) answers an unknown ``--resume`` id with an error result on stdout, the
    same line on stderr, and exit 1, before the SDK's handshake. Which of the two the SDK sees
    first depends on timing: when the CLI has exited before the SDK writes its initialize
    request, the SDK raises ``Cannot write to terminated process (exit code: 1)`` and the result
    is never read (a loaded CI run, 2 December 2026); the stderr line still says why.
    """
    if not resumed or error.startswith(RESUME_FAILED):
        return error
    said = next((line for line in stderr if _UNKNOWN_SESSION in line), None)
    return f"{RESUME_FAILED} {resumed}: {said[:300]} ({error})" if said else error


def turn_result(res: Any, *, error: str | None, texts: Sequence[str], session_id: str | None,
                cost: float | None, max_turns: int, api_error: str | None, aborted: bool) -> TurnResult:
    """The :class:`TurnResult` of a turn.

    Args:
        res: the turn's ``ResultMessage`` or None (the stream ended without one).
        error: what went wrong in the runner (CLI exit, bad JSON ...) or None.
        texts: the assistant's texts in order; the last stands in for a missing result text.
        session_id: the turn's session (the one it resumed, or the CLI's new one).
        cost: the turn's cost in USD (not the CLI's cumulative figure) or None.
        max_turns: the turn's limit of model round trips (for the wording of ``error_max_turns``).
        api_error: the last assistant message's ``error`` field, if any.
        aborted: the turn was aborted: ``ok=False``, ``aborted=True``, whatever the stream said.
    """
    text = (res.result if res is not None and isinstance(res.result, str) else None) or (
        texts[-1] if texts else "")
    if error is None and res is None:
        error = "the claude CLI ended the turn without a result"
    if error is None and res is not None and res.is_error:
        error = describe_failure(res, max_turns, api_error)
    usage = usage_fields(res)
    if aborted:
        return TurnResult(ok=False, session_id=session_id, error="the turn was aborted", cost_usd=cost,
                          text=text, aborted=True, **usage)
    return TurnResult(ok=error is None, session_id=session_id, error=error, cost_usd=cost, text=text, **usage)
