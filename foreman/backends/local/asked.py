"""Guided mode's tests: the test of the asked behaviour, written first, and the tests a task asks for.

**The asked test**. A task that asks for no test ("make a command print a summary line at the
end") is checked by the repository's own tests only, which were written before the task and do
not cover the new behaviour. A small model then passes the checks with a change that does
something else (a different line, printed only under a new option nobody asked for), and the
task is merged: a false success. So before the model changes any
code, guided mode asks it for pytest test functions of the behaviour the task asks for, exactly
as the task states it, and places them in a new file (:func:`asked_test_path`). The rule:

- *Test first*: the test is asked before the change, from the task's text and the unchanged
  code (plus one of the repository's tests as an example of how it tests), so it says what the
  task asks, not what the model's change does (a test written after the change tends to
  assert the change).
- *It must fail on the unchanged code, for the task* (:mod:`.probe`: run alone with pytest's
  JUnit report, a test function counts when it fails on an assert or because a name the task
  adds is missing; one broken in itself, a ``TypeError`` of its own, is dropped, as is one that
  passes; a check command that is not plain pytest is only read for its exit status and must
  name the test file). A test that passes there checks nothing
  the task adds (it can pass whatever the change does); one more is asked, and when that one
  passes too (or cannot be placed) the attempt ends :data:`NO_ASKED_TEST`. Why not "passes after"
  alone: a test that already passes cannot tell a right change from a wrong one, which is the
  false success this closes. The exception is a refactor (:func:`.uses.refactor`: the task asks
  the code to use what it adds and says what the code does stays as it is): it adds no behaviour,
  so a test of what it keeps passes on the unchanged code, and refusing it spent every attempt on
  test asks. Such a test is locked as it is (``keep-test``): it must still pass after the change,
  and the answer must write each function the task names that the code lacks.
- *Its first cases only*: the first two test functions, each to its third assert, are placed
  (:func:`.probe.first_checks`; an assert holding a value the task writes out is kept before
  the others): a small model lists the plain cases first and makes up the later ones, and a
  made-up case would lock the attempt into failure.
- *It checks every target*: when the attempt changed two or more files, the asked test must
  fail with any one file the task asks to change put back as it was (:func:`.proof.unchecked_targets`);
  a test of one half of the task does not let the other half through.
- *It stays fixed for the attempt*: the edit and repair answers may not change it (a block for
  it is refused and told back), so a wrong change cannot pass by weakening its test. A test that
  is itself wrong fails every repair; the next attempt (from the same clean start) asks a new
  one. Either way the task never ends ``done`` with a change its test did not pass.
- *It is kept*: the passing test is part of the commit, so the conductor's CI and later tasks
  run it too.

It is asked only when the task asks for no test (a task that asks for one gets the tests it
asks for, :func:`ask_tests`), a check command exists to run it, and the profile's
``asked_test`` is on (the default). The repository's test shown beside either ask is
:mod:`.examples`'; the runs on the code as it was, and what they prove, are :mod:`.proof`'s.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import named as named_files
from . import probe as probes
from .answers import Block, blocks_of, blocks_of_json, complete_part
from .cuttable import closed_table, table_function
from .examples import copied_tests, example_test, fixture_class, test_context
from .guided_text import (
    CUT_OFF_TEST,
    CUT_TABLE,
    SYSTEM,
    TABLE_FUNCTION,
    TEST_ASK,
    TEST_ASK_CLASS,
    TEST_HOW,
    TEST_HOW_EXAMPLE,
    TESTS_STEP,
    absent_definitions,
    adds_sentence,
    task_functions,
    task_words,
)
from .localize import Localized, module_name, numbered, written_values
from .madeup import task_quotes
from .proof import run_probe
from .symbols import defined_names, test_labels, tests_unrelated
from .uses import defined as definitions_of
from .uses import refactor

if TYPE_CHECKING:
    from .guided import Attempt, GuidedTask

NO_ASKED_TEST = "no failing test of the asked behaviour"
"""The outcome of an attempt whose model wrote no test that fails on the unchanged code."""
ASKED_TEST_ASK = (
    "Before anything is changed, write the pytest test functions that check what the task asks for, exactly as the "
    "task states it (the exact text printed, the exact values returned), using the code as it is shown. They must "
    "fail on this code and pass once the task is done. One ```python block whose first line is "
    "`# file: {path}`, only imports and one short test function (def test_...) for each thing the task asks for, "
    "each with at most three plain assert statements on the simplest cases. No explanations.")
"""The asked test's request. "At most three asserts": asked for "test functions" with no bound, a
small model writes one assert after another until max_tokens, the first few right and the later
ones made up (expected values the task contradicts), so the locked test fails every change.
The edit and test asks of a task that asks for tests are bounded alike (:data:`.guided_text.TEST_ASK`)."""
PASSES_ON_BASE = ("That test passes on the code as it is now, so it does not check what the task asks for. Write test "
                  "functions that fail now and pass once the task is done. Same format.")
NOT_FOR_THE_TASK = ("No test there fails because the task is not done yet:\n{reasons}\nA test of the task fails on an "
                    "assert (or because a name the task adds does not exist yet). Write the test functions again, in "
                    "one ```python block for {path}; call only what the code shown has, as it is defined there, or "
                    "what the task adds.")
COPIED = ("{names} repeats the example test from {example}: it checks what the code already does, so it passes now. "
          "Do not repeat it. Write one new test function, with a new name, that checks exactly what the task asks "
          "for (the exact text printed, the exact values returned) and fails on the code as it is. Same format.")
LOCKED = ("{path} is the test of what the task asks for and stays as it is: change the code so that it passes, "
          "not the test.")


def wants_asked_test(asked_test: bool, where: Localized, ci_command: str | None) -> bool:
    """Whether guided mode asks for a test of the asked behaviour (the module's rule)."""
    return asked_test and not where.wants_test and bool(ci_command)


EACH_TARGET = (" The task changes {count} files: write at least one test function for what it asks of each, "
               "{listed}.")


def each_target_sentence(goal: str, where: Localized) -> str:
    """The sentence the asked-test request ends with when the task asks to change two or more files
    (:attr:`.localize.Localized.targets`), else "": each file with what the task asks of it there (the
    functions it adds or calls with their arguments there, ``name(``, :func:`_places`; else the existing
    names it names in that file). Asked
    only for "a test function for each thing the task asks for", a small model often tests one
    file's part of a two-file task alone (the new ``count_words`` in ``pkg/text.py``, not the
    command that is to print its result), and the attempt ends ``target unchecked``."""
    if len(where.targets) < 2:
        return ""
    adds = task_functions(goal)
    parts = []
    for rel in where.targets:
        names = [n for n in adds if _places(goal, n, rel)] or list(dict.fromkeys(
            name for name, file, _ in where.symbols if file == rel))
        parts.append(f"{rel} ({', '.join(names)})" if names else rel)
    return EACH_TARGET.format(count=len(where.targets), listed="; ".join(parts))


def asked_test_path(where: Localized, exists) -> str:
    """Where the asked test goes: ``tests/test_<target>_asked.py`` (a number added while that
    file exists), the target being the first file the task asks to change, else its main file.

    Args:
        where: the localized task.
        exists: ``exists(rel) -> bool`` for a repository-relative path.
    """
    source = next(iter(where.targets), None) or where.target or "task"
    stem = Path(source).stem if source != "task" else "task"
    path, n = f"tests/test_{stem}_asked.py", 2
    while exists(path):
        path, n = f"tests/test_{stem}_asked_{n}.py", n + 1
    return path


def _test_blocks(task: GuidedTask, reply: str) -> list[Block]:
    """The blocks of a test reply; of one cut at max_tokens, those of its complete part
    (:func:`.answers.complete_part`: the test functions before the one the cut went through)."""
    text = complete_part(reply) if task.last_finish == "length" else reply
    return (blocks_of_json(reply) if task.response_format else []) or blocks_of(text)


def _only_tests(blocks: list[Block], path: str, words: set[str], goal: str) -> list[Block]:
    """The blocks that hold test functions, each sent to ``path`` (whatever file they named), with
    its first two test functions (those using ``words`` first) and their first three asserts only,
    those holding a value the task's text quotes or writes out first (:func:`.probe.first_checks`)."""
    stated = frozenset(q.strip() for q in task_quotes(goal) if len(q.strip()) >= 2) | frozenset(written_values(goal))
    return [Block(path, code=probes.first_checks(b.code, prefer=frozenset(words), stated=stated)) for b in blocks
            if b.search is None and "def test" in b.code]


async def write_asked_test(task: GuidedTask, attempt: Attempt, where: Localized, known: list[str],
                           default: str | None) -> str | None:
    """Ask for the asked test, place it, and run the checks on the unchanged code.

    Returns:
        The placed test's text (to show in the edit request) when it fails on the unchanged
        code; None when no such test was written (``attempt.outcome`` says why).
    """
    path = asked_test_path(where, lambda rel: (task.root / rel).exists())
    example = example_test(where, known, task._read, task.goal)
    shown = test_context(task, where, known, example)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Task:\n{task.goal}\n\n{where.context}{shown}\n\n"
                                    + ASKED_TEST_ASK.format(path=path) + adds_sentence(task.goal)
                                    + each_target_sentence(task.goal, where)}]
    example_text = (task._read(example) or "") if example else ""
    added = _added(task, where)
    words = _named(task, where) | set(added)
    keeps = task.enabled("keep-test") and refactor(task.goal)
    for asked in range(2):
        if task._out_of_time():
            attempt.outcome = "out of time"
            return None
        temperature = round(min(1.0, attempt.temperature + 0.2 * asked), 2)  # the same ask again: sample wider
        reply = await task._ask(messages, temperature, attempt.number, "asked test", constrained=True)
        messages.append({"role": "assistant", "content": reply})
        blocks = _test_blocks(task, reply)
        planned = task._plan(_only_tests(blocks, path, words, task.goal), where, known, default)
        if not planned.texts.get(path):
            problem = "; ".join(planned.failures) or "the answer holds no test function"
            if task.last_finish == "length":  # most often one line repeated until max_tokens
                problem = f"the answer was cut off at max_tokens ({task.last_limit}); {problem}"
                ask = CUT_OFF_TEST.format(path=path)
            else:
                ask = f"That could not be used: {problem}\nWrite the test functions in one ```python block for {path}."
            attempt.outcome, attempt.detail = NO_ASKED_TEST, problem
            messages.append({"role": "user", "content": ask})
            continue
        await task._write(planned)
        attempt.actions.extend(planned.actions)
        outcomes = await run_probe(task, attempt, path, where)
        if outcomes:
            text = task._read(path) or ""
            keep = probes.narrowed(probes.kept(outcomes), outcomes, text, path)
            keep, aside = _calling(keep, text, path, words)
            keep, changes = _refactor_split(keep, outcomes) if keeps else (keep, [])
            if keep:
                _trim(task, path, keep)
                task.locked = path
                task.locked_failures = [f"{o.name}: {o.detail[:200]}" for o in outcomes
                                        if o.function in keep | {probes.file_label(path)} and o.detail]
                return task._read(path)
            if keeps and (passing := _passing(outcomes)):
                _trim(task, path, passing)
                return _lock_passing(task, path, added)
            task._drop(path)
            del attempt.actions[len(attempt.actions) - len(planned.actions):]
            unused = [o.detail for o in outcomes  # the file failed to import a new name
                      if o.kind == "new name" and o.function == probes.file_label(path)]
            uses = f"calling {', '.join(added)}, which the task adds, or using anything else" if added else "using anything"
            uncalled = "".join(f"- {label} fails without {uses} the task names\n" for label in aside)
            uncalled += "".join(f"- {label} fails on the code as it is, but the task keeps what the code does: a test of "
                                "it passes now\n" for label in changes)
            problem = (uncalled + probes.reasons(outcomes)).strip() or "".join(
                f"- no test function uses what fails to import ({line[:160]})" for line in unused[:1])
            own = next((o for o in outcomes if o.kind == "own error"), None)
            copied = [] if own else copied_tests(planned.texts[path], example_text)
            attempt.outcome = NO_ASKED_TEST
            attempt.detail = (f"{own.name} failed on an error of its own: {own.detail[:160]}" if own
                              else f"the example test repeated ({', '.join(copied)})" if copied
                              else f"no test function uses the new name it imports: {unused[0][:160]}" if unused
                              else "no failing test function uses what the task names" if aside
                              else "the test asserts a change of what the task keeps" if changes
                              else "the test passed on the unchanged code")
            messages.append({"role": "user", "content": COPIED.format(names=", ".join(copied), example=example)
                             if copied else NOT_FOR_THE_TASK.format(reasons=problem, path=path)})
            continue
        ok, summary = await task._check()
        if not ok and (path in summary or "pytest" not in (task.ci_command or "")):
            task.locked = path
            return task._read(path)
        if ok and keeps:
            return _lock_passing(task, path, added)
        task._drop(path)  # passes on the unchanged code (or fails elsewhere): not a test of the task
        del attempt.actions[len(attempt.actions) - len(planned.actions):]
        copied = copied_tests(planned.texts[path], example_text) if ok else []
        attempt.outcome = NO_ASKED_TEST
        attempt.detail = (f"the example test repeated ({', '.join(copied)})" if copied else
                          "the test passed on the unchanged code" if ok else f"the checks failed elsewhere: {summary}")
        messages.append({"role": "user", "content": COPIED.format(names=", ".join(copied), example=example) if copied
                         else PASSES_ON_BASE if ok else
                         f"The checks failed, but not in {path}:\n{summary}\nWrite test functions of what the "
                         "task asks for. Same format."})
    return None


