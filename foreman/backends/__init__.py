"""Backends run the agents' turns: ``sim`` (scripted team, default), ``claude`` and ``local``."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..errors import ConfigError


def make_backend(settings: Settings) -> Any:
    """Return the backend named by ``settings.backend``.

    Raises:
        ConfigError: the backend cannot run here (missing extra, not built), saying what to do.
    """
    if settings.backend == "sim":
        from .sim.backend import SimBackend

        return SimBackend(settings)
    raise ConfigError(
        f"the {settings.backend} backend is not available in this version yet; use --backend sim"
    )
