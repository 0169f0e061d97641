"""Guided mode's words and small helpers: the prompts it sends, the constrained-reply format, the
summary of a failed check run, the check command (:mod:`.guided` drives the task)."""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from pathlib import Path
from typing import Any

from ...repos import ci, refs
from .localize import is_test_file

SYSTEM = ("You are a careful programmer who changes an existing code base. You answer with code only: the "
          "complete new or changed functions, classes or methods, never the unchanged rest of a file.")
EDIT_ASK = ("Reply with only the new or changed code: each function, class or method you add or change, complete "
            "from its def line to its end, with any import it needs, in one ```python block per file. Make the first "
            "line of each block a comment naming the file, like `# file: {target}`. Do not repeat code you do not "
            "change. No explanations.")
TESTS_STEP = "tests"
"""The step name of the ask for the tests a task asks for (:func:`.asked.ask_tests`)."""
TEST_ASK = ("Now write pytest test functions for this task, for the file {test_file}: one ```python block whose first "
            "line is `# file: {test_file}`, only two or three short test functions (def test_...), a few lines each, "
            "using plain assert statements. {how}")
TEST_ASK_CLASS = ("Now write the tests for this task, for the file {test_file}: one ```python block whose first line is "
                  "`# file: {test_file}`, holding one unittest.TestCase class with the same setUp, tearDown and helper "
                  "methods as the example's {cls}, and two or three short test methods (def test_...), a few lines each. Each "
                  "test first makes what it checks, the way the example's test does, with the same helpers and imports; "
                  "import anything else from {module}.")
"""The test request when the example's test stands on its class's ``setUp`` (:func:`.examples.fixture_class`)."""
TEST_HOW = "Import what you use from {module}."
TEST_HOW_EXAMPLE = ("Run the code the way the example test above does (the same helpers and imports); import anything "
                    "else from {module}.")
"""The last sentence of :data:`TEST_ASK`: with an example test shown, the model is pointed at how it
runs the code. Told only to import from the changed module, a small model calls a command's
function directly with made-up arguments (a dict for a store) where the repository's tests run a
subcommand through one helper. Its test replies, one case per value, are often cut at
max_tokens, hence "two or three short"."""
REPAIR_ASK = ("Write the corrected code: the complete functions (or test functions) that must change, in ```python "
              "blocks whose first line is `# file: <path>`. No explanations.")
NO_CHANGE = "That changed nothing. " + REPAIR_ASK
STILL_FAILS = "The test {path} still fails on the code as it is:\n{failures}\n"
NO_CHANGE_NAMED = ("That changed nothing: {names} came back exactly as {it_is} in {path}. The task asks for a change "
                   "there. Send only {names}, complete, with the change the task describes, in one ```python block "
                   "whose first line is `# file: {path}`. No explanations.")


def no_change_ask(symbols: list[tuple[str, str, int]]) -> str:
    """The repair request after an answer that changed no file (most often the shown file sent back
    as it is).

    Args:
        symbols: ``(name, file, line)`` the task names (:attr:`.Localized.symbols`); the names
            defined in the first non-test file among them are named back, so the model is asked
            for those definitions only, not the whole file again.

    Returns:
        :data:`NO_CHANGE_NAMED` filled in, or :data:`NO_CHANGE` when the task names no existing
        definition (a new function: nothing to name).
    """
    code = [(name, rel) for name, rel, _ in symbols if not is_test_file(rel)]
    if not code:
        return NO_CHANGE
    path = code[0][1]
    names = list(dict.fromkeys(name for name, rel in code if rel == path))
    return NO_CHANGE_NAMED.format(names=", ".join(names), path=path, it_is="it is" if len(names) == 1 else "they are")


NO_TEST = ("The task asks for a test in {test_file}, and no test function was placed there. Write the test functions "
           "(def test_...) of what the task asks for, with plain assert statements, in one ```python block whose first "
           "line is `# file: {test_file}`. No explanations.")
CUT_OFF = ("Your answer was cut off at the reply's length limit before it ended, so nothing could be placed. Do not "
           "repeat code that does not change: send only the new or changed functions, each complete, in ```python "
           "blocks whose first line is `# file: <path>`. No explanations.")
