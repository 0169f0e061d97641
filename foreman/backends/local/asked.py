"""Guided mode's tests: the test of the asked behaviour, written first, and the tests a task asks for.

**The asked test** (issue 13). A task that asks for no test ("make ``run_search`` print a last
line 'N matching notes'") is checked by the repository's own tests only, which were written
before the task and do not cover the new behaviour. A small model then passes the checks with a
change that does something else (the 1.5B bench run printed ``N matching notes: 2`` through a new
``--count`` option), and the task was merged: a false success. So before the model changes any
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
  false success this closes. The cost: a task that asks for no new behaviour (a pure refactor)
  cannot get such a test; guided mode then blocks, and ``"askedTest": false`` in the profile
  turns the step off.
- *Its first cases only*: the first two test functions, each to its third assert, are placed
  (:func:`.probe.first_checks`): the 1.5B model lists the plain cases first and makes up the
  later ones, and a made-up case would lock the attempt into failure.
- *It checks every target*: when the attempt changed two or more files, the asked test must
  fail with any one file the task asks to change put back as it was (:func:`unchecked_targets`);
  a test of one half of the task does not let the other half through.
- *It stays fixed for the attempt*: the edit and repair answers may not change it (a block for
  it is refused and told back), so a wrong change cannot pass by weakening its test. A test that
  is itself wrong fails every repair; the next attempt (from the same clean start) asks a new
  one. Either way the task never ends ``done`` with a change its test did not pass.
- *It is kept*: the passing test is part of the commit, so the conductor's CI and later tasks
  run it too.

It is asked only when the task asks for no test (a task that asks for one gets the tests it
asks for, :func:`ask_tests`), a check command exists to run it, and the profile's
``asked_test`` is on (the default).
"""

from __future__ import annotations

