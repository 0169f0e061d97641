"""Why each function of the asked test fails on the unchanged code.

The asked test (:mod:`.asked`) must fail before the change. Failing is not enough: a test that
fails on the unchanged code only because it is broken itself (a wrong constructor call, a
``TypeError`` of its own) can never be passed by any change, and the attempt is lost. So the
harness runs the test file alone on the unchanged code with pytest's JUnit XML report
(``--junitxml``, a pytest built-in) and sorts each test function by why it failed:

- ``asserts``: an ``AssertionError`` (a plain ``assert`` or a ``unittest`` assert): the test
  checks something the code does not do yet;
- ``new name``: an error whose message quotes a name the task's text names and the code does
  not have yet (``cannot import name 'count_words'``, ``unexpected keyword argument
  'since'``), or argparse's exit when the task names an option (``--since``): the task adds it;
- ``task error``: the error the task's text names (``ValueError`` in "raise ValueError on bad
  input"), or pytest's ``DID NOT RAISE`` of it: the test shows exactly what the task fixes;
- ``own error``: any other error (a wrong constructor call, a name nothing defines, a fixture
  that does not exist): the test is broken, not the code;
- ``passed`` (or ``skipped``): it checks nothing the task adds.

Only ``asserts``, ``new name`` and ``task error`` functions are kept (:func:`keep_only`). Pure: text in, text out;
the run itself is :mod:`.proof`'s.
"""

from __future__ import annotations

import ast
import re
import shlex
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from .symbols import test_labels, tests_unrelated

FAILS_FOR_THE_TASK = ("asserts", "new name", "task error")
"""The kinds of failure that show a test checks something the task adds."""
_SHELL_OPS = {"&&", "||", ";", "|", "&", ">", "<", ">>"}
_EXC_LINE_RE = re.compile(r"^E\s+((?:\w+\.)*(\w+(?:Error|Exception|Exit|Interrupt)))\b:?\s*(.*)$", re.M)
_FIXTURE_LINE_RE = re.compile(r"^E\s+(fixture '\w+' not found)", re.M)
_LAST_TYPE_RE = re.compile(r":\d+: ((?:\w+\.)*\w+)\s*$")
_QUOTED_RE = re.compile(r"""['"](-{0,2}[A-Za-z_][\w-]*)['"]""")


@dataclass(frozen=True)
class ProbeOutcome:
    """One test function's result on the unchanged code.

    Attributes:
        name: ``test_x``, ``Class.test_x``, or the module's dotted name for a collection error
            (parametrized cases keep their ``[id]``).
        kind: ``asserts`` | ``new name`` | ``task error`` | ``own error`` | ``passed`` | ``skipped``.
        detail: the exception line (``TypeError: Note.__init__() got ...``), "" when it passed.
    """

    name: str
    kind: str
    detail: str = ""

    @property
    def function(self) -> str:
        """The test function's name as :func:`keep_only` takes it (the case id dropped)."""
        return self.name.split("[", 1)[0]


_ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PROJECT_RUNNERS = {"uv", "poetry", "pdm", "hatch", "pipenv", "rye"}
"""Commands whose ``run`` subcommand runs the rest in the project's environment."""


def probe_command(ci_command: str | None, path: str, report: str) -> str | None:
    """The check command narrowed to one test file with a JUnit XML report, or None when the
    command is not a plain pytest run (a shell pipeline, ``make test``, ``tox``: then only its
    exit status can be read). Variables set before it (``PYTHONPATH=src pytest``) and a project
    runner's ``run`` (``uv``, ``poetry``, ``pdm``, ``hatch``, ``pipenv``, ``rye``) still make a
    pytest run.

    Args:
        ci_command: the repository's check command (e.g. ``python -m pytest -q``).
        path: the test file, relative to the worktree.
        report: where pytest writes the report.
    """
    try:
        argv = shlex.split(ci_command or "")
    except ValueError:
        return None
    if not argv or any(token in _SHELL_OPS for token in argv):
        return None
    run = list(argv)
    while run and _ASSIGNMENT_RE.match(run[0]):  # ``PYTHONPATH=src pytest``: the shell's variables
        run.pop(0)
    if len(run) > 2 and PurePosixPath(run[0]).name in _PROJECT_RUNNERS and run[1] == "run":
        run = run[2:]  # ``uv run pytest``: the project's environment, then pytest
    runs_pytest = bool(run) and (PurePosixPath(run[0]).name in ("pytest", "py.test") or (
        PurePosixPath(run[0]).name.startswith("python") and "-m" in run[:-1] and run[run.index("-m") + 1] == "pytest"))
    if not runs_pytest:
        return None
    # appended to the command as written (re-joined, ``B='x y'`` would be quoted whole: no assignment);
    # pytest ignores a path given twice, so a command that already names tests/ still runs the file once
    return f"{(ci_command or '').strip()} {shlex.join([path, f'--junitxml={report}'])}"


