"""What the flow needs of the daemon that hosts it: a small :class:`FlowHost` protocol.

The daemon (:class:`foreman.daemon.Daemon`) is the one writer; the flow changes the world only
through :meth:`FlowHost.act` and learns of the user's answers through the core's effects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

from protocol import Decision, Repo

from ..config import Settings
from ..core.core import Core
from ..memory import Memory

T = TypeVar("T")


class FlowHost(Protocol):
    """The daemon as the flow sees it."""

    core: Core
    settings: Settings
    profile_dir: Path
    memory: Memory

    def act(self, fn: Callable[[Core, float], T]) -> T:
        """Run ``fn(core, now)`` and commit its changes (durable, then broadcast, then effects).
        Raises the ForemanError the core raised; nothing changed then."""
        ...

    def now(self) -> float:
        """The daemon clock's time (Unix seconds)."""
        ...

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Start a named background task the daemon owns (cancelled at shutdown)."""
        ...

    async def ask(self, kind: str, prompt: str, options: list[str], *, asked_by: str,
                  on_open: Callable[[Decision], Any] | None = None, **kw: Any) -> Decision:
        """Open a decision and wait for its answer or withdrawal."""
        ...

    def wait_decision(self, decision_id: str) -> asyncio.Future[Decision]:
        """A future resolved with the decision once it is answered or withdrawn."""
        ...

    async def refresh_repo(self, repo_id: str) -> Repo:
        """Re-read a repository's head and dirty flag (clients see a merge at once)."""
        ...

    def publish_status(self) -> None:
        """Broadcast the status banner (usage totals changed)."""
        ...
