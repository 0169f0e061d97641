"""Every name the daemon's code uses is defined: pyflakes over ``foreman/`` and ``protocol/``.

A module split once left a counter behind in another module; every claude turn then raised
NameError during its set-up, and its tests hung in a fixture's teardown instead of failing. A
static check names such a mistake in seconds."""

from __future__ import annotations

from pathlib import Path

from pyflakes import api, messages, reporter

ROOT = Path(__file__).resolve().parents[1]


class _Collect(reporter.Reporter):
    def __init__(self) -> None:
        super().__init__(None, None)
        self.found: list[str] = []

    def flake(self, message) -> None:  # type: ignore[no-untyped-def]
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)):
            self.found.append(str(message))

    def syntaxError(self, filename, msg, lineno, offset, text) -> None:  # type: ignore[no-untyped-def]
        self.found.append(f"{filename}:{lineno}: syntax error: {msg}")

    def unexpectedError(self, filename, msg) -> None:  # type: ignore[no-untyped-def]
        self.found.append(f"{filename}: {msg}")


def test_no_undefined_names_in_the_daemon_or_the_protocol() -> None:
    collect = _Collect()
    files = sorted(p for d in ("foreman", "protocol") for p in (ROOT / d).rglob("*.py"))
    assert len(files) > 100
    for path in files:
        api.checkPath(str(path), collect)
    assert collect.found == []


def test_the_check_catches_an_undefined_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import itertools\n\ndef pid():\n    return next(_PIDFILES)\n")
    collect = _Collect()
    api.checkPath(str(bad), collect)
    assert len(collect.found) == 1 and "undefined name '_PIDFILES'" in collect.found[0]


def _private_reach_ins(path: Path, root: Path) -> list[str]:
    """``path``'s imports of another package's private modules or names (``foreman.repos._git``
    from outside ``foreman/repos``): each as ``file:line: what``."""
    import ast

    package = list(path.relative_to(root).parent.parts)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            targets = [module] + [module + [a.name] for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name.split(".") for a in node.names]
        else:
            continue
        for parts in targets:
            hit = next((i for i, part in enumerate(parts) if part.startswith("_") and not part.startswith("__")), None)
            if hit is None:
                continue
            owner = parts[:hit]  # the package whose private module this is; for a private name, its module's package
            if (root.joinpath(*owner).with_suffix(".py")).is_file():
                owner = owner[:-1]
            if package[:len(owner)] != owner:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {'.'.join(parts[:hit + 1])}")
                break
    return found


def test_no_module_reaches_into_another_packages_private_modules() -> None:
    """Issue 16, item 3: a package's ``_private`` modules and names are its own; other packages
    use what its ``__init__`` exports."""
    found = [hit for p in sorted((ROOT / "foreman").rglob("*.py")) for hit in _private_reach_ins(p, ROOT)]
    assert found == []


def test_the_reach_in_check_tells_inside_from_outside(tmp_path: Path) -> None:
    (tmp_path / "foreman" / "repos").mkdir(parents=True)
    (tmp_path / "foreman" / "risk").mkdir(parents=True)
    inside = tmp_path / "foreman" / "repos" / "merge.py"
    inside.write_text("from ._git import git\nfrom . import _checkout\n")
    outside = tmp_path / "foreman" / "risk" / "report.py"
    outside.write_text("from foreman.repos._git import git\nfrom ..repos import _checkout\nfrom ..repos import git\n"
                       "import foreman.repos._git\n")
    assert _private_reach_ins(inside, tmp_path) == []
    assert _private_reach_ins(outside, tmp_path) == [
        "foreman/risk/report.py:1: foreman.repos._git", "foreman/risk/report.py:2: foreman.repos._checkout",
        "foreman/risk/report.py:4: foreman.repos._git"]