def _refactor_split(keep: set[str], outcomes: list[probes.ProbeOutcome]) -> tuple[set[str], list[str]]:
    """A refactor's ``keep`` (:func:`.probe.kept` labels) split into the test functions that fail only
    because a name the task adds is missing, and those that fail otherwise (an assert on what the
    code does now: the task says that stays, so the expected value is made up), in order."""
    changes = sorted(label for label in keep if any(o.function == label and o.kind != "new name" and o.kind != "passed"
                                                    for o in outcomes))
    return keep - set(changes), changes


def _passing(outcomes: list[probes.ProbeOutcome]) -> set[str]:
    """The test functions all of whose cases pass (labels; a parametrized one counts once)."""
    failing = {o.function for o in outcomes if o.kind != "passed"}
    return {o.function for o in outcomes if o.kind == "passed"} - failing


def _lock_passing(task: GuidedTask, path: str, added: list[str]) -> str | None:
    """Lock a refactor's asked test that passes on the unchanged code (the ``keep-test`` check):
    it tests what the task keeps, and must still pass after the change; ``added`` (the functions
    the task names that the code lacks, :func:`_added`) must be written by the answer."""
    task.acted("keep-test")
    task.locked, task.locked_failures, task.locked_passes = path, [], list(added)
    return task._read(path)


