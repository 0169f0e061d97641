"""Guided mode: the harness drives a worker's task, the model writes one small thing at a time.

For a small model the free agent loop fails on the protocol, not on the code (issue 13): it
writes the right function but not a valid edit. Here the harness does the rest:

1. *Localize* (:mod:`.localize`): the files and symbols the task names, shown with line
   numbers (or a repository map when nothing is named).
2. *Edit*: the model answers with complete definitions; :mod:`.answers` places them by name
   (:mod:`.placement`), or applies SEARCH/REPLACE blocks; a block that cannot be placed is a
   counted failure told back to the model. An answer that leaves out a function the task asks
   for by name ("Add a function shout(...)") is asked for that function alone, in a fresh
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
   (else ``target unchecked``, :func:`.asked.unchecked_targets`); a context file left unchanged is noted.

Honesty: when no attempt passes, the files are restored and the task is set ``blocked`` with
what was tried; the turn never reports done. Every reply is recorded under
``<traces>/guided/<session>.jsonl`` (one JSON object per reply, with its attempt and step).
"""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any, Callable

from ...errors import ForemanError
from ...private import append_private
from ..turns import AgentTools, TurnRequest, TurnResult
from . import asked as asked_tests
from . import commands
from . import madeup as made_up_cases
from . import named as named_files
from .answers import Block, Planned, blocks_of, blocks_of_json, complete_part, only_definitions, plan_answer
from .context import LineLog
from .endpoint import BadTurnError, Endpoint
from .guided_stats import Attempt, GuidedStats
from .guided_text import (
    CUT_OFF,
    EDIT_ASK,
    JSON_ASK,
    NO_TEST,
    NOT_DEFINED,
    REPAIR_ASK,
    SEND_ONLY,
    SYSTEM,
    TEST_ONLY,
    absent_definitions,
    asked_def_ask,
    asked_functions,
    failing_files,
    failing_tests,
    goal_text,
    missing_asked_names,
    no_change_ask,
    summarize_failure,
    task_words,
)
from .lineask import NamedLine, line_ask, named_line, placed_line
from .localize import Localized, is_test_file, list_files, localize, numbered, read
from .profiles import LocalProfile
from .signatures import api_text
from .symbols import test_names, top_level_symbols

logger = logging.getLogger(__name__)

