"""Backends run the agents' turns: ``sim`` (scripted team, default), ``claude`` and ``local``.

``claude`` and ``local`` share the :class:`~foreman.backends.conductor.Conductor` (the team's
flow) and differ in their :class:`~foreman.backends.turns.TurnRunner`; a mixed team picks the
runner per role (``--lead-backend claude --worker-backend local``).
"""

from __future__ import annotations

import os
from typing import Any

from ..config import Settings
from ..errors import ConfigError

DEFAULT_MODELS = {"claude": ("opus", "sonnet"), "local": (None, None)}


def _runner(kind: str, settings: Settings) -> Any:
    if kind == "claude":
        try:
            from .claude.runner import ClaudeRunner
        except ImportError as exc:
            raise ConfigError(f"the claude backend needs its extra: pip install '.[claude]' in the Foreman checkout ({exc})") from None
        return ClaudeRunner(cli_path=settings.claude_cli, use_claude_login=settings.use_claude_login,
                            effort=settings.effort or None, max_budget_usd=settings.max_budget, env=dict(os.environ))
    try:
        from .local.runner import LocalRunner
    except ImportError as exc:
        raise ConfigError(f"the local backend needs its extra: pip install '.[local]' in the Foreman checkout ({exc})") from None
    return LocalRunner(settings)


def make_backend(settings: Settings) -> Any:
    """Return the backend named by ``settings.backend``.

    Raises:
        ConfigError: the backend cannot run here (missing extra), saying what to do.
    """
    if settings.backend == "sim":
        from .sim.backend import SimBackend

        return SimBackend(settings)
    from .conductor import ALL_WORKERS, LEAD, Conductor

    lead_kind = settings.lead_backend or settings.backend
    worker_kind = settings.worker_backend or settings.backend
    runners_by_kind = {k: _runner(k, settings) for k in {lead_kind, worker_kind}}
    runners = {LEAD: runners_by_kind[lead_kind], **{w: runners_by_kind[worker_kind] for w in ALL_WORKERS}}
    lead_default, worker_default = DEFAULT_MODELS[lead_kind][0], DEFAULT_MODELS[worker_kind][1]
    models = {LEAD: settings.model or settings.lead_model or lead_default,
              **{w: settings.model or settings.worker_model or worker_default for w in ALL_WORKERS}}
    name = settings.backend if lead_kind == worker_kind else "mixed"
    return Conductor(settings, runners, backend_name=name, models=models)
