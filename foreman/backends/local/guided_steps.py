"""One guided attempt as a pipeline (:mod:`.pipeline`): propose, check, validate, repair, over one
:class:`AttemptState`, until the attempt passes or its repairs run out (:class:`.guided.GuidedTask`
runs the attempts, each from the same clean start, and locates the task once).

- *propose*: the asked test first when the task asks for none (:mod:`.asked`), then the edit ask
  (or the ask a repair chose), its answer placed in the files; a task that asks for tests alone
  starts with the test ask instead (:func:`tests_only`);
- *check*: the answer placed something; a function the task asks for by name is there (else asked
  for alone, ``function-ask``); a file changed (else the line the task names is asked for alone,
  ``line-ask``); the tests the task asks for are there (:func:`.asked.ask_tests`), can run on
  their own (``test-alone``) and repeat no existing test (``repeat-test``);
- *validate*: the repository's checks pass (made-up cases dropped first, ``made-up-cases``); the
  new tests fail without the change (``proof``), or, added with no change to the code, on a broken
  version of what they call (``mutant``, :mod:`.mutants`); a function the task asks the code to
  share is used by the code, not only the tests (``uses``, :mod:`.uses`); an added raise comes
  before any change of state (``raise-first``, :mod:`.raisefirst`), and a test of an error calls
  what the task names (``raise-where``, :mod:`.raiseask`); a file the task names
  and the answer left alone is asked for once (``named-file``);
- *repair*: each failure's finding goes back to the model while repair rounds are left; a new
  test failing because its expected error was not raised gets the function it calls asked for
  alone, once an attempt (``raise-ask``, :mod:`.raiseask`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import asked as asked_tests
from . import madeup as made_up_cases
from . import mutants, proof, raiseask, raisefirst, testcheck, uses
from . import named as named_files
from .guided_stats import Attempt
from .guided_text import (
    CUT_OFF,
    EDIT_ASK,
    NO_TEST,
    NOT_DEFINED,
    REPAIR_ASK,
    SEND_ONLY,
    STILL_FAILS,
    SYSTEM,
    TEST_ONLY,
    UNMOVED,
    UNMOVED_AS_IT_IS,
    asked_def_ask,
    failing_files,
    failing_tests,
    missing_asked_names,
    no_change_ask,
    task_functions,
)
from .lineask import NamedLine, line_ask, named_line
from .localize import Localized, is_test_file, list_files, numbered
from .pipeline import PASSED, Finding
from .signatures import api_text

if TYPE_CHECKING:
    from .cases import Case
    from .guided import GuidedTask

FUNCTION_NOT_WRITTEN = "function not written"
"""The outcome of an attempt whose answers never defined a function the task asks for by name."""


@dataclass
class AttemptState:
    """Where one attempt stands.

    Attributes:
        messages: the conversation of the next ask (a fresh ask replaces it).
        target: the file the edit ask names as the example path.
        line: the line the task names, for the line ask (None: it names none).
        step: the next ask's kind ("edit", "repair", "function", "line", "named" or "raise").
        absent: the functions the last function ask was for.
        focus: the definitions the last named-file or raise ask was for alone.
        line_asked: the line ask was made (once an attempt).
        raise_asked: the raise ask was made (once an attempt).
    """

    messages: list[dict[str, Any]]
    target: str
    line: NamedLine | None
    step: str = "edit"
    absent: list[str] = field(default_factory=list)
    focus: list[str] = field(default_factory=list)
    line_asked: bool = False
    raise_asked: bool = False


ASKED_TEST_PLACED = ("A test of what the task asks for is in place, {path}; it fails on the code as it is and your "
                     "change must make it pass:\n```python\n{test}```\n\n")
KEPT_TEST = ("A test of what the task keeps is in place, {path}; it passes on the code as it is and must still pass "
             "after your change:\n```python\n{test}```\n\n")


async def run_steps(task: GuidedTask, attempt: Attempt, where: Localized, known: list[str], default: str | None) -> None:
    """Run one attempt's pipeline (the module's stages); its outcome is in ``attempt``."""
    test = ""
    if asked_tests.wants_asked_test(task.profile.asked_test and task.enabled("asked-test"), where, task.ci_command):
        task.acted("asked-test")
        placed = await asked_tests.write_asked_test(task, attempt, where, known, default)
        task.mark("propose", "asked test placed" if placed is not None else f"asked test: {attempt.outcome}")
        if placed is None:
            return
        test = (KEPT_TEST if task.locked_passes is not None else ASKED_TEST_PLACED).format(path=task.locked, test=placed)
    target = default or (where.test_file or "path/to/file.py")
    state = AttemptState(
        messages=[{"role": "system", "content": SYSTEM},
                  {"role": "user", "content": f"Task:\n{task.goal}\n\n{where.context}\n\n{test}"
                                              f"{EDIT_ASK.format(target=target)}"}],
        target=target,
        line=named_line(task.goal, where.symbols, task._read) if task.enabled("line-ask") else None)
    tests_first = tests_only(where)
    while True:
        if task._out_of_time():
            attempt.outcome = "out of time"
            return
        if tests_first:  # the first ask is the test ask: its answer goes straight to the checks
            tests_first = False
            del state.messages[1:]  # the edit ask, never sent: the conversation goes on from the test ask
            await asked_tests.ask_tests(task, attempt, where, known, default, state.messages)
            finding = None
        else:
            finding = await _propose(task, attempt, state, where, known, default)
        if finding is None:
            finding = await _check(task, attempt, state, where, known, default)
        if finding is None:
            finding = await _validate(task, attempt, state, where, known)
        if finding is PASSED:
            return
        task.mark(finding.stage, finding.outcome)
        if finding.fresh:
            state.messages[:] = [{"role": "system", "content": SYSTEM}]
        if not task._repair(attempt, state.messages, finding.outcome, finding.detail, finding.ask, free=finding.free):
            task.mark("repair", "none left")
            return
        task.mark("repair", f"{finding.step} asked")
        state.step = finding.step


def _still_failing(task: GuidedTask) -> str:
    """How the asked test fails on the code as it still is, for the ask after an answer that changed
    nothing ("" without an asked test): told only "that changed nothing", a model sends the same
    code back again; the failing assert names what must change (``'$1234.56' != '$1,234.56'``)."""
    if not task.locked or not task.locked_failures:
        return ""
    failures = "\n".join(f"- {line}" for line in task.locked_failures[:4])
    return STILL_FAILS.format(path=task.locked, failures=failures)


def tests_only(where: Localized) -> bool:
    """Whether the task asks for tests alone: it asks for a test and every file it asks to change
    is a test file. Such a task's first ask is the test ask (:func:`.asked.ask_tests`): asked first for
    "the new or changed code" with the code file as the example path, a model sends that code back
    unchanged, and the attempt's first answer changes nothing."""
    return bool(where.wants_test and where.test_file and where.targets
                and all(is_test_file(rel) for rel in where.targets))


