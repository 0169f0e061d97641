"""The raise ask: a new test expects an error the code does not raise yet, so the function its
raises-block calls is shown alone and asked for, changed to raise it; and the ``raise-where``
check: the new tests must expect the error from a call the task names (:func:`elsewhere`).

Why: a task asking for an error on bad input needs two changes, the error (often a new class) and
the function that must raise it. A small model that wrote the class and a right test, told only
that the test failed ("DID NOT RAISE"), rewrites the test or sends more classes, and the function
is never changed. The failing test says which function it is: the call inside ``with
pytest.raises(E):`` (or ``self.assertRaises(E)``, or ``assertRaises(E, f, ...)``). Like the line
ask (:mod:`.lineask`), the harness finds the place and the model writes the change.

Pure: text in, text out (the caller gives the files' texts).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .localize import numbered
from .uses import definitions, tail_name

_NOT_RAISED_RE = re.compile(r"DID NOT RAISE\b|^AssertionError: [\w.]+ not raised\b")
RAISE_ASK = ("Task:\n{goal}\n\n{path}, {name}:\n```python\n{shown}\n```\n\nThe test {test} calls `{call}` and expects "
             "{error}, but {name} raised nothing. Change {name} so that it raises {error} as the task asks, before it "
             "changes anything. Reply with only {name}, complete from its def line to its end, in one ```python block "
             "whose first line is `# file: {path}`. No explanations.")


@dataclass(frozen=True)
class NotRaised:
    """A new test's expected error that the function it calls did not raise.

    Attributes:
        test: the test function. error: the error's name. call: the call's source.
        path: the file defining the called function. name: the function's name.
        first, last: its definition's lines (1-based, inclusive, decorators included).
    """

    test: str
    error: str
    call: str
    path: str
    name: str
    first: int
    last: int


def says_not_raised(message: str) -> bool:
    """Whether a failing test's message says an expected error was not raised (pytest's ``DID NOT
    RAISE <class 'pkg.errors.E'>``, unittest's ``AssertionError: E not raised``). The error's name
    is read from the test itself: pytest's short summary cuts long messages."""
    return bool(_NOT_RAISED_RE.search(message))


def _raises_context(expr: ast.expr) -> ast.Call | None:
    """``pytest.raises(E)`` / ``raises(E)`` / ``self.assertRaises(E)`` as a ``with`` item, else None."""
    if isinstance(expr, ast.Call):
        if tail_name(expr.func) in ("raises", "assertRaises", "assertRaisesRegex"):
            return expr
    return None


def raised_call(test_source: str, test: str) -> tuple[ast.Call, str] | None:
    """The call test function ``test`` of ``test_source`` expects to raise, with the error's name:
    the first call of the first statement inside its raises-block (the outermost call), or the
    function ``assertRaises(E, f, ...)`` is handed, as a call of ``f``. None when the test or such
    a block is not found."""
    try:
        tree = ast.parse(test_source)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != test:
            continue
        for inner in ast.walk(node):
            if isinstance(inner, (ast.With, ast.AsyncWith)):
                ctx = next((c for i in inner.items if (c := _raises_context(i.context_expr)) is not None), None)
                first = inner.body[0] if inner.body else None
                call = next((c for c in ast.walk(first) if isinstance(c, ast.Call)), None) if first else None
                if ctx is not None and ctx.args and call is not None:
                    return call, _error_name(ctx.args[0])
            if isinstance(inner, ast.Call) and (ctx := _raises_context(inner)) is not None and len(ctx.args) >= 2:
                return ast.Call(func=ctx.args[1], args=ctx.args[2:], keywords=ctx.keywords), _error_name(ctx.args[0])
    return None


def _error_name(expr: ast.expr) -> str:
    """``E`` of ``E`` or ``errors.E``; the source of anything else (a tuple of errors)."""
    return tail_name(expr) or ast.unparse(expr)


def not_raised(failures: Sequence[tuple[str, str | None, str]], tests: Mapping[str, str],
               code: Mapping[str, str]) -> NotRaised | None:
    """The first failing new test whose expected error was not raised, with the one definition of
    the function it calls (:func:`raised_call`) among ``code``'s files.

    Args:
        failures: ``(path, test, message)`` of the failing tests (:func:`.guided_text.failing_tests`).
        tests: the attempt's new tests' files, path -> text (other failures are not looked at).
        code: the repository's non-test Python files, path -> text.

    Returns:
        None when no such failure names a call, or when no file or more than one defines it (which
        one is meant is then unclear).
    """
    for path, test, message in failures:
        if not says_not_raised(message) or not test or path not in tests:
            continue
        found_call = raised_call(tests[path], test)
        if found_call is None:
            continue
        call, error = found_call
        name = tail_name(call.func)
        if name is None:
            continue
        found = [(rel, fn) for rel, text in code.items() for fn in definitions(text) if fn.name == name]
        if len(found) == 1:
            rel, fn = found[0]
            first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
            return NotRaised(test, error, ast.unparse(call)[:120], rel, name, first, fn.end_lineno or fn.lineno)
    return None


ELSEWHERE = "error tested elsewhere"
"""The outcome of an attempt whose new tests expect an error only from calls the task does not name."""
ELSEWHERE_ASK = ("The task says {named} must raise the error, but the new tests expect {error} only from {called}. A "
                 "test of another call passes whether or not {named} raises. Write the test of the error with the call "
                 "the task names inside the raises block, and change the code so that this call raises it. Send the "
                 "changed test and code complete.")


def raising_calls(test_source: str, tests: list[str]) -> list[tuple[str, str]]:
    """``(called name, error)`` of the raises-block of each of ``tests`` (test function names) in
    ``test_source`` that has one (:func:`raised_call`)."""
    found = []
    for test in tests:
        if (hit := raised_call(test_source, test)) is not None and (name := tail_name(hit[0].func)) is not None:
            found.append((name, hit[1]))
    return found


def elsewhere(named: list[str], calls: list[tuple[str, str]]) -> tuple[str, str] | None:
    """``(detail, repair ask)`` when the new tests' raises-blocks (``calls``, :func:`raising_calls`)
    call none of the functions the task names as calls (``named``: those the code defines, in the
    task's order), so the asked error may be raised somewhere the task did not ask for (a test of a
    helper passes while the call the task names still accepts the bad input); None when a block
    calls one, when there is no block, or when the task names no such function."""
    if not named or not calls or any(name in named for name, _ in calls):
        return None
    called = ", ".join(dict.fromkeys(f"{name}()" for name, _ in calls))
    error = calls[0][1]
    shown = " or ".join(f"{name}()" for name in named[:3])
    return (f"the tests expect {error} from {called}, the task names {shown}",
            ELSEWHERE_ASK.format(named=shown, error=error, called=called))


def raise_ask(goal: str, miss: NotRaised, text: str) -> str:
    """The ask for ``miss.name`` changed to raise: the task, the definition numbered as in the file
    (``text``, the file as it is now), the call and the error."""
    return RAISE_ASK.format(goal=goal, path=miss.path, name=miss.name, shown=numbered(text, miss.first, miss.last),
                            test=miss.test, call=miss.call, error=miss.error)


__all__ = ["ELSEWHERE", "ELSEWHERE_ASK", "RAISE_ASK", "NotRaised", "elsewhere", "not_raised", "raise_ask", "raised_call",
           "raising_calls", "says_not_raised"]