_PATH_RE = re.compile(r"[\w./-]+\.py\b")


def _places(goal: str, name: str, rel: str) -> bool:
    """Whether the task puts ``name`` in ``rel``: the file named nearest to a mention of ``name``
    in the task's text is ``rel`` ("Add count_words(...) to pkg/text.py ... make run in
    pkg/commands/text.py ..." puts count_words in pkg/text.py only); a bare file name
    ("text.py") names every file of that name."""
    paths = [(m.start(), m.group().strip(".")) for m in _PATH_RE.finditer(goal)]
    for mention in re.finditer(rf"\b{re.escape(name)}\b", goal):
        nearest = min(paths, key=lambda p: abs(p[0] - mention.start()), default=None)
        if nearest and (nearest[1] == rel or ("/" not in nearest[1] and rel.rsplit("/", 1)[-1] == nearest[1])):
            return True
    return False


def _added(task: GuidedTask, where: Localized) -> list[str]:
    """The functions the task names (:func:`.guided_text.task_functions`) that no file the task
    locates defines yet (the ones it adds)."""
    return absent_definitions(task_functions(task.goal), [task._read(rel) or "" for rel in where.files])


def _named(task: GuidedTask, where: Localized) -> set[str]:
    """The words a test of the task may use (:func:`.guided_text.task_words`) and every word of the
    task that names a function or class the located files define ("make run in ... end its output
    with ..." names ``run``)."""
    said = set(re.findall(r"[A-Za-z_]\w*", task.goal))
    defined = {name for rel in where.files if rel.endswith(".py")
               for text in [task._read(rel) or ""] for name in definitions_of(text) | defined_names(text)}
    return task_words(task.goal, where.symbols) | (said & defined)


