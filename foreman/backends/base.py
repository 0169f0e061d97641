"""The contract every backend (sim, claude, local) fulfils towards the daemon.

A backend runs turns for agents. The daemon owns all state; a backend never mutates it
directly: it calls the daemon's :class:`~foreman.daemon.TeamAPI` (the same primitives the
agents' tools use) and receives the core's effects through :meth:`Backend.on_effect`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..core.world import Effect

if TYPE_CHECKING:
    from ..daemon import Daemon


class Backend(Protocol):
    """What the daemon needs of a backend."""

    name: str
    """``sim``, ``claude`` or ``local``."""

    def status(self) -> tuple[str, str]:
        """Return ``(auth, detail)`` for the status banner (``("none", "")`` for the sim)."""
        ...

    async def start(self, daemon: "Daemon") -> None:
        """Set up the team (agents, repositories) and start background work. Returns quickly."""
        ...

    def on_effect(self, effect: Effect) -> None:
        """React to a core effect (``abort``, ``schedule``, ``deliver``, ``handoff``, ``goal`` ...).

        Called on the daemon's loop after the effect's changes are durable; must not block.
        """
        ...

    async def stop(self) -> None:
        """Abort every turn, wait for their process trees to be gone, and return."""
        ...
