"""The ``mutant`` check: a new test that passes on the code as it is must fail on a broken version.

A task that asks for a test of existing behaviour ("add a test showing that ...; don't change the
code") changes no code, so "the new test fails without the change" (:mod:`.proof`) proves nothing:
``assert callable(title_case)`` or ``assert isinstance(title_case("x"), str)`` passes, every check
passes, and the task is done with a test that would pass whatever the code did (a false success).
So when the attempt's new tests pass and no file but tests changed, each function or method the
new tests call in the repository's own source (not a test file, a ``conftest.py`` or a file under
a ``tests/``, ``test/`` or ``testing/`` folder: the suite's helpers) is broken on purpose, a few
ways, in a temporary copy of the worktree (never in the worktree itself), and the new test file
is run alone there with the probe's command (:func:`.probe.probe_command`); at least one broken version must make a new
test fail.

The broken versions (mutants) of one function, in this order, each where it applies (pure,
:func:`mutated`, with the stdlib :mod:`ast` and :func:`ast.unparse`):

- ``value``: every ``return X`` returns another value of the same type (``_foreman_other(X)``: a
  number plus one (an infinite, nan or huge float: 0.0), a string with ``~`` added, a sequence or
  mapping without its first item, a bool negated, another member of an enum, a date a day later, a
  path with ``~`` added to its name, a dataclass with its first field changed so; any other object
  as it is, and a run where no return changed is ``unchanged``, not counted: it broke nothing);
- ``condition``: the first comparison's first operator negated (``==`` -> ``!=``, ``<`` -> ``>=``,
  ``in`` -> ``not in``), or, with no comparison, the first ``if``/``while``/ternary test negated;
- ``arithmetic``: the first ``+``/``-`` with a number beside it swapped (``len(words) - 1`` ->
  ``+ 1``): with a number beside it the operands are numbers, so the swap breaks a value, not a type;
- ``call``: the first statement that is a bare call (``print(...)``, ``rows.append(...)``) dropped.

``return None`` is not one: a test that checks only that a result is there or has the right type
fails on it, and such a test is exactly what the check is for. Only when every one survives is
``raise`` run (the body replaced by ``raise RuntimeError("mutant")``), to word the finding: a test
that passes then never runs the function at all.

One killed mutant overall suffices, not one per function: a test calls setup code (a constructor,
``cart.add``) whose work it checks only through the function it is about, and asking a kill of each
would refuse good tests. A mutant is killed when a new test function fails on it (an assert, an
error, or the run timing out). A mutant whose run reports none of the new tests is not counted.

What is called: the names the new test functions use (:func:`.probe.test_words`: their bodies,
fixtures, their class's helpers, the module's helpers they reach) that a non-test file of a module
the test file imports (or a package above one, or a module one of those imports names from: a
package's ``from .cart import total``) defines at its top level, or as a method of a class
there; functions the task's text names first, a top-level function the test names only as an
attribute of another object (``d.get``, not ``total`` or ``store.total``) last, and between them
constructors (``__init__`` of a class the test uses) after the rest, each in the test file's order.

Cost bound: at most :data:`MAX_FUNCTIONS` functions, 4 mutants each plus one ``raise`` each when
all survive; with the unmutated copy's run first, at most 1 + 5 x 3 = 16 runs of one test file,
and the first kill ends the check (a strong test: 2 runs). Each mutant run may take at most
4 x the unmutated run plus 5 seconds, and never more than :data:`RUN_TIMEOUT_S` seconds nor the
check command's timeout. The check cannot tell, and lets the attempt pass, when the check command
is not plain pytest, no called function is found or has a mutant, or the new tests do not pass in
the copy.

Before any mutant runs, each function the task names must be called by a new test (:mod:`.uncalled`).
Its limits: it shows the test checks *something* of what it calls, not the behaviour the task
names (a test of one case of two still kills the value mutant); a function reached only through a
subprocess or by a name no import brings is not found; a module imported from outside the copy (a
``src/`` layout installed elsewhere) is not the copy's, although ``PYTHONPATH`` names the copy (and
its ``src/``) first.

Why not a library: mutmut (3.x) and cosmic-ray (8.x) are whole-project runners: each mutates
every module it is configured for, keeps its own state (mutmut's ``mutants/`` tree and trampolines,
cosmic-ray's session database and TOML config) and runs the whole suite per mutant; neither mutates
one named function for one test file in a few runs, which is all this needs.
"""

