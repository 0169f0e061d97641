"""Guided mode: the harness drives a worker's task, the model writes one small thing at a time.

For a small model the free agent loop fails on the protocol, not on the code: it
writes the right function but not a valid edit. Here the harness does the rest:

1. *Localize* (:mod:`.localize`): the files and symbols the task names, shown with line
   numbers (or a repository map when nothing is named).
2. *Edit*: the model answers with complete definitions; :mod:`.answers` places them by name
   (:mod:`.placement`), or applies SEARCH/REPLACE blocks; a block that cannot be placed is a
   counted failure told back to the model. An answer that leaves out a function the task asks
   for by name ("Add a function count_words(...)") is asked for that function alone, in a fresh
   conversation holding the task and the file's signatures (the outcome, when it never comes,
   is ``function not written``). An answer that changes nothing, when the task names code on
   one line of a definition it names (``delta.seconds``), is followed by an ask for that line
   alone, rewritten (:mod:`.lineask`); the named definitions are asked for next.
3. *Tests* (:mod:`.asked`): when the task asks for a test and the answer wrote none, the model
   is asked for test functions, placed in the named test file (or ``tests/test_<module>.py``)
   with the imports they need (a test reply cut at ``max_tokens`` keeps its complete test
   functions). When the task asks for none, the model is first asked for a test
   of the asked behaviour, which must fail on the unchanged code and then stays fixed for the
   attempt (the *asked test*).
4. *Validate*: the repository's CI command (the configured ``ci`` or the detected one, the same
   command the conductor runs after the work, so not an agent command asked of the policy) runs
   in the worktree; a failure's short summary goes back to the model for a bounded number of
   repairs; when only the test the task asks for fails, its made-up cases (failing on the old code
   and the change alike, their values nowhere in the task) are dropped first (:mod:`.madeup`).
   File writes do go through the policy (``Edit``/``Write``). When a passing answer left
   a file the task names unchanged, the model is asked once for it (:mod:`.named`; for a target
   whose definitions the task names, those alone, in a fresh conversation).
5. *Attempts*: best-of-N, temperatures spread, each from the same clean start (every file an
   attempt wrote is put back as it was); the first attempt that passes wins: its checks pass and
   it changed every file the task asks to change (:mod:`.targets`; else it ends ``target left
   unchanged`` naming the file, see :mod:`.named`), and its asked test fails without each one's change
   (else ``target unchecked``, :func:`.proof.unchecked_targets`); a context file left unchanged is noted.

One attempt's conversation, the steps above, is :func:`.guided_steps.run_steps`.

Honesty: when no attempt passes, the files are restored and the task is set ``blocked`` with
what was tried; the turn never reports done. Every reply is recorded under
``<traces>/guided/<session>.jsonl`` (one JSON object per reply, with its attempt and step; the
first reply to a request also holds that request's last message as ``ask``).
"""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any, Callable

from ...errors import BackendError, ForemanError
from ...private import append_private
from ..turns import AgentTools, TurnRequest, TurnResult
from . import asked as asked_tests
from . import commands, continuation, proof
from . import named as named_files
from .answers import Block, Planned, blocks_of, blocks_of_json, complete_part, only_definitions, plan_answer
from .context import LineLog
from .endpoint import BadTurnError, Endpoint
from .guided_stats import Attempt, GuidedStats
from .guided_steps import run_steps, tests_only
from .guided_text import (
    JSON_ASK,
    TESTS_STEP,
    absent_definitions,
    asked_classes,
    asked_functions,
    goal_text,
    stable,
    summarize_failure,
    task_words,
)
from .lineask import NamedLine, placed_line
from .localize import Localized, is_test_file, list_files, localize, read
from .profiles import LocalProfile
from .symbols import test_names, top_level_symbols

logger = logging.getLogger(__name__)


