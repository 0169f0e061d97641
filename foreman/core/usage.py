"""Usage arithmetic and budget rules (pure): sums of :class:`~protocol.risk.Usage`, UTC days,
and whether a spending cap lets another turn start."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from typing import Any

from protocol import Usage

DAYS_KEPT = 62
"""Per-day totals kept in the store (older days are dropped)."""

_INT_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "turns")


def add(*parts: Usage) -> Usage:
    """The sum of ``parts`` (cost and wall time rounded to 6 and 3 decimals, so that long sums
    do not drift into float noise on the wire)."""
    out: dict[str, Any] = {f: sum(getattr(p, f) for p in parts) for f in _INT_FIELDS}
    out["cost_usd"] = round(sum(p.cost_usd for p in parts), 6)
    out["wall_seconds"] = round(sum(p.wall_seconds for p in parts), 3)
    return Usage(**out)


def minus(a: Usage, b: Usage) -> Usage:
    """``a - b`` field by field, never below zero (the session's part of a running total)."""
    out: dict[str, Any] = {f: max(0, getattr(a, f) - getattr(b, f)) for f in _INT_FIELDS}
    out["cost_usd"] = round(max(0.0, a.cost_usd - b.cost_usd), 6)
    out["wall_seconds"] = round(max(0.0, a.wall_seconds - b.wall_seconds), 3)
    return Usage(**out)


def day_key(now: float) -> str:
    """The UTC day of the Unix time ``now`` (``2026-11-30``)."""
    return time.strftime("%Y-%m-%d", time.gmtime(now))


def add_day(days: Mapping[str, Any], now: float, usage: Usage) -> dict[str, Any]:
    """Return ``days`` (``{day: Usage wire dict}``) with ``usage`` added to the day of ``now``,
    keeping the last :data:`DAYS_KEPT` days."""
    key = day_key(now)
    out = dict(days)
    out[key] = add(Usage.model_validate(out.get(key, {})), usage).wire()
    for old in sorted(out)[:-DAYS_KEPT]:
        del out[old]
    return out


def day_usage(days: Mapping[str, Any], now: float) -> Usage:
    """The usage recorded for the UTC day of ``now``."""
    return Usage.model_validate(days.get(day_key(now), {}))


def over_budget(spent_usd: float, cap_usd: float | None) -> bool:
    """True when a cap is set and ``spent_usd`` reached it: no new turn may start under it.

    The check is made before a turn starts (a turn's cost is known only when it ends), so the
    last turn may pass the cap by its own cost; the per-turn cap bounds that overshoot.
    """
    return cap_usd is not None and spent_usd >= cap_usd


def total(items: Iterable[Usage]) -> Usage:
    """The sum of ``items`` (an empty :class:`Usage` for none)."""
    return add(*items)


def turn_usage(result: Any, *, wall_seconds: float) -> Usage:
    """The :class:`Usage` of one finished turn from its ``TurnResult``.

    Token fields (``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
    ``cache_write_tokens``) and ``cost_usd`` are read when the backend reported them (None or
    missing counts 0), so a backend that reports nothing still counts the turn and its wall time.
    """
    def n(name: str) -> int:
        value = getattr(result, name, None)
        return int(value) if value else 0

    cost = getattr(result, "cost_usd", None)
    return Usage(input_tokens=n("input_tokens"), output_tokens=n("output_tokens"), cache_read_tokens=n("cache_read_tokens"),
                 cache_write_tokens=n("cache_write_tokens"), cost_usd=round(float(cost or 0.0), 6), turns=1,
                 wall_seconds=round(max(0.0, wall_seconds), 3))


def money(usd: float) -> str:
    """Dollars for people: ``$4.80`` from a dollar up, ``$0.0123`` under it, and at least two
    significant digits below a cent (``$0.00012``, ``$0.000042``), so a small cost or cap never
    reads as ``$0.0000``; ``$0.0000`` is exactly zero. Below ``$0.0000000001``: ``<$0.0000000001``.
    """
    sign, a = ("-" if usd < 0 else ""), abs(usd)
    if a == 0:
        return "$0.0000"
    if round(a, 4) >= 1:
        return f"{sign}${a:.2f}"
    if a >= 0.01:
        return f"{sign}${a:.4f}"
    if a < 1e-10:
        return f"{sign}<$0.0000000001"
    decimals = min(10, max(4, 1 - math.floor(math.log10(a))))  # two significant digits
    text = f"{a:.{decimals}f}"
    while text.endswith("0") and len(text.split(".")[1]) > 4:
        text = text[:-1]
    return f"{sign}${text}"
