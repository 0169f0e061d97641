"""The team a start's settings ask for: ``--workers`` and ``--worker-names`` checked together.

The naming rules are pure (:mod:`foreman.core.roster`); :func:`team_of` applies them to the
resolved settings and says which key to fix when they do not fit together. ``resolve`` calls it,
so a start that cannot build its team stops before it writes state.
"""

from __future__ import annotations

from typing import Any

from .config import BY_KEY
from .core.roster import DEFAULT_WORKER_NAMES, Roster, roster
from .errors import ConfigError


def team_from(workers: list[str], worker_names: list[str] | tuple[str, ...] | None = None) -> list[str]:
    """Return the on-shift workers from ``--workers 3``, ``--workers 12`` or ``--workers kit,wren``.

    Raises:
        ValueError: the worker names cannot fill the team (see :func:`foreman.core.roster.roster`).
    """
    return list(roster(workers, DEFAULT_WORKER_NAMES if worker_names is None else worker_names).on_shift)


def where(settings: Any, key: str) -> str:
    """Where the value of setting ``key`` came from, as the user would look for it:
    ``--workers``, ``AGENTCRAFT_WORKERS``, ``<home>/<profile>/config.json: claude.workers`` ..."""
    opt = BY_KEY[key]
    source = settings.sources.get(key, "default")
    kind, _, section = source.partition(":")
    path = {"file": settings.profile_dir / "config.json", "home-file": settings.home / "config.json"}.get(kind)
    if path is not None:
        return f"{path}: {section + '.' if section else ''}{opt.file_key}"
    return {"flag": opt.cli, "env": opt.env}.get(kind, f"the default {opt.cli}")


def team_of(settings: Any) -> Roster:
    """The roster of a start from ``settings.workers`` and ``settings.worker_names``.

    Raises:
        ConfigError: the two do not fit (a size the names cannot fill, a name not on the list),
            naming where each value came from and what to change.
    """
    try:
        team = roster(settings.workers, settings.worker_names)
    except ValueError as exc:
        raise ConfigError(f"{where(settings, 'workers')}: {exc} (worker names from "
                          f"{where(settings, 'worker_names')}).") from None
    unknown = [a for a in (settings.sections.get("agents") or {}) if a not in team.agents]
    if unknown:
        source = settings.sources.get("section:agents", "file")
        files = [str(settings.profile_dir / "config.json")] * ("file" in source.split("+")) + \
            [str(settings.home / "config.json")] * ("home-file" in source.split("+"))
        shown = ", ".join(team.agents if len(team.agents) <= 12 else [*team.agents[:12], "..."])
        raise ConfigError(f"{' or '.join(files)}: agents: unknown agent {unknown[0]!r}: it is not on this team "
                          f"({shown}). Remove it, fix its spelling, or make the team larger (--workers)")
    return team
