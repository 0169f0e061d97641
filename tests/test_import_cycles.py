"""No import cycle among the project's modules at module level (issue 35 item 4).

A cycle makes a reader hold several modules in mind at once and breaks on a reordered import;
the flow used to be one of eleven modules. The graph is read from the source: the ``import`` and
``from`` statements a module runs when it is imported. Imports inside functions are left out (a
lazy import is allowed where a comment says why), and so are ``if TYPE_CHECKING:`` blocks, which
never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def top_level_imports(path: Path, name: str) -> set[str]:
    """The modules ``path`` imports at module level (absolute names)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                subs = {f"{base}.{alias.name}" for alias in node.names}
                found.update(subs & MODULES or {base})  # (``from . import words``: the module, not the package)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


FILES = {module_name(p): p for top in ("foreman", "protocol") for p in (ROOT / top).rglob("*.py")}
MODULES = set(FILES)


def graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports at module level; a module's own parent packages are
    left out (Python runs them first whatever the module says)."""
    return {name: {m for m in top_level_imports(path, name) if m in FILES and m != name
                   and not name.startswith(m + ".")} for name, path in FILES.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def test_the_module_graph_has_no_cycle() -> None:
    found = cycles(graph())
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_check_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert graph()["foreman.flow.step"] >= {"foreman.flow.taskrules", "foreman.flow.model"}  # relative imports resolved