CUT_OFF_TEST = ("Your answer was cut off at the reply's length limit before it ended, so no test could be used. "
                "Write two or three short test functions (no repeated lines) in one ```python block for {path}.")
CUT_TABLE = ("An earlier answer to this was cut off at the length limit while it listed case after case. Write at "
             "most three cases, each one plain assert statement, and no @pytest.mark.parametrize table.")
"""Added to the test request asked again after a cut (:func:`.asked.ask_tests`)."""
TABLE_FUNCTION = ("Your test for {test_file} was cut off at the length limit inside its @pytest.mark.parametrize "
                  "table. Here it is, the table closed after its last whole row:\n```python\n{code}\n```\nWrite only "
                  "the test function that goes right under this table: one ```python block holding its def line, "
                  "taking {names}, and a short body of plain asserts. No table, no imports, no explanations.")
"""The ask for the function under a cut test's closed table (:mod:`.cuttable`)."""
JSON_ASK = ('Answer as JSON: {"edits": [{"file": "<path>", "code": "<the complete new or changed code of that '
            'file>"}]}.')
EDITS_FORMAT: dict[str, Any] = {"type": "json_schema", "json_schema": {"name": "edits", "strict": True, "schema": {
    "type": "object", "additionalProperties": False, "required": ["edits"],
    "properties": {"edits": {"type": "array", "minItems": 1, "items": {
        "type": "object", "additionalProperties": False, "required": ["file", "code"],
        "properties": {"file": {"type": "string"}, "code": {"type": "string"}}}}}}}}
"""The ``response_format`` of a constrained guided reply (llama.cpp turns it into a grammar)."""