from __future__ import annotations

import ast
import copy as copying
import inspect
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from . import commands, mutant_value
from . import named as named_files
from . import probe as probes
from .localize import Localized, is_test_file, list_files, module_name
from .pipeline import Finding
from .signatures import import_names
from .uncalled import uncalled

if TYPE_CHECKING:
    from .guided import Attempt, GuidedTask

logger = logging.getLogger(__name__)

MAX_FUNCTIONS = 3
"""The most functions of the repository one check breaks."""

RUN_TIMEOUT_S = 60.0
"""The most seconds one mutant run may take (also bounded by the check command's timeout)."""

KINDS = ("value", "condition", "arithmetic", "call")
"""The mutants whose kill counts, in the order they run (the module docstring)."""

SURVIVED = "the new tests pass on broken code"
"""The outcome of an attempt whose new tests passed on every mutant of every function they call."""

SURVIVED_ASK = ("The checks pass, but {tests} in {path} also pass{how}, so they do not check what the code does. "
                "Write test functions for {path} that call {functions} and assert the exact values or output the task "
                "states, so that a wrong result fails them, in one ```python block whose first line is "
                "`# file: {path}`. No explanations.")

UNCALLED = "the new tests never call a function the task names"
"""The outcome of an attempt whose new tests never call a function the task names (:mod:`.uncalled`)."""
UNCALLED_ASK = ("The checks pass, but {tests} in {path} never call {names}, which the task names. Write test functions "
                "for {path} that call {names} and assert the exact values or output the task states, in one ```python "
                "block whose first line is `# file: {path}`. No explanations.")

_OTHER = "\n\n".join(inspect.getsource(f) for f in (mutant_value._foreman_other, mutant_value._foreman_changed))
_NEGATED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
            ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_TEST_CODE_RE = re.compile(r"(?:^|/)(?:tests?/|testing/|conftest\.py$)")  # the suite's helpers: no code under test
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_ENV_DIRS = {".venv", "venv", "env", ".tox", ".nox", "node_modules"}  # (a venv: one with pyvenv.cfg)
_IGNORED = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache")


