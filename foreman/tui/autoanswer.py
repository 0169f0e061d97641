"""``foreman tui --auto-answer KINDS``: answer decisions of those kinds with their first option.

One rule for both clients: the line mode (:mod:`foreman.tui.script`) and the full-screen app
(:mod:`foreman.tui.app`) feed every applied server message to an :class:`AutoAnswerer`, which
answers each open decision of a listed kind once, as ``by: auto``, and says what it did through
the client's ``say`` (the transcript, or the app's console). A merge whose risk scan has a
critical finding is left to the user.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

import protocol as p

from .client import Connection, ConnectionLost, RequestError
from .mirror import Outcome

logger = logging.getLogger(__name__)

Say = Callable[[str, bool], None]
"""Writes one line for the user; the flag is True for a failure."""


class AutoAnswerer:
    """Answers open decisions of ``kinds`` with their first option as soon as the mirror has them.

    Args:
        conn: the client's connection (its mirror is read).
        kinds: decision kinds to answer (``merge``, ``permission``, ``question``); empty: none.
        say: where to say what was answered, skipped or failed (see :data:`Say`).
        timeout: seconds an answer's reply may take.
    """

    def __init__(self, conn: Connection, kinds: Iterable[str], say: Say, *, timeout: float = 30.0) -> None:
        self.conn = conn
        self.kinds = frozenset(kinds)
        self.say = say
        self.timeout = timeout
        self._done: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def handles(self, d: p.Decision) -> bool:
        """True when ``d`` is answered here: its kind is listed and it is no merge with a critical risk."""
        return d.kind in self.kinds and not (d.kind == "merge" and any(r.severity == "critical" for r in d.risks))

    def on_message(self, msg: p.ServerMessage, outcome: Outcome) -> None:
        """Start answering each open decision of a listed kind the message brought (once each)."""
        if outcome is not Outcome.APPLIED or not self.kinds or msg.type not in ("snapshot", "decision.upsert"):
            return
        for d in self.conn.mirror.open_decisions():
            if d.kind in self.kinds and d.id not in self._done and d.options:
                self._done.add(d.id)
                task = asyncio.get_running_loop().create_task(self._answer(d))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _answer(self, d: p.Decision) -> None:
        if not self.handles(d):
            self.say(f"auto-answer {d.id} skipped: the merge has a critical risk finding; answer it yourself", False)
            return
        self.say(f"auto-answer {d.id} ({d.kind}): 1 {d.options[0]}", False)
        try:
            await self.conn.request(p.DecisionAnswerIntent(decision=d.id, option=0, by="auto"), self.timeout)
        except (RequestError, ConnectionLost, TimeoutError) as exc:
            self.say(f"auto-answer {d.id} failed: {exc or 'no reply'}", True)