async def _propose(task: GuidedTask, attempt: Attempt, state: AttemptState, where: Localized, known: list[str],
                   default: str | None) -> Finding | None:
    """Ask, and place the answer; a named-file ask that brings nothing new ends the attempt passed."""
    step = state.step
    reply = await task._ask(state.messages, attempt.temperature, attempt.number, step, constrained=True)
    state.messages.append({"role": "assistant", "content": reply})
    state.step = "repair"
    if step == "named" and named_files.declines(reply):
        attempt.outcome, task._why = "passed", "the model said no change is needed"
        task.mark("validate", "named file: no change needed")
        return PASSED
    only = state.absent if step == "function" else (state.focus or None) if step in ("named", "raise") else None
    planned = task._place_line(reply, state.line, where, known, default) if step == "line" and state.line else (
        task._place(reply, where, known, default, only=only))
    attempt.placement_failures += len(planned.failures)
    task.stats.placement_failures += len(planned.failures)
    written = await task._write(planned)
    attempt.actions.extend(planned.actions)
    if planned.actions:
        task.stats.converted += 1
        task.stats.commits += len(written)
    if step == "named" and not written:  # no new change: the passing files stand
        attempt.outcome = "passed"
        task._why = (f"the answer to the ask could not be placed: {planned.failures[0][:120]}"
                     if planned.failures else "the answer to the ask changed nothing")
        task.mark("validate", "named file: nothing new")
        return PASSED
    if planned.failures and not written:
        problem = "; ".join(planned.failures)
        cut = task.last_finish == "length"  # a whole file repeated until max_tokens, most often
        if cut:
            problem = f"the answer was cut off at max_tokens ({task.last_limit}); {problem}"
        elif step != "function" and task.enabled("function-ask") and task._absent(where):
            task.acted("function-ask")
            return None  # (a file sent back without what the task names: the check asks for that alone)
        return Finding("propose", "nothing placed", problem,
                       CUT_OFF if cut else f"That could not be applied: {problem}\n{REPAIR_ASK}")
    return None


