"""The value parsers of the settings (:mod:`foreman.config`): pure functions from a flag's,
variable's or file key's raw value (text, or a JSON value from a file) to the setting's type.

Each raises ``ValueError`` with a message that says what was expected; :func:`foreman.config.resolve`
turns it into a :class:`~foreman.errors.ConfigError` naming where the value came from and the key.
"""

from __future__ import annotations

import math
from typing import Any, Callable, get_args
from urllib.parse import urlsplit

from protocol.entities import DecisionKind

from .core.roster import parse_worker_names, parse_workers


def boolean(value: Any) -> bool:
    """A switch: a bool, or ``1/true/yes/on`` and ``0/false/no/off/""`` (any case)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected true/false, got {value!r}")


def comma_list(value: Any) -> list[str]:
    """A list of text: a JSON list, or comma-separated text (blanks dropped)."""
    if isinstance(value, list):
        return [str(v) for v in value]
    return [v.strip() for v in str(value).split(",") if v.strip()]


def whole(value: Any) -> int:
    """A whole number: an int, an integral float (``3.0`` from JSON) or its digits as text.

    Raises:
        ValueError: for ``1.5``, ``true``, ``"abc"`` and the like (``int()`` would truncate or
            leak its own message).
    """
    if isinstance(value, bool):
        raise ValueError(f"must be a whole number, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"must be a whole number, not {value!r}") from None


DECISION_KINDS: tuple[str, ...] = get_args(DecisionKind)
"""Decision kinds ``auto_answer`` may name (``protocol.entities.DecisionKind``)."""


def auto_answer(value: Any) -> list[str]:
    """Decision kinds (:data:`DECISION_KINDS`), lower-cased; an unknown one is refused."""
    kinds = [k.lower() for k in comma_list(value)]
    bad = [k for k in kinds if k not in DECISION_KINDS]
    if bad:
        raise ValueError(f"unknown decision kind {', '.join(map(repr, bad))}; "
                         f"allowed: {', '.join(DECISION_KINDS)} (comma-separated)")
    return kinds


def number(value: Any, what: str = "a number") -> float:
    """A finite float from a number or its text; the error says ``must be <what>, not <value>``
    (``nan`` and ``inf`` are refused: no setting means them, and ``--speed nan`` stalled the sim)."""
    if isinstance(value, bool):
        raise ValueError(f"must be {what}, not {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"must be {what}, not {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"must be {what}, not {value!r}")
    return out


class choice:  # noqa: N801 - used as the other parsers are: choice("merge", "squash")
    """A parser that accepts exactly one of ``allowed`` (its text); ``allowed`` is kept, so the
    help can show them (``--backend {sim,claude,local}``)."""

    def __init__(self, *allowed: str) -> None:
        self.allowed = allowed

    def __call__(self, value: Any) -> str:
        if str(value) not in self.allowed:
            shown = ", ".join(a if a else "'' (empty)" for a in self.allowed)
            raise ValueError(f"expected one of {shown}, got {value!r}")
        return str(value)


def port(value: Any) -> int:
    """A TCP port, 0..65535 (0: the system picks a free one)."""
    port = whole(value)
    if not 0 <= port <= 65535:
        raise ValueError(f"a port is 0..65535 (0 picks a free one), got {port}")
    return port


def positive(kind: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``kind``'s parser that also refuses 0 and below."""
    def check(value: Any) -> Any:
        number = kind(value)
        if number <= 0:
            raise ValueError(f"must be greater than 0, got {value!r}")
        return number
    return check


def workers(value: Any) -> list[str]:
    """Worker specs (:func:`foreman.core.roster.parse_workers`)."""
    return parse_workers(value)


def worker_names(value: Any) -> list[str]:
    """Worker names (:func:`foreman.core.roster.parse_worker_names`)."""
    return parse_worker_names(value)


def url(value: Any) -> str:
    """An http(s) URL with a host (a bad port refused), returned as given."""
    text = str(value)
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ValueError(f"not a valid URL ({exc}): {text!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http(s) URL such as http://127.0.0.1:8790/v1, got {text!r}")
    return text


def opt_float(value: Any) -> float | None:
    """A number of dollars, or None when unset (``None``/empty)."""
    return None if value in (None, "") else number(value, "a number of dollars")


def opt_budget(value: Any) -> float | None:
    """A budget in USD: unset (``None``/empty) or a number greater than 0."""
    amount = opt_float(value)
    if amount is not None and not amount > 0:  # also refuses nan
        raise ValueError(f"a budget must be greater than 0 (USD), got {value!r}; leave it unset for no cap")
    return amount


def resources(value: Any) -> dict[str, float]:
    """Ray resources as ``name=amount`` pairs, comma-separated (``gpu_box=1,CPU=0.5``), or an object."""
    items: list[tuple[Any, ...]]
    if isinstance(value, dict):
        items = list(value.items())
    else:
        items = [tuple(p.split("=", 1)) if "=" in p else (p, "") for p in comma_list(value)]
    out: dict[str, float] = {}
    for name, amount in items:
        try:
            out[str(name).strip()] = float(amount)
        except (TypeError, ValueError):
            raise ValueError(f"a resource is name=amount (e.g. gpu_box=1), got {name}={amount!r}") from None
        if not str(name).strip() or not out[str(name).strip()] >= 0:
            raise ValueError(f"a resource needs a name and an amount of 0 or more, got {name}={amount!r}")
    return out


__all__ = ['DECISION_KINDS', 'auto_answer', 'boolean', 'choice', 'comma_list', 'number', 'opt_budget', 'opt_float', 'port', 'positive', 'resources', 'url', 'whole', 'worker_names', 'workers']
