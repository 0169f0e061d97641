"""Running an attempt's tests on the code as it was, and what that proves.

:func:`run_probe` runs a test file alone on the code as it is, with pytest's JUnit report
(:mod:`.probe` sorts its functions); :func:`run_probe_without` runs it with some files put back
as they were before the attempt. On those runs the tests a task asks for must fail without the
change (:func:`proves_the_change`), and the asked test must need each target's change
(:func:`unchecked_targets`, with stubs of what the change adds, :func:`_stubbed`). The asked
test itself is :mod:`.asked`'s, the made-up cases :mod:`.madeup`'s.
"""

from __future__ import annotations

import ast
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from . import commands
from . import named as named_files
from . import probe as probes
from .guided_text import (
    stable,
    task_functions,
)
from .localize import Localized, is_test_file, module_name
from .symbols import defined_names, module_bindings
from .uses import defined, refactor

if TYPE_CHECKING:
    from .guided import Attempt, GuidedTask


async def run_probe(task: GuidedTask, attempt: Attempt, path: str, where: Localized,
                    step: str = "asked test probe", *, on_new_code: bool = False) -> list[probes.ProbeOutcome]:
    """Run the placed test alone on the unchanged code and sort its functions (:mod:`.probe`);
    [] when the check command is not plain pytest or wrote no usable report. ``on_new_code``: the
    run is on the attempt's code, so a name the task names is never one the code already had."""
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
        xml = stable(report.read_text(encoding="utf-8", errors="replace"), task.root) if report.is_file() else ""
    existing = set() if on_new_code else {
        name for rel in where.files if rel.endswith(".py") for name in code_names(task._read(rel) or "")}
    text = task._read(path) or ""
    task_errors, own_name_errors = task.enabled("task-error"), task.enabled("test-alone") and "import *" not in text
    acted: set[str] = set()
    outcomes = probes.classify(xml, path, task.goal, existing, task_errors=task_errors,
                               own_name_errors=own_name_errors, acted=acted)
    for check in sorted(acted):
        task.acted(check)
    task._trace(attempt.number, step, attempt.temperature, "", None,
                outcomes=[[o.name, o.kind, o.detail[:300]] for o in outcomes])
    return outcomes


def code_names(text: str) -> set[str]:
    """The names a module's code has for a test to use: what it binds at its top level and every
    function, method and class it defines (every identifier in it when that cannot be known: it
    does not parse, or star-imports). Not its local variables, parameters or docstring words: a
    name the task adds that the code uses only as a local (``words = re.findall(...)`` before a
    task adds ``words(text)``) was read as one the code has, and the asked test failing to import
    it was refused as broken in itself."""
    bound = module_bindings(text)
    if bound is None:
        return set(re.findall(r"[A-Za-z_]\w*", text))
    return bound | defined(text)


async def run_probe_without(task: GuidedTask, attempt: Attempt, path: str, where: Localized,
                         before: dict[str, bytes | None], step: str) -> list[probes.ProbeOutcome]:
    """Run the test file ``path`` as :func:`run_probe` does with the files of ``before`` put back as
    they were (``before``: their bytes before the attempt, None for a file it created), then
    write them back as they are now, whatever the run did."""
    now = named_files.snapshot(task.root, before)
    try:
        named_files.put_back(task.root, before, {})
        return await run_probe(task, attempt, path, where, step)
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
    as the asked test must (:mod:`.probe`): else an answer that rewrites a function unchanged in
    meaning passes with tests that check only what the code already did.

    Args:
        new: the test functions the attempt added to ``path`` (names).

    Returns:
        The new test functions that pass (or are skipped, xfail included) on the old code when
        every one of them does, or all of ``new`` when none of them ran while the file's other
        tests passed (a class pytest does not collect), or when the file failed to collect on a
        missing name none of them uses (the file imports the new ``count_words``, its tests
        check an old function): they prove nothing. [] when one fails there, on another collection
        error, when the run cannot tell (not plain pytest, no report), or when no other file
        changed.
    """
    code = {rel: data for rel, data in task.original.items() if rel != path and not is_test_file(rel)}
    if not code or not new:
        return []
    outcomes = await run_probe_without(task, attempt, path, where, code, "tests probe")
    whole = probes.file_label(path)  # a collection error's label, not a test's
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

    The asked test guards only what it tests: a test of a two-file task's new function alone
    (``count_words`` in ``pkg/text.py``) passes while the command that is to print its result
    prints the wrong line, every check passes, and the task is done: a false success. A passing
    attempt therefore needs an asked test that fails without each target's change. Checked when
    the attempt changed two or more files that are not tests (with one, the probe on the
    unchanged code already showed it).

    Returns:
        The unchecked targets, in the task's order ([] when the run cannot tell: a check command
        that is not plain pytest, no report).
    """
    path = task.locked
    changed = [rel for rel in task.original if not is_test_file(rel)]
    if path is None or len(changed) < 2:
        return []
    if task.enabled("keep-test") and refactor(task.goal):  # (each target's change keeps behaviour: none is needed)
        task.acted("keep-test")
        return []
    named = set(task_functions(task.goal))
    adding = [rel for rel in changed if rel not in where.targets and named & (defined_names(task._read(rel) or "")
              - defined_names((task.original[rel] or b"").decode("utf-8", errors="replace")))]
    unchecked = []
    for rel in [*where.targets, *adding]:  # a file that gains definitions is the task's too (pkg/count.py)
        if rel in changed and not await _needs(task, attempt, path, where, rel):
            unchecked.append(rel)
    return unchecked