def file_label(path: str) -> str:
    """The label pytest's JUnit report gives a test file's collection error, which is also the
    ``classname`` prefix of its test cases: ``tests/test_x.py`` -> ``tests.test_x``."""
    return str(PurePosixPath(path).with_suffix("")).replace("/", ".")


def _exception(text: str, message: str) -> tuple[str, str]:
    """(exception type, the line to show) from a failure's traceback text and message."""
    fixture = _FIXTURE_LINE_RE.search(text or "")
    if fixture:  # a setup error: the test asks for a fixture nobody defines
        return "fixture", fixture.group(1)
    found = _EXC_LINE_RE.findall(text or "")
    if found:
        full, short, rest = found[-1]
        return short, f"{short}: {rest}".strip().rstrip(":")
    last = _LAST_TYPE_RE.search((text or "").rstrip())
    kind = last.group(1).rsplit(".", 1)[-1] if last else ""
    if not kind and message.startswith("assert "):
        kind = "AssertionError"
    return kind, (message or kind).split("\n", 1)[0]


def _named(line: str) -> str:
    """The name an error is about: the last quoted one in ``has no attribute 'x'``, else the
    first (``cannot import name 'x' from 'module'``, ``unexpected keyword argument 'x'``)."""
    quoted = _QUOTED_RE.findall(line)
    if not quoted:
        return ""
    return (quoted[-1] if "has no attribute" in line else quoted[0]).lstrip("-")


def _words(goal: str) -> set[str]:
    return set(re.findall(r"-{0,2}[A-Za-z_][\w-]*", goal))


def classify(report_xml: str, path: str, goal: str, existing: set[str] | frozenset[str] = frozenset(), *,
             task_errors: bool = True, own_name_errors: bool = False,
             acted: set[str] | None = None) -> list[ProbeOutcome]:
    """Sort the test functions of ``path`` in a pytest JUnit XML report (module docstring).

    Args:
        report_xml: the report's text.
        path: the test file (``tests/test_x_asked.py``): test cases of other files are ignored.
        goal: the task's text: a name it names, quoted in the error, is one the task adds.
        existing: names the code already has (a ``NameError`` for one of them is the test's own:
            it forgot an import; the task does not add it).
        task_errors: an error the task names (``ValueError`` in "raise ValueError on a negative
            amount", a report's ``ZeroDivisionError``), or pytest's ``DID NOT RAISE`` of one,
            is a ``task error``: the test fails for the task (the ``task-error`` check).
        own_name_errors: every ``NameError`` is the test's own (the ``test-alone`` check): a
            change to the code cannot bind a name in the test's module, so such a test can
            never pass (the caller leaves this off for a test that star-imports).
        acted: when given, gets ``"task-error"`` / ``"test-alone"`` added for each of the two
            flags above that is on and sorted some case otherwise than it would be with that flag
            off (the bench's record of which checks acted).

    Returns:
        One outcome per test case of the file ([] when the report names none, or is not XML).
    """
    try:
        root = ElementTree.fromstring(report_xml)
    except ElementTree.ParseError:
        return []
    module, out = file_label(path), []
    words = {w.lstrip("-") for w in _words(goal)} - set(existing)
    option_task = any(w.startswith("--") for w in _words(goal))
    for case in root.iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        if classname == module:
            label = name
        elif classname.startswith(module + "."):
            label = f"{classname[len(module) + 1:]}.{name}"
        elif not classname and name == module:
            label = module  # a collection error: the whole file
        else:
            continue
        bad = next((child for child in case if child.tag in ("failure", "error")), None)
        if bad is None:
            skipped = any(child.tag == "skipped" for child in case)
            out.append(ProbeOutcome(label, "skipped" if skipped else "passed"))
            continue
        kind, line = _exception(bad.text or "", bad.get("message", ""))
        failure = _Failure(kind, line, goal, words, option_task)
        sorted_as = failure.sort(task_errors, own_name_errors)
        out.append(ProbeOutcome(label, sorted_as, line))
        if acted is not None:
            if task_errors and failure.sort(False, own_name_errors) != sorted_as:
                acted.add("task-error")
            if own_name_errors and failure.sort(task_errors, False) != sorted_as:
                acted.add("test-alone")
    return out


