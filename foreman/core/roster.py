"""The team's roster: who the lead and the workers are, their names, titles and seats.

Pure rules (no settings, no I/O): :mod:`foreman.config` parses ``--workers`` and
``--worker-names`` with :func:`parse_workers` and :func:`parse_worker_names`, and
:func:`foreman.config_team.team_of` builds the :class:`Roster` of a start from them.

The team always has the lead (``marlow``) and the five named workers (``juniper``, ``kit``,
``wren``, ``rowan``, ``tove``). ``--workers N`` puts the first ``N`` named workers on shift; beyond
five it adds ``N - 5`` workers with generated names: the worker names list in order (default:
:data:`DEFAULT_WORKER_NAMES`), then, when the list ends with a pattern holding ``{n}``, the
pattern with ``n`` the worker's seat number (``worker-24``, ``worker-25`` ...). A worker's seat is
its own place in the world (:attr:`protocol.Agent.seat`): 0 is the lead's, the named workers
have 1..5, generated workers 6 and up in list order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LEAD = "marlow"
"""The lead's name."""
NAMED_WORKERS = ("juniper", "kit", "wren", "rowan", "tove")
"""The five named workers, in seat order (seats 1..5)."""
TITLES = {"marlow": "Marlow", "juniper": "Juniper", "kit": "Kit", "wren": "Wren", "rowan": "Rowan", "tove": "Tove"}
MAX_WORKERS = 100
"""The largest team: one daemon schedules it and one terminal client still lists it."""
DEFAULT_WORKER_NAMES = ("ash", "bryn", "cedar", "dale", "ember", "fern", "hazel", "iris", "lark", "moss", "nell",
                        "oak", "piper", "quill", "reed", "sage", "teal", "umber", "vale", "willow", "yara", "zeph",
                        "worker-{n}")
"""Names of the workers beyond the named five, in order; the last entry is a pattern for the rest."""
RESERVED = ("user", "all", "foreman", "auto", "none")
"""Words the protocol uses for other parties (``to: all``, ``asked_by: foreman``, ``by: auto``)."""
NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
"""An agent name: lower-case letters, digits, ``-`` or ``_``, starting with a letter, at most 32."""
_INT_RE = re.compile(r"^[+-]?\d+$")
_EXAMPLE = "--workers 8, or --workers kit,wren"


def title(name: str) -> str:
    """The display name of ``name``: ``kit`` -> ``Kit``, ``worker-12`` -> ``Worker 12``."""
    return TITLES.get(name) or " ".join(part.capitalize() for part in re.split(r"[-_]", name) if part)


def _check_name(name: str, what: str) -> str:
    """Return ``name`` lower-cased, or raise ValueError when it is no agent name or a reserved one."""
    low = name.strip().lower()
    if not NAME_RE.match(low):
        raise ValueError(f"{what} {name!r} is not an agent name: use lower-case letters, digits, '-' or '_', "
                         "starting with a letter, at most 32 characters")
    if low in RESERVED:
        raise ValueError(f"{what} {name!r} is a word the protocol reserves ({', '.join(RESERVED)}): pick another name")
    if low == LEAD:
        raise ValueError(f"{what} {name!r} is the lead's name: a worker cannot be the lead; pick another name")
    return low


def _no_duplicates(names: list[str], what: str) -> None:
    seen: set[str] = set()
    dup = [n for n in names if n in seen or seen.add(n)]  # type: ignore[func-returns-value]
    if dup:
        raise ValueError(f"{what} has {dup[0]!r} twice: each worker needs its own name")