FUNCTION_NOT_WRITTEN = "function not written"
"""The outcome of an attempt whose answers never defined a function the task asks for by name."""


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
        self.last_finish: str | None = None  # the last reply's finish_reason ("length": cut off)

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
        """The functions the task asks for by name (:func:`.guided_text.asked_functions`) that no
        non-test file the task names or the attempt wrote defines."""
        names = asked_functions(self.goal)
        if not names:
            return []
        files = [rel for rel in dict.fromkeys([*where.targets, *([where.target] if where.target else []),
                                               *self.original]) if rel.endswith(".py") and not is_test_file(rel)]
        return absent_definitions(names, [self._read(rel) or "" for rel in files])

    def _new_tests(self, rel: str) -> list[str]:
        """The test functions ``rel`` has now and had not before the attempt (names; [] when none,
        or when the file does not parse). A task that asks for a test in ``rel`` does not pass
        without one: the 0.5B model's constrained format_age and ``--limit`` answers put no test
        there, the repository's own tests passed, and both were merged undone (bench s8-q05-c1).
        A file the attempt has not written has none (its tests were there before: counted as new
        until stop 14, so a task naming an existing test file was never asked for its test)."""
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
        try:
            reply = await self.endpoint.stream(model=self.model, messages=messages, max_tokens=self.profile.max_tokens,
                                               temperature=temperature, on_content=log.add, extra_body=extra)
        except BadTurnError as exc:
            self.stats.bad_turns += 1
            self._trace(attempt, step, temperature, "", f"bad turn: {exc.message}")
            return ""
        finally:
            self.stats.model_s += self.clock() - started
            log.flush()
        self.stats.replies += 1
        self.last_finish = reply.finish_reason
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        self.stats.usage_replies += int(reply.usage_reported)
        self.stats.model = reply.model or self.stats.model
        self._trace(attempt, step, temperature, reply.content, reply.finish_reason)
        return reply.content

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
        and the test's complete functions (:func:`.answers.complete_part`): the 1.5B model's
        ``--limit`` repairs sent ``commands/notes.py`` whole, then the test after a second
        ``# file:`` line in the same fence, cut there, and nothing was placed (bench s13-q15-2, -4,
        -6, task 6). A reply cut inside code places nothing, as before."""
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
                              task_words=frozenset(task_words(self.goal, where.symbols)))
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
        return res.exit_code == 0, summarize_failure(res.output)

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
        where = localize(self.root, self.goal, budget=budget)
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
            self.locked = None
            if attempt.outcome == "passed":
                self.stats.passed = True
                how = f"({self.ci_command} passed)" if self.ci_command else "(no check command found)"
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
        await self._steps(attempt, where, known, default)
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
            unchecked = await asked_tests.unchecked_targets(self, attempt, where)
            if unchecked:  # the asked test passes without a target's change: it does not check it
                attempt.outcome = asked_tests.TARGET_UNCHECKED
                attempt.detail = f"{', '.join(unchecked)} (the asked test {self.locked} passes without its change)"
                return
            attempt.untouched = named_files.note(left, why)

    async def _steps(self, attempt: Attempt, where: Localized, known: list[str], default: str | None) -> None:
        target = default or (where.test_file or "path/to/file.py")
        test = ""
        if asked_tests.wants_asked_test(self.profile.asked_test, where, self.ci_command):
            placed = await asked_tests.write_asked_test(self, attempt, where, known, default)
            if placed is None:
                return
            test = (f"A test of what the task asks for is in place, {self.locked}; it fails on the code as it is and "
                    f"your change must make it pass:\n```python\n{placed}```\n\n")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Task:\n{self.goal}\n\n{where.context}\n\n{test}"
                                        f"{EDIT_ASK.format(target=target)}"}]
        step = "edit"
        absent: list[str] = []  # the functions the last "function" ask was for
        focus: list[str] = []  # the definitions the last "named" ask was for alone (a target's)
        line, line_asked = named_line(self.goal, where.symbols, self._read), False  # see lineask
        while True:
            if self._out_of_time():
                attempt.outcome = "out of time"
                return
            reply = await self._ask(messages, attempt.temperature, attempt.number, step, constrained=True)
            messages.append({"role": "assistant", "content": reply})
            asked_named, lined = step == "named", step == "line"
            only = absent if step == "function" else (focus or None) if asked_named else None
            step = "repair"
            if asked_named and named_files.declines(reply):
                attempt.outcome, self._why = "passed", "the model said no change is needed"
                return
            planned = self._place_line(reply, line, where, known, default) if lined and line else (
                self._place(reply, where, known, default, only=only))
            attempt.placement_failures += len(planned.failures)
            self.stats.placement_failures += len(planned.failures)
            written = await self._write(planned)
            attempt.actions.extend(planned.actions)
            if planned.actions:
                self.stats.converted += 1
                self.stats.commits += len(written)
            if asked_named and not written:  # no new change: the passing files stand
                attempt.outcome = "passed"
                self._why = (f"the answer to the ask could not be placed: {planned.failures[0][:120]}"
                             if planned.failures else "the answer to the ask changed nothing")
                return
            if planned.failures and not written:
                problem = "; ".join(planned.failures)
                cut = self.last_finish == "length"  # a whole file repeated until max_tokens, most often
                if cut:
                    problem = f"the answer was cut off at max_tokens ({self.profile.max_tokens}); {problem}"
                if self._repair(attempt, messages, "nothing placed", problem,
                                CUT_OFF if cut else f"That could not be applied: {problem}\n{REPAIR_ASK}"):
                    continue
                return
            absent = self._absent(where)
            if absent:  # a function the task asks for by name is nowhere: ask for it alone, afresh
                target_file = where.target or target
                messages[:] = [{"role": "system", "content": SYSTEM}]
                if self._repair(attempt, messages, FUNCTION_NOT_WRITTEN, ", ".join(absent),
                                asked_def_ask(self.goal, absent, target_file,
                                              api_text([target_file], self._read))):
                    step = "function"
                    continue
                return
            if not self._changed():  # before asking for tests: they would test code that is not there
                if line and not line_asked:  # the line the task names, alone, afresh (once an attempt)
                    line_asked = True
                    messages[:] = [{"role": "system", "content": SYSTEM}]
                    if self._repair(attempt, messages, "no change", "the answer changed no file",
                                    line_ask(self.goal, line, self._read(line.path) or "")):
                        step = "line"
                        continue
                    return
                if self._repair(attempt, messages, "no change", "the answer changed no file",
                                no_change_ask(where.symbols)):
                    continue
                return
            if where.wants_test and where.test_file and not self._new_tests(where.test_file):
                await asked_tests.ask_tests(self, attempt, where, known, default, messages)
                if not self._new_tests(where.test_file):  # a pass without the asked test is no pass
                    if self._repair(attempt, messages, "no test", f"no test function was placed in {where.test_file}",
                                    NO_TEST.format(test_file=where.test_file)):
                        continue
                    return
            ok, summary = await self._check()
            if not ok and (dropped := await made_up_cases.drop_made_up(self, attempt, where, summary)):
                attempt.actions.append(f"{where.test_file}: {len(dropped)} made-up case(s) dropped ("
                                       + "; ".join(c.source[:60] for c in dropped)[:200] + ")")
                ok, summary = await self._check()
            if ok and where.wants_test and where.test_file and (unproven := await (
                    asked_tests.proves_the_change(self, attempt, where.test_file, where,
                                                  self._new_tests(where.test_file)))):
                if self._repair(attempt, messages, asked_tests.PASSES_WITHOUT, ", ".join(unproven),
                                asked_tests.PASSES_WITHOUT_ASK.format(names=", ".join(unproven),
                                                                      path=where.test_file)):
                    continue
                return
            if ok:
                attempt.outcome, attempt.detail = "passed", ""
                left = named_files.untouched(self.root, where.named, self.original)
                if left and self._passing is None and attempt.repairs < max(0, self.profile.repairs):
                    self._passing = named_files.snapshot(self.root, self.original)
                    self._kept = len(attempt.actions)
                    self._why = "not changed after one ask"
                    named_target, focus = next(((rel, names) for rel in left if rel in where.targets
                                                and (names := named_files.target_definitions(rel, where.symbols))),
                                               (None, []))
                    if named_target:  # its definitions alone, afresh (see named.target_ask)
                        target = named_target
                        messages[:] = [{"role": "system", "content": SYSTEM}]
                    self._repair(attempt, messages, "named file unchanged", ", ".join(left),
                                 named_files.target_ask(self.goal, named_target, self._read(named_target) or "", focus)
                                 if named_target else named_files.named_ask(left, where.targets))
                    step = "named"
                    continue
                return
            fixed = f"{asked_tests.LOCKED.format(path=self.locked)}\n" if self.locked else ""
            failing = failing_files(summary)
            written_tests = {rel for rel in self.original if is_test_file(rel) and rel != self.locked}
            missing = missing_asked_names(summary, self.goal, known)
            own = failing_tests(summary)
            test_only = not missing and bool(failing) and failing <= written_tests and all(  # the attempt's own tests
                name in self._new_tests(rel) for rel, name, _ in own)
            asserts = test_only and all(message.startswith(("AssertionError", "assert ")) for _, _, message in own)
            if missing:  # the code lacks what the task asks for: not the test's fault
                fixed += "".join(NOT_DEFINED.format(name=name, path=path) + "\n" for name, path in missing)
            elif test_only:  # the code may be right and its new test wrong; on asserts alone, the test alone is shown
                files = ", ".join(sorted(failing))
                fixed += TEST_ONLY.format(files=files) + (SEND_ONLY.format(files=files) if asserts else "") + "\n"
            test_only = asserts
            shown = "\n\n".join(f"{rel} now reads:\n{numbered(self._read(rel) or '')}" for rel in self.original
                                if self._read(rel) is not None and (not test_only or rel in failing))[:6000]
            if not self._repair(attempt, messages, "checks failed", summary.strip().split("\n")[-1],
                                f"The checks ({self.ci_command}) failed:\n{summary}\n\n{shown}\n\n{fixed}{REPAIR_ASK}"):
                return

    def _repair(self, attempt: Attempt, messages: list[dict[str, Any]], outcome: str, detail: str,
                ask: str) -> bool:
        """Record the attempt's failure; when a repair round is left, ask the model for one.

        Returns:
            True when the repair request was added to ``messages`` (the attempt goes on), False
            when the profile's ``repairs`` are used up (the attempt ends with this outcome).
        """
        attempt.outcome, attempt.detail = outcome, detail
        if attempt.repairs >= max(0, self.profile.repairs):
            return False
        attempt.repairs += 1
        messages.append({"role": "user", "content": ask})
        return True


__all__ = ["Attempt", "GuidedStats", "GuidedTask"]

