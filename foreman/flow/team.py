"""The team: agent names, titles, the roster of a start, the shifts that follow it.

The naming rules are pure (:mod:`foreman.core.roster`); :func:`foreman.config_team.team_of` applies
them to the resolved settings and says which key to fix when they do not fit together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from protocol import Agent

from ..config import Settings
from ..config_team import team_from, team_of, where
from ..core.roster import LEAD, NAMED_WORKERS, TITLES, describe
from ..core.roster import title as title
from .host import FlowHost

if TYPE_CHECKING:
    from .conductor import Conductor

ALL_WORKERS = NAMED_WORKERS
"""The five named workers (every team has them; ``--workers N`` beyond five adds more)."""


def team_line(d: FlowHost, settings: Settings) -> str:
    """The team as the lead's system prompt names it, from the world at the turn's start:
    ``12 workers on shift: juniper, kit, ... (off shift: ...); at most 3 work at once``.

    Workers are in seat order; ``d`` is the daemon (its world), ``settings`` the resolved settings."""
    agents = sorted((a for a in d.core.world.agents.values() if a.role == "worker"),
                    key=lambda a: (a.seat is None, a.seat, a.name))
    on = [a.name for a in agents if a.active]
    off = [a.name for a in agents if not a.active]
    return f"{describe(on, off)}; at most {settings.max_concurrent} work at once (--max-concurrent)"


def fill_runners(c: Conductor, names: Iterable[str]) -> None:
    """Give each worker in ``names`` without a runner of its own (generated names, workers of an
    earlier start) the named workers' runner and model, in the conductor ``c``: a team of any
    size shares the workers' backend unless the ``agents`` section says otherwise."""
    base = next((w for w in ALL_WORKERS if w in c.runners), None)
    for name in names:
        if name not in c.runners and base is not None:
            c.runners[name] = c.runners[base]
            c.models.setdefault(name, c.models.get(base))


def retire_off_roster(c: Conductor) -> None:
    """At start, make the shifts follow this start's team (``--workers``): take every worker
    that is on shift but not on this start's team off shift (``--workers 12`` then ``--workers
    8``, ``--workers 5`` then ``--workers 3`` or ``--workers kit,wren``), saying so in the feed;
    they keep their names, seats and history, and ``/spawn`` brings one back (on the workers'
    runner). A worker taken off shift in the middle of a task hands it over as ``/stop`` does
    (:meth:`foreman.core.core.Core.stop_agent`): the task goes back on the board and the next
    worker goes on from its committed work; the user asked for a smaller team, so it does not
    finish first. A later start whose team has them again puts those the team took off shift
    (meta ``off_roster``, which also lists workers created off shift) back on; a worker the user
    stopped stays off shift. In a state of a Foreman older than this rule (no meta
    ``roster_follows``), a named worker off shift that ``/stop`` did not take off counts as the
    team's. ``c`` is the conductor, its daemon set."""
    d, roster_ = c.d, c.team
    assert d is not None  # (the conductor has started)
    w = d.core.world
    if not w.meta.get("roster_follows"):  # a state of a Foreman that did not record the named workers it
        # created off shift: those never on shift (``/stop`` says "off shift") count as the team's
        retired = set(w.meta.get("off_roster", [])) | {
            a.name for a in w.agents.values() if a.name in ALL_WORKERS and not a.active and a.activity != "off shift"}
        d.act(lambda core, now: core.set_meta("off_roster", sorted(retired)))
        d.act(lambda core, now: core.set_meta("roster_follows", True))
    fill_runners(c, [a.name for a in w.agents.values() if a.role == "worker" and a.name not in roster_.workers])
    follow_team(d, roster_.on_shift, lambda a: True, hint="; /spawn @name brings one back",
                name_of=c.roster_names)


def follow_team(d: FlowHost, on_team: Iterable[str], governed: Callable[[Agent], bool], *, hint: str = "",
                name_of: Callable[[str], str] = str) -> list[str]:
    """Make the shifts of the workers ``governed(agent)`` selects follow ``on_team`` (this start's
    team): bring back those the team took off shift before (meta ``off_roster``), take off shift
    those on shift but not on the team (as ``/stop`` does; a feed line names them with
    ``name_of``, ``hint`` appended), and keep meta ``off_roster`` to match. The conductor governs every worker; the sim
    only its extras beyond the scripted five. ``d`` is the daemon. Returns the names taken off.
    """
    w = d.core.world
    retired = set(w.meta.get("off_roster", []))
    on_team = set(on_team)
    for name in sorted(on_team & retired):
        if (a := w.agents.get(name)) is not None and not a.active:
            d.act(lambda core, now: core.spawn_agent(name, now))  # (act runs it at once)
    workers = sorted((a for a in w.agents.values() if a.role == "worker" and governed(a)),
                     key=lambda a: (a.seat is None, a.seat))
    leaving = [a.name for a in workers if a.active and a.name not in on_team]
    for name in leaving:
        d.act(lambda core, now: core.stop_agent(name, now))
    keep = sorted((retired - on_team) | set(leaving))
    if keep != sorted(retired):
        d.act(lambda core, now: core.set_meta("off_roster", keep))
    if leaving:
        names = ", ".join(name_of(n) for n in leaving)
        d.act(lambda core, now: core.feed(f"Not on this start's team (--workers): {names} went off shift{hint}",
                                          now, kind="agent"))
    return leaving


__all__ = ["ALL_WORKERS", "LEAD", "TITLES", "fill_runners", "follow_team",
           "retire_off_roster", "team_from", "team_line", "team_of", "title", "where"]