def parse_workers(value: object) -> list[str]:
    """Parse ``--workers``: a team size (``["8"]``) or worker names (``["kit", "wren"]``).

    Accepts a number (int or digits, ``"8"``), a comma-separated string, or a list. A size must
    be 1..:data:`MAX_WORKERS`; names must be agent names, none twice, none the lead's or a
    reserved word. Whether each name is on the roster is checked with the worker names
    (:func:`roster`).

    Returns:
        ``[str(size)]`` or the lower-cased names.

    Raises:
        ValueError: saying what is wrong and how to fix it.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a team size or worker names ({_EXAMPLE}), got {value!r}")
    items = [str(v).strip() for v in value] if isinstance(value, list) else \
        [v.strip() for v in str(value).split(",")]
    items = [v for v in items if v]
    if not items:
        raise ValueError(f"no workers given: use a team size 1..{MAX_WORKERS} or names ({_EXAMPLE})")
    if len(items) == 1 and _INT_RE.match(items[0]):
        size = int(items[0])
        if not 1 <= size <= MAX_WORKERS:
            raise ValueError(f"a team size is 1..{MAX_WORKERS}, got {size}: the team needs at least one worker, "
                             f"and {MAX_WORKERS} is the most one Foreman runs ({_EXAMPLE})")
        return [str(size)]
    if any(_INT_RE.match(v) for v in items):
        raise ValueError(f"give either a team size or names, not both ({items!r}): {_EXAMPLE}")
    names = [_check_name(v, "worker") for v in items]
    _no_duplicates(names, "the list of workers")
    return names


def parse_worker_names(value: object) -> list[str]:
    """Parse ``--worker-names``: the names of the workers beyond the named five, in order.

    A comma-separated string or a list; the last entry may be a pattern holding ``{n}`` (the
    worker's seat number, 6 and up) for any further workers, e.g. ``ash,bryn,w{n}``.

    Raises:
        ValueError: a name that is no agent name, reserved, the lead's or a named worker's, a
            name given twice, a pattern that is not last or has another placeholder.
    """
    items = [str(v).strip() for v in value] if isinstance(value, list) else \
        [v.strip() for v in str(value).split(",")]
    items = [v.lower() for v in items if v]
    names: list[str] = []
    for i, item in enumerate(items):
        if "{" in item or "}" in item:
            if i != len(items) - 1:
                raise ValueError(f"the pattern {item!r} must be the last worker name (it names every further worker)")
            if item.count("{n}") != 1 or re.sub(r"\{n\}", "", item).count("{") or re.sub(r"\{n\}", "", item).count("}"):
                raise ValueError(f"the pattern {item!r} must hold {{n}} once and no other braces, e.g. worker-{{n}}")
            if not re.match(r"^[a-z]", item):
                raise ValueError(f"the pattern {item!r} must start with a letter, e.g. worker-{{n}}")
            _check_name(item.replace("{n}", str(MAX_WORKERS)), "the pattern")
            names.append(item)
            continue
        name = _check_name(item, "worker name")
        if name in NAMED_WORKERS:
            raise ValueError(f"worker name {name!r} is already a named worker ({', '.join(NAMED_WORKERS)} are always "
                             "on the team): list only the names of the workers beyond them")
        names.append(name)
    _no_duplicates(names, "the worker names list")
    return names


def generated(names: list[str] | tuple[str, ...], count: int) -> list[str]:
    """The first ``count`` generated worker names from the worker names list ``names``.

    Listed names come first, in order; a final pattern then names seat ``n`` (6 for the first
    generated worker), skipping any result already listed. Fewer than ``count`` come back when
    the list has no pattern and runs out.
    """
    listed = [n for n in names if "{n}" not in n]
    pattern = next((n for n in names if "{n}" in n), None)
    out = listed[:count]
    seat = len(NAMED_WORKERS) + len(out)
    while pattern is not None and len(out) < count:
        seat += 1
        name = pattern.replace("{n}", str(seat))
        if name not in out and name not in listed:
            out.append(name)
    return out


@dataclass(frozen=True)
class Roster:
    """The team of one start.

    Attributes:
        workers: every worker on the team, in seat order: the named five, then the generated
            ones this start needs.
        on_shift: the workers on shift at start (the rest are created off shift).
    """

    workers: tuple[str, ...]
    on_shift: tuple[str, ...]

    @property
    def agents(self) -> tuple[str, ...]:
        """The lead, then every worker."""
        return (LEAD, *self.workers)


def roster(workers: list[str], worker_names: list[str] | tuple[str, ...]) -> Roster:
    """Build the roster from parsed ``--workers`` and ``--worker-names`` values.

    Raises:
        ValueError: a size the worker names cannot fill (a list without a pattern that is too
            short), or a worker name that is neither a named worker nor on the worker names list.
    """
    if len(workers) == 1 and workers[0].isdigit():
        size = int(workers[0])
        if size <= len(NAMED_WORKERS):
            return Roster(NAMED_WORKERS, NAMED_WORKERS[:size])
        extra = generated(worker_names, size - len(NAMED_WORKERS))
        if len(extra) < size - len(NAMED_WORKERS):
            raise ValueError(f"a team of {size} needs {size - len(NAMED_WORKERS)} names beyond the five named workers, "
                             f"but the worker names list has {len(extra)}: add names to workerNames (--worker-names) "
                             "or end it with a pattern such as worker-{n}")
        team = NAMED_WORKERS + tuple(extra)
        return Roster(team, team)
    pool = generated(worker_names, MAX_WORKERS - len(NAMED_WORKERS))
    unknown = [n for n in workers if n not in NAMED_WORKERS and n not in pool]
    if unknown:
        known = ", ".join([*NAMED_WORKERS, *pool[:6], "..."] if len(pool) > 6 else [*NAMED_WORKERS, *pool])
        raise ValueError(f"unknown worker {unknown[0]!r}: give a team size (a number, 1 to {MAX_WORKERS}), or "
                         f"names: a named worker or one from the worker names list ({known}), or add it to "
                         "workerNames (--worker-names)")
    picked = tuple(n for n in pool if n in workers)
    return Roster(NAMED_WORKERS + picked, tuple(workers))


def describe(on_shift: list[str] | tuple[str, ...], off_shift: list[str] | tuple[str, ...] = ()) -> str:
    """The team as the lead's system prompt gives it: ``3 workers on shift: juniper, kit, wren
    (off shift: rowan, tove)``."""
    count = f"{len(on_shift)} worker{'s' if len(on_shift) != 1 else ''} on shift"
    text = f"{count}: {', '.join(on_shift)}" if on_shift else "no workers on shift"
    return text + (f" (off shift: {', '.join(off_shift)})" if off_shift else "")