def definitions(text: str) -> list[str]:
    """The functions of a module's text by qualified name: ``name`` at the top level, ``Class.name``
    for a method of a top-level class, each once (an overload, a property's setter, a name defined
    again: one name); [] when it does not parse."""
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef):
            out.extend(f"{node.name}.{m.name}" for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return list(dict.fromkeys(out))


def imported_modules(text: str) -> set[str]:
    """The modules a test file's absolute imports name (:func:`~.signatures.import_names`), each
    with the packages above it. Set() when it does not parse."""
    return {".".join(parts[:i]) for name in import_names(text) for parts in [name.split(".")]
            for i in range(1, len(parts) + 1)}


def called(test_text: str, new: list[str], sources: dict[str, str], goal: str) -> list[tuple[str, str]]:
    """The repository's functions the new tests call (the module docstring's reach and order).

    Args:
        test_text: the test file.
        new: the new test functions' names (``test_x``; a method's label ends in it).
        sources: ``path -> text`` of the repository's non-test Python files.
        goal: the task's text.

    Returns:
        ``(path, qualified name)`` pairs, at most :data:`MAX_FUNCTIONS`.
    """
    words = set().union(*(w for label, w in probes.test_words(test_text).items() if label.rsplit(".", 1)[-1] in new))
    modules, grew = imported_modules(test_text), True
    while grew:  # and the modules those modules bring names from (a package's ``from .cart import total``)
        brought = set().union(*(set(import_names(text, rel)) for rel, text in sources.items() if module_name(rel) in modules))
        modules, grew = modules | brought, bool(brought - modules)
    found = []
    for rel, text in sources.items():
        if module_name(rel) not in modules:
            continue
        for qualname in definitions(text):
            owner, _, name = qualname.rpartition(".")
            if name in words or (name == "__init__" and owner in words):
                found.append((rel, qualname, name if name != "__init__" else owner))
    goal_words, direct = set(re.findall(r"[A-Za-z_]\w*", goal)), _direct(test_text)

    def rank(item: tuple[str, str, str]) -> tuple[bool, bool, bool, int]:
        place = re.search(rf"\b{re.escape(item[2])}\b", test_text)
        return (item[2] not in goal_words, "." not in item[1] and item[2] not in direct, item[1].endswith("__init__"),
                place.start() if place else len(test_text))

    return [(rel, qualname) for rel, qualname, _ in sorted(found, key=rank)][:MAX_FUNCTIONS]


def _direct(test_text: str) -> set[str]:
    """The names a test file uses bare or as an attribute of a name it imports (``total``,
    ``store.total``), not of another object (``d.get``); set() when it does not parse."""
    try:
        tree = ast.parse(test_text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return set()
    imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        and n.value.id in imported}


def _own(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own body in source order (nested functions, classes and lambdas
    left out: their code is not this function's)."""
    out: list[ast.AST] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                continue
            out.append(child)
            walk(child)

    for stmt in getattr(fn, "body", []):
        if isinstance(stmt, _SCOPES):
            continue
        out.append(stmt)
        walk(stmt)
    return out


def _find(tree: ast.Module, qualname: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every definition of ``qualname`` (overloads, a property's getter and setter, a redefinition)."""
    owner, _, name = qualname.rpartition(".")
    body = tree.body
    if owner:
        body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner), [])
    return [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _break(fn: ast.FunctionDef | ast.AsyncFunctionDef, kind: str) -> bool:
    """Break ``fn`` in place the ``kind`` way; False when that kind has nothing to break there."""
    own = _own(fn)
    places: dict[int, tuple[list[ast.stmt], int]] = {}
    if kind == "raise":
        fn.body = [ast.Raise(exc=ast.Call(func=ast.Name("RuntimeError", ast.Load()), args=[ast.Constant("mutant")],
                                          keywords=[]), cause=None)]
        return True
    if kind == "value":
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own):
            return False
        returns = [n for n in own if isinstance(n, ast.Return) and n.value is not None
                   and not (isinstance(n.value, ast.Constant) and n.value.value is None)]
        for node in returns:
            if node.value is not None:  # (always: filtered above)
                node.value = ast.Call(func=ast.Name("_foreman_other", ast.Load()), args=[node.value], keywords=[])
        return bool(returns)
    if kind == "condition":
        compare = next((n for n in own if isinstance(n, ast.Compare) and type(n.ops[0]) in _NEGATED), None)
        if compare is not None:
            compare.ops[0] = _NEGATED[type(compare.ops[0])]()
            return True
        test = next((n for n in own if isinstance(n, (ast.If, ast.While, ast.IfExp))), None)
        if test is not None:
            test.test = ast.UnaryOp(op=ast.Not(), operand=test.test)
            return True
        return False
    if kind == "arithmetic":
        for n in own:
            if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub)) and (
                    _is_number(n.left) or _is_number(n.right)):
                n.op = ast.Sub() if isinstance(n.op, ast.Add) else ast.Add()
                return True
            if isinstance(n, ast.AugAssign) and isinstance(n.op, (ast.Add, ast.Sub)) and _is_number(n.value):
                n.op = ast.Sub() if isinstance(n.op, ast.Add) else ast.Add()
                return True
        return False
    if kind == "call":  # the first bare call statement, in source order, becomes ``pass``
        for owner in [fn, *own]:
            for field in ("body", "orelse", "finalbody"):
                block: list[ast.stmt] = getattr(owner, field, None) or []
                for i, stmt in enumerate(block if isinstance(block, list) else []):
                    places[id(stmt)] = (block, i)
        first = next((n for n in own if isinstance(n, ast.Expr) and isinstance(n.value, (ast.Call, ast.Await))), None)
        if first is None or id(first) not in places:
            return False
        block, i = places[id(first)]
        block[i] = ast.Pass()
        return True
    raise ValueError(f"unknown mutant kind {kind!r}")


def mutated(text: str, qualname: str, kind: str) -> str | None:
    """``text`` (a module) with the function ``qualname`` (each of its definitions) broken the ``kind`` way (one of
    :data:`KINDS` or ``"raise"``), as :func:`ast.unparse` writes it (comments gone, meaning kept
    elsewhere), with the ``value`` mutant's helper defined after the docstring and ``__future__``
    imports. None when the text does not parse, has no such function, or the kind breaks nothing there.

    Raises:
        ValueError: an unknown kind.
    """
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return None
    tree = copying.deepcopy(tree)
    if not [fn for fn in _find(tree, qualname) if _break(fn, kind)]:  # each definition, the first way it breaks
        return None
    at = 0
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
            node.value.value, str)
        if is_doc or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            at = i + 1
    tree.body[at:at] = ast.parse(_OTHER).body
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