class GuidedTask:
    """Runs one worker turn in guided mode.

    Args:
        request: the turn (a worker's ``work`` or ``followup`` on a task).
        tools: the agent's tools (policy, log, task status).
        endpoint: the model endpoint.
        profile: the local profile (``attempts``, ``repairs``, ``temperature``, ``max_tokens``,
            ``context_window``, ``constrained``).
        model: the model id.
        ci_command: the repository's check command (None: none found; placing the code is
            then the only check, and the task's CI and review still follow).
        ci_timeout: seconds for one check run.
        trace_path: the ``.jsonl`` file for the replies.
        stats: the figures to fill (the runner keeps them by turn id).
        deadline: a ``clock()`` time after which no new request starts (None: none).
        response_format: a ``response_format`` to constrain edit replies with (the endpoint
            supports it), or None for free text.
        clock: monotonic seconds.
    """

    def __init__(self, request: TurnRequest, tools: AgentTools, endpoint: Endpoint, profile: LocalProfile, model: str,
                 *, ci_command: str | None, ci_timeout: float, trace_path: Path, stats: GuidedStats,
                 deadline: float | None = None, response_format: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.req, self.tools, self.endpoint, self.profile, self.model = request, tools, endpoint, profile, model
        self.root = Path(request.cwd)
        self.ci_command, self.ci_timeout = ci_command, ci_timeout
        self.trace_path, self.stats, self.deadline, self.clock = trace_path, stats, deadline, clock
        self.response_format = response_format
        self.original: dict[str, bytes | None] = {}
        self.goal = goal_text(request.prompt)
        self._passing: dict[str, bytes | None] | None = None  # the files when the attempt passed
        self._why = ""  # why named files were left unchanged
        self._kept = 0  # the attempt's actions when it passed
        self.locked: str | None = None  # the attempt's asked test: answers may not change it
        self.locked_failures: list[str] = []  # how the asked test failed on the unchanged code ("name: message")
        self.locked_passes: list[str] | None = None  # a refactor's asked test passes there: the names it adds
        self.last_finish: str | None = None  # the last reply's finish_reason ("length": cut off)
        self.ablated = frozenset(profile.ablate)
        self.reply_budget = profile.max_tokens  # tokens an answer may take (sized to the files it may send)
        self.last_limit = profile.max_tokens  # the max_tokens of the last request
        self.looped = False  # a reply ended in a repetition loop: later asks carry continuation.UNLOOP

    def enabled(self, check: str) -> bool:
        """Whether the named check (:data:`.pipeline.NAMES`) runs: not switched off by ``ablate``."""
        return check not in self.ablated

    def acted(self, check: str) -> None:
        """Record that the named check acted (:attr:`.GuidedStats.fired`): it changed an ask, or
        refused or changed an answer."""
        self.stats.fired[check] += 1

    def mark(self, stage: str, outcome: str) -> None:
        """Count one outcome of a pipeline stage (:class:`.pipeline.StageCounts`)."""
        self.stats.stages.mark(stage, outcome)

    # -- files -----------------------------------------------------------------------------
    def _read(self, rel: str) -> str | None:
        path = self.root / rel
        return read(self.root, rel) if path.is_file() else None

    async def _write(self, planned: Planned) -> list[str]:
        """Write the planned texts (through the policy); return the paths written."""
        written = []
        for rel, text in planned.texts.items():
            path = self.root / rel
            if self._read(rel) == text:
                continue
            if rel == self.locked:
                planned.failures.append(asked_tests.LOCKED.format(path=rel))
                continue
            allowed, reason = await self.tools.permit("Edit" if path.exists() else "Write", {"file_path": str(path)})
            if not allowed:
                planned.failures.append(f"{rel}: not allowed ({reason})")
                continue
            if rel not in self.original:
                self.original[rel] = path.read_bytes() if path.is_file() else None
            path.parent.mkdir(parents=True, exist_ok=True)
            named_files.forget_bytecode(self.root, rel)
            path.write_bytes(text.encode("utf-8", "surrogateescape"))
            written.append(rel)
        return written

    def _restore(self) -> None:
        """Put every file an attempt wrote back as it was (the same clean start)."""
        for rel in list(self.original):
            self._drop(rel)

    def _drop(self, rel: str) -> None:
        """Put one written file back as it was (a new one removed, with its folders left empty)
        and forget it."""
        data = self.original.pop(rel, None)
        path = self.root / rel
        named_files.forget_bytecode(self.root, rel)
        if data is not None:
            path.write_bytes(data)
            return
        path.unlink(missing_ok=True)
        for parent in path.parents:  # the folders the new file needed, when nothing else is in them
            if parent == self.root or not parent.is_relative_to(self.root):
                break
            try:
                parent.rmdir()
            except OSError:
                break

    def _changed(self) -> bool:
        """An answer changed a file (the asked test, written by the harness's own step, is not one)."""
        return any((self.root / rel).read_bytes() != data if (self.root / rel).is_file() else data is not None
                   for rel, data in self.original.items() if rel != self.locked)

    def _absent(self, where: Localized) -> list[str]:
        """The functions and classes the task asks for by name (:func:`.guided_text.asked_functions`,
        :func:`.guided_text.asked_classes`) that no non-test file the task names or the attempt wrote
        defines."""
        names = [*asked_functions(self.goal), *asked_classes(self.goal)]
        if not names:
            return []
        files = [rel for rel in dict.fromkeys([*where.targets, *([where.target] if where.target else []),
                                               *self.original]) if rel.endswith(".py") and not is_test_file(rel)]
        return absent_definitions(names, [self._read(rel) or "" for rel in files])

    def _new_tests(self, rel: str) -> list[str]:
        """The test functions ``rel`` has now and had not before the attempt (names; [] when none,
        or when the file does not parse). A task that asks for a test in ``rel`` does not pass
        without one: else an answer that puts no test there passes on the repository's own tests
        and is merged undone. A file the attempt has not written has none (its tests were there
        before; counted as new, a task naming an existing test file would never be asked for its test)."""
        if rel not in self.original:
            return []
        before = self.original[rel]
        old = set(test_names(before.decode("utf-8", "replace"))) if before else set()
        return [name for name in test_names(self._read(rel) or "") if name not in old]

    # -- model -----------------------------------------------------------------------------
    def _out_of_time(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline

    async def _ask(self, messages: list[dict[str, Any]], temperature: float, attempt: int, step: str,
                   *, constrained: bool = False) -> str:
        log = LineLog(lambda text: self.tools.log(text, kind="text"))
        self.last_finish = None
        self.tools.activity("thinking", f"guided attempt {attempt}: {step}")
        started = self.clock()
        extra = {"response_format": self.response_format} if constrained and self.response_format else None
        if extra:
            messages = [*messages[:-1], {**messages[-1], "content": f"{messages[-1]['content']}\n{JSON_ASK}"}]
        content, rounds, base, prefill = "", 0, messages, False
        try:
            while True:
                budget = continuation.reply_tokens(messages, self.reply_budget, self.profile.context_window,
                                                   self.profile.max_tokens)
                self.last_limit = budget
                unloop = self.looped and self.enabled("unloop")
                if unloop:
                    self.acted("unloop")
                body = {**(continuation.PREFILL if prefill else extra or {}), **(continuation.UNLOOP if unloop else {})}
                try:
                    reply = await self.endpoint.stream(model=self.model, messages=messages, max_tokens=budget,
                                                       temperature=temperature, on_content=log.add,
                                                       extra_body=body or None, seed=self.profile.seed)
                except BackendError as exc:
                    if unloop and not isinstance(exc, BadTurnError):  # (a server refusing those fields: without)
                        self.looped = False
                        continue
                    if not prefill or isinstance(exc, BadTurnError):
                        raise
                    # (the server refused the prefill, most often its flag: asked again in a user message)
                    self.endpoint.no_prefill, prefill = True, False
                    messages = continuation.ask_more(base, content)
                    continue
                self._count(reply)
                self._trace(attempt, step if not rounds else f"{step} (continued)", temperature, reply.content,
                            reply.finish_reason, **({} if rounds else {"ask": str(messages[-1]["content"])}))
                tail = continuation.unechoed(content, reply.content) if prefill else reply.content
                if rounds and continuation.restarted(content, tail):  # the whole answer anew: it replaces
                    self.mark("propose", "continuation restarted")
                    self.endpoint.no_prefill = self.endpoint.no_prefill or prefill
                    content = tail
                elif prefill:
                    content = content.rstrip() + tail  # (the exact continuation of what it was sent)
                else:
                    content = continuation.joined(content, tail) if rounds else tail
                self.last_finish = reply.finish_reason
                self.mark("propose", f"{step}: cut" if reply.finish_reason == "length" else step)
                # a constrained reply is not continued: the schema makes every reply a whole object,
                # so the "continuation" is a second one and the two joined are no JSON at all
                if reply.finish_reason == "length" and continuation.looping(content) and not self.looped:
                    self.looped = True
                    self.mark("propose", "looped")
                if reply.finish_reason != "length" or not self.enabled("continue") or extra or (
                        rounds >= continuation.ROUNDS) or continuation.looping(content) or (
                        step == TESTS_STEP and continuation.enough_tests(content)):
                    break
                rounds += 1
                self.acted("continue")
                prefill = not self.endpoint.no_prefill
                messages = continuation.prefilled(base, content) if prefill else continuation.ask_more(base, content)
                self.mark("propose", "continued")
        except BadTurnError as exc:
            self.stats.bad_turns += 1
            self._trace(attempt, step, temperature, "", f"bad turn: {exc.message}")
            return content
        except BackendError as exc:
            if not rounds:
                raise
            # a continuation the server refused (most often its prompt, the answer so far included,
            # no longer fits the context window): the answer so far stands, as a cut answer
            self._trace(attempt, f"{step} (continued)", temperature, "", f"continuation failed: {exc.message}")
            self.mark("propose", "continuation failed")
            return content
        finally:
            self.stats.model_s += self.clock() - started
            log.flush()
        return content

    def _count(self, reply: Any) -> None:
        """Add one reply's figures to the turn's."""
        self.stats.replies += 1
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        self.stats.usage_replies += int(reply.usage_reported)
        self.stats.model = reply.model or self.stats.model

    def _trace(self, attempt: int, step: str, temperature: float, reply: str, finish: str | None, **more: Any) -> None:
        record = {"v": 1, "kind": "guided", "time": time.time(), "agent": self.req.agent, "task": self.req.task,
                  "attempt": attempt, "step": step, "temperature": temperature, "finish_reason": finish,
                  "reply": reply, **more}
        try:
            append_private(self.trace_path, json.dumps(record, ensure_ascii=True) + "\n", "ascii")  # 0600, in 0700
        except OSError as exc:
            logger.warning("cannot record a guided reply to %s: %s", self.trace_path, exc)

    def _place(self, reply: str, where: Localized, known: list[str], default: str | None, *,
               only: list[str] | None = None) -> Planned:
        """Plan a reply's blocks; ``only``: the functions it was asked for alone (the rest of its
        definitions are dropped, :func:`.answers.only_definitions`).

        A reply cut at ``max_tokens`` inside its test file keeps the blocks before that file whole
        and the test's complete functions (:func:`.answers.complete_part`): a small model's repair
        may send a code file whole, then the test after a second ``# file:`` line in the same fence,
        and a cut there would otherwise place nothing. A reply cut inside code places nothing."""
        blocks = (blocks_of_json(reply) if self.response_format else []) or blocks_of(reply)
        if not blocks and self.last_finish == "length":  # cut in its tests: the code before them and complete tests
            kept = blocks_of(complete_part(reply))
            if kept and all(b.path for b in kept) and is_test_file(kept[-1].path or ""):
                blocks = kept
        if only:
            blocks = [Block(b.path, code=code) for b in blocks if b.search is None
                      and (code := only_definitions(b.code, only)).strip()] or blocks
        return self._plan(blocks, where, known, default)

    def _place_line(self, reply: str, line: NamedLine, where: Localized, known: list[str],
                    default: str | None) -> Planned:
        """Plan the answer to a line ask (:mod:`.lineask`): the line replaced (nothing planned when
        it came back as it is: a "no change"); an answer that defines the line's definition is placed
        as the answer to a function ask for it; any other is a placement failure."""
        now = self._read(line.path) or ""
        text = placed_line(now, line, reply)
        if text == now:
            return Planned()
        if text is not None:
            return Planned(texts={line.path: text}, actions=[f"{line.path}: line {line.number} of {line.name} rewritten"])
        if re.search(rf"\b(?:def|class)\s+{re.escape(line.name)}\b", reply):
            return self._place(reply, where, known, default, only=[line.name])
        return Planned(failures=[f"the answer was not line {line.number} alone, rewritten"])

    def _plan(self, blocks: list[Block], where: Localized, known: list[str], default: str | None) -> Planned:
        owners = {name: rel for rel in where.files for name, _ in top_level_symbols(self._read(rel) or "")}
        planned = plan_answer(blocks, read=self._read, known=known, default=default, test_file=where.test_file,
                              owners=owners, adds=tuple(asked_functions(self.goal)),
                              task_words=frozenset(task_words(self.goal, where.symbols)),
                              keep_tests=tests_only(where))
        if not blocks:
            planned.failures.append("the answer holds no code block")
        return planned

    # -- checks ----------------------------------------------------------------------------
    async def _check(self) -> tuple[bool, str]:
        if not self.ci_command:
            return True, "no check command found for this repository"
        self.tools.activity("testing", f"guided: {self.ci_command}")
        started = self.clock()
        try:
            res = await commands.run_command(self.ci_command, cwd=self.root, env=dict(self.req.env) or None,
                                             extra_env=named_files.NO_BYTECODE,
                                             timeout=self.ci_timeout, max_output=20_000,
                                             on_start=self.tools.track_process)
        finally:
            self.stats.checks_s += self.clock() - started
        if res.timed_out:
            return False, f"the checks timed out after {self.ci_timeout:.0f} s"
        return res.exit_code == 0, summarize_failure(stable(res.output, self.root))

    # -- the flow --------------------------------------------------------------------------
    async def run(self) -> TurnResult:
        """Run the attempts; return the turn's result (the task is blocked when none passed).

        Raises:
            BackendError: the endpoint failed (not a model failure).
        """
        started = self.clock()
        try:
            return await self._run()
        finally:
            self.stats.wall_s = self.clock() - started

    async def _run(self) -> TurnResult:
        known = list_files(self.root)
        budget = max(2000, (self.profile.context_window - self.profile.max_tokens - 700) * 3)
        after = self.profile.asked_test and self.profile.test_order == "after" and bool(self.ci_command)
        where = localize(self.root, self.goal, budget=budget, want_test=after)
        self.mark("locate", "files shown" if where.files else "repository map")
        self.reply_budget = continuation.sized(self.profile.max_tokens, [self._read(rel) or "" for rel in where.files])
        default = where.target
        self.tools.log(f"guided: localized {', '.join(where.files) or 'nothing (repository map)'}"
                       + (f"; tests go to {where.test_file}" if where.test_file else ""), kind="text")
        count = max(1, self.profile.attempts)
        temperatures = [round(min(1.0, self.profile.temperature + 0.35 * i), 2) for i in range(count)]
        for number, temperature in enumerate(temperatures, 1):
            if self._out_of_time():
                break
            attempt = Attempt(number, temperature)
            self.stats.attempts.append(attempt)
            await self._attempt(attempt, where, known, default)
            self.tools.log(f"guided {attempt.line()}", kind="text" if attempt.outcome == "passed" else "error")
            self.locked, self.locked_failures, self.locked_passes = None, [], None
            self.mark("validate", f"attempt {attempt.outcome}")
            if attempt.outcome == "passed":
                self.stats.passed = True
                how = f"({_short(self.ci_command)} passed)" if self.ci_command else "(no check command found)"
                left = f"{attempt.untouched}; " if attempt.untouched else ""
                summary = (f"guided attempt {number}/{count} {how}: {left}"
                           + "; ".join(dict.fromkeys(attempt.actions))[:400])
                return TurnResult(ok=True, session_id=self.req.session_id, text=summary)
            self._restore()
        return await self._block(count)

    async def _block(self, count: int) -> TurnResult:
        self._restore()
        tried = " | ".join(a.line() for a in self.stats.attempts) or "no attempt could start (out of time)"
        left = [a.detail for a in self.stats.attempts if a.outcome == named_files.TARGET_LEFT]
        unchanged = f" (or passed, leaving a file the task asks to change unchanged: {left[-1]})" if left else ""
        note = (f"guided mode: {len(self.stats.attempts)} of {count} attempt(s), none passed the checks{unchanged}. "
                f"{tried}")
        try:
            await self.tools.call("update_task", {"status": "blocked", "note": note[:900]})
        except ForemanError as exc:
            logger.info("update_task blocked after guided attempts: %s", exc.message)
        return TurnResult(ok=True, session_id=self.req.session_id, text=note)

    async def _attempt(self, attempt: Attempt, where: Localized, known: list[str], default: str | None) -> None:
        """Run one attempt; when it passed once and the ask for an unchanged named file then
        failed, go back to the passing files (the ask never costs a passing answer)."""
        self._passing, self._why = None, ""
        await run_steps(self, attempt, where, known, default)
        if attempt.outcome != "passed" and self._passing is not None:
            named_files.put_back(self.root, self.original, self._passing)
            del attempt.actions[self._kept:]
            self._why = f"the answer to the ask ended '{attempt.outcome}', the passing change was kept"
            attempt.outcome, attempt.detail = "passed", ""
        if attempt.outcome == "passed":
            left = named_files.untouched(self.root, where.named, self.original)
            why = self._why or "no repair left to ask"
            missing = [rel for rel in left if rel in where.targets]
            if missing:  # the checks passed, but a file the task asks to change was not changed
                attempt.outcome, attempt.detail = named_files.TARGET_LEFT, f"{', '.join(missing)} ({why})"
                return
            unchecked = await proof.unchecked_targets(self, attempt, where) if self.enabled("proof") else []
            if unchecked:  # the asked test passes without a target's change: it does not check it
                self.acted("proof")
                attempt.outcome = proof.TARGET_UNCHECKED
                attempt.detail = f"{', '.join(unchecked)} (the asked test {self.locked} passes without its change)"
                return
            attempt.untouched = named_files.note(left, why)

    def _repair(self, attempt: Attempt, messages: list[dict[str, Any]], outcome: str, detail: str,
                ask: str, *, free: bool = False) -> bool:
        """Record the attempt's failure; when a repair round is left (or the ask is ``free``: it
        uses none), ask the model for one.

        Returns:
            True when the repair request was added to ``messages`` (the attempt goes on), False
            when the profile's ``repairs`` are used up (the attempt ends with this outcome).
        """
        attempt.outcome, attempt.detail = outcome, detail
        if not free and attempt.repairs >= max(0, self.profile.repairs):
            return False
        attempt.repairs += 0 if free else 1
        messages.append({"role": "user", "content": ask})
        return True


__all__ = ["Attempt", "GuidedStats", "GuidedTask"]


def _short(command: str) -> str:
    """The check command as a note shows it: an interpreter named by its absolute path (a venv's
    ``/long/path/.venv/bin/python``) by its name, so the note keeps room for what was done."""
    head, sep, rest = command.partition(" ")
    return (head.rsplit("/", 1)[-1] if head.startswith("/") else head) + sep + rest