def _calling(keep: set[str], text: str, path: str, words: set[str]) -> tuple[set[str], list[str]]:
    """``keep`` (:func:`.probe.kept` labels of the asked test ``text`` at ``path``) without the test
    functions that use none of the task's ``words`` (:func:`_named`: the functions it adds or names,
    its options and quoted words; :func:`.symbols.tests_unrelated`), and those left out, in order. A
    test function of other code that fails on the code as it is asserts something of its own
    (``slugify("Ada Lovelace") == "al"`` in the test of a new ``initials``; a made-up ``low_stock()``
    beside the test of ``total_value(category=...)``): locked as the asked test, no change could pass
    it. When the whole file fails for the task (a collection error: it imports a name the task adds),
    its functions' own outcomes are unknown: the ones that use the task's words are kept, if any.
    Nothing is left out when the task names nothing the code has or adds (a bug report in plain words)."""
    if not words:
        return keep, []
    unrelated = set(tests_unrelated(text, words))
    if probes.file_label(path) in keep:
        related = set(test_labels(text)) - unrelated
        return (related, sorted(unrelated)) if related and unrelated else (keep, [])
    return keep - unrelated, sorted(unrelated & keep)


def _trim(task: GuidedTask, path: str, keep: set[str]) -> None:
    """Keep only the test functions that fail for the task (a collection error that fails for the
    task keeps the whole file)."""
    text = task._read(path) or ""
    if probes.file_label(path) in keep:
        return
    try:
        trimmed = probes.keep_only(text, keep)
    except SyntaxError:
        return
    if trimmed != text:
        named_files.forget_bytecode(task.root, path)
        (task.root / path).write_text(trimmed, encoding="utf-8")


