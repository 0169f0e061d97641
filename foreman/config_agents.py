"""The ``agents`` section of a config file: per-agent backend and model, checked by one rule.

The config file's reader (:mod:`foreman.config`) and the backends
(:func:`foreman.flow.assemble.make_backend`) both call :func:`check_agents`.
"""

from __future__ import annotations

from typing import Any

from .core.roster import LEAD, NAME_RE, NAMED_WORKERS
from .errors import ConfigError, closest

AGENT_KEYS = ("backend", "model")
AGENT_BACKENDS = ("claude", "local")


def check_agents(where: str, section: Any) -> dict[str, dict[str, str]]:
    """Check the ``agents`` section (the one rule: the config file's reader and the backends call it).

    Shape: ``{"kit": {"backend": "local", "model": "..."}}``; each agent takes only
    :data:`AGENT_KEYS`, a backend from :data:`AGENT_BACKENDS`.

    Args:
        where: names the section in messages: ``<config.json path>: agents``.
        section: the section as read.

    Returns:
        The per-agent overrides, values as strings: ``{"kit": {"backend": "local"}}``.

    Raises:
        ConfigError: not an object, an unknown agent, key or backend, naming the file, the key and the fix.
    """
    if not isinstance(section, dict):
        raise ConfigError(f"{where} must be an object like {{\"kit\": {{\"backend\": \"local\"}}}}")
    names = (LEAD, *NAMED_WORKERS)
    for agent, over in section.items():
        if not isinstance(agent, str) or not NAME_RE.match(agent):  # the team's names are checked in resolve()
            raise ConfigError(f"{where}: unknown agent {agent!r}. Use one of: {', '.join(names)}, or a worker "
                              "of --workers beyond five (workerNames)")
        if not isinstance(over, dict):
            raise ConfigError(f"{where}.{agent} must be an object like {{\"backend\": \"local\", \"model\": \"...\"}}")
        unknown = sorted(set(over) - set(AGENT_KEYS))
        if unknown:
            near = closest(str(unknown[0]), AGENT_KEYS)
            raise ConfigError(f"{where}.{agent}: unknown key {unknown[0]!r}: only 'backend' and 'model' may be set per "
                              f"agent.{f' Did you mean {near!r}?' if near else ''} Remove it or fix its spelling")
        backend = over.get("backend")
        if backend is not None and backend not in AGENT_BACKENDS:
            raise ConfigError(f"{where}.{agent}.backend: use 'claude' or 'local', not {backend!r}")
    return {agent: {k: str(v) for k, v in over.items()} for agent, over in section.items()}