@dataclass(frozen=True)
class _Failure:
    """One failing case of a probe report: its exception ``kind`` and shown ``line``, with the
    task's ``goal``, its ``words`` (less the names the code has) and whether it adds an option."""

    kind: str
    line: str
    goal: str
    words: set[str]
    option_task: bool

    def sort(self, task_errors: bool, own_name_errors: bool) -> str:
        """The case's outcome kind under :func:`classify`'s two flags."""
        if self.kind == "AssertionError":
            return "asserts"
        if own_name_errors and self.kind == "NameError":
            return "own error"
        if task_errors and _task_error(self.kind, self.line, self.goal):
            return "task error"
        if _named(self.line) in self.words or _new_module(self.kind, self.line, self.goal) or (
                self.kind == "SystemExit" and self.option_task):  # argparse exits on an option the task adds
            return "new name"
        return "own error"


def _task_error(kind: str, line: str, goal: str) -> bool:
    """Whether the failure is the error the task's text names: the exception raised (a bug
    report's ``ZeroDivisionError``) or, for pytest's ``DID NOT RAISE``, one the test expected
    (pytest 8 writes ``DID NOT RAISE <class 'ValueError'>``, pytest 9 ``DID NOT RAISE ValueError``
    and ``DID NOT RAISE any of (ValueError, TypeError)``); only names that read as exceptions
    (``...Error``, ``...Exception``)."""
    raised = line.split("DID NOT RAISE", 1)[1] if kind in ("Failed", "") and "DID NOT RAISE" in line else None
    names = re.findall(r"\w+", raised) if raised is not None else [kind]
    return any(name.endswith(("Error", "Exception")) and re.search(rf"\b{re.escape(name)}\b", goal) is not None
               for name in names)


def _new_module(kind: str, line: str, goal: str) -> bool:
    """Whether ``line`` is a ``ModuleNotFoundError`` for a module whose file the task names
    (``No module named 'pkg.counting'`` when the task says "a new file pkg/counting/core.py"):
    read as any quoted name, the dotted module is never among the task's words, and an asked test
    importing the new module would be dropped as broken in itself."""
    if kind != "ModuleNotFoundError":
        return False
    module = re.search(r"No module named '([\w.]+)'", line)
    return module is not None and module.group(1).replace(".", "/") in goal


def kept(outcomes: list[ProbeOutcome]) -> set[str]:
    """The test functions to keep: some case fails for the task and none fails on its own error
    (a collection error that fails for the task keeps its module's dotted name)."""
    good = {o.function for o in outcomes if o.kind in FAILS_FOR_THE_TASK}
    return good - {o.function for o in outcomes if o.kind == "own error"}


