"""Assembling the team's backend from the settings: which runner each agent's turns run on.

``claude`` and ``local`` share the :class:`~foreman.flow.conductor.Conductor` (the team's flow)
and differ in their :class:`~foreman.backends.turns.TurnRunner`; a mixed team picks the runner
per role (``--lead-backend claude --worker-backend local``) or per agent (the ``agents`` section).
"""


from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..backends.turns import TurnRunner
from ..config import Settings
from ..config_agents import check_agents
from ..errors import ConfigError
from ..sandbox import from_settings
from .team import LEAD, team_of

if TYPE_CHECKING:
    from .conductor import Conductor

DEFAULT_MODELS = {"claude": ("opus", "sonnet"), "local": (None, None)}


def _runner(kind: str, settings: Settings) -> TurnRunner:
    if kind == "claude":
        try:
            from ..backends.claude.runner import ClaudeRunner  # (a backend loads only when the settings pick it)
        except ImportError as exc:
            raise ConfigError(f"the claude backend needs its extra: pip install '.[claude]' in the Foreman checkout ({exc})") from None

        box = from_settings(settings)
        return ClaudeRunner(cli_path=settings.claude_cli, use_claude_login=settings.use_claude_login,
                            effort=settings.effort or None, max_budget_usd=settings.max_budget, env=dict(os.environ),
                            sandbox=box)
    try:
        from ..backends.local.runner import LocalRunner  # (a backend loads only when the settings pick it)
    except ImportError as exc:
        raise ConfigError(f"the local backend needs its extra: pip install '.[local]' in the Foreman checkout ({exc})") from None
    return LocalRunner(settings)


def make_backend(settings: Settings) -> Conductor:
    """Return the backend named by ``settings.backend``.

    Raises:
        ConfigError: the backend cannot run here (missing extra), saying what to do.
    """
    if settings.backend == "sim":
        from ..backends.sim.flowteam import SimTeam  # (a backend loads only when the settings pick it)

        return SimTeam(settings)
    from .conductor import Conductor  # (a backend loads only when the settings pick it: the sim runs without it)

    per_agent = _agent_overrides(settings)
    kinds = backend_kinds(settings)
    runners_by_kind = {k: _runner(k, settings) for k in set(kinds.values())}
    runners = {agent: runners_by_kind[kind] for agent, kind in kinds.items()}
    models: dict[str, str | None] = {}
    for agent, kind in kinds.items():
        default = DEFAULT_MODELS[kind][0 if agent == LEAD else 1]
        role_model = settings.lead_model if agent == LEAD else settings.worker_model
        models[agent] = per_agent.get(agent, {}).get("model") or settings.model or role_model or default
    name = settings.backend if len(set(kinds.values())) == 1 else "mixed"
    return Conductor(settings, runners, backend_name=name, models=models)


def backend_kinds(settings: Settings) -> dict[str, str]:
    """Which backend runs each agent of a ``claude``/``local`` team: ``{"marlow": "claude",
    "kit": "local", ...}`` from ``backend``, ``lead_backend``/``worker_backend`` (a mixed team) and
    the config file's ``agents`` section, in that order of precedence (lowest first). A ``sim``
    team has no per-agent backend: ``{}``.

    Raises:
        ConfigError: a bad ``agents`` section (:func:`_agent_overrides`).
    """
    if settings.backend == "sim":
        return {}

    kinds = {LEAD: settings.lead_backend or settings.backend,
             **{w: settings.worker_backend or settings.backend for w in team_of(settings).workers}}
    for agent, over in _agent_overrides(settings).items():
        kinds[agent] = over.get("backend", kinds[agent])
    return kinds


def _agent_overrides(settings: Settings) -> dict[str, dict[str, str]]:
    """Read the config file's ``agents`` section: ``{"kit": {"backend": "local", "model": "..."}}``.

    Raises:
        ConfigError: an unknown agent, key or backend, naming it and the fix (:func:`foreman.config_agents.check_agents`).
    """
    where = f"{settings.profile_dir / 'config.json'}: agents"
    overrides = check_agents(where, settings.sections.get("agents") or {})
    team = team_of(settings).agents
    for agent in overrides:
        if agent not in team:
            raise ConfigError(f"{where}: unknown agent {agent!r}; use one of {', '.join(team)}")
    return overrides
