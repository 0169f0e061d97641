"""The signatures a test may call, shown to the model when it writes one.

A small model writing a test calls what it has seen: a class defined in a file it was not shown
gets made-up arguments (``Item(title=...)`` for a dataclass of ``id, name, created``). So guided
mode shows, beside the files it localized, one line per public function and class of the modules
the test would import: the modules the target files import from the repository, and those the
example test imports (``from helpers import run_cli`` -> ``tests/helpers.py``), each with its
parameters and the first line of its docstring.

Pure: file texts in, lines out (the ``ast`` parser).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _doc(node: ast.AST) -> str:
    doc = ast.get_docstring(node) if isinstance(node, (*_DEFS, ast.ClassDef)) else None
    first = (doc or "").strip().split("\n", 1)[0].strip()
    return f"  # {first[:110]}" if first else ""


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef, skip_self: bool) -> str:
    args = node.args
    if skip_self and args.args and args.args[0].arg in ("self", "cls"):  # self never has a default
        args = ast.arguments(posonlyargs=args.posonlyargs, args=args.args[1:], vararg=args.vararg,
                             kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults, kwarg=args.kwarg,
                             defaults=args.defaults)
    return ast.unparse(args)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, indent: str = "", skip_self: bool = False) -> str:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{indent}{prefix} {node.name}({_params(node, skip_self)}){returns}{_doc(node)}"


def _class(node: ast.ClassDef) -> list[str]:
    """``class Name(fields)`` (``__init__``'s parameters, else the dataclass fields, else, for a
    class with neither, its bases as written: ``class UnknownCode(ValueError)``, so a test of an
    error knows what it is), then its public methods, indented, without ``self``."""
    init = next((s for s in node.body if isinstance(s, _DEFS) and s.name == "__init__"), None)
    if init is not None:
        params = _params(init, skip_self=True)
    else:
        params = ", ".join(f"{ast.unparse(s.target)}: {ast.unparse(s.annotation)}"
                           + (f" = {ast.unparse(s.value)}" if s.value is not None else "")
                           for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
        params = params or ", ".join(ast.unparse(b) for b in node.bases)
    lines = [f"class {node.name}({params}){_doc(node)}"]
    lines.extend(_function(item, "    ", skip_self=True) for item in node.body
                 if isinstance(item, _DEFS) and not item.name.startswith("_"))
    return lines


def signature_lines(text: str) -> list[str]:
    """One line per public top-level function and class of a Python file (methods indented
    under their class), with parameters and the first docstring line; [] when it does not parse."""
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return []
    lines: list[str] = []
    for node in tree.body:
        if isinstance(node, _DEFS) and not node.name.startswith("_"):
            lines.append(_function(node))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            lines.extend(_class(node))
    return lines


def import_names(text: str, rel: str = "") -> list[str]:
    """The dotted modules a Python file imports, in source order, no name twice: ``import a.b``
    gives ``a.b``; ``from m import x`` gives ``m`` and ``m.x`` (``x`` may be a module). A relative
    import is resolved against the package of ``rel``, the file's repository path (PEP 328: one dot
    is that package, each further dot one package up; ``from .models import Item`` in
    ``inv/__init__.py`` gives ``inv.models``); without ``rel``, or with more dots than packages,
    it is left out. [] when the text does not parse."""
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return []
    parts = rel[:-3].split("/") if rel.endswith(".py") else []
    package = parts[1:] if parts[:1] == ["src"] else parts  # (a src/ layout's folder is no package)
    package = package[:-1]  # (a module's package; an __init__.py's is its folder)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not rel or node.level - 1 > len(package):
                    continue
                module = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module:
                names.append(module)
            names.extend(f"{module}.{a.name}" if module else a.name for a in node.names if a.name != "*")
    return list(dict.fromkeys(names))


def imported_files(text: str, rel: str, known: Iterable[str]) -> list[str]:
    """The repository files a Python file imports from (:func:`import_names`: ``from pkg.mod import
    x`` -> ``pkg/mod.py`` or ``pkg/mod/__init__.py``, also under ``src/``; ``from pkg import mod``
    -> ``pkg/__init__.py`` and ``pkg/mod.py``; ``from .mod import x`` in ``pkg/a.py`` ->
    ``pkg/mod.py``; a bare module is also looked for beside the file, as pytest's rootdir-less
    import puts a test's folder on ``sys.path``), in import order."""
    files = set(known)
    here = PurePosixPath(rel).parent
    found: list[str] = []
    for name in import_names(text, rel):
        base = name.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py", f"src/{base}.py", f"src/{base}/__init__.py",
                          str(here / f"{base}.py")):
            if candidate in files and candidate not in found and candidate != rel:
                found.append(candidate)
                break
    return found


def through_packages(rels: Iterable[str], read: Callable[[str], str | None], known: Iterable[str]) -> list[str]:
    """``rels`` with, after each package ``__init__.py``, the repository files it imports from: a
    package that re-exports its classes (``from inventory import Item``, ``Item`` defined in
    ``inventory/models.py``) would show no signature of them, and a test written without seeing
    a class's fields makes them up. One level; order kept, no file twice."""
    known = list(known)
    out: list[str] = []
    for rel in rels:
        more = imported_files(read(rel) or "", rel, known) if rel.endswith("__init__.py") else []
        out.extend(f for f in [rel, *more] if f not in out)
    return out


def fixture_sources(text: str, names: Iterable[str], *, budget: int = 1500) -> str:
    """The source of the pytest fixtures ``names`` in a ``conftest.py`` text, with the fixtures they
    take in turn, in file order, within ``budget`` characters ("" when none is there or the text
    does not parse). A test that takes a fixture it was not shown guesses what the fixture holds
    (its items, their values) and asserts made-up results."""
    try:
        tree = ast.parse(text.replace("\r\n", "\n"))
    except (SyntaxError, ValueError):
        return ""
    fixtures = {node.name: node for node in tree.body if isinstance(node, _DEFS) and any(
        "fixture" in ast.unparse(d) for d in node.decorator_list)}
    wanted: set[str] = set()
    todo = [n for n in names if n in fixtures]
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(a.arg for a in fixtures[name].args.args if a.arg in fixtures)
    out, size = [], 0
    for name, node in fixtures.items():
        if name not in wanted:
            continue
        source = ast.get_source_segment(text, node) or ""
        decorators = "".join(f"@{ast.unparse(d)}\n" for d in node.decorator_list)
        if size + len(source) + len(decorators) > budget:
            break
        out.append(decorators + source)
        size += len(source) + len(decorators)
    return "\n\n".join(out)


def api_text(rels: Iterable[str], read: Callable[[str], str | None], *, budget: int = 1800) -> str:
    """``# file`` headers and :func:`signature_lines` for ``rels``, within ``budget`` characters
    ("" when there is nothing to show)."""
    out: list[str] = []
    size = 0
    for rel in rels:
        lines = signature_lines(read(rel) or "")
        if not lines:
            continue
        block = "\n".join([f"# {rel}", *lines])
        if size + len(block) > budget:
            break
        out.append(block)
        size += len(block) + 1
    return "\n".join(out)


__all__ = ["api_text", "fixture_sources", "import_names", "imported_files", "signature_lines", "through_packages"]
