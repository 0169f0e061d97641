"""Retry with exponential backoff, as pure data: the caller passes the time.

Used by the scheduler: a task whose start failed (a git error, a busy directory) stays on the
board and is retried after 2 s, then 4, 8 ... up to 60 s, without waiting for another event.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Backoff:
    """Per-key retry times.

    Args:
        initial: the first delay in seconds.
        maximum: the longest delay in seconds.
    """

    initial: float = 2.0
    maximum: float = 60.0
    _next: dict[str, tuple[float, float]] = field(default_factory=dict)

    def failed(self, key: str, now: float) -> float:
        """Record a failure of ``key`` at ``now``; return when it may be tried again (Unix seconds)."""
        _, last = self._next.get(key, (0.0, 0.0))
        delay = self.initial if last == 0 else min(self.maximum, last * 2)
        self._next[key] = (now + delay, delay)
        return now + delay

    def ready(self, key: str, now: float) -> bool:
        """True when ``key`` has no pending backoff or its time has come."""
        entry = self._next.get(key)
        return entry is None or now >= entry[0]

    def succeeded(self, key: str) -> None:
        """Forget ``key``'s failures."""
        self._next.pop(key, None)

    def next_due(self) -> float | None:
        """The earliest retry time of any key, or None."""
        return min((t for t, _ in self._next.values()), default=None)

    def delay(self, key: str) -> float:
        """The current delay of ``key`` in seconds (0 when it has none)."""
        return self._next.get(key, (0.0, 0.0))[1]