import ast
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import commands
from . import named as named_files
from . import probe as probes
from .answers import Block, blocks_of, blocks_of_json, complete_part
from .cuttable import closed_table, table_function
from .guided_text import (
    CUT_OFF_TEST,
    CUT_TABLE,
    SYSTEM,
    TABLE_FUNCTION,
    TEST_ASK,
    TEST_ASK_CLASS,
    TEST_HOW,
    TEST_HOW_EXAMPLE,
    adds_sentence,
    asked_functions,
)
from .localize import Localized, is_test_file, module_name, numbered
from .signatures import api_text, imported_files
from .symbols import defined_names, module_bindings, test_labels, used_words

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
"""The asked test's request. "At most three asserts": asked for "test functions" with no bound, the
1.5B model's asked tests for count_matches ran to max_tokens in both asks of an attempt (one
assert after another), the first three right and the later ones made up (``count_matches(NOTES,
"milk eggs budget") == 3`` where every word must match, so 0); another attempt's test expected
``count_matches(NOTES, "milk") == 1`` against two notes holding "milk" (bench s10-q15-2, task 5).
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


def task_functions(goal: str) -> list[str]:
    """The functions a task names, in order: those it asks for (:func:`.guided_text.asked_functions`)
    and every ``name(`` of its text."""
    return list(dict.fromkeys([*asked_functions(goal), *re.findall(r"\b([A-Za-z_]\w*)\(", goal)]))


def each_target_sentence(goal: str, where: Localized) -> str:
    """The sentence the asked-test request ends with when the task asks to change two or more files
    (:attr:`.localize.Localized.targets`), else "": each file with what the task asks of it there (the
    functions it adds or calls with their arguments there, ``name(``, :func:`_places`; else the existing
    names it names in that file). Asked
    for "a test function for each thing the task asks for", the 1.5B model's asked tests for "add
    count_matches to search.py, then make run_search print 'N matching notes'" tested count_matches
    alone in 9 attempts of 15, which then ended ``target unchecked`` (bench s13-q15-*, s14-q15-*)."""
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


def example_test(where: Localized, known: list[str], read=None, goal: str = "") -> str | None:
    """One of the repository's tests to show as an example; None when there is none.

    The first of, in this order: a test that imports a target (or the main file); a
    ``tests/test_<stem>.py`` of one that imports no other module of that stem; the test holding
    the most of the words both the task and a target's code use (:func:`code_words`), those in
    every test aside (ties: the first in ``known``). Chosen by stem alone, the 1.5B model was shown ``tests/test_notes.py``
    (the ``Note`` class's test) for a change to ``commands/notes.py`` and wrote tests that build
    notes by hand and call ``run_list`` with made-up arguments, in every attempt of three whose
    code was right (bench s8-q15-m1, task 6); the CLI's test shows how a command is run.

    Args:
        read: ``read(rel) -> str | None``; without it only the stem rule is used.
        goal: the task's text (for the last rule).
    """
    sources = [*where.targets, *([where.target] if where.target else [])]
    stems = [Path(rel).stem for rel in sources]
    tests = [rel for rel in known if is_test_file(rel)]
    if not tests:
        return None
    texts = {rel: (read(rel) or "") if read else "" for rel in tests}
    imports = {rel: imported_files(texts[rel], rel, known) for rel in tests}
    for rel in tests:
        if any(source in imports[rel] for source in sources):
            return rel
    for stem in stems:
        for rel in tests:
            others = [f for f in imports[rel] if Path(f).stem == stem and f not in sources]
            if rel.rsplit("/", 1)[-1] == f"test_{stem}.py" and not others:
                return rel
    if not read:
        return tests[0]
    words = {rel: set(re.findall(r"[A-Za-z_]\w*", texts[rel])) for rel in tests}
    in_code = set().union(*[code_words(read(rel) or "") for rel in sources])
    wanted = (set(re.findall(r"[A-Za-z_]\w*", goal)) & in_code) - set.intersection(*words.values())
    return max(tests, key=lambda rel: (len(words[rel] & wanted), -tests.index(rel)))


def code_words(text: str) -> set[str]:
    """The names a Python file's code uses (variables, attributes, definitions, parameters) and
    its one-word string constants (``"list"`` of ``add_parser("list")``); docstrings and other
    prose aside. Empty when the text does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    return used_words(tree, _one_word, definitions=True)


_Test = ast.FunctionDef | ast.AsyncFunctionDef
"""A test function or method."""


def example_excerpt(text: str, goal: str) -> str:
    """A short excerpt of an example test file: its imports and the one test function (a method
    with its class line, its class's ``setUp``) whose code uses most of the task's words, else its
    first. The whole file was shown at first; the 1.5B model then copied it as its answer (a test
    that passes on the unchanged code), twice at temperature 0.1. The text is returned whole when
    it does not parse.

    A test's words are its names, attributes and one-word string constants (``"list"``, ``"add"``),
    compared case-aside, each counted once: counted as every word of its text, the test of an empty
    list won for ``--limit`` (``"notes add"`` in its message) over the one that adds notes and
    lists them, and the 1.5B model's tests then listed notes it never added (bench s9-q15-f1, task 6).
    """
    chosen = _chosen(text, goal)
    if chosen is None:
        return text
    tree, node, func = chosen
    lines = text.split("\n")
    imports = [ast.get_source_segment(text, n) or "" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    body = "\n".join(lines[func.lineno - 1 - len(func.decorator_list):func.end_lineno])
    shown = f"{lines[node.lineno - 1]}\n{_fixtures(node, lines)}    ...\n{body}" if node is not func else body
    constants = _constants(tree, text, [func, *(_setups(node) if node is not func else [])])
    head = "\n".join([*imports, *(["", *constants] if constants else [])])
    return head + "\n\n\n" + shown + "\n"


def _chosen(text: str, goal: str) -> tuple[ast.Module, ast.ClassDef | _Test, _Test] | None:
    """``(tree, node, test)`` of the test :func:`example_excerpt` shows (``node`` is its class, or
    the test itself at the top level); None when the text does not parse or holds no test."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    words = {w.lower() for w in re.findall(r"[A-Za-z_]\w{2,}", goal)}
    found: list[tuple[int, int, ast.ClassDef | _Test, _Test]] = []  # (-hits, order, node, test)
    for node in tree.body:
        inside = node.body if isinstance(node, ast.ClassDef) else [node]
        for func in inside:
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and func.name.startswith("test"):
                hits = len({w.lower() for w in used_words(func, _one_word, definitions=False)} & words)
                found.append((-hits, len(found), node if isinstance(node, ast.ClassDef) else func, func))  # (func is node)
    if not found:
        return None
    _, _, node, func = min(found, key=lambda row: row[:2])
    return tree, node, func


def fixture_class(text: str, goal: str) -> str | None:
    """The name of the class of the test :func:`example_excerpt` shows when that class has a
    ``setUp`` (its tests stand on what it makes), else None. Asked for "test functions" beside
    such an excerpt (test_cli.py's ``setUp`` makes ``self.path``), the 1.5B model's ``--limit``
    tests listed ``"notes.json"`` without adding a note, in every attempt (s10-q15-1, task 6)."""
    chosen = _chosen(text, goal)
    if chosen is None or chosen[1] is chosen[2] or not _setups(chosen[1]):
        return None
    return chosen[1].name


def _constants(tree: ast.Module, text: str, nodes: list[ast.AST]) -> list[str]:
    """The module-level assignments ``nodes`` (the shown test and its fixtures) need, as written, in
    the file's order: those of the names it uses, and of the names those use. The excerpt of
    test_formatting.py showed a test using ``NOW`` without ``NOW = datetime(...)``; the 0.5B
    model's tests for format_age then used NOW undefined, right in all else (bench probe, 2 December)."""
    assigned = {}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                assigned[target.id] = stmt
    needed: set[int] = set()
    todo = list(nodes)
    while todo:
        for name in used_words(todo.pop(), lambda value: []) & assigned.keys():
            stmt = assigned[name]
            if id(stmt) not in needed:
                needed.add(id(stmt))
                todo.append(stmt)
    return [ast.get_source_segment(text, stmt) or "" for stmt in tree.body if id(stmt) in needed]


def _one_word(value: str) -> list[str]:
    """``[value]`` when a string constant is one word (``"list"``), else []."""
    return [value] if re.fullmatch(r"[A-Za-z_]\w*", value) else []


def _setups(node: ast.AST) -> list[ast.FunctionDef]:
    """The ``setUp``/``tearDown`` methods (and their class forms) of a test class."""
    return [func for func in getattr(node, "body", [])
            if isinstance(func, ast.FunctionDef) and func.name in ("setUp", "tearDown", "setUpClass", "tearDownClass")]


def _fixtures(node: ast.AST, lines: list[str]) -> str:
    """The ``setUp``/``tearDown`` methods of a test class, as written, each followed by a blank
    line ("" for none): an excerpt whose test uses ``self.path`` is not runnable without the
    ``setUp`` that makes it."""
    found = _setups(node)
    return "".join("\n".join(lines[f.lineno - 1 - len(f.decorator_list):f.end_lineno]) + "\n\n" for f in found)


def _test_bodies(text: str) -> list[tuple[str, str]]:
    """``(name, ast dump of its body)`` of every test function or method in ``text`` ([] when it
    does not parse)."""
    return [(label.rsplit(".", 1)[-1], ast.dump(ast.Module(body=node.body, type_ignores=[])))
            for label, node in test_labels(text).items()]


def copied_tests(text: str, example: str) -> list[str]:
    """The test functions of ``text`` whose body is one of ``example``'s test bodies, statement for
    statement (``ast``; names, comments and blank lines aside). The 1.5B model answered the
    asked-test request for the search summary line with the example's ``test_cli`` as shown, at
    temperatures 0.1, 0.3, 0.45 and 0.65 (bench s8-q15-r1, task 5), though told not to repeat it.

    Returns:
        The copied functions' names, in the order of ``text``.
    """
    seen = {body for _, body in _test_bodies(example)}
    return [name for name, body in _test_bodies(text) if body in seen]


def test_context(task: GuidedTask, where: Localized, known: list[str], example: str | None) -> str:
    """What a test ask shows beside the localized files: an excerpt of ``example``, one of the
    repository's tests (:func:`example_test`, :func:`example_excerpt`), and the signatures of
    what a test would call (:mod:`.signatures`: the repository modules the example and the
    targets import, those not already shown whole); "" when there is neither."""
    parts = []
    sources = [example] if example else []
    if example:
        parts.append(f"How this repository writes a test (an excerpt of {example}, for its style only: do not "
                     f"repeat it):\n```python\n{example_excerpt(task._read(example) or '', task.goal)}```")
    sources += [*where.targets, *([where.target] if where.target else [])]
    modules = [found for rel in dict.fromkeys(sources) for found in imported_files(task._read(rel) or "", rel, known)]
    api = api_text([rel for rel in dict.fromkeys(modules) if rel not in where.files], task._read)
    if api:
        parts.append(f"What a test can call (signatures, from files not shown above):\n```python\n{api}\n```")
    return "".join(f"\n\n{part}" for part in parts)


def _test_blocks(task: GuidedTask, reply: str) -> list[Block]:
    """The blocks of a test reply; of one cut at max_tokens, those of its complete part
    (:func:`.answers.complete_part`: the test functions before the one the cut went through)."""
    text = complete_part(reply) if task.last_finish == "length" else reply
    return (blocks_of_json(reply) if task.response_format else []) or blocks_of(text)


def _only_tests(blocks: list[Block], path: str) -> list[Block]:
    """The blocks that hold test functions, each sent to ``path`` (whatever file they named), with
    its first two test functions and their first three asserts only (:func:`.probe.first_checks`)."""
    return [Block(path, code=probes.first_checks(b.code)) for b in blocks if b.search is None and "def test" in b.code]


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
    for asked in range(2):
        if task._out_of_time():
            attempt.outcome = "out of time"
            return None
        temperature = round(min(1.0, attempt.temperature + 0.2 * asked), 2)  # the same ask again: sample wider
        reply = await task._ask(messages, temperature, attempt.number, "asked test", constrained=True)
        messages.append({"role": "assistant", "content": reply})
        blocks = _test_blocks(task, reply)
        planned = task._plan(_only_tests(blocks, path), where, known, default)
        if not planned.texts.get(path):
            problem = "; ".join(planned.failures) or "the answer holds no test function"
            if task.last_finish == "length":  # most often one line repeated until max_tokens
                problem = f"the answer was cut off at max_tokens ({task.profile.max_tokens}); {problem}"
                ask = CUT_OFF_TEST.format(path=path)
            else:
                ask = f"That could not be used: {problem}\nWrite the test functions in one ```python block for {path}."
            attempt.outcome, attempt.detail = NO_ASKED_TEST, problem
            messages.append({"role": "user", "content": ask})
            continue
        await task._write(planned)
        attempt.actions.extend(planned.actions)
        outcomes = await _probe(task, attempt, path, where)
        if outcomes:
            keep = probes.narrowed(probes.kept(outcomes), outcomes, task._read(path) or "", path)
            if keep:
                _trim(task, path, keep)
                task.locked = path
                return task._read(path)
            task._drop(path)
            del attempt.actions[len(attempt.actions) - len(planned.actions):]
            whole = str(Path(path).with_suffix("")).replace("/", ".")  # the file failed to import a new name
            unused = [o.detail for o in outcomes if o.kind == "new name" and o.function == whole]
            problem = probes.reasons(outcomes) or "".join(
                f"- no test function uses what fails to import ({line[:160]})" for line in unused[:1])
            own = next((o for o in outcomes if o.kind == "own error"), None)
            copied = [] if own else copied_tests(planned.texts[path], example_text)
            attempt.outcome = NO_ASKED_TEST
            attempt.detail = (f"{own.name} failed on an error of its own: {own.detail[:160]}" if own
                              else f"the example test repeated ({', '.join(copied)})" if copied
                              else f"no test function uses the new name it imports: {unused[0][:160]}" if unused
                              else "the test passed on the unchanged code")
            messages.append({"role": "user", "content": COPIED.format(names=", ".join(copied), example=example)
                             if copied else NOT_FOR_THE_TASK.format(reasons=problem, path=path)})
            continue
        ok, summary = await task._check()
        if not ok and (path in summary or "pytest" not in (task.ci_command or "")):
            task.locked = path
            return task._read(path)
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


async def _probe(task: GuidedTask, attempt: Attempt, path: str, where: Localized,
                 step: str = "asked test probe") -> list[probes.ProbeOutcome]:
    """Run the placed test alone on the unchanged code and sort its functions (:mod:`.probe`);
    [] when the check command is not plain pytest or wrote no usable report."""
    with tempfile.TemporaryDirectory(prefix="foreman-probe-") as tmp:
        report = Path(tmp) / "report.xml"
        command = probes.probe_command(task.ci_command, path, str(report))
        if command is None:
            return []
        started = task.clock()
        try:
            await commands.run_command(command, cwd=task.root, env=dict(task.req.env) or None,
                                       extra_env=named_files.NO_BYTECODE,
                                       timeout=task.ci_timeout, max_output=4000, on_start=task.tools.track_process)
        finally:
            task.stats.checks_s += task.clock() - started
        xml = report.read_text(encoding="utf-8", errors="replace") if report.is_file() else ""
    existing = {word for rel in where.files for word in re.findall(r"[A-Za-z_]\w*", task._read(rel) or "")}
    outcomes = probes.classify(xml, path, task.goal, existing)
    task._trace(attempt.number, step, attempt.temperature, "", None,
                outcomes=[[o.name, o.kind, o.detail[:300]] for o in outcomes])
    return outcomes


async def _probe_without(task: GuidedTask, attempt: Attempt, path: str, where: Localized,
                         before: dict[str, bytes | None], step: str) -> list[probes.ProbeOutcome]:
    """Run the test file ``path`` as :func:`_probe` does with the files of ``before`` put back as
    they were (``before``: their bytes before the attempt, None for a file it created), then
    write them back as they are now, whatever the run did."""
    now = named_files.snapshot(task.root, before)
    try:
        named_files.put_back(task.root, before, {})
        return await _probe(task, attempt, path, where, step)
    finally:
        named_files.put_back(task.root, before, now)


PASSES_WITHOUT = "the new tests pass without the change"
"""The outcome of an attempt whose checks passed but whose requested tests pass on the old code too."""
PASSES_WITHOUT_ASK = ("The checks pass, but {names} in {path} also pass on the code as it was before your change, so "
                      "they do not show the task is done. Write test functions for {path} that fail on the old code "
                      "and pass on the new (the exact values or text the task states), in one ```python block whose "
                      "first line is `# file: {path}`. No explanations.")


async def proves_the_change(task: GuidedTask, attempt: Attempt, path: str, where: Localized,
                            new: list[str]) -> list[str]:
    """Run the attempt's new tests of ``path`` on the code as it was (every changed file that is
    not a test put back for the run, then restored): the test a task asks for must fail there,
    as the asked test must (:mod:`.probe`). The 0.5B model's constrained format_age answer
    rewrote the function unchanged in meaning, so its checks passed (bench s8-q05-c1).

    Args:
        new: the test functions the attempt added to ``path`` (names).

    Returns:
        The new test functions that pass (or are skipped, xfail included) on the old code when
        every one of them does, or all of ``new`` when none of them ran while the file's other
        tests passed (a class pytest does not collect), or when the file failed to collect on a
        missing name none of them uses (a review's path: the file imports count_matches, its test
        checks the old find): they prove nothing. [] when one fails there, on another collection
        error, when the run cannot tell (not plain pytest, no report), or when no other file
        changed.
    """
    code = {rel: data for rel, data in task.original.items() if rel != path and not is_test_file(rel)}
    if not code or not new:
        return []
    outcomes = await _probe_without(task, attempt, path, where, code, "tests probe")
    whole = str(Path(path).with_suffix("")).replace("/", ".")  # a collection error's label, not a test's
    mine = [o for o in outcomes if o.function != whole and o.function.rsplit(".", 1)[-1] in new]
    if not mine:  # none of them ran: beside passing tests they were never collected; a collection error
        if outcomes and all(o.kind in ("passed", "skipped") for o in outcomes):
            return list(new)
        text = task._read(path) or ""  # fails them only when one uses the name the file could not import
        names = {name for o in outcomes if (found := _missing_name(o.detail))
                 for name in ([found[0]] if found[0] else _module_names(task, found[1]))}
        users = {label.rsplit(".", 1)[-1] for label in probes.using(text, names)} if names else set(new)
        return [] if users & set(new) else list(new)
    if any(o.kind not in ("passed", "skipped") for o in mine):  # skipped (or xfail) shows nothing
        return []
    return list(dict.fromkeys(o.function for o in mine))


TARGET_UNCHECKED = "target unchecked"
"""The outcome of an attempt whose checks passed but whose asked test passes without the change
to a file the task asks to change (:func:`unchecked_targets`)."""


async def unchecked_targets(task: GuidedTask, attempt: Attempt, where: Localized) -> list[str]:
    """The targets (files the task asks to change, :attr:`.localize.Localized.targets`, and the other
    files to which the attempt added a function the task names, ``name(`` or "function name(": a file
    it created, or one the task does not name) whose change the asked test does not need: with that
    file alone put back as it was, the test still passes, or fails only because a name is missing
    and passes once the names the task puts in that file exist as stubs (:func:`_needs`). Each run as
    the probe runs it, then the file restored.

    The asked test guards only what it tests. The 1.5B model's asked tests for "add count_matches
    to search.py, then make run_search print 'N matching notes'" tested count_matches alone, and its
    run_search printed ``N matching notes: 2``; every check passed and the task was done, a false
    success in three runs of three (bench s11-q15-c5a/b/c). A passing attempt therefore needs an
    asked test that fails without each target's change. Checked when the attempt changed two or
    more files that are not tests (with one, the probe on the unchanged code already showed it).

    Returns:
        The unchecked targets, in the task's order ([] when the run cannot tell: a check command
        that is not plain pytest, no report).
    """
    path = task.locked
    changed = [rel for rel in task.original if not is_test_file(rel)]
    if path is None or len(changed) < 2:
        return []
    named = set(task_functions(task.goal))
    adding = [rel for rel in changed if rel not in where.targets and named & (defined_names(task._read(rel) or "")
              - defined_names((task.original[rel] or b"").decode("utf-8", errors="replace")))]
    unchecked = []
    for rel in [*where.targets, *adding]:  # a file that gains definitions is the task's too (notes/count.py)
        if rel in changed and not await _needs(task, attempt, path, where, rel):
            unchecked.append(rel)
    return unchecked


async def _needs(task: GuidedTask, attempt: Attempt, path: str, where: Localized, rel: str) -> bool:
    """Whether the asked test ``path`` needs the attempt's change to ``rel`` (True when the check
    command is not plain pytest and the probe cannot run; a run that reports nothing shows nothing).

    Run once with ``rel`` put back: it passes, the change is not needed; an assert fails
    (:func:`_asserts`), it is. (A ``TypeError`` of a test calling a changed signature with its new
    argument is no check: a review's wrong changes passed with it, a test passing ``limit=None`` or
    building setup data with a new argument, whatever the argument does.) Any other failure (a missing name, a ``TypeError`` of a changed
    signature) shows only that something the test or another changed file uses is gone, so the
    test is run again with ``rel`` put back plus what the change adds there (:func:`_stubbed`): each
    definition the change adds to that file alone (to no other changed file) as a stub whose calls
    return one sentinel object (:data:`_STUB_VALUE`), its new imports and other new bindings as they are. An assert failing there
    shows the test checks what those definitions do; anything else shows nothing.

    Why a behavioural check: the 1.5B model's asked test imported count_matches from the command
    module, which the change merely imported (re-exported): every target "failed" without its
    change and the command's printed line went unchecked (bench s14-q15-1, a false success). Read
    statically (does a test or another changed file use the name?), reviews got the same through a
    module attribute, a star import, an assignment, a wrapper ``def``, an import chain and code no
    test runs. Its limits (three reviews', stop 15): an error beside a stub is no check, so a test that
    uses the new function's result other than by comparing it (``> 0``, ``len(...)``, a file it
    writes, an exception class it raises) cannot check that file; a test that reaches the code
    through a subprocess or a ``main()`` that turns errors into an exit status sees an error of the
    put-back file as an assert; a test calling a changed signature with its new argument (``find(...,
    limit=2)``) cannot check that file (refused); a file counts as checked when one of its changes is.
    """
    if probes.probe_command(task.ci_command, path, "report.xml") is None:
        return True  # not plain pytest: only the checks' exit status can be read
    original = task.original[rel]
    outcomes = await _probe_without(task, attempt, path, where, {rel: original}, "target probe")
    if any(_asserts(o) for o in outcomes):
        return True
    if outcomes and all(o.kind in ("passed", "skipped") for o in outcomes):
        return False  # (no outcome at all: pytest stopped before the tests, e.g. a conftest.py failed to import)
    others = set().union(*(defined_names(task._read(f) or "") for f in task.original if f != rel and not is_test_file(f)))
    shim = _stubbed((original or b"").decode("utf-8", errors="replace"), task._read(rel) or "", others)
    if shim is None:
        return True
    outcomes = await _probe_without(task, attempt, path, where, {rel: shim.encode()}, "target stub probe")
    return any(_asserts(o) for o in outcomes)


def _asserts(outcome: probes.ProbeOutcome) -> bool:
    """Whether a test function failed on what it checks: an ``assert`` (or ``pytest.raises``'s
    ``Failed: DID NOT RAISE``), not an error on the way."""
    return outcome.kind == "asserts" or outcome.detail.startswith(("Failed: DID NOT RAISE", "AssertionError"))


_STUB_VALUE = "_foreman_stub_value = object()"
"""What every stub returns: one object, so a test that computes its expected value with the new
function (``expected = count_matches(...)``, then compares the command's line with it) gets the same
value from both calls and passes beside the stub (a fresh ``object()`` per call differed in its
repr and made it a check; a review's case)."""
_STUB_DEF = "def {name}(*args, **kwargs):\n    return _foreman_stub_value"
_STUB_CLASS = ("class {name}:\n    def __init__(self, *args, **kwargs):\n        pass\n\n"
               "    def __getattr__(self, name):\n        return lambda *args, **kwargs: _foreman_stub_value")


def _stubbed(old: str, new: str, others: set[str]) -> str | None:
    """``old`` (a file's text before the attempt) with what the attempt's version ``new`` adds at its
    top level: every import of ``new`` (``__future__`` ones aside, which may only open a file), then
    a stub of each ``def``/``class`` that ``new`` adds and ``others`` (the names the other changed
    files define) lacks, then every other new binding as ``new`` has it (a re-export, an assignment,
    a wrapper ``def`` also in another file). A function's stub returns the sentinel whatever it is
    called with; a new class's stub takes any arguments and its methods return the sentinel; a class
    ``new`` gives new methods becomes a subclass of the old one with those methods as stubs. A
    definition ``new`` changes stays as ``old`` has it: without the change is as it was. None when
    ``new`` does not parse."""
    try:
        tree = ast.parse(new.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return None
    try:
        before = {n.name: n for n in ast.parse(old.replace("\r\n", "\n")).body if isinstance(n, _DEFS)}
    except (SyntaxError, ValueError):
        before = {}
    had = module_bindings(old) or set()
    text, imports, stubs, rest = new.replace("\r\n", "\n"), [], [], []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                imports.append(ast.get_source_segment(text, node) or "")
        elif isinstance(node, _DEFS) and node.name in before:
            earlier = before[node.name]
            if isinstance(node, ast.ClassDef) and isinstance(earlier, ast.ClassDef):
                stubs.extend(_new_methods(node, earlier))
        elif isinstance(node, _DEFS) and node.name not in had:
            stubs.append(ast.get_source_segment(text, node, padded=True) or "" if node.name in others
                         else _STUB_DEF.format(name=node.name) if not isinstance(node, ast.ClassDef)
                         else _STUB_CLASS.format(name=node.name))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id not in had for t in targets):
                rest.append(ast.get_source_segment(text, node) or "")
    return old.rstrip("\r\n") + "\n\n" + "\n\n\n".join([*imports, _STUB_VALUE, *stubs, *rest]) + "\n"


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _new_methods(node: ast.ClassDef, old: ast.ClassDef) -> list[str]:
    """A subclass of the old class ``old`` with a stub of each method ``node`` adds ([] when none)."""
    was = {m.name for m in old.body if isinstance(m, _DEFS)}
    added = [m.name for m in node.body if isinstance(m, _DEFS) and m.name not in was and not m.name.startswith("__")]
    if not added:
        return []
    methods = "".join(f"\n\n    def {m}(self, *args, **kwargs):\n        return _foreman_stub_value" for m in added)
    return [f"class {node.name}({node.name}):\n    pass{methods}"]


_MISSING_NAME_RE = re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'"
                              r"|module '(?P<module2>[\w.]+)' has no attribute '(?P<name2>\w+)'"
                              r"|No module named '(?P<module3>[\w.]+)'")


def _missing_name(detail: str) -> tuple[str, str] | None:
    """``(name, module)`` of an error about a name a module lacks (``cannot import name 'x' from
    'm'``, ``module 'm' has no attribute 'x'``; name "" for ``No module named 'm'``), else None."""
    found = _MISSING_NAME_RE.search(detail)
    if not found:
        return None
    return found["name"] or found["name2"] or "", found["module"] or found["module2"] or found["module3"]


def _module_names(task: GuidedTask, module: str) -> set[str]:
    """The names a module the attempt created defines (for ``No module named 'm'``); set() when
    the attempt created no such file."""
    return set().union(*(defined_names(task._read(rel) or "") for rel, data in task.original.items()
                         if data is None and module_name(rel) == module))


_PATH_RE = re.compile(r"[\w./-]+\.py\b")


def _places(goal: str, name: str, rel: str) -> bool:
    """Whether the task puts ``name`` in ``rel``: the file named nearest to a mention of ``name``
    in the task's text is ``rel`` ("Add count_matches(...) to notes/search.py ... make run in
    notes/commands/search.py ..." puts count_matches in notes/search.py only); a bare file name
    ("search.py") names every file of that name."""
    paths = [(m.start(), m.group().strip(".")) for m in _PATH_RE.finditer(goal)]
    for mention in re.finditer(rf"\b{re.escape(name)}\b", goal):
        nearest = min(paths, key=lambda p: abs(p[0] - mention.start()), default=None)
        if nearest and (nearest[1] == rel or ("/" not in nearest[1] and rel.rsplit("/", 1)[-1] == nearest[1])):
            return True
    return False


def _trim(task: GuidedTask, path: str, keep: set[str]) -> None:
    """Keep only the test functions that fail for the task (a collection error that fails for the
    task keeps the whole file)."""
    text = task._read(path) or ""
    if str(Path(path).with_suffix("")).replace("/", ".") in keep:
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
    not be had) is asked once more, afresh, with :data:`.guided_text.CUT_TABLE`: the 1.5B model's
    format_age tests listed one parametrize row a day (``days=1``, ``days=2``, ...) until the cut,
    in both attempts, and its repairs sent the same table back, cut again (bench s12-q15-11)."""
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
    reply = await task._ask(ask, attempt.temperature, attempt.number, "tests", constrained=True)
    blocks = _test_blocks(task, reply)
    cut = task.last_finish == "length" and not any("def test" in b.code for b in blocks)
    table = closed_table(reply) if cut else None
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
        reply = await task._ask(again, round(min(1.0, attempt.temperature + 0.2), 2), attempt.number, "tests",
                                constrained=True)
        blocks = _test_blocks(task, reply)
    # asked for the test file: a block that names no file goes there, whatever it defines
    planned = task._plan([Block(where.test_file, code=b.code) if b.path is None and b.search is None else b
                          for b in blocks], where, known, default)
    attempt.placement_failures += len(planned.failures)
    task.stats.placement_failures += len(planned.failures)
    await task._write(planned)
    attempt.actions.extend(planned.actions)
    messages.append({"role": "user", "content": "Tests were added:\n" + reply[:2000]})
    messages.append({"role": "assistant", "content": "Understood."})


__all__ = ["ASKED_TEST_ASK", "NO_ASKED_TEST", "TARGET_UNCHECKED", "unchecked_targets", "PASSES_WITHOUT", "PASSES_WITHOUT_ASK", "ask_tests", "asked_test_path", "copied_tests", "example_excerpt",
           "example_test", "fixture_class", "proves_the_change", "test_context", "wants_asked_test", "write_asked_test"]
