"""A function-level import only where a comment says why (issue 35 item 4).

An import inside a function hides a dependency from a reader of the module's head and from the
cycle check (tests/test_import_cycles.py), so it needs a reason: an optional extra
(claude-agent-sdk, openai, ray), a heavy import kept off the start-up path, a subcommand's or a
backend's modules loaded only when they run, a cycle it avoids. The reason is a comment on the
import's line, or on the line above it; a run of consecutive imports shares the comment above
its first one.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def comment_lines(source: str) -> tuple[set[int], set[int]]:
    """``(lines holding a comment, lines holding only a comment)``, 1-based (strings are not comments)."""
    anywhere: set[int] = set()
    alone: set[int] = set()
    lines = source.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            row = tok.start[0]
            anywhere.add(row)
            if lines[row - 1].lstrip().startswith("#"):
                alone.add(row)
    return anywhere, alone


def unexplained(source: str) -> list[tuple[int, str]]:
    """``(line, statement)`` of each import inside a function without a comment saying why."""
    tree = ast.parse(source)
    anywhere, alone = comment_lines(source)
    found: list[tuple[int, str]] = []

    def explained(node: ast.stmt) -> bool:
        return any(row in anywhere for row in range(node.lineno, (node.end_lineno or node.lineno) + 1))

    def check_body(body: list[ast.stmt]) -> None:
        above = False  # a comment-only line above this import, or above the run of imports it ends
        previous: ast.stmt | None = None
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                in_run = isinstance(previous, (ast.Import, ast.ImportFrom)) and previous.end_lineno == node.lineno - 1
                above = node.lineno - 1 in alone or (in_run and above)
                if not (above or explained(node)):
                    found.append((node.lineno, ast.unparse(node)))
            previous = node

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            now_inside = inside or isinstance(child, FUNCTIONS)
            for field in ("body", "orelse", "finalbody"):
                body = getattr(child, field, None)
                if now_inside and isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                    check_body(body)
            visit(child, now_inside)

    visit(tree, False)
    return sorted(set(found))


def test_every_function_level_import_says_why() -> None:
    problems = [f"{path.relative_to(ROOT)}:{line}: {text}"
                for top in ("foreman", "protocol") for path in sorted((ROOT / top).rglob("*.py"))
                for line, text in unexplained(path.read_text())]
    assert problems == [], ("imports inside functions without a comment saying why (move them to the top, or say "
                            "why not on their line or the line above):\n" + "\n".join(problems))


def test_the_check_sees_an_unexplained_import() -> None:
    source = '''
import os


def f():
    import json
    return json


def g():
    import ray  # (the ray extra)
    # (the claude extra)
    import claude_agent_sdk
    from a import b
    x = "# not a comment"
    import shlex
    return ray, claude_agent_sdk, b, x, shlex


class C:
    def m(self):
        if True:
            from . import walker
        try:
            import openai  # (the local extra)
        except ImportError:
            from q import r
        return walker, openai, r
'''
    assert unexplained(source) == [(6, "import json"), (16, "import shlex"), (23, "from . import walker"),
                                   (27, "from q import r")]