async def _check(task: GuidedTask, attempt: Attempt, state: AttemptState, where: Localized, known: list[str],
                 default: str | None) -> Finding | None:
    """The placed answer's checks that run no test of the code (the module docstring's order)."""
    absent = task._absent(where) if task.enabled("function-ask") else []
    if absent:  # a function the task asks for by name is nowhere: ask for it alone, afresh
        task.acted("function-ask")
        return _ask_functions(task, state, where, "check", absent)
    if not task._changed():  # before asking for tests: they would test code that is not there
        if state.line and not state.line_asked:  # the line the task names, alone, afresh (once an attempt)
            state.line_asked = True
            task.acted("line-ask")
            return Finding("check", "no change", "the answer changed no file",
                           line_ask(task.goal, state.line, task._read(state.line.path) or ""), fresh=True, step="line")
        return Finding("check", "no change", "the answer changed no file", _still_failing(task) + no_change_ask(where.symbols))
    if where.wants_test and where.test_file and not task._new_tests(where.test_file):
        await asked_tests.ask_tests(task, attempt, where, known, default, state.messages)
        if not task._new_tests(where.test_file):  # a pass without the asked test is no pass
            return Finding("check", "no test", f"no test function was placed in {where.test_file}",
                           NO_TEST.format(test_file=where.test_file))
    if where.wants_test and where.test_file:
        return await testcheck.check_new_tests(task, attempt, where.test_file, where, known)
    return None