async def ask_tests(task: GuidedTask, attempt: Attempt, where: Localized, known: list[str], default: str | None,
                    messages: list[dict[str, Any]]) -> None:
    """Ask for the tests the task asks for (after the change) and place them in the test file.

    A reply cut inside its ``parametrize`` table before any test function keeps its complete
    rows, the table closed, and the model is asked for the one function under it (:mod:`.cuttable`;
    that answer, when cut itself or unusable, is dropped). A
    reply cut at ``max_tokens`` before one whole test function otherwise (or whose function could
    not be had) is asked once more, afresh, with :data:`.guided_text.CUT_TABLE`: a small model can list
    one parametrize row per value (``n=1``, ``n=2``, ...) until the cut, attempt after attempt, and
    its repairs send the same table back, cut again."""
    assert where.test_file is not None
    module = module_name(default) if default else "the module under test"
    source = task._read(default) if default else None
    code = f"\n\nThe code under test, {default}:\n{numbered(source)}" if source else ""
    example = example_test(where, known, task._read, task.goal)
    shown = test_context(task, where, known, example)
    how = (TEST_HOW_EXAMPLE if example else TEST_HOW).format(module=module)
    cls = fixture_class(task._read(example) or "", task.goal) if example else None
    request = (TEST_ASK_CLASS.format(test_file=where.test_file, cls=cls, module=module) if cls
               else TEST_ASK.format(test_file=where.test_file, how=how))
    ask = [{"role": "system", "content": SYSTEM},
           {"role": "user", "content": f"Task:\n{task.goal}{code}{shown}\n\n{request}{adds_sentence(task.goal)}"}]
    if task._out_of_time():
        return
    reply = await task._ask(ask, attempt.temperature, attempt.number, TESTS_STEP, constrained=True)
    blocks = _test_blocks(task, reply)
    cut = task.last_finish == "length" and not any("def test" in b.code for b in blocks)
    table = closed_table(reply) if cut and task.enabled("cut-table") else None
    if table is not None:
        task.acted("cut-table")
    if table is not None and not task._out_of_time():  # cut inside its table: the function under it, alone
        closed, names = table
        under = [ask[0], {"role": "user", "content": f"Task:\n{task.goal}{code}\n\n" + TABLE_FUNCTION.format(
            test_file=where.test_file, code=closed, names=", ".join(names))}]
        answer = await task._ask(under, attempt.temperature, attempt.number, "table function", constrained=False)
        taken = {label for label in test_labels(task._read(where.test_file) or "") if "." not in label}
        function = table_function(answer, names, taken) if task.last_finish != "length" else None
        if function is not None:
            reply = f"```python\n{closed}\n{function}```\n"
            blocks = blocks_of(reply)
    if cut and not any("def test" in b.code for b in blocks) and not task._out_of_time():
        # cut before one whole test function: asked once more, afresh, for a few plain asserts
        again = [*ask[:-1], {"role": "user", "content": f"{ask[-1]['content']}\n{CUT_TABLE}"}]
        reply = await task._ask(again, round(min(1.0, attempt.temperature + 0.2), 2), attempt.number, TESTS_STEP,
                                constrained=True)
        blocks = _test_blocks(task, reply)
    # asked for the test file: a block that names no file goes there, whatever it defines
    planned = task._plan([Block(where.test_file, code=b.code) if b.path is None and b.search is None else b
                          for b in blocks], where, known, default)
    attempt.placement_failures += len(planned.failures)
    task.stats.placement_failures += len(planned.failures)
    await task._write(planned)
    attempt.actions.extend(planned.actions)
    # the conversation goes on with the test ask and the model's own answer as its turn: seeded
    # instead with a made-up "Understood." turn, a small model answered the next ask "Understood."
    fresh = len(messages) <= 1  # nothing asked yet in it (a task that asks for tests alone)
    messages.append({"role": "user", "content": ask[-1]["content"] if fresh else request})
    messages.append({"role": "assistant", "content": reply[:3000]})


__all__ = ["ASKED_TEST_ASK", "LOCKED", "NO_ASKED_TEST", "ask_tests", "asked_test_path", "wants_asked_test", "write_asked_test"]
