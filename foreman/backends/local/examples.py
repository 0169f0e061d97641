"""The repository's test shown beside a test ask: which one (:func:`example_test`), the
excerpt shown (:func:`example_excerpt`; its class's ``setUp``, :func:`fixture_class`), what a test can
call (:func:`test_context`), and whether an answer copied it (:func:`copied_tests`). Pure but for
:func:`test_context`, which reads the task's files (:mod:`.asked` asks for the tests).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .localize import Localized, is_test_file
from .signatures import api_text, fixture_sources, imported_files, through_packages
from .symbols import test_bodies, used_words

if TYPE_CHECKING:
    from .guided import GuidedTask


def example_test(where: Localized, known: list[str], read=None, goal: str = "") -> str | None:
    """One of the repository's tests to show as an example; None when there is none.

    The first of, in this order: a test that imports a target (or the main file); a
    ``tests/test_<stem>.py`` of one that imports no other module of that stem; the test holding
    the most of the words both the task and a target's code use (:func:`code_words`), those in
    every test aside (ties: the first in ``known``). Chosen by stem alone, a change to
    ``pkg/commands/items.py`` would be shown ``tests/test_items.py`` (a data class's test), and a
    model then calls the command with made-up arguments; a test that imports the target shows how
    it is called.

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
    first: shown a whole test file, a model may copy it as its answer (a test that passes on the
    unchanged code). The text is returned whole when it does not parse.

    A test's words are its names, attributes and one-word string constants (``"list"``, ``"add"``),
    compared case-aside, each counted once: counted as every word of its text, a test whose
    assertion message happens to hold the task's words would win over the test that exercises
    them, and a model copying it would skip the setup the task needs.
    """
    chosen = _chosen(text, goal)
    if chosen is None:
        return text
    tree, node, func = chosen
    lines = text.split("\n")
    imports = [ast.get_source_segment(text, n) or "" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    body = "\n".join(lines[func.lineno - 1 - len(func.decorator_list):func.end_lineno])
    shown = f"{lines[node.lineno - 1]}\n{_fixtures(node, lines, func)}    ...\n{body}" if node is not func else body
    constants = _constants(tree, text, [func, *(_setups(node) + _helpers(node, func) if node is not func else [])])
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
    ``setUp`` (its tests stand on what it makes), else None. Asked for plain "test functions"
    beside such an excerpt, a model writes tests that use what ``setUp`` would have made (a
    ``self.path``) without making it."""
    chosen = _chosen(text, goal)
    if chosen is None or chosen[1] is chosen[2] or not _setups(chosen[1]):
        return None
    return chosen[1].name


def _constants(tree: ast.Module, text: str, nodes: list[ast.AST]) -> list[str]:
    """The module-level assignments ``nodes`` (the shown test and its fixtures) need, as written, in
    the file's order: those of the names it uses, and of the names those use. Shown a test using
    ``NOW`` without ``NOW = datetime(...)``, a model writes tests that use ``NOW`` undefined."""
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


def _helpers(node: ast.AST, test: _Test) -> list[ast.FunctionDef]:
    """The methods of a test class, other than tests and ``setUp``/``tearDown``, that ``test`` (or
    its class's ``setUp``, or such a method) calls as ``self.<name>``, in class order."""
    setups = _setups(node)
    methods = {f.name: f for f in getattr(node, "body", []) if isinstance(f, ast.FunctionDef)
               and not f.name.startswith("test") and f not in setups}
    wanted: set[str] = set()
    todo: list[ast.AST] = [test, *setups]
    while todo:
        for sub in ast.walk(todo.pop()):
            if (isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self"
                    and sub.attr in methods and sub.attr not in wanted):
                wanted.add(sub.attr)
                todo.append(methods[sub.attr])
    return [f for name, f in methods.items() if name in wanted]


def _fixtures(node: ast.AST, lines: list[str], test: _Test | None = None) -> str:
    """The ``setUp``/``tearDown`` methods of a test class, and the helper methods ``test`` calls
    (:func:`_helpers`), as written, each followed by a blank line ("" for none): an excerpt whose
    test uses ``self.path`` is not runnable without the ``setUp`` that makes it, and one whose test
    calls ``self.run_cli(...)`` without that method gets a test calling it with made-up arguments."""
    found = sorted(_setups(node) + (_helpers(node, test) if test is not None else []), key=lambda f: f.lineno)
    return "".join("\n".join(lines[f.lineno - 1 - len(f.decorator_list):f.end_lineno]) + "\n\n" for f in found)


def copied_tests(text: str, example: str) -> list[str]:
    """The test functions of ``text`` that are one of ``example``'s tests, statement for statement
    (:func:`.symbols.test_bodies`: names, comments and blank lines aside): a model may answer a
    test ask with the example test as shown, though told not to repeat it.

    Returns:
        The copied functions' names, in the order of ``text``.
    """
    seen = set(test_bodies(example).values())
    return [label.rsplit(".", 1)[-1] for label, body in test_bodies(text).items() if body in seen]


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
    modules = through_packages(dict.fromkeys(modules), task._read, known)
    api = api_text([rel for rel in modules if rel not in where.files], task._read)
    if api:
        parts.append(f"What a test can call (signatures, from files not shown above):\n```python\n{api}\n```")
    for conftest, shown in example_fixtures(example, task._read, known) if example else []:
        parts.append(f"The fixtures its tests take, from {conftest}:\n```python\n{shown}\n```")
    return "".join(f"\n\n{part}" for part in parts)


def example_fixtures(example: str, read: Callable[[str], str | None], known: list[str]) -> list[tuple[str, str]]:
    """``(conftest path, fixture sources)`` for the pytest fixtures the tests of ``example`` take,
    from the ``conftest.py`` files of its folder and the folders above it (pytest's lookup), nearest
    first; [] when its tests take none (:func:`.signatures.fixture_sources`)."""
    try:
        tree = ast.parse((read(example) or "").replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return []
    taken = {a.arg for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
             and node.name.startswith("test") for a in node.args.args} - {"self", "cls"}
    files = set(known)
    out = []
    for folder in PurePosixPath(example).parents:
        conftest = str(folder / "conftest.py") if str(folder) != "." else "conftest.py"
        if taken and conftest in files and (shown := fixture_sources(read(conftest) or "", taken)):
            out.append((conftest, shown))
    return out


__all__ = ["code_words", "copied_tests", "example_excerpt", "example_fixtures", "example_test", "fixture_class",
           "test_context"]
