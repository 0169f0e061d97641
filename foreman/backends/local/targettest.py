"""A test for a target the asked test does not check (issue 13).

A passing attempt must have an asked test that fails without each target's change
(:func:`.asked.unchecked_targets`). The 1.5B model's asked tests for "add ``count_matches`` to
search.py, then make ``run_search`` print a last line 'N matching notes'" checked
``count_matches`` alone in every attempt of five runs (bench s11-q15-d5a/b: each attempt ended
``target unchecked``), and its ``run_search`` printed ``N matching notes: 2``. The asked test was
asked from the whole task, and the test shown as an example was a ``search()`` test, so the
command half got no test. So before such an attempt ends, the model is asked once, in a fresh
conversation, for one test of that file's part alone:

- what it is shown: the task's sentences about the file (:func:`.named.said_of`), the file as it
  was before the attempt (a test written from the changed code tends to assert the change), and
  a repository test that *reaches* the file through its imports (:func:`reaching_tests`: the
  search command is run through ``helpers.run_cli`` -> ``cli.main`` -> the ``commands`` package),
  as its example;
- the rule it must pass: placed beside the asked test, its new functions must fail for the task
  (:mod:`.probe`) with that file alone put back as it was, as the asked test must on the
  unchanged code. One that does not is taken out and the attempt ends ``target unchecked``;
- then the checks run on the attempt's code: when they pass the attempt passes; when they fail,
  the file's definitions the task names (else those the attempt changed) are asked for once
  more, with the failure (:data:`TARGET_FIX`).
  The test stays fixed, so a wrong change cannot pass by weakening it.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Iterable

from . import named as named_files
from . import probe as probes
from .answers import Block, Planned, blocks_of, blocks_of_json, only_definitions
from .asked import example_excerpt, blocks_of_tests, probe_without
from .guided_text import SYSTEM
from .localize import Localized, is_test_file, numbered
from .signatures import imported_files
from .symbols import test_labels, used_words

if TYPE_CHECKING:
    from .guided import Attempt, GuidedTask

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

TARGET_TEST_ASK = (
    "Task:\n{goal}\n\n{path} as it was before any change:\n```python\n{shown}\n```\n{example}\n"
    "The test in {test} checks other parts of the task, not this one: {said}\nWrite one test function that "
    "checks exactly this part (the exact text printed, the exact values returned), with at most three plain "
    "asserts on the simplest case. It must fail on the code above. One ```python block whose first line is "
    "`# file: {test}`, only imports and the test function (inside its class when the example's is). No explanations.")
"""The ask for a test of one target's part of the task (:func:`check_target`), in a fresh conversation."""
TARGET_TEST_ASSERTS = 6
"""The asserts of the target test kept (its first test function's first ones, :func:`.probe.first_checks`).
Not the asked test's three: the 1.5B model's target test for the search summary line asserted the
note added, the exit code and the note's line first, and the summary line fourth; cut at three,
it passed without the command's change and was refused (bench s12-q15-2, task 5, attempt 1)."""
TARGET_FIX = (
    "Task:\n{goal}\n\nThe test {names} in {test} checks this part of the task: {said}\n```python\n{tests}```\n"
    "It fails:\n{summary}\n\n{path} now reads:\n```python\n{shown}\n```\n\nSend only {defs}, complete from the def "
    "line to the end, changed so that the test passes, in one ```python block whose first line is `# file: {path}`. "
    "No explanations.")
"""The ask for a fix when the checks fail on the target test (:func:`check_target`), in a fresh
conversation: only that file's definitions of the answer are placed."""


def _imports(node: ast.stmt, text: str, rel: str, known: set[str]) -> list[str]:
    """The repository files one import statement brings in: the modules it names
    (:func:`.signatures.imported_files`) and, for ``from pkg import sub``, the submodule
    ``pkg/sub.py``; a package imported as an object (``from pocket_notes import commands``) brings
    every module in its folder too, as a plugin package loads them (``pkgutil.iter_modules``)."""
    found = imported_files(ast.get_source_segment(text, node) or "", rel, known)
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        base = node.module.replace(".", "/")
        for alias in node.names:
            if f"{base}/{alias.name}.py" in known:
                found.append(f"{base}/{alias.name}.py")
            elif f"{base}/{alias.name}/__init__.py" in known:
                folder = f"{base}/{alias.name}"
                found.extend(f for f in sorted(known) if str(PurePosixPath(f).parent) == folder)
    return list(dict.fromkeys(found))