async def _needs(task: GuidedTask, attempt: Attempt, path: str, where: Localized, rel: str) -> bool:
    """Whether the asked test ``path`` needs the attempt's change to ``rel`` (True when the check
    command is not plain pytest and the probe cannot run; a run that reports nothing shows nothing).

    Run once with ``rel`` put back: it passes, the change is not needed; an assert fails
    (:func:`_asserts`), it is. (A ``TypeError`` of a test calling a changed signature with its new
    argument is no check: wrong changes pass with it, a test passing ``since=None`` or
    building setup data with a new argument, whatever the argument does.) Any other failure (a missing name, a ``TypeError`` of a changed
    signature) shows only that something the test or another changed file uses is gone, so the
    test is run again with ``rel`` put back plus what the change adds there (:func:`_stubbed`): each
    definition the change adds to that file alone (to no other changed file) as a stub whose calls
    return one sentinel object (:data:`_STUB_VALUE`), its new imports and other new bindings as they are. An assert failing there
    shows the test checks what those definitions do; anything else shows nothing.

    Why a behavioural check: an asked test that imports the new function from a command module,
    which the change merely imports (re-exports), makes every target "fail" without its change
    while the command's output goes unchecked (a false success). Read statically (does a test or
    another changed file use the name?), the same slips through a module attribute, a star
    import, an assignment, a wrapper ``def``, an import chain and code no test runs. Its limits:
    an error beside a stub is no check, so a test that
    uses the new function's result other than by comparing it (``> 0``, ``len(...)``, a file it
    writes, an exception class it raises) cannot check that file; a test that reaches the code
    through a subprocess or a ``main()`` that turns errors into an exit status sees an error of the
    put-back file as an assert; a test calling a changed signature with its new argument (``find(...,
    since=2)``) cannot check that file (refused); a file counts as checked when one of its changes is.
    """
    if probes.probe_command(task.ci_command, path, "report.xml") is None:
        return True  # not plain pytest: only the checks' exit status can be read
    original = task.original[rel]
    outcomes = await run_probe_without(task, attempt, path, where, {rel: original}, "target probe")
    if any(_asserts(o) for o in outcomes):
        return True
    if outcomes and all(o.kind in ("passed", "skipped") for o in outcomes):
        return False  # (no outcome at all: pytest stopped before the tests, e.g. a conftest.py failed to import)
    others = set().union(*(defined_names(task._read(f) or "") for f in task.original if f != rel and not is_test_file(f)))
    shim = _stubbed((original or b"").decode("utf-8", errors="replace"), task._read(rel) or "", others)
    if shim is None:
        return True
    outcomes = await run_probe_without(task, attempt, path, where, {rel: shim.encode()}, "target stub probe")
    return any(_asserts(o) for o in outcomes)


def _asserts(outcome: probes.ProbeOutcome) -> bool:
    """Whether a test function failed on what it checks: an ``assert`` (or ``pytest.raises``'s
    ``Failed: DID NOT RAISE``), not an error on the way."""
    return outcome.kind == "asserts" or outcome.detail.startswith(("Failed: DID NOT RAISE", "AssertionError"))


_STUB_VALUE = "_foreman_stub_value = object()"
"""What every stub returns: one object, so a test that computes its expected value with the new
function (``expected = count_words(...)``, then compares the command's line with it) gets the same
value from both calls and passes beside the stub (a fresh ``object()`` per call would differ in
its repr and make it a check)."""


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


__all__ = ["PASSES_WITHOUT", "PASSES_WITHOUT_ASK", "TARGET_UNCHECKED", "proves_the_change", "run_probe",
           "run_probe_without", "unchecked_targets"]
