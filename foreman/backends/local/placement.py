"""Symbol placement: put complete Python definitions into a file by name.

Small models cannot reproduce a whole file or an exact SEARCH passage, but they can write the
one function, class or method they changed. This module places such a snippet with the
``ast`` parser:

- a top-level function or class whose name the file already defines replaces that definition
  (decorators included); a new one is appended at the end of the file;
- a class the file already has is merged member by member: each method replaces the method of
  the same name or is appended to the class body; methods the snippet omits are kept;
- a bare ``def m(self, ...)`` replaces the method ``m`` of the one class that has it;
- imports are merged without duplicates (names added to an existing one-line
  ``from m import ...``, new statements after the file's last top-level import, a new
  ``from __future__`` import before the others);
- a module-level ``NAME = ...`` replaces the assignment of that name or goes after the imports;
- other top-level statements (example calls, ``if __name__ == "__main__":``) are not placed
  and are listed in :attr:`Placement.dropped`;
- the file's line endings (CRLF stays CRLF on every line), indentation unit and final newline
  are kept; a snippet or result that does not parse (the result: compile) is refused (:class:`PlacementRefused`).

Pure: strings in, strings out.
"""

from __future__ import annotations

import ast
import itertools
import sys
import textwrap
from dataclasses import dataclass, field

from .indentation import indent_unit, newline_of, reindent, with_newline
from .scopes import unbound_names

_DEF = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNC = (ast.FunctionDef, ast.AsyncFunctionDef)


class PlacementRefused(ValueError):
    """The snippet cannot be placed; the message says why (for the model and the trace)."""


@dataclass
class Placement:
    """A placed snippet.

    Attributes:
        text: the file's new text, in the file's own line endings.
        actions: what was done, e.g. ``["replaced def parse_date", "added import re"]``.
        dropped: top-level statements of the snippet that were not placed (their first line).
    """

    text: str
    actions: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _end(node: ast.stmt) -> int:
    """The last line of a parsed statement (``ast.parse`` sets ``end_lineno`` on every one)."""
    return node.end_lineno or node.lineno


def _lead(line: str) -> str:
    """The whitespace ``line`` starts with."""
    return line[:len(line) - len(line.lstrip())]


def _block(lines: list[str], node: ast.stmt) -> list[str]:
    return lines[_start(node) - 1:node.end_lineno]


def _parse(text: str, what: str, *, compiled: bool = False) -> ast.Module:
    """Parse ``text``; with ``compiled``, also compile it: some errors only the compiler finds
    (a ``from __future__`` import after other code, ``nonlocal`` of a parameter), and a file
    with one of them fails at import."""
    try:
        tree = ast.parse(text)
        if compiled:
            compile(tree, "<placed>", "exec", dont_inherit=True)
        return tree
    except (SyntaxError, ValueError) as exc:
        where = f"line {exc.lineno}: {exc.msg}" if isinstance(exc, SyntaxError) else str(exc)
        raise PlacementRefused(f"{what} is not valid Python ({where}); "
                               "write the complete definition again") from None


