"""The core's rules for decisions: questions, permissions and merges the user answers."""

from __future__ import annotations

from typing import Any, Iterable

from protocol import Decision, DecisionAnswer, Risk

from ..errors import Conflict, StateError
from .base import CoreBase
from .rules import DECISION_TRANSITIONS, MERGE_OPTIONS, RISKY_MERGE_OPTIONS


class DecisionRules(CoreBase):
    """Decision state changes (a mixin of :class:`~foreman.core.core.Core`)."""

    def open_decision(
        self, kind: str, prompt: str, options: Iterable[str], now: float, *, asked_by: str, task: str | None = None,
        goal: str | None = None, worktree: str | None = None, detail: str | None = None, risks: Iterable[Risk] = (),
    ) -> Decision:
        """Open a decision for the user; the daemon notifies the user.

        Raises:
            StateError: no options, unknown kind; BadText: an option (a label the user picks) holds a
                bidi or control character; NotFound: unknown task/goal/asking agent;
            Conflict: the asking agent is off shift, or a merge decision is opened for a task not in review.
        """
        options = list(options)
        if kind not in ("question", "permission", "merge"):
            raise StateError(f"unknown decision kind {kind!r}")
        if not options:
            raise StateError("a decision needs at least one option")
        for option in options:
            self._check_title("a decision's option", option)
        if asked_by != "foreman":
            a = self.agent(asked_by)
            if not a.active:
                raise Conflict(f"{asked_by} is off shift; its requests are refused")
        if task is not None:
            t = self.task(task)
            if kind == "merge" and t.status != "review":
                raise Conflict(f"task {task} is {t.status}; only a task in review gets a merge decision")
        if goal is not None:
            self.goal(goal)
        d = Decision(
            id=f"d{self._next('decision')}", kind=kind, prompt=prompt, options=options, asked_by=asked_by,
            task=task, goal=goal or (self.world.tasks[task].goal if task else None), worktree=worktree, detail=detail,
            created_at=now, risks=list(risks),
        )
        self._upsert("decision", d)
        self.feed(f"{d.id} {kind}: {prompt}", now, kind="decision", agent=asked_by if asked_by != "foreman" else None, task=task)
        self._effect("notify", d.id)
        return d

    def answer_decision(self, decision_id: str, option: int, now: float, *, text: str | None = None, by: str = "user") -> Decision:
        """Answer an open decision and wake exactly its waiter (a merge decision's answer is also a
        ``merge`` effect: the flow carries it out).

        Args:
            option: 0-based index into the options.

        Raises NotFound, Conflict (not open), StateError (option out of range).
        """
        d = self.decision(decision_id)
        if d.status != "open":
            raise Conflict(f"decision {decision_id} is {d.status}, not open")
        if not 0 <= option < len(d.options):
            raise StateError(f"decision {decision_id} has {len(d.options)} options: option 0..{len(d.options) - 1} "
                             f"on the wire (1..{len(d.options)} when typed); got {option}")
        answer = DecisionAnswer(option=option, label=d.options[option], text=text or None, by=by)
        new = d.model_copy(update={"status": "answered", "answer": answer})
        self._upsert("decision", new)
        self.feed(f"{decision_id} answered: {answer.label}" + (f" ({text})" if text else ""), now, kind="decision", task=d.task)
        self._effect("wake", decision_id)
        if d.kind == "merge":
            self._effect("merge", decision_id)  # the flow carries the answer out (foreman.flow.mergerules)
        return new

    def cancel_decision(self, decision_id: str, now: float, *, reason: str = "withdrawn") -> Decision:
        """Withdraw an open decision; its waiter is woken with no answer. Raises NotFound or Conflict."""
        d = self.decision(decision_id)
        if "cancelled" not in DECISION_TRANSITIONS[d.status]:
            raise Conflict(f"decision {decision_id} is {d.status}")
        return self._close_decision(d, now, reason)

    def _close_decision(self, d: Decision, now: float, reason: str) -> Decision:
        new = d.model_copy(update={"status": "cancelled", "detail": reason})
        self._upsert("decision", new)
        self.feed(f"{d.id} withdrawn: {reason}", now, kind="decision", task=d.task)
        self._effect("wake", d.id)
        return new

    def reopen_decision(self, decision_id: str, now: float, *, reason: str,
                        risks: Iterable[Risk] | None = None) -> Decision:
        """Re-open an answered decision (a merge that was refused), with the reason in ``detail``.

        ``risks`` (a merge decision whose commit changed: the scan of the new commit) replaces
        its findings, and its options follow them as in :meth:`open_merge_decision`.

        Raises NotFound or Conflict (not answered).
        """
        d = self.decision(decision_id)
        if "open" not in DECISION_TRANSITIONS[d.status]:
            raise Conflict(f"decision {decision_id} is {d.status}; only an answered decision re-opens")
        update: dict[str, Any] = {"status": "open", "answer": None, "detail": reason}
        if risks is not None:
            update["risks"] = list(risks)
            critical = any(r.severity == "critical" for r in update["risks"])
            update["options"] = list(RISKY_MERGE_OPTIONS if critical else MERGE_OPTIONS)
        new = d.model_copy(update=update)
        self._upsert("decision", new)
        self.feed(f"{decision_id} re-opened: {reason}", now, kind="decision", task=d.task)
        self._effect("notify", decision_id)
        return new

    def open_merge_decision(self, task_id: str, now: float, *, asked_by: str, worktree: str | None, detail: str | None = None,
                            risks: Iterable[Risk] = ()) -> Decision:
        """Open the merge decision of a task in review.

        Options: Merge / Request changes / Reject; with a ``critical`` finding in ``risks``
        (the merge-risk scan of the exact commit) Request changes / Merge anyway (risk
        acknowledged) / Reject (:data:`~foreman.core.rules.RISKY_MERGE_OPTIONS`).
        """
        t = self.task(task_id)
        risks = list(risks)
        critical = any(r.severity == "critical" for r in risks)
        return self.open_decision("merge", f"Merge {task_id} {t.title}?", RISKY_MERGE_OPTIONS if critical else MERGE_OPTIONS,
                                  now, asked_by=asked_by, task=task_id, worktree=worktree, detail=detail, risks=risks)
