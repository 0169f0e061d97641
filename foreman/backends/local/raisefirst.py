"""The ``raise-first`` check: an error the change raises comes before any change of state.

A function that refuses bad input should leave everything as it was (the *strong exception
guarantee*, as the C++ standard library names it; Python's own containers keep it: ``list.remove``
of a missing value changes nothing). An answer that changes the object first and checks after
(``item.qty -= qty`` then ``if item.qty < 0: raise ...``) raises the right error, so a test that
only expects the error passes, while the object is left half changed; a task calling it done
would be a false success. So for each ``raise`` the attempt added, the statements that run
before it in its function (those before it in each enclosing block, in source order; the body of
a ``try`` is not counted for a raise in its handler, which runs because that body failed) must not
change state: no assignment, augmented assignment or ``del`` of an attribute or an item, and no
call of a mutating method (:data:`MUTATORS`) on something other than a container the function
made itself (:func:`_fresh`) or the ``**kwargs`` it was given. A constructor (:data:`CONSTRUCTORS`)
is left out: the object it fills in is not handed out when it raises.

Pure and static: the caller gives the files' texts. It cannot see a change made through another
function's call, and it does not follow loops (a change after the raise in a loop's body runs
before it on the next pass); it errs towards silence.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from .uses import tail_name

CHANGED_FIRST = "raised after a change"
"""The outcome of an attempt whose added ``raise`` runs after the function changed state."""
ASK = ("{where} raises {error} only after it has changed state: line {line} (`{statement}`) runs before the raise "
       "on line {raise_line}. A call refused with an error must leave everything as it was. Check the input first "
       "and raise before anything is changed, then make the change. Send the changed definition complete.")
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
                      "add", "discard", "sort", "reverse", "write", "writelines", "truncate"})
"""Method names that change the object they are called on (list, dict, set, file)."""
_FRESH_CALLS = frozenset({"list", "dict", "set", "bytearray", "copy", "deepcopy", "sorted", "defaultdict",
                          "OrderedDict", "Counter", "deque"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__"})
"""Methods whose raise hands out no half-made object (their changes of ``self`` are not checked)."""


@dataclass(frozen=True)
class ChangedFirst:
    """One added ``raise`` that runs after a change of state.

    Attributes:
        path: the file. function: the function's qualified name (``Class.method``).
        error: the raised expression's source. line: the changing statement's line.
        statement: its source (first line). raise_line: the raise's line.
    """

    path: str
    function: str
    error: str
    line: int
    statement: str
    raise_line: int


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of ``tree`` with its qualified name (methods as ``Class.method``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, _FUNCTIONS):
            yield f"{prefix}{node.name}", node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what is under it, nested functions, lambdas and classes left out."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (*_FUNCTIONS, ast.Lambda, ast.ClassDef)):
            yield from _own_nodes(child)


def _raises(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.Raise, list[ast.stmt]]]:
    """Each ``raise`` of an error in ``fn`` (a bare re-raise left out) with the statements that run
    before it (see the module docstring), outermost first."""
    found: list[tuple[ast.Raise, list[ast.stmt]]] = []

    def walk(body: list[ast.stmt], before: list[ast.stmt]) -> None:
        for i, stmt in enumerate(body):
            earlier = before + body[:i]
            if isinstance(stmt, ast.Raise):
                if stmt.exc is not None:
                    found.append((stmt, earlier))
            elif isinstance(stmt, ast.Try | getattr(ast, "TryStar", ast.Try)):
                walk(stmt.body, earlier)
                for handler in stmt.handlers:
                    walk(handler.body, earlier)
                walk(stmt.orelse, earlier + stmt.body)
                walk(stmt.finalbody, earlier)
            elif not isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)):
                for field in ("body", "orelse"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        walk(inner, earlier)
                for case in getattr(stmt, "cases", []):
                    walk(case.body, earlier)

    walk(fn.body, [])
    return found


def _root(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts from (``self`` of ``self.items[k].qty``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    if isinstance(node, ast.Call):  # (self.get(k).qty: what the call returns is not the function's own)
        return None
    return node.id if isinstance(node, ast.Name) else None


def _fresh(statements: list[ast.stmt]) -> set[str]:
    """The local names bound, in ``statements``, to a container made there (a display, a
    comprehension, or a call such as ``list(...)`` / ``copy.copy(...)``, :data:`_FRESH_CALLS`)."""
    fresh: set[str] = set()
    for stmt in statements:
        for node in _own_nodes(stmt):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                value = node.value
                made = isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp
                                  | ast.Tuple | ast.Constant | ast.JoinedStr | ast.BinOp)
                if isinstance(value, ast.Call):
                    made = tail_name(value.func) in _FRESH_CALLS
                (fresh.add if made else fresh.discard)(node.targets[0].id)
    return fresh


def _change(stmt: ast.stmt, fresh: set[str]) -> bool:
    """True when ``stmt`` changes state that is not one of the ``fresh`` locals (module docstring)."""
    if isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)):  # defined, not run
        return False
    for node in _own_nodes(stmt):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            owner = node.func.value
            if not (isinstance(owner, ast.Name) and owner.id in fresh) and _root(owner) not in fresh:
                return True
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute | ast.Subscript) and isinstance(part.ctx, ast.Store | ast.Del) \
                        and _root(part) not in fresh:
                    return True
    return False


def changed_first(path: str, before: str | None, now: str) -> list[ChangedFirst]:
    """The raises the change added to ``path`` (``before`` -> ``now``; None: a new file) that run
    after a change of state; [] when ``now`` does not parse."""
    try:
        tree = ast.parse(now)
    except (SyntaxError, ValueError):
        return []
    old: dict[str, set[str]] = {}
    try:
        old_tree = ast.parse(before) if before else None
    except (SyntaxError, ValueError):
        old_tree = None
    if old_tree is not None:
        for name, fn in _functions(old_tree):
            old[name] = {ast.unparse(r) for r, _ in _raises(fn)}
    found = []
    for name, fn in _functions(tree):
        if fn.name in CONSTRUCTORS:
            continue
        for raised, earlier in _raises(fn):
            if ast.unparse(raised) in old.get(name, set()):
                continue
            fresh = _fresh(earlier) | ({fn.args.kwarg.arg} if fn.args.kwarg else set())
            first = next((s for s in earlier if _change(s, fresh)), None)
            if first is not None:
                assert raised.exc is not None
                found.append(ChangedFirst(path, name, ast.unparse(raised.exc), first.lineno,
                                          ast.unparse(first).splitlines()[0][:100], raised.lineno))
    return found


def check(before: Mapping[str, str | None], now: Mapping[str, str]) -> tuple[str, str] | None:
    """``(detail, repair ask)`` for the first added raise that runs after a change of state, over
    the attempt's written files (``before``: path -> text as it was, None: new; ``now``: path ->
    text as it is, files of ``before`` not in ``now`` skipped); None when there is none."""
    for path, old in before.items():
        if path in now:
            for found in changed_first(path, old, now[path]):
                where = f"{found.function} in {found.path}"
                error = found.error.split("(", 1)[0]
                return (f"{where}: line {found.line} changes state before the raise of {error} (line "
                        f"{found.raise_line})",
                        ASK.format(where=where, error=error, line=found.line, statement=found.statement,
                                   raise_line=found.raise_line))
    return None


__all__ = ["ASK", "CHANGED_FIRST", "CONSTRUCTORS", "MUTATORS", "ChangedFirst", "changed_first", "check"]
