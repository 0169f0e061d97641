"""The agent loop of one turn: ask the model, decode, execute, feed back, until FINAL or a cap.

Rules (each answers a failure of small models):

- The transcript carries a canonical re-rendering of each decoded reply (``render_reply`` for
  the text protocol, re-built tool calls for the native one), never the raw reply: a
  malformed marker or an invented block is not echoed into later turns.
- A reply that both inspects and edits has its edits deferred: the anchors were written
  before the model saw what it read.
- Re-reading an unchanged file (same path, same content revision, same range) is refused with
  advice; after a change the read is allowed. A committed change resets the repeat counts.
- An identical call repeated past ``repeat_limit`` is refused; at ``loop_limit`` the turn
  ends as a loop. ``idle_limit`` replies in a row without an action end it too.
- A FINAL in a reply whose own actions failed and committed nothing is rejected, and so is a
  FINAL next to deferred edits; a worker's first FINAL of a ``work`` turn that changed
  nothing is rejected once.
- Model round trips (``max_turns``) and wall-clock time are capped.
- A server that refused the model's output (HTTP 500 "peg-native") is a bad model turn: a
  correction is fed back; it is not an endpoint failure.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import BackendError
from ..turns import TurnRequest, TurnResult
from .context import LineLog, trim
from .endpoint import BadTurnError, Endpoint
from .executor import CHANGES, INSPECT, Executor, Outcome
from .nativecodec import NativeDecoder
from .profiles import LocalProfile
from .registry import ActionBase, Final
from .result import REASONS, DecodeResult
from .textcodec import TextDecoder, render_action, render_reply
from .trace import TraceRecorder

logger = logging.getLogger(__name__)

MAX_ACTIONS = 8
"""Actions run per reply; the rest are skipped with a note (a reply that reads 60 files floods the context)."""


@dataclass
class LoopStats:
    """Figures of one turn (the bench prints them).

    Attributes:
        replies: model replies received.
        converted: replies that became at least one action.
        actions: actions decoded.
        repairs: repair id -> times applied.
        reasons: no-action reason -> replies.
        bad_turns: replies the server refused (unparseable tool output).
        prompt_tokens / completion_tokens: summed usage over every model call.
        usage_replies: replies whose stream reported usage (0: the server reports none).
        model: the model id the server last said answered, if it said.
        commits: file changes written.
        rejected_finals: FINAL actions refused.
        refused: actions refused (policy, stale, repeat).
        model_s: seconds spent waiting for the model (every request, streamed to its end).
        checks_s: seconds spent running commands (the agent loop's RUN actions; guided mode:
            the repository's checks).
    """

    replies: int = 0
    converted: int = 0
    actions: int = 0
    repairs: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    bad_turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usage_replies: int = 0
    model: str | None = None
    commits: int = 0
    rejected_finals: int = 0
    refused: int = 0
    model_s: float = 0.0
    checks_s: float = 0.0


def _key(action: ActionBase) -> str:
    return json.dumps(action.to_dict(), sort_keys=True)


class AgentLoop:
    """One turn of one agent against an endpoint.

    Args:
        request: the turn.
        tools: the turn's AgentTools.
        endpoint: the model endpoint.
        profile: the local profile (caps, sampling, protocol).
        model: the model id to request.
        messages: the conversation so far (system prompt first), extended in place.
        recorder: where every reply is recorded byte for byte.
        executor: runs the actions.
        clock: monotonic seconds (for the wall-clock cap).
        wall_clock: unix seconds (trace time stamps).
    """

    def __init__(self, request: TurnRequest, tools: Any, endpoint: Endpoint, profile: LocalProfile, model: str,
                 messages: list[dict[str, Any]], recorder: TraceRecorder, executor: Executor, *,
                 tool_schema: list[dict[str, Any]] | None = None, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self.req = request
        self.tools = tools
        self.endpoint = endpoint
        self.profile = profile
        self.model = model
        self.messages = messages
        self.recorder = recorder
        self.executor = executor
        self.tool_schema = tool_schema
        self.clock = clock
        self.wall_clock = wall_clock
        self.role = "lead" if request.lead else "worker"
        self.native = profile.protocol == "native"
        self.stats = LoopStats()
        self._notes: list[str] = []
        self.repeats: Counter[str] = Counter()
        self.reads: set[tuple[str, str, int | None, int | None]] = set()
        self.nothing_done_warned = False
        self.summary = ""

    # -- model ----------------------------------------------------------------------------
    async def _ask(self, round_no: int) -> tuple[DecodeResult, str]:
        """Stream one reply into the decoder and record it; return the decoded result and the raw text."""
        system = str(self.messages[0].get("content", ""))
        text_decoder = TextDecoder(role=self.role, prompt_text=system) if not self.native else None
        native_decoder = NativeDecoder(role=self.role, prompt_text=system) if self.native else None
        stream_log = LineLog(lambda text: self.tools.log(text, kind="text"))

        def on_content(piece: str) -> None:
            stream_log.add(piece)
            if text_decoder is not None:
                text_decoder.feed(piece)
            else:
                assert native_decoder is not None
                native_decoder.feed_content(piece)

        def on_delta(delta: Any) -> None:
            if native_decoder is not None:
                native_decoder.feed_tool_call_delta(delta)

        budget = max(512, self.profile.context_window - self.profile.max_tokens)
        self.messages[:] = trim(self.messages, budget)
        self.tools.activity("thinking", f"asking {self.model} (step {round_no})")
        asked = self.clock()
        try:
            reply = await self.endpoint.stream(
                model=self.model, messages=self.messages, max_tokens=self.profile.max_tokens,
                temperature=self.profile.temperature, tools=self.tool_schema if self.native else None,
                tool_choice=self.profile.tool_choice, on_content=on_content, on_tool_delta=on_delta,
                seed=self.profile.seed)
        finally:
            self.stats.model_s += self.clock() - asked
        stream_log.flush()
        self.stats.replies += 1
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        self.stats.usage_replies += int(reply.usage_reported)
        self.stats.model = reply.model or self.stats.model
        finish = reply.finish_reason or "stop"
        if native_decoder is not None:
            result = native_decoder.finish(finish)
            calls = native_decoder.tool_calls
        else:
            assert text_decoder is not None
            result = text_decoder.finish(finish)
            calls = []
        try:
            self.recorder.record(reply.content, result, finish_reason=reply.finish_reason, now=self.wall_clock(),
                                 protocol="native" if self.native else "text", tool_calls=calls,
                                 agent=self.req.agent, role=self.role, turn=round_no)
        except OSError as exc:
            logger.warning("cannot record the reply to %s: %s", self.recorder.path, exc)
        self.stats.repairs.update(result.repairs)
        if result.actions:
            self.stats.converted += 1
            self.stats.actions += len(result.actions)
        elif result.reason:
            self.stats.reasons[result.reason] += 1
        return result, reply.content

    # -- transcript -----------------------------------------------------------------------
    def _assistant(self, actions: tuple[ActionBase, ...], round_no: int) -> list[str]:
        """Append the canonical rendering of a decoded reply; return the tool-call ids (native)."""
        if not self.native:
            self.messages.append({"role": "assistant", "content": render_reply(actions)})
            return []
        ids = [f"call_{round_no}_{i}" for i in range(len(actions))]
        calls = [{"id": ids[i], "type": "function",
                  "function": {"name": a.kind, "arguments": json.dumps(a.model_dump(mode="json", exclude={"kind"}))}}
                 for i, a in enumerate(actions)]
        self.messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        return ids

    def _results(self, actions: tuple[ActionBase, ...], outcomes: list[Outcome], ids: list[str],
                 extra: list[str]) -> None:
        unread = self.tools.unread()
        tail = list(extra) + (["Unread messages:\n" + "\n".join(unread)] if unread else [])
        if self.native:
            for i, outcome in enumerate(outcomes):  # one outcome per action
                self.messages.append({"role": "tool", "tool_call_id": ids[i], "content": outcome.text})
            if tail:
                self.messages.append({"role": "user", "content": "\n\n".join(tail)})
            return
        blocks = []
        room = max(2000, (self.profile.context_window - self.profile.max_tokens) * 2)  # chars, about half the budget
        for action, outcome in zip(actions, outcomes, strict=True):
            title = render_action(action, last=True).split("\n", 1)[0]
            body = outcome.text if len(outcome.text) <= room else outcome.text[:room] + "\n[... cut to fit the context]"
            room = max(200, room - len(body))
            blocks.append(f"[{title}] {outcome.status}:\n{body}")
        self.messages.append({"role": "user", "content": "Results:\n\n" + "\n\n".join(blocks + tail)})

    def _correction(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    # -- the loop -------------------------------------------------------------------------
    def _fail(self, error: str) -> TurnResult:
        self.tools.log(error, kind="error")
        return TurnResult(ok=False, session_id=self.req.session_id, error=error, text=self.summary)

    async def run(self) -> TurnResult:
        """Run the turn to FINAL or a cap. Never raises for model failures."""
        max_turns = self.req.max_turns if self.profile.max_turns is None else min(self.req.max_turns,
                                                                                  self.profile.max_turns)
        started = self.clock()
        idle = 0
        for round_no in range(1, max_turns + 1):
            if self.profile.wall_timeout is not None and self.clock() - started > self.profile.wall_timeout:
                return self._fail(f"the turn ran out of time ({self.profile.wall_timeout:.0f} s) before FINAL")
            try:
                result, _raw = await self._ask(round_no)
            except BadTurnError as exc:
                self.stats.bad_turns += 1
                idle += 1
                if idle >= self.profile.idle_limit:
                    return self._fail(f"the model produced no usable action {idle} times in a row ({exc.message})")
                self._correction("The server could not parse your last reply as a tool call. Reply again with one "
                                 "valid action and nothing else.")
                continue
            except BackendError as exc:
                return self._fail(exc.message)
            if not result.actions:
                idle += 1
                meaning = REASONS.get(result.reason or "", result.reason or "no action")
                if idle >= self.profile.idle_limit:
                    return self._fail(f"the model stopped acting: {idle} replies in a row without an action "
                                      f"(last: {meaning})")
                dropped = f" (not understood: {', '.join(sorted(set(result.dropped)))})" if result.dropped else ""
                self._correction(f"Your last reply had no usable action: {meaning}{dropped}. Act now with one "
                                 "action per line, for example READ path, or a file's path followed by a "
                                 "<<<<<<< SEARCH / ======= / >>>>>>> REPLACE block. Keep the reply short.")
                continue
            idle = 0
            if "last_json_wins" in result.repairs:  # several bare JSON calls: say which one ran, never drop silently
                ran = render_action(result.actions[-1], last=True).split("\n", 1)[0]
                self._notes.append(f"Your reply held several JSON tool calls; only the last one ran ({ran}). "
                                   "Send one call per reply.")
            done = await self._act(result.actions, round_no)
            if isinstance(done, TurnResult):
                return done
        return self._fail(f"reached the cap of {max_turns} model round trips without FINAL")

    async def _act(self, actions: tuple[ActionBase, ...], round_no: int) -> TurnResult | None:
        ids = self._assistant(actions, round_no)
        inspects = any(a.kind in INSPECT for a in actions)
        inspected = {getattr(a, "path", None) for a in actions if a.kind in INSPECT} - {None}
        outcomes: list[Outcome] = []
        extra: list[str] = list(self._notes)
        self._notes.clear()
        final: Final | None = None
        for index, action in enumerate(actions):
            if index >= MAX_ACTIONS and not isinstance(action, Final):
                outcomes.append(Outcome("refused", f"skipped: at most {MAX_ACTIONS} actions run per reply"))
                continue
            if isinstance(action, Final):
                final = action
                outcomes.append(Outcome("final", "(see below)"))
                continue
            key = _key(action)
            self.repeats[key] += 1
            count = self.repeats[key]
            if count >= self.profile.loop_limit:
                self._results(actions[:len(outcomes)], outcomes, ids, [])
                return self._fail(f"stopped a loop: the model repeated {render_action(action).splitlines()[0]!r} "
                                  f"{count} times without changing anything")
            if count > self.profile.repeat_limit:
                outcomes.append(Outcome("refused", f"refused: you already did exactly this {count - 1} times and "
                                                   "nothing changed since. Do something else: change a file, run "
                                                   "another command, or write FINAL."))
                self.stats.refused += 1
                continue
            if action.kind in CHANGES and (action.kind == "edit" and inspects
                                           or getattr(action, "path", None) in inspected
                                           or getattr(action, "source", None) in inspected):
                outcomes.append(Outcome("deferred", "deferred: this reply also reads, so this change was written "
                                                    "before you saw what you read. Check the read result, then "
                                                    "send the change again."))
                continue
            began = self.clock()
            outcome = await self.executor.execute(action)
            if action.kind == "run":
                self.stats.checks_s += self.clock() - began
            if (read_key := outcome.read_key) is not None:
                if read_key in self.reads:
                    outcome = Outcome("refused", f"refused: you already read {read_key[0]} and it has not "
                                                 "changed since; its content is above. Use it: edit the file, or "
                                                 "read another one.")
                    self.stats.refused += 1
                else:
                    self.reads.add(read_key)
            if outcome.status == "committed":
                self.stats.commits += 1
                self.repeats.clear()
                self.repeats[key] = 1
            elif outcome.status == "refused":
                self.stats.refused += 1
            outcomes.append(outcome)
        if final is None:
            self._results(actions, outcomes, ids, extra)
            return None
        others = [o for o in outcomes if o.status != "final"]
        rejection = self._judge_final(others)
        if rejection is None:
            self.summary = final.summary
            if self.native:
                self._results(actions, [o if o.status != "final" else Outcome("final", "accepted")
                                        for o in outcomes], ids, [])
            elif others:
                kept = [(a, o) for a, o in zip(actions, outcomes, strict=True) if o.status != "final"]
                self._results(tuple(a for a, _ in kept), [o for _, o in kept], ids, [])
            return TurnResult(ok=True, session_id=self.req.session_id, text=final.summary)
        self.stats.rejected_finals += 1
        self.tools.log(f"FINAL rejected: {rejection}", kind="error")
        if self.stats.rejected_finals >= self.profile.loop_limit:
            self._results(actions, outcomes, ids, extra)
            return self._fail(f"stopped a loop: FINAL was rejected {self.stats.rejected_finals} times ({rejection})")
        outcomes = [o if o.status != "final" else Outcome("refused", f"FINAL rejected: {rejection}")
                    for o in outcomes]
        self._results(actions, outcomes, ids, extra)
        return None

    def _judge_final(self, others: list[Outcome]) -> str | None:
        """Return why a FINAL must be rejected, or None to accept it."""
        if any(o.status == "deferred" for o in others):
            return "some of your changes were deferred and never applied; send them again first."
        failed = [o for o in others if o.status in ("failed", "refused")]
        if failed and not any(o.status == "committed" for o in others):
            return ("actions in this same reply failed and nothing was changed, so the work is not done. Fix what "
                    "failed (see the results), then write FINAL.")
        if not self.req.lead and self.req.job == "work" and self.stats.commits == 0 and not self.reads:
            return ("you have not read or changed anything in this task. READ the files the task names, make the "
                    "change, then write FINAL.")
        if (not self.req.lead and self.req.job == "work" and self.stats.commits == 0
                and not self.nothing_done_warned):
            self.nothing_done_warned = True
            return ("you have not changed any file in this task. Make the change first; if the task truly needs "
                    "no change, write FINAL again and say why.")
        return None