def _module_imports(text: str, rel: str, known: set[str]) -> list[str]:
    """Every repository file ``text``'s import statements bring in (:func:`_imports`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return [f for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for f in _imports(node, text, rel, known)]


def reaching_tests(text: str, rel: str, target: str, known: Iterable[str], read) -> list[str]:
    """The labels (``test_x``, ``Class.test_x``, as :func:`.symbols.test_labels`) of the test
    functions of ``text`` (the test file ``rel``) that reach ``target``: a name the function uses is
    imported from ``target`` or from a file whose imports lead to it (followed through the
    repository's files, ``read(rel) -> str | None``). Static: a module loaded by a computed name
    is reached only through the package rule of :func:`_imports`; relative imports (``from . import
    x``) and imports inside a function are not followed. [] when the text does not parse.
    """
    files = set(known)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    origin: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            brought = _imports(node, text, rel, files)
            for alias in node.names:
                origin[(alias.asname or alias.name).split(".")[0]] = brought
    leads: dict[str, bool] = {}

    def leads_to(start: str) -> bool:
        if start not in leads:
            seen, todo = {start}, [start]
            while todo:
                current = todo.pop()
                if current == target:
                    break
                for nxt in _module_imports(read(current) or "", current, files):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            leads[start] = target in seen
        return leads[start]

    return [label for label, node in test_labels(text).items()
            if any(leads_to(f) for name in used_words(node, lambda value: []) for f in origin.get(name, []))]


def reaching_example(task: GuidedTask, known: list[str], target: str) -> tuple[str, str] | None:
    """``(test file, label)`` of the first repository test function that reaches ``target``
    (:func:`reaching_tests`), the test files in ``known``'s order; None when none does."""
    for rel in known:
        if is_test_file(rel) and rel != task.locked:
            labels = reaching_tests(task._read(rel) or "", rel, target, known, task._read)
            if labels:
                return rel, labels[0]
    return None


def changed_definitions(before: str, now: str) -> list[str]:
    """The top-level functions and classes of ``now`` that ``before`` lacks or defines otherwise
    (compared as syntax trees), in ``now``'s order; [] when either does not parse."""
    try:
        old = {n.name: ast.dump(n) for n in ast.parse(before).body if isinstance(n, _DEFS)}
        new = [n for n in ast.parse(now).body if isinstance(n, _DEFS)]
    except (SyntaxError, ValueError):
        return []
    return [n.name for n in new if old.get(n.name) != ast.dump(n)]


def _new_only(code: str, before: str) -> str:
    """``code`` (a test block) reduced to what it adds to the asked test ``before``: its imports,
    its test functions whose labels ``before`` lacks, and its other definitions and assignments
    of names ``before`` does not bind at the top level (nor import); of a class ``before`` has, its new test
    methods only. A helper or a ``setUp`` of the same name would replace the asked test's own, and
    the asked test would then check something else. "" when nothing is new or it does not parse."""
    old = set(test_labels(before))
    new = set(test_labels(code)) - old
    try:
        kept = probes.keep_only(code, new) if new else ""
        tree, old_tree = ast.parse(kept), ast.parse(before or "")
    except (SyntaxError, ValueError):
        return ""
    bound = {name for node in old_tree.body for name in _bound(node)}
    classes = {n.name for n in old_tree.body if isinstance(n, ast.ClassDef)}
    drop = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ClassDef) and node.name in classes:
            drop.extend(_span(m) for m in node.body if not (isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                                                             and f"{node.name}.{m.name}" in new))
        elif not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in new) and (
                set(_bound(node)) & bound):
            drop.append(_span(node))
    lines = kept.split("\n")
    for first, last in sorted(drop, reverse=True):
        del lines[first - 1:last]
    return "\n".join(lines) if new else ""


def _bound(node: ast.stmt) -> list[str]:
    """The top-level names a statement binds (a definition's name, an assignment's targets, the
    names an import brings)."""
    if isinstance(node, _DEFS):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _span(node: ast.stmt) -> tuple[int, int]:
    """A statement's first and last line, its decorators included."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return first, node.end_lineno or node.lineno


async def _write_test(task: GuidedTask, path: str, text: str) -> bool:
    """Write the asked test file ``path`` (locked against answers, not against the harness) through
    the task's writer and its policy check; False when the policy refused it."""
    locked, task.locked = task.locked, None
    planned = Planned(texts={path: text})
    try:
        await task._write(planned)
    finally:
        task.locked = locked
    return not planned.failures


