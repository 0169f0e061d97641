"""The sim team: who is on it, and where its demo repository lives."""

from __future__ import annotations

from pathlib import Path

from ...config import Settings

LEAD = "marlow"
WORKERS = ("juniper", "kit", "wren", "rowan", "tove")


def sandbox_dir(settings: Settings) -> Path:
    """Return the folder demo repositories go to.

    ``--sandbox`` wins; otherwise the source checkout's ``sandbox/`` (when running from a
    clone), else ``<home>/sandbox``.
    """
    if settings.sandbox:
        return Path(settings.sandbox).expanduser().resolve()
    checkout = Path(__file__).resolve().parents[3] / "sandbox"
    if (checkout / "create_demo.py").exists():
        return checkout
    return settings.home / "sandbox"


def demo_repo_path(settings: Settings) -> Path:
    """Return this profile's demo repository: ``sim-demo`` for the ``sim`` profile, else ``sim-demo-<profile>``."""
    name = "sim-demo" if settings.profile == "sim" else f"sim-demo-{settings.profile}"
    return sandbox_dir(settings) / name
