"""The sim team: who is on it, its goal, and where its demo repository lives."""

from __future__ import annotations

from pathlib import Path

from ...config import Settings
from ...repos import git
from .demo_repo import DEMO_AUTHOR_EMAIL, DEMO_AUTHOR_NAME

LEAD = "marlow"
WORKERS = ("juniper", "kit", "wren", "rowan", "tove")
DEMO_GOAL = "Add tags to pocket-notes: tag notes, list and search by tag, export, and ship it"


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


async def ensure_identity(path: Path) -> None:
    """Give the demo repository a local user identity (the approved merges use "the user's"
    identity as git sees it in the repo), so the sim works on machines with no git identity."""
    res = await git("config", "--local", "user.name", cwd=path, check=False)
    if not res.ok:
        await git("config", "--local", "user.name", DEMO_AUTHOR_NAME, cwd=path)
        await git("config", "--local", "user.email", DEMO_AUTHOR_EMAIL, cwd=path)
        await git("config", "--local", "commit.gpgsign", "false", cwd=path)