def _import_keys(node: ast.stmt) -> list[tuple]:
    if isinstance(node, ast.Import):
        return [("import", a.name, a.asname) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [("from", node.level, node.module, a.name, a.asname) for a in node.names]
    return []


def _assigned_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _first_arg(node: ast.stmt) -> str | None:
    if isinstance(node, _FUNC) and node.args.args:
        return node.args.args[0].arg
    return None


class _Editor:
    """Line edits in original coordinates, applied bottom-up."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.edits: list[tuple[int, int, int, list[str]]] = []  # (first, last, order, new)

    def replace(self, first: int, last: int, new: list[str]) -> None:
        """Replace lines ``first``..``last``; the same range replaced again: the later text wins."""
        self.edits = [e for e in self.edits if (e[0], e[1]) != (first, last) or first > last]
        for a, b, _, _ in self.edits:
            if a <= last and first <= b and last >= first and b >= a:
                raise PlacementRefused("the snippet defines the same thing twice; write each definition once")
        self.edits.append((first, last, len(self.edits), new))

    def insert(self, before: int, new: list[str], *, first: bool = False) -> None:
        """Insert ``new`` before 1-based line ``before`` (len+1: at the end); ``first``: before
        other insertions at the same line."""
        self.edits.append((before, before - 1, -1 if first else len(self.edits), new))

    def result(self) -> list[str]:
        lines = list(self.lines)
        for first, last, _, new in sorted(self.edits, key=lambda e: (e[0], e[2]), reverse=True):
            lines[first - 1:last] = new
        return lines


def place_python(original: str, snippet: str, *, module: str | None = None, check_names: bool = True) -> Placement:
    """Place the definitions and imports of ``snippet`` into the Python file text ``original``.

    Args:
        original: the file's current text ("" for a new file: the snippet becomes the file).
        snippet: the model's code (complete definitions, imports, constants), any indentation.
        module: the file's dotted module name; imports of the file's own module are skipped.
        check_names: refuse a placed function or method that uses a name nothing binds (see
            :mod:`.scopes`), after importing a standard-library module it uses as one
            (``argparse.ArgumentParser()`` without ``import argparse``); off for test files, whose
            imports are added afterwards and whose code the checks run anyway.

    Returns:
        The :class:`Placement`.

    Raises:
        PlacementRefused: the snippet or the file does not parse, the snippet places nothing,
            a bare method names no single class, the result does not compile, or (with
            ``check_names``) a placed definition uses a name nothing defines.
    """
    newline = newline_of(original) if original else newline_of(snippet)
    code = textwrap.dedent(snippet.replace("\r\n", "\n").expandtabs(8) if "\t" in snippet and " " in snippet
                           else snippet.replace("\r\n", "\n")).strip("\n")
    if not code.strip():
        raise PlacementRefused("the code block is empty")
    tree = _parse(code + "\n", "the code block")
    snippet_lines = code.split("\n")
    base = original.replace("\r\n", "\n")
    if not base.strip():
        text = code + "\n"
        placed = _parse(text, "the code block", compiled=True)
        if check_names:
            _check_names(placed, _wanted(tree.body, {}))
        return Placement(with_newline(text, newline), [f"wrote the file ({len(tree.body)} statements)"], [])
    file_tree = _parse(base, "the file")
    ends_newline = base.endswith("\n")
    lines = base[:-1].split("\n") if ends_newline else base.split("\n")
    unit, src_unit = indent_unit(lines), indent_unit(snippet_lines)
    editor = _Editor(lines)
    result = Placement("")

    top = {n.name: n for n in file_tree.body if isinstance(n, _DEF)}
    classes = {n.name: n for n in file_tree.body if isinstance(n, ast.ClassDef)}
    assigns = {name: n for n in file_tree.body if (name := _assigned_name(n))}
    imports = [n for n in file_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    have = {k for n in imports for k in _import_keys(n)}
    docstring_end = (_end(file_tree.body[0]) if file_tree.body and isinstance(file_tree.body[0], ast.Expr)
                     and isinstance(file_tree.body[0].value, ast.Constant)
                     and isinstance(file_tree.body[0].value.value, str) else 0)
    after_imports = max([docstring_end, *(_end(n) for n in imports)])
    first_def = min([n.lineno for n in file_tree.body if isinstance(n, _DEF)] or [len(lines) + 1])
    appended: list[list[str]] = []
    gap = _top_gap(lines, file_tree)

    new_imports: list[str] = []
    future: list[str] = []  # a __future__ import must come before any other statement
    snippet_defs: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for line in _merge_import(node, have, imports, lines, editor, module, result):
                (future if line.startswith("from __future__ ") else new_imports).append(line)
        elif isinstance(node, _DEF):
            snippet_defs[node.name] = node  # a later definition of the same name wins
        elif (name := _assigned_name(node)) is not None:
            block = reindent(_block(snippet_lines, node), src_unit, unit, "")
            if name in assigns:
                editor.replace(assigns[name].lineno, _end(assigns[name]), block)
                result.actions.append(f"replaced {name} =")
            else:
                editor.insert(min(after_imports + 1, first_def), [*block, ""] if after_imports else block)
                result.actions.append(f"added {name} =")
        elif node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the snippet's module docstring
        else:
            result.dropped.append(code.split("\n")[node.lineno - 1].strip()[:80])

    for name, node in snippet_defs.items():
        kind = "class" if isinstance(node, ast.ClassDef) else "def"
        block = reindent(_block(snippet_lines, node), src_unit, unit, "")
        same_name = top.get(name)
        if isinstance(node, ast.ClassDef) and isinstance(same_name, ast.ClassDef):
            _merge_class(same_name, node, snippet_lines, lines, src_unit, unit, editor, result)
        elif same_name is not None:
            editor.replace(_start(same_name), _end(same_name), block)
            result.actions.append(f"replaced {kind} {name}")
        elif _first_arg(node) in ("self", "cls"):
            owners = [c for c in classes.values() if any(isinstance(m, _FUNC) and m.name == name for m in c.body)]
            if len(owners) != 1 and len(classes) != 1:
                raise PlacementRefused(f"{name}({_first_arg(node)}, ...) is a method but the file has "
                                       f"{len(owners) or 'no'} class with it; write it inside its class")
            owner = owners[0] if owners else next(iter(classes.values()))
            wrapper = ast.ClassDef(name=owner.name, bases=[], keywords=[], body=[node], decorator_list=[])
            _merge_class(owner, wrapper, snippet_lines, lines, src_unit, unit, editor, result, header=False)
        else:
            appended.append(block)
            result.actions.append(f"appended {kind} {name}")

    if new_imports:
        if imports:
            editor.insert(after_imports + 1, new_imports, first=True)
        elif docstring_end:
            editor.insert(docstring_end + 1, ["", *new_imports], first=True)
        else:
            editor.insert(1, [*new_imports, "", ""] if first_def == 1 else [*new_imports, ""], first=True)
    if future:
        _insert_future(future, file_tree, docstring_end, lines, editor)
    if not result.actions and snippet_defs and all(name in top for name in snippet_defs):
        # the file's own definitions sent back as they are: "holds nothing to place" would read as a
        # format problem, and the model sends the same block again
        raise PlacementRefused(f"the code block only repeats {', '.join(snippet_defs)}, already in the file "
                               "unchanged; send only the definitions the task adds or changes")
    if not result.actions:
        raise PlacementRefused("the code block holds no function, class, import or constant to place"
                               + (f" (only: {'; '.join(result.dropped)})" if result.dropped else ""))
    out = editor.result()
    while appended and out and not out[-1].strip():
        out.pop()
    for block in appended:
        out.extend([""] * gap + block)
    text = "\n".join(out) + ("\n" if ends_newline or appended else "")
    placed = _parse(text, "the file after placing the code", compiled=True)
    if check_names:
        wanted = _wanted(list(snippet_defs.values()), {n: c.name for c in classes.values() for n in
                                                       [m.name for m in c.body if isinstance(m, _FUNC)]}
                         | ({"*": next(iter(classes))} if len(classes) == 1 else {}))
        modules = sorted({n for names in unbound_names(placed, wanted).values() for n in names}
                         & sys.stdlib_module_names)
        if modules and not code.startswith(f"import {modules[0]}\n"):  # (once: the import is the one fix)
            return place_python(original, "".join(f"import {m}\n" for m in modules) + code, module=module,
                                check_names=check_names)
        _check_names(placed, wanted)
    return Placement(with_newline(text, newline), result.actions, result.dropped)


def _wanted(nodes: list[ast.stmt], method_owner: dict[str, str]) -> set[str]:
    """The qualified names a snippet's definitions get in the file: ``f``, ``Class.m``; a bare
    method goes to the class that has it (``method_owner``; ``"*"``: the file's one class)."""
    wanted: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            wanted.update(f"{node.name}.{m.name}" for m in node.body if isinstance(m, _FUNC))
        elif isinstance(node, _FUNC):
            owner = method_owner.get(node.name) or method_owner.get("*") if _first_arg(node) in ("self", "cls") else None
            wanted.add(f"{owner}.{node.name}" if owner else node.name)
    return wanted


def _check_names(tree: ast.Module, wanted: set[str]) -> None:
    missing = unbound_names(tree, wanted)
    if missing:
        raise PlacementRefused("; ".join(
            f"{qualname} uses {', '.join(sorted(names))}, which nothing defines (not a parameter, a local "
            "variable, an import or a module-level name): define or import it, or use the right name"
            for qualname, names in sorted(missing.items())))


def _insert_future(future: list[str], tree: ast.Module, docstring_end: int, lines: list[str],
                   editor: _Editor) -> None:
    """Put new ``from __future__`` lines where Python accepts them: after the module docstring
    (and leading comments), grouped with the imports when the file starts with them."""
    after_doc = [n for n in tree.body if n.lineno > docstring_end]
    if after_doc and isinstance(after_doc[0], (ast.Import, ast.ImportFrom)):
        editor.insert(after_doc[0].lineno, future, first=True)
    elif docstring_end:
        editor.insert(docstring_end + 1, ["", *future], first=True)
    else:
        top = 1
        while top <= len(lines) and lines[top - 1].startswith("#"):
            top += 1  # a shebang or coding line stays first
        editor.insert(top, [*future, ""], first=True)


def _top_gap(lines: list[str], tree: ast.Module) -> int:
    """Blank lines the file puts between top-level definitions (2 unless it shows otherwise)."""
    defs = [n for n in tree.body if isinstance(n, _DEF)]
    for prev, node in itertools.pairwise(defs):
        blanks = 0
        line = _start(node) - 2
        while line >= 0 and not lines[line].strip():
            blanks += 1
            line -= 1
        if line + 1 == prev.end_lineno:
            return blanks
    return 2


def _merge_import(node: ast.Import | ast.ImportFrom, have: set, imports: list[ast.Import | ast.ImportFrom],
                  lines: list[str], editor: _Editor,
                  module: str | None, result: Placement) -> list[str]:
    """Record a snippet import: extend a one-line ``from`` import or return new import lines."""
    if isinstance(node, ast.ImportFrom) and module and node.level == 0 and node.module == module:
        return []  # the file importing from itself
    missing = [a for a, key in zip(node.names, _import_keys(node), strict=True) if key not in have]
    if not missing:
        return []
    have.update(_import_keys(node))
    if isinstance(node, ast.ImportFrom):
        for old in imports:
            if (isinstance(old, ast.ImportFrom) and old.module == node.module and old.level == node.level
                    and old.lineno == old.end_lineno and "(" not in lines[old.lineno - 1]
                    and "#" not in lines[old.lineno - 1] and all(a.name != "*" for a in old.names)):
                merged = ast.ImportFrom(module=old.module, names=[*old.names, *missing], level=old.level)
                line = ast.unparse(merged)
                if len(line) <= 99:
                    editor.replace(old.lineno, old.lineno, [line])
                    old.names = [*old.names, *missing]
                    result.actions.append(f"added {', '.join(a.name for a in missing)} to the import from "
                                          f"{'.' * old.level}{old.module or ''}")
                    return []
        line = ast.unparse(ast.ImportFrom(module=node.module, names=missing, level=node.level))
    else:
        line = ast.unparse(ast.Import(names=missing))
    result.actions.append(f"added {line}")
    return [line]


def _merge_class(old: ast.ClassDef, new: ast.ClassDef, snippet_lines: list[str], lines: list[str], src_unit: str,
                 unit: str, editor: _Editor, result: Placement, *, header: bool = True) -> None:
    """Merge a snippet class into the file's class of the same name, member by member."""
    body_prefix = _lead(lines[old.body[0].lineno - 1]) if old.body else unit
    members = {m.name: m for m in old.body if isinstance(m, _FUNC)}
    attrs = {name: m for m in old.body if (name := _assigned_name(m))}
    first_method = min([_start(m) for m in old.body if isinstance(m, _FUNC)] or [_end(old) + 1])
    tail: list[list[str]] = []
    if header and old.body and old.body[0].lineno > old.lineno and new.body and new.body[0].lineno > new.lineno:
        same = (ast.dump(ast.Module(body=[ast.ClassDef(name=old.name, bases=old.bases, keywords=old.keywords, body=[],
                                                        decorator_list=old.decorator_list)], type_ignores=[]))
                == ast.dump(ast.Module(body=[ast.ClassDef(name=new.name, bases=new.bases, keywords=new.keywords,
                                                           body=[], decorator_list=new.decorator_list)],
                                       type_ignores=[])))
        if not same:
            head_new = snippet_lines[_start(new) - 1:new.lineno]
            editor.replace(_start(old), old.lineno, reindent(head_new, src_unit, unit,
                                                              _lead(lines[old.lineno - 1])))
            result.actions.append(f"replaced the header of class {old.name}")
    for member in new.body:
        block = _block(snippet_lines, member)
        snippet_prefix = _lead(block[0]) if block else ""
        block = reindent([b[len(snippet_prefix):] if b.startswith(snippet_prefix) else b.lstrip() for b in block],
                          src_unit, unit, body_prefix)
        if isinstance(member, _FUNC):
            if member.name in members:
                target = members[member.name]
                editor.replace(_start(target), _end(target), block)
                result.actions.append(f"replaced method {old.name}.{member.name}")
            else:
                tail.append(block)
                result.actions.append(f"appended method {old.name}.{member.name}")
        elif (name := _assigned_name(member)) is not None:
            if name in attrs:
                editor.replace(attrs[name].lineno, _end(attrs[name]), block)
                result.actions.append(f"replaced {old.name}.{name} =")
            else:
                editor.insert(first_method, block if first_method > _end(old) else [*block, ""])
                result.actions.append(f"added {old.name}.{name} =")
        elif isinstance(member, (ast.Pass, ast.Expr)):
            continue  # docstrings, pass, "..."
        else:
            result.dropped.append(f"{old.name}: {snippet_lines[member.lineno - 1].strip()[:70]}")
    if tail:
        editor.insert(_end(old) + 1, [line for block in tail for line in ["", *block]])


__all__ = ["Placement", "PlacementRefused", "newline_of", "place_python", "with_newline"]