_DURATION_RE = re.compile(r"(\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?)\b[^\n]*?)"
                          r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?|(\bRan \d+ tests?) in \d+(?:\.\d+)?s")


def stable(output: str, root: str | Path) -> str:
    """A check run's output as it reads on any run: the worktree's absolute path (``root``) made
    relative and the run's duration (pytest's ``1 failed, 5 passed in 0.71s``, unittest's ``Ran 6
    tests in 0.002s``) left out. A model asked with the output must get the same ask whenever the
    code and tests are the same: with seeded replies that makes a run repeatable, and a duration or
    a temporary folder's name told to the model is noise to it."""
    text = output.replace(f"{Path(root)}/", "").replace(str(Path(root)), ".")
    return _DURATION_RE.sub(lambda m: m.group(1) or m.group(2), text)


def summarize_failure(output: str, *, limit: int = 1500) -> str:
    """The useful part of a failed test run: pytest's ``E`` lines, failure headers and the
    summary, else the output's tail; at most ``limit`` characters. A collection error whose
    section has no ``E`` line (pytest's "import file mismatch", a conftest's usage error) keeps
    its section's first :data:`REASON_LINES` lines: the summary alone ("ERROR tests/test_x.py",
    "1 error") never says why the run stopped."""
    lines = output.replace("\r\n", "\n").split("\n")
    keep = [ln for ln in lines if re.match(r"\s*E\s|FAILED |ERROR |_{3,} .* _{3,}|.*Error:|.*\d+ (failed|passed|error)",
                                          ln)]
    for start, line in enumerate(lines):
        if re.match(r"_{3,} ERROR collecting .* _{3,}", line):
            body = list(itertools.takewhile(lambda ln: not re.match(r"(_{3,}|={3,}) ", ln), lines[start + 1:]))
            if not any(re.match(r"\s*E\s", ln) for ln in body):
                at = keep.index(line) + 1
                keep[at:at] = [ln for ln in body if ln.strip()][:REASON_LINES]
    text = "\n".join(dict.fromkeys(keep)) if keep else "\n".join(lines[-25:])
    return text[-limit:]


REASON_LINES = 6
"""The lines of a collection error's section kept when it has no ``E`` line."""


_IMPORT_NAME_RE = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_MODULE_ATTR_RE = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")
NOT_DEFINED = ("{name} is not in {path}: your answer did not define it. Send def {name} complete, as the task describes "
               "it, in a ```python block whose first line is `# file: {path}` (the test is not the problem).")


def missing_asked_names(summary: str, goal: str, known: list[str]) -> list[tuple[str, str]]:
    """``(name, path)`` of names the task asks for that the checks could not import from a module
    of the repository (``cannot import name 'count_words' from 'pkg.text'``, or
    ``module ... has no attribute``). When an answer sends the module back without the asked
    function beside a test importing it, a repair that does not name the missing function gets
    the test rewritten, attempt after attempt, and the function is never written."""
    words = set(re.findall(r"[A-Za-z_]\w*", goal))
    found = [(m.group(1), m.group(2)) for m in _IMPORT_NAME_RE.finditer(summary)]
    found += [(m.group(2), m.group(1)) for m in _MODULE_ATTR_RE.finditer(summary)]
    out = []
    for name, module in found:
        path = module.replace(".", "/") + ".py"
        if name in words and path in known and (name, path) not in out:
            out.append((name, path))
    return out


_ASKED_DEF_RE = re.compile(r"\b(?:function|method|def)\s+`?([A-Za-z_]\w*)`?\s*\(")
ASKED_DEF = ("Your answer did not write {names}. Write only {names}, complete from its first line to the end, as the "
             "task describes it, in one ```python block whose first line is `# file: {path}`. Do not send any other "
             "definition of the file. No explanations.")
_NEW_CLASS_RE = re.compile(r"\bnew\s+(?:[a-z]+\s+){0,2}?(?P<kind>error|exception|class)(?:\s+class)?\s+`(?P<name>[A-Z]\w*)`"
                           r"|\bnew\s+`(?P<name2>[A-Z]\w*)`\s+(?P<kind2>error|exception|class)\b")
_SUBCLASS_RE = re.compile(r"\bsubclass\s+of\s+`?([A-Za-z_][\w.]*[A-Za-z_0-9])`?")
_SENTENCE_END_RE = re.compile(r"[.;!?](?:\s|$)")


def asked_classes(goal: str) -> dict[str, str]:
    """The classes a task asks to add by name ("raise a new error `InsufficientStock` (define it in
    inventory/errors.py as a subclass of InventoryError)", "a new `Money` class"), each with its
    class line: the base the same sentence names after "subclass of", else ``Exception`` for an
    error or exception, else none (``class Money:``). In the task's order."""
    found: dict[str, str] = {}
    for m in _NEW_CLASS_RE.finditer(goal):
        name, kind = m.group("name") or m.group("name2"), m.group("kind") or m.group("kind2")
        end = _SENTENCE_END_RE.search(goal, m.end())
        base = _SUBCLASS_RE.search(goal, m.end(), end.start() if end else len(goal))
        parent = base.group(1) if base else "Exception" if kind in ("error", "exception") else ""
        found.setdefault(name, f"class {name}({parent}):" if parent else f"class {name}:")
    return found


def asked_functions(goal: str) -> list[str]:
    """The functions a task asks for by name: ``NAME(`` after "function", "method" or "def" ("Add a
    function count_words(text: str) -> int"), in order."""
    return list(dict.fromkeys(_ASKED_DEF_RE.findall(goal)))


def task_functions(goal: str) -> list[str]:
    """The functions a task names, in order: those it asks for (:func:`asked_functions`)
    and every ``name(`` of its text."""
    return list(dict.fromkeys([*asked_functions(goal), *re.findall(r"\b([A-Za-z_]\w*)\(", goal)]))


ADDS = " The task adds {names}: call {them} in the tests."


def adds_sentence(goal: str) -> str:
    """The sentence a test ask ends with when the task asks for functions by name
    (:func:`asked_functions`), else "". Without it a small model's tests copy the example test
    or test an existing function of the file instead of the new one (``parse``, not the asked
    ``parse_date``), and so check nothing the task adds."""
    names = asked_functions(goal)
    return ADDS.format(names=", ".join(names), them="it" if len(names) == 1 else "them") if names else ""


def task_words(goal: str, symbols: list[tuple[str, str, int]]) -> set[str]:
    """The words a test of the task would use: the functions it asks for by name, the existing
    names it mentions (``symbols``, :attr:`.Localized.symbols`), its options (``--verbose``) and its
    backticked words (`` `list` ``)."""
    words = set(asked_functions(goal)) | {name for name, _, _ in symbols}
    words |= set(re.findall(r"(?<![\w-])--[A-Za-z][\w-]*", goal))
    words |= {w for quoted in re.findall(r"`([^`\n]+)`", goal) for w in re.findall(r"-{0,2}[A-Za-z_][\w-]*", quoted)}
    return words


def absent_definitions(names: list[str], texts: list[str]) -> list[str]:
    """The names of ``names`` that no ``def`` or ``class`` in ``texts`` (Python sources) defines, at any depth."""
    return [name for name in names if not any(
        re.search(rf"^[ \t]*(?:(?:async[ \t]+)?def|class)[ \t]+{re.escape(name)}\b", text, re.M) for text in texts)]


def stated_def_lines(goal: str, names: list[str]) -> list[str]:
    """The ``def`` lines the task states for ``names``: ``NAME(params) -> annotation`` as written in
    the task ("Add a function count_words(text: str) -> int to ..."), each kept only when it parses as a
    def line (``ast``). Of several ``NAME(`` in the task, the one after "function", "method" or
    "def" is taken, else one followed by ``->``, else the first (an example call such as
    ``count_words(text="a b")`` would give its arguments as parameters); the annotation is the
    longest run of words after ``->`` that parses (``Note | None``, ``dict[str, list[int]]``);
    ``async def`` stays async. A name the task writes with no parameter list has none."""
    lines = []
    for name in names:
        found = [(m.start(), m.end(), _closing(goal, m.end() - 1)) for m in re.finditer(rf"\b{re.escape(name)}\s*\(", goal)]
        closed = [(start, end, close) for start, end, close in found if close is not None]
        if not closed:
            continue
        named = {m.start(1) for m in _ASKED_DEF_RE.finditer(goal)}  # "function NAME(" as asked_functions reads it
        start, end, close = min(closed, key=lambda f: (f[0] not in named, not goal[f[2]:].lstrip().startswith("->"), f[0]))
        head = "async def" if re.search(r"\basync\s+def\s+`?$", goal[:start]) else "def"
        call = f"{name}{goal[end - 1:close]}"
        arrow = re.match(r"\s*->\s*", goal[close:])
        words = goal[close + arrow.end():].split()[:8] if arrow else []
        returns = [" ".join(words[:n]).rstrip(".,;:`") for n in range(len(words), 0, -1)]
        for line in [*(f"{head} {call} -> {ann}:" for ann in returns if ann), f"{head} {call}:"]:
            try:
                func = ast.parse(f"{line}\n    pass\n").body[0]
            except SyntaxError:
                continue
            assert isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))  # a def line and pass
            if func.returns is None or all(isinstance(n, _ANNOTATION_NODES) for n in ast.walk(func.returns)):
                lines.append(line)
                break
    return lines


