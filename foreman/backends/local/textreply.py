"""What one text reply has decided so far, and the :class:`.result.DecodeResult` it becomes.

The decoder (:mod:`.textcodec`) reads lines and calls into a :class:`ReplyLog`: a tool call
becomes an action or a drop (role filter, duplicates), repairs and chatter are counted, a
repetition loop stops the reply, and at the end the log names the reason a reply without an
action failed. Repair, drop and reason ids are the stable ones of :mod:`.result`.
"""

from __future__ import annotations

import logging
from typing import Any

from .calls import build_action
from .registry import BY_NAME, ActionBase
from .repairs import LoopDetector
from .result import DecodeResult

logger = logging.getLogger(__name__)


class ReplyLog:
    """The actions, repairs, drops and chatter of one reply, in arrival order.

    Args:
        role: "lead" or "worker" to drop tools the role may not use; None allows all.

    Attributes:
        actions: the actions decided so far.
        repairs: repair ids, one per tolerated deviation.
        dropped: drop ids, one per call that did not become an action.
        chatter: lines that were no part of any action (blank lines included).
        loop: the repetition detector, reset whenever an action is emitted.
        looping: a repetition loop was seen; the rest of the reply is ignored.
        leaks: how many echoed prompt lines were skipped.
        saw_text: the reply had visible text outside think blocks.
        saw_think: the reply had a think block.
    """

    def __init__(self, role: str | None) -> None:
        self.role = role
        self.actions: list[ActionBase] = []
        self.repairs: list[str] = []
        self.dropped: list[str] = []
        self.chatter: list[str] = []
        self.loop = LoopDetector()
        self.looping = False
        self.leaks = 0
        self.saw_text = False
        self.saw_think = False

    def drop(self, drop: str) -> None:
        """Record that a call did not become an action (``drop`` is a :mod:`.result` drop id)."""
        logger.debug("text decoder dropped: %s", drop)
        self.dropped.append(drop)

    def emit(self, action: ActionBase | None, repairs: list[str], drop: str | None = None) -> None:
        """Record a built action, or the drop when it is None.

        An action the role may not use is dropped as ``not_allowed``; the same action twice
        in a row is kept once (``duplicate_action``).
        """
        if action is None:
            self.repairs += repairs
            self.drop(drop or "bad_arguments")
            return
        if self.role is not None and self.role not in BY_NAME[action.kind].roles:
            self.drop("not_allowed")
            return
        self.repairs += repairs
        if self.actions and self.actions[-1] == action:
            self.repairs.append("duplicate_action")
            return
        self.actions.append(action)
        self.loop = LoopDetector()  # the world moved on: repeats count from here

    def call(self, name: str, args: Any, repairs: list[str]) -> None:
        """Build the action for a tool call (:func:`.calls.build_action`) and record it."""
        outcome = build_action(name, args)
        self.emit(outcome.action, repairs + outcome.repairs, outcome.drop)

    def start_loop(self) -> None:
        """Stop the reply: a repetition loop was seen (``repetition_loop``)."""
        self.looping = True
        self.repairs.append("repetition_loop")

    def result(self, cut: bool) -> DecodeResult:
        """The decode result so far; ``cut`` says the reply ended by finish_reason "length"."""
        return DecodeResult(
            actions=tuple(self.actions), repairs=tuple(self.repairs), dropped=tuple(self.dropped),
            reason=None if self.actions else self._reason(cut),
            chatter_lines=sum(1 for line in self.chatter if line.strip()),
        )

    def _reason(self, cut: bool) -> str:
        if self.looping:
            return "repetition_loop"
        if not self.saw_text:
            return "only_thinking" if self.saw_think else "empty"
        if self.leaks:
            return "leaked_prompt"
        if cut:
            return "truncated"
        if self.dropped:
            return "malformed"
        return "no_action"