def narrowed(keep: set[str], outcomes: list[ProbeOutcome], text: str, path: str) -> set[str]:
    """``keep`` (:func:`kept`) without the file's collection error on a name the task adds when no
    test function uses that name (:func:`using`): such a file fails on the unchanged code only
    because it imports the name, whatever its functions check: a test importing the new function
    from the command module, whose functions test only old code, passes once the change merely
    re-exports the name there, and a wrong command is done (a false success). The functions that do
    not use it stay when one does: the collection error hides what each would do, and a test of
    the command's output (calling ``run``) checks the task too.

    Returns:
        Labels to keep (``test_x``, ``Class.test_x``, or the module's dotted name: the whole file).
    """
    module = file_label(path)
    if module not in keep:
        return keep
    names = {_named(o.detail) for o in outcomes if o.function == module and o.kind == "new name"} - {""}
    return keep if not names or using(text, names) else keep - {module}


def using(text: str, names: set[str]) -> set[str]:
    """The test functions of ``text`` (labels, as :func:`.symbols.test_labels` gives them) that use
    one of ``names``: in their body, their parameters (pytest fixtures), their class's other
    methods (``setUp``), and through the module-level functions, classes and assignments those
    use, followed to the end. A name in a string does not count, nor a test marked skip or xfail.
    Set() when it does not parse."""
    return {label for label, words in test_words(text).items() if words & names}


def test_words(text: str) -> dict[str, set[str]]:
    """The names each test function of ``text`` uses (by label; :func:`using`'s reach), tests
    marked skip or xfail left out ({} when it does not parse)."""
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return {}
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    out: dict[str, set[str]] = {}
    if any(isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets)
           and _marks(stmt.value) for stmt in tree.body):
        return out  # the whole module marked skip or xfail
    for label, node in test_labels(text).items():
        owner = classes.get(label.split(".", 1)[0]) if "." in label else None
        if _skipped(node) or (owner is not None and _skipped(owner)):
            continue  # a skipped (or xfail) test uses nothing
        roots = [node, *(m for m in (owner.body if owner else []) if isinstance(
            m, (ast.FunctionDef, ast.AsyncFunctionDef)) and not m.name.startswith("test"))]
        out[label] = reached(tree, roots)
    return out


def reached(tree: ast.Module, roots: Sequence[ast.AST]) -> set[str]:
    """The names and attributes ``roots`` use, with those of the module-level functions, classes
    and assignments of ``tree`` they use, followed to the end (strings not read)."""
    bound: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[stmt.name] = stmt
        for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
                stmt, ast.AnnAssign) else []:
            if isinstance(target, ast.Name):
                bound[target.id] = stmt
    todo = list(roots)
    seen: set[int] = {id(n) for n in todo}
    words: set[str] = set()
    while todo:
        for n in ast.walk(todo.pop()):
            if isinstance(n, ast.Name):
                words.add(n.id)
            elif isinstance(n, ast.Attribute):
                words.add(n.attr)
            elif isinstance(n, ast.arg):
                words.add(n.arg)
        for word in words & bound.keys():
            if id(bound[word]) not in seen:
                seen.add(id(bound[word]))
                todo.append(bound[word])
    return words


_SKIP_MARKS = {"skip", "skipif", "xfail", "skipIf", "skipUnless", "expectedFailure"}


def _marks(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Name, ast.Attribute)) and (n.id if isinstance(n, ast.Name) else n.attr) in _SKIP_MARKS
               for n in ast.walk(node))


def _skipped(node: ast.AST) -> bool:
    """Whether a test function or class carries a skip or xfail mark (pytest's or unittest's), or
    its own body calls ``pytest.skip``/``pytest.xfail``/``self.skipTest``."""
    if any(_marks(decorator) for decorator in getattr(node, "decorator_list", [])):
        return True
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr in {"skip", "xfail", "skipTest"} for stmt in node.body)


def keep_only(text: str, names: set[str]) -> str:
    """``text`` (a test file) without the test functions not in ``names`` (``test_x`` or
    ``Class.test_x``); a class left without a test method goes too. Imports and helpers stay.

    Raises:
        SyntaxError: the text does not parse.
    """
    tree = ast.parse(text)
    drop: list[tuple[int, int]] = []

    def span(node: ast.stmt) -> tuple[int, int]:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return first, node.end_lineno or node.lineno

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            if node.name not in names:
                drop.append(span(node))
        elif isinstance(node, ast.ClassDef):
            tests = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and m.name.startswith("test")]
            gone = [m for m in tests if f"{node.name}.{m.name}" not in names]
            if tests and len(gone) == len(tests):
                drop.append(span(node))
            else:
                drop.extend(span(m) for m in gone)
    lines = text.split("\n")
    for first, last in sorted(drop, reverse=True):
        del lines[first - 1:last]
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(lines)).rstrip("\n") + "\n"