_ANNOTATION_NODES = (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Constant, ast.Load, ast.BinOp,
                     ast.BitOr)
"""What a type annotation is made of; ``int in utils.py`` parses (a comparison) but is no type."""


def _closing(text: str, at: int) -> int | None:
    """The index after the parenthesis that closes the one at ``text[at]``; None when none does."""
    depth = 0
    for i in range(at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    return None


def asked_def_ask(goal: str, names: list[str], path: str, signatures: str) -> str:
    """The user message of a fresh conversation asking only for the functions an answer left out.

    A small model may answer "Add a function count_words(...)" with the file's other functions
    sent back unchanged, without count_words, beside a test importing it, and each repair, shown
    the whole file again, sends the same answer. A conversation holding the file and those answers
    invites the copy; this one holds the task, the file's signatures only, and the ask. It ends
    with the block's start, the def lines the task states (:func:`stated_def_lines`): asked so
    without it, the model may still send the file's other functions, rewritten, at every
    temperature, and never the asked one. A class the task asks for by name (:func:`asked_classes`)
    is asked for the same way, its class line first (a new error class's file was sent back
    unchanged, ask after ask).
    """
    shown = f"\n\n{path} has these definitions now (signatures only):\n```python\n{signatures}\n```" if signatures else ""
    classes = asked_classes(goal)
    lines = [classes[name] for name in names if name in classes] + stated_def_lines(
        goal, [name for name in names if name not in classes])
    start = (f"\nThe block starts:\n```python\n# file: {path}\n" + "\n".join(lines) + "\n```") if lines else ""
    return f"Task:\n{goal}{shown}\n\n" + ASKED_DEF.format(names=", ".join(names), path=path) + start


_FAILED_RE = re.compile(r"^(?:FAILED|ERROR) ([^\s:]+\.py)\b", re.M)
TEST_ONLY = ("Every failure is in {files}, the test written for this task; the repository's other tests pass with "
             "the change. If the code does what the task asks, the test is wrong: rewrite the failing test functions "
             "(complete), calling the code as it is defined.")
UNMOVED = ("These asserts fail the same way on the code as it was before the change, so the change does not touch "
           "what they check:\n{cases}\nUnless the task asks to change those values, the test is wrong there: expect "
           "what the code gives, or leave those asserts out.")
"""Added to :data:`TEST_ONLY` for the failing asserts the change did not move (:func:`.madeup.unmoved`):
told only that the test is wrong, a model sends back the same expected values (``'1 MB'`` for a
function that prints ``'1.0 MB'``), repair after repair."""
UNMOVED_AS_IT_IS = ("No code changed, and these asserts fail on the code as it is:\n{cases}\nA test of what the code "
                    "already does expects what the code gives: write each of them with the value the code gives, or "
                    "leave it out.")
"""The same for a test added with no change to the code: every failing assert of it is wrong."""
SEND_ONLY = " Send only {files}: code that does not change is not sent again."
"""Added to :data:`TEST_ONLY` when every failure is an assert of the new tests (the code files are
then not shown again either, :meth:`.guided.GuidedTask._attempt`): else a small model's test
repairs send an unchanged code file whole before the test, and the reply's token cap cuts the
test, repair after repair. Not when the code raised (``Store.all() got an unexpected keyword
argument 'since'``): told to send the test alone, the model rewrites the test around wrong code."""


def failing_files(output: str) -> set[str]:
    """The files pytest's short summary names (``FAILED path::test - ...``, ``ERROR path``)."""
    return set(_FAILED_RE.findall(output.replace("\r\n", "\n")))


_FAILED_TEST_RE = re.compile(r"^(?:FAILED|ERROR) ([^\s:]+\.py)(?:::(\S+))?(?: - (.*))?$", re.M)


def failing_tests(output: str) -> list[tuple[str, str | None, str]]:
    """The tests pytest's short summary names: ``(path, test_x, message)`` for ``FAILED
    path::Class::test_x[id] - AssertionError: ...``, ``(path, None, message)`` for an error of the
    whole file (``ERROR path``); message "" when the line gives none."""
    return [(path, name.split("[", 1)[0].rsplit("::", 1)[-1] if name else None, message)
            for path, name, message in _FAILED_TEST_RE.findall(output.replace("\r\n", "\n"))]


def goal_text(prompt: str) -> str:
    """The task text of a turn's prompt without the lines about ``update_task`` (the harness reports)
    and without the sentence on where the worktree starts (:data:`foreman.repos.refs.BASE_NOTE_RE`):
    it quotes the base's last commit subject, which is not the task's text, and words of it were
    read as the task's ("..., with tests" made a task that asks for no test ask for one)."""
    kept = "\n".join(ln for ln in prompt.split("\n") if "update_task" not in ln and not refs.BASE_NOTE_RE.match(ln))
    return re.sub(r"\n{3,}", "\n\n", kept).strip()


def ci_command_for(settings: Any, cwd: Path) -> str | None:
    """The check command: the configured ``ci`` setting, else the one detected for the project."""
    command = getattr(settings, "ci", None) or ci.detect_ci_command(cwd)
    if not command:
        return None
    return command if isinstance(command, str) else shlex.join(command)
