"""One list of error codes (issue 37 item 10): every code the daemon can send in an ``error`` reply
is in ``protocol.errors.ERROR_CODES`` and in ``docs/protocol.md``'s table, and the doc's table
and the schema's ``Error.code`` are that list, no more and no less.

The codes the daemon can send are found, not listed here: the ``code`` of every subclass of
``ForemanError`` in any module of ``foreman`` (the server replies ``error_frame(exc.code, ...)``
for any of them), and every code the server and the decoder write as a literal
(``error_frame("unauthorized", ...)``, ``DecodeError("bad_json", ...)``, ``Error(code=...)``).
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
from pathlib import Path

import pytest

import foreman
from foreman.errors import ForemanError
from foreman.protodoc import DOCS_DIR
from protocol.errors import ERROR_CODES

ROOT = Path(__file__).resolve().parents[2]
#: Modules that run a program when imported, or need what a test machine may lack.
_SKIP = ("foreman.__main__",)


def _import_all() -> list[str]:
    """Import every module of ``foreman`` (an optional extra that is missing is skipped)."""
    failed = []
    for info in pkgutil.walk_packages(foreman.__path__, "foreman."):
        if info.name in _SKIP:
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra (ray, claude-agent-sdk, openai) not installed
            failed.append(info.name)
    return failed


def _class_codes() -> dict[str, str]:
    """``code`` of every ForemanError subclass, by class (module.name)."""
    _import_all()
    found: dict[str, str] = {}
    stack: list[type[ForemanError]] = [ForemanError]
    while stack:
        cls = stack.pop()
        found[f"{cls.__module__}.{cls.__qualname__}"] = cls.code
        stack.extend(cls.__subclasses__())
    return found


def _literal_codes() -> dict[str, str]:
    """Codes written as literals where replies are made: ``error_frame("x", ...)``,
    ``DecodeError("x", ...)``, ``Error(code="x")``, in the daemon's and the protocol's sources."""
    found: dict[str, str] = {}
    for path in [*(ROOT / "foreman").rglob("*.py"), *(ROOT / "protocol").rglob("*.py")]:
        if "tui" in path.parts:  # the client never sends an error reply
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            args: list[ast.expr] = []
            if name in ("error_frame", "DecodeError") and node.args:
                args.append(node.args[0])
            if name in ("Error", "error_frame", "DecodeError"):
                args += [k.value for k in node.keywords if k.arg == "code"]
            for arg in args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found[f"{path.relative_to(ROOT)}:{node.lineno}"] = arg.value
    return found


def _doc_codes() -> list[str]:
    doc = (DOCS_DIR / "protocol.md").read_text(encoding="utf-8")
    table = doc.split("### Error codes", 1)[1].split("\n## ", 1)[0]
    return [line.split("`")[1] for line in table.splitlines() if line.startswith("| `")]


def test_the_search_finds_the_codes_it_must() -> None:
    classes, literals = set(_class_codes().values()), set(_literal_codes().values())
    assert {"not_found", "conflict", "merge_refused", "store", "profile_in_use", "sandbox_unavailable"} <= classes
    assert {"unauthorized", "too_large", "bad_json", "protocol", "hello_first", "internal", "unknown_type",
            "bad_request"} <= literals


@pytest.mark.parametrize(("where", "code"), sorted({**_class_codes(), **_literal_codes()}.items()))
def test_every_code_the_daemon_can_send_is_in_the_list_and_in_the_doc(where: str, code: str) -> None:
    assert code in ERROR_CODES, f"{where} sends error code {code!r}: add it to protocol/errors.py ERROR_CODES"
    assert code in _doc_codes(), f"{code!r} is not in docs/protocol.md: run `foreman docs`"


def test_the_doc_and_the_schema_are_generated_from_the_list() -> None:
    assert _doc_codes() == sorted(ERROR_CODES)
    schema = json.loads((DOCS_DIR / "protocol.schema.json").read_text(encoding="utf-8"))
    code = schema["$defs"]["Error"]["properties"]["code"]
    assert code["type"] == "string"  # open: codes are only added within v1
    assert code["examples"] == list(ERROR_CODES)
    assert code["x-error-codes"] == ERROR_CODES
    for text in ERROR_CODES.values():
        assert text.endswith(".") and "|" not in text
