"""One guided attempt's conversation (:class:`.guided.GuidedTask` runs the attempts, each from the same
clean start): the asked test first when the task asks for none (:mod:`.asked`), the edit ask, then a
loop over the answers: an absent function asked for alone (``function not written``), a line the task
names asked for alone (:mod:`.lineask`), the tests the task asks for, the checks, made-up cases
dropped (:mod:`.madeup`), the tests proving the change (:mod:`.proof`), a named file left unchanged
(:mod:`.named`), and a repair for each failure until the attempt passes or its repairs run out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import asked as asked_tests
from . import madeup as made_up_cases
from . import named as named_files
from . import proof
from .guided_stats import Attempt
from .guided_text import (
    CUT_OFF,
    EDIT_ASK,
    NO_TEST,
    NOT_DEFINED,
    REPAIR_ASK,
    SEND_ONLY,
    SYSTEM,
    TEST_ONLY,
    asked_def_ask,
    failing_files,
    failing_tests,
    missing_asked_names,
    no_change_ask,
)
from .lineask import line_ask, named_line
from .localize import Localized, is_test_file, numbered
from .signatures import api_text

if TYPE_CHECKING:
    from .guided import GuidedTask

FUNCTION_NOT_WRITTEN = "function not written"
"""The outcome of an attempt whose answers never defined a function the task asks for by name."""


async def run_steps(task: GuidedTask, attempt: Attempt, where: Localized, known: list[str], default: str | None) -> None:
    """Run one attempt's conversation (the module's steps); its outcome is in ``attempt``."""
    target = default or (where.test_file or "path/to/file.py")
    test = ""
    if asked_tests.wants_asked_test(task.profile.asked_test, where, task.ci_command):
        placed = await asked_tests.write_asked_test(task, attempt, where, known, default)
        if placed is None:
            return
        test = (f"A test of what the task asks for is in place, {task.locked}; it fails on the code as it is and "
                f"your change must make it pass:\n```python\n{placed}```\n\n")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Task:\n{task.goal}\n\n{where.context}\n\n{test}"
                                    f"{EDIT_ASK.format(target=target)}"}]
    step = "edit"
    absent: list[str] = []  # the functions the last "function" ask was for
    focus: list[str] = []  # the definitions the last "named" ask was for alone (a target's)
    line, line_asked = named_line(task.goal, where.symbols, task._read), False  # see lineask
    while True:
        if task._out_of_time():
            attempt.outcome = "out of time"
            return
        reply = await task._ask(messages, attempt.temperature, attempt.number, step, constrained=True)
        messages.append({"role": "assistant", "content": reply})
        asked_named, lined = step == "named", step == "line"
        only = absent if step == "function" else (focus or None) if asked_named else None
        step = "repair"
        if asked_named and named_files.declines(reply):
            attempt.outcome, task._why = "passed", "the model said no change is needed"
            return
        planned = task._place_line(reply, line, where, known, default) if lined and line else (
            task._place(reply, where, known, default, only=only))
        attempt.placement_failures += len(planned.failures)
        task.stats.placement_failures += len(planned.failures)
        written = await task._write(planned)
        attempt.actions.extend(planned.actions)
        if planned.actions:
            task.stats.converted += 1
            task.stats.commits += len(written)
        if asked_named and not written:  # no new change: the passing files stand
            attempt.outcome = "passed"
            task._why = (f"the answer to the ask could not be placed: {planned.failures[0][:120]}"
                         if planned.failures else "the answer to the ask changed nothing")
            return
        if planned.failures and not written:
            problem = "; ".join(planned.failures)
            cut = task.last_finish == "length"  # a whole file repeated until max_tokens, most often
            if cut:
                problem = f"the answer was cut off at max_tokens ({task.profile.max_tokens}); {problem}"
            if task._repair(attempt, messages, "nothing placed", problem,
                            CUT_OFF if cut else f"That could not be applied: {problem}\n{REPAIR_ASK}"):
                continue
            return
        absent = task._absent(where)
        if absent:  # a function the task asks for by name is nowhere: ask for it alone, afresh
            target_file = where.target or target
            messages[:] = [{"role": "system", "content": SYSTEM}]
            if task._repair(attempt, messages, FUNCTION_NOT_WRITTEN, ", ".join(absent),
                            asked_def_ask(task.goal, absent, target_file,
                                          api_text([target_file], task._read))):
                step = "function"
                continue
            return
        if not task._changed():  # before asking for tests: they would test code that is not there
            if line and not line_asked:  # the line the task names, alone, afresh (once an attempt)
                line_asked = True
                messages[:] = [{"role": "system", "content": SYSTEM}]
                if task._repair(attempt, messages, "no change", "the answer changed no file",
                                line_ask(task.goal, line, task._read(line.path) or "")):
                    step = "line"
                    continue
                return
            if task._repair(attempt, messages, "no change", "the answer changed no file",
                            no_change_ask(where.symbols)):
                continue
            return
        if where.wants_test and where.test_file and not task._new_tests(where.test_file):
            await asked_tests.ask_tests(task, attempt, where, known, default, messages)
            if not task._new_tests(where.test_file):  # a pass without the asked test is no pass
                if task._repair(attempt, messages, "no test", f"no test function was placed in {where.test_file}",
                                NO_TEST.format(test_file=where.test_file)):
                    continue
                return
        ok, summary = await task._check()
        if not ok and (dropped := await made_up_cases.drop_made_up(task, attempt, where, summary)):
            attempt.actions.append(f"{where.test_file}: {len(dropped)} made-up case(s) dropped ("
                                   + "; ".join(c.source[:60] for c in dropped)[:200] + ")")
            ok, summary = await task._check()
        if ok and where.wants_test and where.test_file and (unproven := await (
                proof.proves_the_change(task, attempt, where.test_file, where,
                                              task._new_tests(where.test_file)))):
            if task._repair(attempt, messages, proof.PASSES_WITHOUT, ", ".join(unproven),
                            proof.PASSES_WITHOUT_ASK.format(names=", ".join(unproven),
                                                                  path=where.test_file)):
                continue
            return
        if ok:
            attempt.outcome, attempt.detail = "passed", ""
            left = named_files.untouched(task.root, where.named, task.original)
            if left and task._passing is None and attempt.repairs < max(0, task.profile.repairs):
                task._passing = named_files.snapshot(task.root, task.original)
                task._kept = len(attempt.actions)
                task._why = "not changed after one ask"
                named_target, focus = next(((rel, names) for rel in left if rel in where.targets
                                            and (names := named_files.target_definitions(rel, where.symbols))),
                                           (None, []))
                if named_target:  # its definitions alone, afresh (see named.target_ask)
                    target = named_target
                    messages[:] = [{"role": "system", "content": SYSTEM}]
                task._repair(attempt, messages, "named file unchanged", ", ".join(left),
                             named_files.target_ask(task.goal, named_target, task._read(named_target) or "", focus)
                             if named_target else named_files.named_ask(left, where.targets))
                step = "named"
                continue
            return
        fixed = f"{asked_tests.LOCKED.format(path=task.locked)}\n" if task.locked else ""
        failing = failing_files(summary)
        written_tests = {rel for rel in task.original if is_test_file(rel) and rel != task.locked}
        missing = missing_asked_names(summary, task.goal, known)
        own = failing_tests(summary)
        test_only = not missing and bool(failing) and failing <= written_tests and all(  # the attempt's own tests
            name in task._new_tests(rel) for rel, name, _ in own)
        asserts = test_only and all(message.startswith(("AssertionError", "assert ")) for _, _, message in own)
        if missing:  # the code lacks what the task asks for: not the test's fault
            fixed += "".join(NOT_DEFINED.format(name=name, path=path) + "\n" for name, path in missing)
        elif test_only:  # the code may be right and its new test wrong; on asserts alone, the test alone is shown
            files = ", ".join(sorted(failing))
            fixed += TEST_ONLY.format(files=files) + (SEND_ONLY.format(files=files) if asserts else "") + "\n"
        test_only = asserts
        shown = "\n\n".join(f"{rel} now reads:\n{numbered(task._read(rel) or '')}" for rel in task.original
                            if task._read(rel) is not None and (not test_only or rel in failing))[:6000]
        if not task._repair(attempt, messages, "checks failed", summary.strip().split("\n")[-1],
                            f"The checks ({task.ci_command}) failed:\n{summary}\n\n{shown}\n\n{fixed}{REPAIR_ASK}"):
            return


__all__ = ["FUNCTION_NOT_WRITTEN", "run_steps"]