async def check(task: GuidedTask, attempt: Attempt, path: str, where: Localized) -> Finding | None:
    """The check on an attempt whose checks passed: when it changed no file but tests (and
    ``conftest.py`` files) and added test functions to ``path``, they must fail on some mutant of what they call (module docstring).

    Returns:
        A finding of the validate stage (:data:`SURVIVED`, naming the functions) when every mutant
        survived; None when one was killed or the check cannot tell (counted ``mutant killed`` or
        ``mutants: cannot tell`` in the stage counts).
    """
    new = task._new_tests(path)
    if not new or any(not is_test_file(rel) and not rel.endswith("conftest.py") for rel in task.original):
        return None  # a change to the code: the proof check's (the new tests must fail without it)
    report_name = "mutant-report.xml"
    if probes.probe_command(task.ci_command, path, report_name) is None:
        return _cannot_tell(task, attempt, "the check command is not plain pytest")
    test_text = task._read(path) or ""
    sources = {rel: task._read(rel) or "" for rel in list_files(task.root)
               if rel.endswith(".py") and not is_test_file(rel) and not _TEST_CODE_RE.search(rel)}
    never = uncalled(test_text, new, task.goal, [q for text in sources.values() for q in definitions(text)])
    if never:  # a function the task names that no new test calls: a mutant of another one proves nothing of it
        listed = ", ".join(never)
        return Finding("validate", UNCALLED, listed, UNCALLED_ASK.format(tests=", ".join(new), path=path, names=listed))
    targets = [(rel, name, kinds) for rel, name in called(test_text, new, sources, task.goal)
               if (kinds := [k for k in KINDS if mutated(sources[rel], name, k) is not None])]
    if not targets:
        return _cannot_tell(task, attempt, "the new tests call no function of the repository that has a mutant")
    with tempfile.TemporaryDirectory(prefix="foreman-mutant-") as tmp:
        copy = Path(tmp) / "repo"
        try:
            _copy_tree(task.root, copy)
        except OSError as exc:  # (shutil.Error too) an unreadable file, a file gone while copied
            return _cannot_tell(task, attempt, f"the worktree could not be copied: {str(exc)[:200]}")
        run = _Runner(task, copy, path, new, Path(tmp) / report_name)
        baseline = await run.once(None)
        if baseline != "survived":
            return _cannot_tell(task, attempt, f"the new tests do not pass in the copy ({baseline})")
        results: list[list[object]] = []
        for rel, name, kinds in targets:
            for kind in kinds:
                verdict = await run.once((rel, mutated(sources[rel], name, kind) or ""))
                results.append([f"{rel}:{name}", kind, verdict])
                if verdict == "killed":
                    task._trace(attempt.number, "mutant probe", attempt.temperature, "", None, mutants=results)
                    task.mark("validate", "mutant killed")
                    return None
        if not any(r[2] == "survived" for r in results):
            return _cannot_tell(task, attempt, "no mutant run reported the new tests", results)
        unreached = []
        for rel, name, _ in targets:
            verdict = await run.once((rel, mutated(sources[rel], name, "raise") or ""))
            results.append([f"{rel}:{name}", "raise", verdict])
            if verdict == "survived":
                unreached.append(name)
        task._trace(attempt.number, "mutant probe", attempt.temperature, "", None, mutants=results)
    names = [name for _, name, _ in targets]
    how = (f" when {', '.join(names)} return{'s' if len(names) == 1 else ''} wrong values"
           + (f" (and when {', '.join(unreached)} raise{'s' if len(unreached) == 1 else ''} an error: "
              "the tests never call it)" if unreached else ""))
    return Finding("validate", SURVIVED, f"{', '.join(names)} in {', '.join(dict.fromkeys(r for r, _, _ in targets))}",
                   SURVIVED_ASK.format(tests=", ".join(new), path=path, how=how, functions=", ".join(names)))


def _cannot_tell(task: GuidedTask, attempt: Attempt, why: str,
                 results: list[list[object]] | None = None) -> Finding | None:
    """Count and trace a check that cannot tell; None (the attempt passes on)."""
    task.mark("validate", "mutants: cannot tell")
    task._trace(attempt.number, "mutant probe", attempt.temperature, "", None, mutants=results or [], why=why)
    return None