async def _validate(task: GuidedTask, attempt: Attempt, state: AttemptState, where: Localized,
                    known: list[str]) -> Finding:
    """Run the repository's checks; a pass must prove the change and leave no named file alone."""
    ok, summary = await task._check()
    code = functools.cache(lambda: _code(task))  # (read once, by the first check that needs it)
    judged = made_up_cases.Judged()
    if not ok and task.enabled("made-up-cases") and (
            judged := await made_up_cases.drop_made_up(task, attempt, where, summary)).dropped:
        dropped = judged.dropped
        task.acted("made-up-cases")
        task.mark("validate", "made-up cases dropped")
        attempt.actions.append(f"{where.test_file}: {len(dropped)} made-up case(s) dropped ("
                               + "; ".join(c.source[:60] for c in dropped)[:200] + ")")
        ok, summary = await task._check()
    if not ok and task.enabled("raise-ask") and not state.raise_asked and (miss := _not_raised(task, summary, code)):
        state.raise_asked, state.focus = True, [miss.name]
        task.acted("raise-ask")
        return Finding("validate", "checks failed", f"{miss.name} does not raise {miss.error}",
                       raiseask.raise_ask(task.goal, miss, task._read(miss.path) or ""), fresh=True, step="raise",
                       free=True)  # (once an attempt: the rounds may have gone to the error class and the test)
    if ok and task.enabled("proof") and where.wants_test and where.test_file and (unproven := await (
            proof.proves_the_change(task, attempt, where.test_file, where, task._new_tests(where.test_file)))):
        task.acted("proof")
        return Finding("validate", proof.PASSES_WITHOUT, ", ".join(unproven),
                       proof.PASSES_WITHOUT_ASK.format(names=", ".join(unproven), path=where.test_file))
    if ok and task.enabled("mutant") and where.wants_test and where.test_file and (
            weak := await mutants.check(task, attempt, where.test_file, where)):
        task.acted("mutant")
        return weak
    if ok and task.locked_passes and (unwritten := _unwritten(task.locked_passes, code())):
        task.acted("keep-test")
        return _ask_functions(task, state, where, "validate", unwritten)
    if ok and task.enabled("uses") and (kept := _uses(task, code)):
        task.acted("uses")
        return Finding("validate", uses.UNUSED, *kept)
    if ok and task.enabled("raise-first") and (first := raisefirst.check(*_written(task))):
        task.acted("raise-first")
        return Finding("validate", raisefirst.CHANGED_FIRST, *first)
    if ok and task.enabled("raise-where") and (other := _raised_elsewhere(task, code)):
        task.acted("raise-where")
        return Finding("validate", raiseask.ELSEWHERE, *other)
    if ok:
        attempt.outcome, attempt.detail = "passed", ""
        task.mark("validate", "checks passed")
        return _named_left(task, attempt, state, where) or PASSED
    return _failed(task, summary, known=known, unmoved=judged.unmoved, changed=judged.changed)


def _ask_functions(task: GuidedTask, state: AttemptState, where: Localized, stage: str, names: list[str]) -> Finding:
    """The finding that asks for the functions ``names`` alone, afresh (the ``function`` step)."""
    state.absent = names
    target_file = where.target or state.target
    return Finding(stage, FUNCTION_NOT_WRITTEN, ", ".join(names),
                   asked_def_ask(task.goal, names, target_file, api_text([target_file], task._read)),
                   fresh=True, step="function")


def _unwritten(names: list[str], code: dict[str, str]) -> list[str]:
    """Of the functions a refactor adds (``names``), those no word of the repository's code
    (``code``, :func:`_code`) names: not defined, not passed on, not called. The asked test of a
    refactor passes on the unchanged code, so an answer that writes none of them passes it too."""
    return [name for name in names if not any(re.search(rf"\b{re.escape(name)}\b", text) for text in code.values())]


def _written(task: GuidedTask) -> tuple[dict[str, str | None], dict[str, str]]:
    """The attempt's written non-test Python files as they were (None: new) and as they are."""
    before = {rel: None if data is None else data.decode("utf-8", "replace") for rel, data in task.original.items()
              if rel.endswith(".py") and not is_test_file(rel)}
    return before, {rel: text for rel in before if (text := task._read(rel)) is not None}


def _not_raised(task: GuidedTask, summary: str, code: Callable[[], dict[str, str]]) -> raiseask.NotRaised | None:
    """:func:`.raiseask.not_raised` over the attempt's new tests that fail and the repository's
    code (``code()``, :func:`_code`, read only when a new test failed)."""
    failures = [(rel, name, message) for rel, name, message in failing_tests(summary)
                if rel in task.original and name in task._new_tests(rel)]
    if not failures:
        return None
    tests = {rel: text for rel, _, _ in failures if (text := task._read(rel)) is not None}
    return raiseask.not_raised(failures, tests, code())


