"""The core's rules for the flow's records (:mod:`foreman.core.records`): read, upsert, drop.

A record's state change is checked against its table in :mod:`foreman.core.rules` before anything
changes (a :class:`~foreman.errors.Conflict` otherwise), as the entities' are. Records are never
sent to clients: their changes are ``record`` changes the store writes and the daemon does not
broadcast.
"""

from __future__ import annotations

from typing import TypeVar

from ..errors import Conflict, NotFound
from .base import CoreBase
from .records import HandOff, Record, Session, TaskFlow, Worktree
from .rules import SESSION_TRANSITIONS, WORKTREE_TRANSITIONS
from .world import Change

R = TypeVar("R", bound=Record)


class RecordRules(CoreBase):
    """Flow record changes (a mixin of :class:`~foreman.core.core.Core`)."""

    def records(self, model: type[R]) -> dict[str, R]:
        """All records of ``model``'s kind by id (the world's own dict: do not mutate it)."""
        return self.world.records.get(model.kind, {})

    def record(self, model: type[R], rid: str) -> R | None:
        """The record ``rid`` of ``model``'s kind, or None."""
        return self.world.records.get(model.kind, {}).get(rid)

    def put_record(self, rec: R) -> R:
        """Insert or replace ``rec`` (an upsert by kind and id); no change, no write.

        Raises:
            Conflict: a session's or worktree's state change that its table does not allow.
        """
        old = self.world.records.get(rec.kind, {}).get(rec.id)
        if old == rec:
            return rec
        if isinstance(old, (Session, Worktree)) and isinstance(rec, (Session, Worktree)) and old.state != rec.state:
            table = SESSION_TRANSITIONS if isinstance(rec, Session) else WORKTREE_TRANSITIONS
            if rec.state not in table[old.state]:
                raise Conflict(f"{rec.kind} {rec.id} cannot go from {old.state} to {rec.state}")
        self._emit(Change("record", rec.kind, rec, key=rec.id))
        return rec

    def drop_record(self, model: type[Record], rid: str) -> None:
        """Delete record ``rid`` of ``model``'s kind (nothing when there is none)."""
        if rid in self.world.records.get(model.kind, {}):
            self._emit(Change("record", model.kind, None, key=rid))

    # ----------------------------------------------------------------- the flow's common updates
    def update_session(self, key: str, **fields: object) -> Session:
        """Upsert session ``key`` with ``fields`` (a new session needs ``agent`` and ``job``).

        Raises:
            Conflict: a state change :data:`~foreman.core.rules.SESSION_TRANSITIONS` refuses.
            ValueError: a new session without ``agent``/``job``, or a field of the wrong type.
        """
        old = self.record(Session, key)
        rec = Session.model_validate({**(old.model_dump() if old else {"id": key}), **fields})
        return self.put_record(rec)

    def update_worktree(self, wt_id: str, **fields: object) -> Worktree:
        """Change fields of worktree ``wt_id``. Raises NotFound, or Conflict for a state change
        :data:`~foreman.core.rules.WORKTREE_TRANSITIONS` refuses."""
        old = self.record(Worktree, wt_id)
        if old is None:
            raise NotFound(f"no worktree {wt_id!r}")
        return self.put_record(old.model_copy(update=fields))

    def update_taskflow(self, task_id: str, **fields: object) -> TaskFlow:
        """Set the flow counters of ``task_id`` (created on first use)."""
        old = self.record(TaskFlow, task_id) or TaskFlow(id=task_id)
        return self.put_record(old.model_copy(update=fields))

    def taskflow(self, task_id: str) -> TaskFlow:
        """The flow counters of ``task_id`` (all unset when it has none)."""
        return self.record(TaskFlow, task_id) or TaskFlow(id=task_id)

    def worktree_of(self, agent: str, task_id: str) -> Worktree | None:
        """``agent``'s worktree record for ``task_id``, or None."""
        return self.record(Worktree, f"{agent}-{task_id}")

    def handoff(self, task_id: str) -> HandOff | None:
        """Where ``task_id``'s next worker starts, if it changed hands."""
        return self.record(HandOff, task_id)