class _Runner:
    """Runs the test file alone in the copy, one mutant at a time (the file put back after each)."""

    def __init__(self, task: GuidedTask, copy: Path, path: str, new: list[str], report: Path) -> None:
        self.task, self.copy, self.path, self.new, self.report = task, copy, path, new, report
        self.notes = report.with_name("mutant-notes.txt")  # what each value mutant's return did
        self.timeout = min(task.ci_timeout, RUN_TIMEOUT_S)
        env = dict(task.req.env) if task.req.env else dict(os.environ)
        self.pythonpath = os.pathsep.join([str(copy), *([str(copy / "src")] if (copy / "src").is_dir() else []),
                                           *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])

    async def once(self, mutant: tuple[str, str] | None) -> str:
        """Run the test file with ``mutant`` (``(path, text)``; None: as it is) in place.

        Returns:
            ``killed`` (a new test failed, or the run timed out), ``survived`` (every new test
            passed or was skipped), ``unchanged`` (they passed, but no return the mutant changed
            gave another value: a type with none, such as None or an object) or ``unknown`` (no
            report names a new test, or the file is a link out of the copy: not run).
        """
        target = self.copy / mutant[0] if mutant else None
        if target is not None and not target.resolve().is_relative_to(self.copy.resolve()):
            logger.info("mutant of %s not run: the file is a link out of the copy", mutant and mutant[0])
            return "unknown"  # a symlink (or a linked folder) to the worktree: writing it would break the worktree
        before = target.read_bytes() if target is not None else b""
        if target is not None and mutant is not None:
            target.write_text(mutant[1], encoding="utf-8")
        self.report.unlink(missing_ok=True)
        self.notes.unlink(missing_ok=True)
        command = probes.probe_command(self.task.ci_command, self.path, str(self.report)) or ""
        started = self.task.clock()
        try:
            res = await commands.run_command(
                command, cwd=self.copy, env=dict(self.task.req.env) or None, timeout=self.timeout, max_output=2000,
                extra_env={**named_files.NO_BYTECODE, "PYTHONPATH": self.pythonpath,
                           "FOREMAN_MUTANT_NOTES": str(self.notes)},
                on_start=self.task.tools.track_process)
        finally:
            elapsed = self.task.clock() - started
            self.task.stats.checks_s += elapsed
            if target is not None:
                target.write_bytes(before)
        if mutant is None:  # the mutant runs: at most 4 x this one plus 5 s
            self.timeout = min(self.timeout, 4 * elapsed + 5)
        if res.timed_out and mutant is not None:
            return "killed"
        xml = self.report.read_text(encoding="utf-8", errors="replace") if self.report.is_file() else ""
        mine = [o for o in probes.classify(xml, self.path, "", task_errors=False)
                if o.function.rsplit(".", 1)[-1] in self.new]
        if not mine:
            return "unknown"
        if any(o.kind not in ("passed", "skipped") for o in mine):
            return "killed"
        notes = self.notes.read_text(encoding="utf-8").split() if self.notes.is_file() else []
        return "unchanged" if notes and "changed" not in notes else "survived"


def _copy_tree(root: Path, copy: Path) -> None:
    """Copy the worktree to ``copy`` without git's folder, bytecode and special files; a top-level environment
    folder (``node_modules``, ``.tox``, a ``.venv``/``venv``/``env`` with ``pyvenv.cfg``; not a
    package of that name) is linked, not copied. A mutant is never written through a link out of
    the copy (:meth:`_Runner.once`: ``unknown``)."""
    copy.mkdir(parents=True)
    for entry in root.iterdir():
        if entry.name in (".git", "__pycache__", ".pytest_cache"):
            continue
        if entry.name in _ENV_DIRS and entry.is_dir() and (entry.name in (".tox", ".nox", "node_modules")
                                                           or (entry / "pyvenv.cfg").is_file()):
            (copy / entry.name).symlink_to(entry.resolve())
        elif entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, copy / entry.name, ignore=_IGNORED, symlinks=True, copy_function=_copy_file)
        else:
            _copy_file(entry, copy / entry.name)


def _copy_file(src: str | Path, dst: str | Path) -> None:
    """Copy a file or a link as it is; a named pipe, a socket or a device is left out (no code,
    and copying one raises or blocks)."""
    if os.path.islink(src) or os.path.isfile(src):
        shutil.copy2(src, dst, follow_symlinks=False)


__all__ = ["KINDS", "MAX_FUNCTIONS", "RUN_TIMEOUT_S", "SURVIVED", "SURVIVED_ASK", "called", "check", "definitions",
           "imported_modules", "mutated"]
