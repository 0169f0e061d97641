"""The client is thin: of the project it imports only ``protocol`` and ``foreman.__version__``."""

import ast
import sys
from pathlib import Path

import foreman.tui

ALLOWED_THIRD_PARTY = {"protocol", "textual", "websockets", "rich", "pydantic"}


def test_tui_imports_only_protocol_and_its_own_modules():
    package = Path(foreman.tui.__file__).parent
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
                if node.module == "foreman":
                    assert [a.name for a in node.names] == ["__version__"], f"{path.name}: from foreman import ..."
                    continue
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in ALLOWED_THIRD_PARTY or top in sys.stdlib_module_names or top == "__future__", (
                    f"{path.name} imports {name}"
                )