def is_check(node: ast.stmt) -> bool:
    """An ``assert`` statement or a ``self.assert...(...)`` call (unittest)."""
    if isinstance(node, ast.Assert):
        return True
    call = node.value if isinstance(node, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr.startswith("assert"))


def first_checks(text: str, functions: int = 2, asserts: int = 3, *, prefer: frozenset[str] = frozenset(),
                 stated: frozenset[str] = frozenset()) -> str:
    """``text`` (a test file) with its first ``functions`` test functions only, each ended after
    its first ``asserts`` assert statements (those of the function's own body; one inside a
    ``with`` or a loop is not counted). Unchanged when it does not parse. The test functions that
    use a word of ``prefer`` (the names the task adds or names) are taken first, in source order: a
    model's answer listed made-up tests of the file's other functions before the one test of the
    new function, and keeping the first two lost it. Likewise the asserts holding a value the
    task writes out (``stated``: ``"2026-01-03"``, a string constant equal to one or containing one
    of four characters or more) are kept first, the others dropped, and the function ended after
    the last one kept: a test of a bug report checked the exit status and two fields first and
    the reported date fourth, so the first three passed on the unchanged code and the test was
    refused as checking nothing.

    Why: a small model lists the plain cases first and makes up the later ones; even asked for
    "at most three asserts" it may write a dozen, the later ones with wrong expected values
    (``count_words("a b c") == 2``), and a locked test with one wrong case lets no change pass it.
    The test kept still has to fail on the unchanged code for
    the task (:func:`classify`), so a bound never lets through a test that checks nothing.
    """
    tests = test_labels(text)  # in source order; {} when it does not parse
    if len(tests) > functions:
        aside = set(tests_unrelated(text, set(prefer))) if prefer else set()
        chosen = [label for label in tests if label not in aside] + [label for label in tests if label in aside]
        text = keep_only(text, set(chosen[:functions]))
        tests = test_labels(text)
    lines = text.split("\n")
    cuts = []
    for node in tests.values():
        checks = [stmt for stmt in node.body if is_check(stmt)]
        if len(checks) <= asserts:
            continue
        first = [c for c in checks if _states(c, stated)] + [c for c in checks if not _states(c, stated)]
        kept = sorted(first[:asserts], key=lambda c: c.lineno)
        after = next((c for c in checks if c.lineno > kept[-1].lineno), None)
        if after is not None:
            cuts.append((after.lineno, node.end_lineno or after.lineno))
        cuts.extend((c.lineno, c.end_lineno or c.lineno) for c in checks if c not in kept and c.lineno < kept[-1].lineno)
    for start, end in sorted(cuts, reverse=True):
        del lines[start - 1:end]
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(lines)).rstrip("\n") + "\n"


def _states(check: ast.stmt, stated: frozenset[str]) -> bool:
    """Whether an assert holds a value of ``stated``: a string constant equal to one, or holding
    one of four characters or more."""
    if not stated:
        return False
    for node in ast.walk(check):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value.strip()
            if value in stated or any(len(s) >= 4 and s in value for s in stated):
                return True
    return False


def reasons(outcomes: list[ProbeOutcome]) -> str:
    """One line per test that does not fail for the task, saying why (for the model)."""
    why = {"passed": "passes on the code as it is now", "skipped": "is skipped",
           "own error": "fails because of an error in the test itself"}
    return "\n".join(f"- {o.name} {why[o.kind]}" + (f": {o.detail[:200]}" if o.detail else "")
                     for o in outcomes if o.kind in why)


__all__ = ["FAILS_FOR_THE_TASK", "ProbeOutcome", "classify", "first_checks", "is_check", "keep_only", "kept", "narrowed",
           "probe_command", "reached", "reasons", "test_words", "using"]