async def check_target(task: GuidedTask, attempt: Attempt, where: Localized, known: list[str],
                       default: str | None, target: str) -> str:
    """Ask for a test of ``target``'s part of the task, place it in the asked test
    (``task.locked``), and see the attempt through it (the module's rule).

    Returns:
        "" when the test fails without ``target``'s change and the checks pass (after one fix at
        most): the attempt passes; else why not (for the attempt's detail), with the asked test
        as it was when no new test was kept.
    """
    path = task.locked
    if path is None or task._out_of_time():
        return "out of time" if path else "no asked test"
    before = task._read(path) or ""
    example = reaching_example(task, known, target)
    shown = ""
    if example:
        shown = (f"\nHow this repository tests it (an excerpt of {example[0]}):\n```python\n"
                 f"{example_excerpt(task._read(example[0]) or '', task.goal, among={example[1]})}```\n")
    original = task.original.get(target)
    names = named_files.target_definitions(target, where.symbols)
    said = named_files.said_of(task.goal, target, names)
    ask = TARGET_TEST_ASK.format(goal=task.goal, path=target, example=shown, test=path, said=said,
                                 shown=numbered(original.decode("utf-8", "replace") if original else ""))
    reply = await task._ask([{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}],
                            attempt.temperature, attempt.number, "target test", constrained=True)
    old = set(test_labels(before))
    blocks = [b for b in blocks_of_tests(task, reply) if b.search is None]
    codes = [code for b in blocks if (code := _new_only(probes.first_checks(b.code, 1, TARGET_TEST_ASSERTS),
                                                          before)).strip()]
    planned = task._plan([Block(path, code=code) for code in codes], where, known, default)
    if not codes or not planned.texts.get(path):
        return "no new test of it could be placed" + (f": {planned.failures[0][:120]}" if planned.failures else "")
    if not await _write_test(task, path, planned.texts[path]):
        return f"its test could not be written: {planned.failures[-1][:120]}"
    outcomes = await probe_without(task, attempt, path, where, {target: original}, "target test probe")
    added = set(test_labels(task._read(path) or "")) - old
    keep = probes.kept([o for o in outcomes if o.function not in old])
    if str(PurePosixPath(path).with_suffix("")).replace("/", ".") in keep:
        keep = added  # the file cannot be collected without the target's change: its new tests need it
    keep &= added
    if not keep:
        await _write_test(task, path, before)
        return "the test asked for it " + ("did not fail without its change" if outcomes else "could not be run")
    await _write_test(task, path, probes.keep_only(task._read(path) or "", old | keep))
    attempt.actions.append(f"{path}: test of {target} added ({', '.join(sorted(keep))})")
    ok, summary = await task._check()
    if ok:
        return ""
    names = names or changed_definitions(original.decode("utf-8", "replace") if original else "",
                                         task._read(target) or "")
    if not names or task._out_of_time():
        return f"the checks failed on its test: {_last_line(summary)}"
    tests = probes.keep_only(task._read(path) or "", keep)
    fix = TARGET_FIX.format(goal=task.goal, names=", ".join(sorted(keep)), test=path, said=said, tests=tests,
                            summary=summary[:1500], path=target, shown=numbered(task._read(target) or ""),
                            defs=", ".join(names))
    reply = await task._ask([{"role": "system", "content": SYSTEM}, {"role": "user", "content": fix}],
                            attempt.temperature, attempt.number, "target fix", constrained=True)
    blocks = (blocks_of_json(reply) if task.response_format else []) or blocks_of(reply)
    fixes = [Block(target, code=code) for b in blocks if b.search is None and b.path in (None, target)
             and (code := only_definitions(b.code, names)).strip()]  # that file's definitions, nothing else
    planned = task._plan(fixes, where, known, default)
    attempt.placement_failures += len(planned.failures)
    await task._write(planned)
    attempt.actions.extend(planned.actions)
    ok, summary = await task._check()
    return "" if ok else f"the checks failed on its test after one fix: {_last_line(summary)}"


def _last_line(summary: str) -> str:
    return summary.strip().splitlines()[-1] if summary.strip() else ""


__all__ = ["TARGET_FIX", "TARGET_TEST_ASK", "TARGET_TEST_ASSERTS", "check_target", "reaching_example", "reaching_tests"]
