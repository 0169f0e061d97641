"""The ``uses`` check: a function the task asks the code to share is used by the code.

A task that asks to pull repeated work out into one function and have the existing code use it
("pull the regular expression out into ``words(text)`` and make both functions use it", "move
that computation into ``discount_amount`` and make the cart and the receipt use it") is tested
only where the tests call the new function: an answer that adds the function and leaves every
caller with its own copy passes every test of it, and the task would be called done with nothing
shared. So when the task asks for use (:data:`USE_ASK_RE`: "use it", "make X use", "have X
call", ...) and the answer defined a function the task names that was not there before, some
non-test Python code other than the function itself must refer to it (a call, an attribute, a
name passed on such as ``set_defaults(func=cmd_add)``; an import alone is not a use), and no other
function may still compute what it returns with its own copy (:func:`kept_copies`), and the
functions the task names as calls (the places the work moves out of) must have changed
(:func:`left_alone`).

Pure: the caller gives the files' texts. It is static, so it cannot tell a real use from a call
whose result is thrown away; the hidden checks of such tasks replace the function and watch the
callers, which a later, dynamic version could do with :mod:`.mutants`' copies.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Mapping

USE_ASK_RE = re.compile(r"\b(?:use|uses|call|calls)\s+(?:it|them|this|that|the new|one)\b"
                        r"|\b(?:make|makes|have|has|let)\b[^.;]{0,80}?\b(?:use|call|go through)\b"
                        r"|\binstead of (?:its|their) own\b"
                        r"|\binto\s+(?:(?:a|an|one|its\s+own|their\s+own|the)\s+)?"
                        r"(?:(?:new|shared|separate|single|small|private|public|helper|common)\s+)*"
                        r"(?:function|method|helper)\b", re.IGNORECASE)
"""The wording of a task that asks the existing code to use what it adds: said outright ("make both
functions use it"), or implied by moving code "into a function" (a refactor that pulls code out
into a new function and leaves the old place with its copy has done nothing)."""
KEEPS_RE = re.compile(r"\b(?:must|should|will|does|do|may)\s+not\s+change\b"
                      r"|\bexactly as (?:before|it does|they do|today)\b"
                      r"|\b(?:must|should)\s+(?:stay|remain|be)\s+(?:the same|unchanged|as (?:it is|they are|before))\b"
                      r"|\bwithout changing (?:what|how|its|their)\b", re.IGNORECASE)
"""The wording of a task that says what the code does stays as it is ("their behaviour must not
change", "load_csv must behave exactly as before")."""


def refactor(goal: str) -> bool:
    """Whether the task is a refactor: it asks the existing code to use what it adds
    (:data:`USE_ASK_RE`) and says what the code does stays as it is (:data:`KEEPS_RE`). Such a
    task adds no behaviour, so no test of what it keeps can fail on the unchanged code, and no file
    whose change keeps behaviour is needed by a test."""
    return bool(USE_ASK_RE.search(goal) and KEEPS_RE.search(goal))


_NAMED_RE = re.compile(r"`([A-Za-z_]\w*)(?:\([^`]*\))?`|\b([A-Za-z_]\w*)\(")

UNUSED = "new code unused"
"""The outcome of an attempt whose shared function nothing but the tests calls, or that another
function still does without it."""
UNUSED_ASK = ("The task asks the existing code to use {names}, but no code outside the tests refers to {them} yet: "
              "the old copies still do the work. Change the functions that did this work to call {names} instead "
              "of their own copy, and send those changed definitions complete.")
LEFT_ASK = ("The task moves that work out of {left} into {new}, but {left} {are} unchanged: still doing the work "
            "without {new}. Change {left} to call {new}, and send the changed definitions complete.")
KEPT_ASK = ("The task asks the existing code to use {name}, but {where} still computes what {name} returns with its "
            "own copy of that code. Change it to call {name} instead, and send the changed definition complete.")


def definitions(text: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function definition anywhere in a module's text (methods and nested functions
    included), in source order; [] when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def defined(text: str) -> set[str]:
    """The function names defined anywhere in a module's text (set() when it does not parse)."""
    return {fn.name for fn in definitions(text)}


def tail_name(expr: ast.expr) -> str | None:
    """The last name of a name or attribute chain: ``f`` of ``f`` and of ``mod.f`` (so a call's
    callee, ``tail_name(call.func)``, or an error class); None for anything else."""
    return expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else None


def _refers(text: str, name: str) -> bool:
    """True when ``text`` loads ``name`` (a name or an attribute) outside ``name``'s own definition."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    own: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            own |= {id(n) for n in ast.walk(node)}
    return any(id(n) not in own and ((isinstance(n, ast.Name) and n.id == name)
                                     or (isinstance(n, ast.Attribute) and n.attr == name))
               for n in ast.walk(tree))


_MIN_NODES = 5
"""The smallest returned expression (in AST nodes) whose repeat elsewhere counts as a kept copy."""
_IGNORED_FIELDS = {"ctx", "lineno", "col_offset", "end_lineno", "end_col_offset", "type_comment", "kind"}


def _matches(pattern: ast.AST, node: ast.AST, params: set[str]) -> bool:
    """True when ``node`` is ``pattern`` with any expression in place of a parameter's name (a
    module's function named through the module, ``pricing.discount_for``, is the same function)."""
    if isinstance(pattern, ast.Name) and pattern.id in params:
        return isinstance(node, ast.expr)
    if isinstance(pattern, ast.Name) and isinstance(node, ast.Attribute):
        return node.attr == pattern.id
    if isinstance(pattern, ast.Attribute) and isinstance(node, ast.Name):
        return node.id == pattern.attr
    if type(pattern) is not type(node):
        return False
    for field, value in ast.iter_fields(pattern):
        if field in _IGNORED_FIELDS:
            continue
        other = getattr(node, field, None)
        if isinstance(value, list):
            if not isinstance(other, list) or len(value) != len(other) or not all(
                    _matches(a, b, params) if isinstance(a, ast.AST) else a == b for a, b in zip(value, other, strict=True)):
                return False
        elif isinstance(value, ast.AST):
            if not isinstance(other, ast.AST) or not _matches(value, other, params):
                return False
        elif value != other:
            return False
    return True


def kept_copies(name: str, now: Mapping[str, str]) -> list[str]:
    """The functions of ``now`` (path -> text) other than ``name`` that still compute what
    ``name`` returns: an expression of at least :data:`_MIN_NODES` nodes, with a call or a text
    constant in it, that one of ``name``'s ``return`` statements returns, repeated with any
    arguments in place of its parameters (``re.findall(r"[\w']+", line)`` for ``words(text)``),
    also when the function splits it over locals assigned once (:func:`_inlined`).

    Returns:
        ``"path:function"`` of each, in file order.
    """
    trees = {}
    for rel, text in now.items():
        try:
            trees[rel] = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
    patterns: list[tuple[ast.expr, set[str]]] = []
    for tree in trees.values():
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == name:
                params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
                patterns += [(r.value, params) for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value
                             is not None and sum(1 for _ in ast.walk(r.value)) >= _MIN_NODES and any(
                                 isinstance(n, ast.Call) or (isinstance(n, ast.Constant) and isinstance(n.value, str))
                                 for n in ast.walk(r.value))]
    found = []
    for rel, tree in trees.items():
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == name:
                continue
            if any(_matches(p, n, params) for p, params in patterns for n in ast.walk(_inlined(fn))
                   if isinstance(n, ast.expr)):
                found.append(f"{rel}:{fn.name}")
    return list(dict.fromkeys(found))


class _Inline(ast.NodeTransformer):
    """Puts each read of a local assigned once in the function back to what was assigned."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values, self.depth = values, 0

    def visit_Name(self, node: ast.Name) -> ast.expr:
        value = self.values.get(node.id)
        if value is None or not isinstance(node.ctx, ast.Load) or self.depth >= _INLINE_DEPTH:
            return node
        self.depth += 1
        try:
            return self.visit(copy.deepcopy(value))
        finally:
            self.depth -= 1


_INLINE_DEPTH = 3
"""How many locals deep an inlined read is followed."""


def _inlined(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
    """``fn`` (a copy) with reads of locals assigned exactly once put back to their value, so a copy
    split over statements (``percent = f(code)`` then ``amount * percent // 100``) reads whole."""
    counts: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
    once = {name: value for name, value in values.items() if counts.get(name) == 1}
    return _Inline(once).visit(copy.deepcopy(fn)) if once else fn


def shared(goal: str, before: Mapping[str, str | None], now: Mapping[str, str]) -> list[str]:
    """The functions the task asks the code to use that the attempt added.

    Args:
        goal: the task's text.
        before: the attempt's written files as they were (None: new), path -> text.
        now: every non-test Python file of the repository as it is now, path -> text.

    Returns:
        The names, in the order the task names them; [] when the task asks for no use.
    """
    if not USE_ASK_RE.search(goal):
        return []
    named = list(dict.fromkeys(a or b for a, b in _NAMED_RE.findall(goal)))
    added = {name for rel, text in now.items() if rel in before
             for name in defined(text) - defined(before[rel] or "")}
    return [name for name in named if name in added]


def unused(goal: str, before: Mapping[str, str | None], now: Mapping[str, str]) -> list[str]:
    """The :func:`shared` functions no non-test code refers to (arguments as there)."""
    return _idle(shared(goal, before, now), now)


def _idle(names: list[str], now: Mapping[str, str]) -> list[str]:
    """The ``names`` no file of ``now`` refers to."""
    return [name for name in names if not any(_refers(text, name) for text in now.values())]


def _sources(text: str) -> dict[str, list[str]]:
    """Function name -> the source of each of its definitions in ``text`` ({} when it does not parse)."""
    found: dict[str, list[str]] = {}
    for fn in definitions(text):
        found.setdefault(fn.name, []).append(ast.unparse(fn))
    return found


def left_alone(goal: str, before: Mapping[str, str | None], now: Mapping[str, str]) -> list[str]:
    """The functions the task names as calls (``Cart.discount()``, ``render()``) that were there
    before, are not the :func:`shared` ones, and the attempt left unchanged (arguments as for
    :func:`shared`; [] when the attempt shares nothing). A task that moves work out of the
    functions it names into a new one changes each of them: one left as it was still does the
    work itself, whatever the new function does."""
    names = shared(goal, before, now)
    if not names:
        return []
    old: dict[str, list[str]] = {}
    new: dict[str, list[str]] = {}
    for rel, text in now.items():
        was = before.get(rel, text) if rel in before else text
        for name, sources in _sources(was or "").items():
            old.setdefault(name, []).extend(sources)
        for name, sources in _sources(text).items():
            new.setdefault(name, []).extend(sources)
    named = [n for n in dict.fromkeys(re.findall(r"\b([A-Za-z_]\w*)\(", goal)) if n not in names]
    return [n for n in named if n in old and n in new and sorted(old[n]) == sorted(new[n])]


def check(goal: str, before: Mapping[str, str | None], now: Mapping[str, str]) -> tuple[str, str] | None:
    """``(detail, repair ask)`` when a function the task asks the code to share is unused, or
    another function still computes what it returns (:func:`kept_copies`), or a function the task
    names was left as it was (:func:`left_alone`); None when none of these (arguments as for
    :func:`shared`)."""
    names = shared(goal, before, now)
    idle = _idle(names, now)
    if idle:
        return ", ".join(idle), UNUSED_ASK.format(names=", ".join(idle), them="it" if len(idle) == 1 else "them")
    for name in names:
        copies = kept_copies(name, now)
        if copies:
            where = ", ".join(c.split(":", 1)[1] + " in " + c.split(":", 1)[0] for c in copies)
            return f"{name}: own copy kept in {where}", KEPT_ASK.format(name=name, where=where)
    left = left_alone(goal, before, now)
    if left:
        shown = ", ".join(f"{n}()" for n in left)
        return (f"{shown} unchanged", LEFT_ASK.format(left=shown, new=", ".join(names),
                                                      are="is" if len(left) == 1 else "are"))
    return None


__all__ = ["KEEPS_RE", "KEPT_ASK", "LEFT_ASK", "UNUSED", "UNUSED_ASK", "USE_ASK_RE", "check", "defined", "definitions",
           "kept_copies", "left_alone", "refactor", "shared", "tail_name", "unused"]