def _raised_elsewhere(task: GuidedTask, code: Callable[[], dict[str, str]]) -> tuple[str, str] | None:
    """:func:`.raiseask.elsewhere` over the attempt's new tests and the functions the task names as
    calls that the repository's code (``code()``, :func:`_code`) defines."""
    calls = [call for rel in task.original if is_test_file(rel) and (names := task._new_tests(rel))
             for call in raiseask.raising_calls(task._read(rel) or "", names)]
    if not calls:
        return None
    defined = {name for text in code().values() for name in uses.defined(text)}
    return raiseask.elsewhere([name for name in task_functions(task.goal) if name in defined], calls)


def _code(task: GuidedTask) -> dict[str, str]:
    """The repository's non-test Python files, path -> text (at most :data:`_MAX_CODE_FILES`)."""
    code = [rel for rel in list_files(task.root) if rel.endswith(".py") and not is_test_file(rel)
            and not rel.startswith(("tests/", "test/"))][:_MAX_CODE_FILES]
    return {rel: text for rel in code if (text := task._read(rel)) is not None}


def _uses(task: GuidedTask, code: Callable[[], dict[str, str]]) -> tuple[str, str] | None:
    """:func:`.uses.check` over the attempt's written files and the repository's code (``code()``,
    :func:`_code`; None, without reading it, when the task asks for no use)."""
    if not uses.USE_ASK_RE.search(task.goal):
        return None
    before = {rel: (data or b"").decode("utf-8", "replace") for rel, data in task.original.items()}
    return uses.check(task.goal, before, code())


_MAX_CODE_FILES = 400
"""The most source files the ``uses`` check reads (a larger repository is read in part)."""


def _named_left(task: GuidedTask, attempt: Attempt, state: AttemptState, where: Localized) -> Finding | None:
    """After a pass: a file the task names and the attempt left unchanged is asked for once (its
    definitions alone, afresh, when the task names them: :func:`.named.target_ask`); the passing
    files are kept to go back to."""
    if not task.enabled("named-file"):
        return None
    left = named_files.untouched(task.root, where.named, task.original)
    if not left or task._passing is not None or attempt.repairs >= max(0, task.profile.repairs):
        return None
    task.acted("named-file")
    task._passing = named_files.snapshot(task.root, task.original)
    task._kept = len(attempt.actions)
    task._why = "not changed after one ask"
    named_target, focus = next(((rel, names) for rel in left if rel in where.targets
                                and (names := named_files.target_definitions(rel, where.symbols))), (None, []))
    state.focus = focus
    if named_target:
        state.target = named_target
    ask = (named_files.target_ask(task.goal, named_target, task._read(named_target) or "", focus) if named_target
           else named_files.named_ask(left, where.targets))
    return Finding("validate", "named file unchanged", ", ".join(left), ask, fresh=bool(named_target), step="named")


def _failed(task: GuidedTask, summary: str, *, known: list[str],
            unmoved: list[tuple[Case, str]] | None = None, changed: bool = True) -> Finding:
    """The repair of a failed check run: the failure, the files as they now read, and what to fix
    (a name the task asks for that the code lacks; or, when only the attempt's new tests fail, the
    test rather than the code, naming its asserts that fail alike on the old code: ``unmoved``,
    :func:`.madeup.unmoved`; ``changed`` False: no code changed, and they are its failing asserts)."""
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
        if unmoved:
            cases = "\n".join(made_up_cases.listed(case, failure) for case, failure in unmoved[:6])
            fixed += (UNMOVED if changed else UNMOVED_AS_IT_IS).format(cases=cases) + "\n"
    shown = "\n\n".join(f"{rel} now reads:\n{numbered(task._read(rel) or '')}" for rel in task.original
                        if task._read(rel) is not None and (not asserts or rel in failing))[:6000]
    return Finding("validate", "checks failed", summary.strip().split("\n")[-1],
                   f"The checks ({task.ci_command}) failed:\n{summary}\n\n{shown}\n\n{fixed}{REPAIR_ASK}")


__all__ = ["FUNCTION_NOT_WRITTEN", "AttemptState", "run_steps", "tests_only"]
