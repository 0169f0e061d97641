"""Localize a task: the files and symbols its text names, shown with line numbers.

The guided mode (:mod:`.guided`) asks a small model one small thing at a time, so the harness,
not the model, finds what to show it:

- the repository's files come from ``git ls-files --cached --others --exclude-standard`` (so
  ``.gitignore`` is honoured), or a walk that skips the usual build and cache folders;
- a *symbol index* maps each top-level Python name (functions, classes, CONSTANTS) to its
  file and line (parsed with ``ast``);
- paths (``pkg/module.py``, ``module.py``) and identifiers (``parse_date``,
  ``test_parse_date``) in the task text pick the files; quoted text the task cites (an error
  message) is grepped for;
- the picked files are shown whole with line numbers while they fit the budget, else the named
  symbols' regions; when nothing is named, a repository map (files and their top-level
  symbols) is shown instead;
- of the files named by path, those the task asks to change (``targets``) are told from those
  named only as context by :mod:`.targets`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .symbols import top_level_symbols
from .targets import Mention, change_targets
from .workspace import SKIP_DIRS

_PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")
_IDENT_RE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_QUOTED_RE = re.compile(r"""["'`]([^"'`\n]{6,80})["'`]""")
_TEST_PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*test_[\w]+\.py)\b")
MAX_FILE_CHARS = 400_000


def list_files(root: Path) -> list[str]:
    """The repository's files, relative and sorted, honouring ``.gitignore`` when git knows it."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                             capture_output=True, timeout=30)
        if out.returncode == 0:
            names = [n for n in out.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
            return sorted(n for n in names if (root / n).is_file())
    except (OSError, subprocess.SubprocessError):
        pass
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        found.extend(Path(folder, f).relative_to(root).as_posix() for f in files)
    return sorted(found)


def read(root: Path, rel: str) -> str:
    """A file's text ("" when missing, binary or huge)."""
    path = root / rel
    try:
        if path.stat().st_size > MAX_FILE_CHARS:
            return ""
        data = path.read_bytes()
    except OSError:
        return ""
    return "" if b"\0" in data[:8192] else data.decode("utf-8", "surrogateescape")


def numbered(text: str, first: int = 1, last: int | None = None) -> str:
    """Lines ``first``..``last`` (1-based, inclusive) of ``text``, each as ``  12| code``."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    last = len(lines) if last is None else min(last, len(lines))
    width = len(str(max(last, 1)))
    return "\n".join(f"{n:>{width}}| {lines[n - 1]}" for n in range(max(1, first), last + 1))


def symbol_index(root: Path, files: list[str]) -> dict[str, list[tuple[str, int]]]:
    """Top-level Python names -> ``[(file, line)]`` over ``files``."""
    index: dict[str, list[tuple[str, int]]] = {}
    for rel in files:
        if rel.endswith(".py"):
            for name, line in top_level_symbols(read(root, rel)):
                index.setdefault(name, []).append((rel, line))
    return index


def module_name(rel: str) -> str:
    """``pkg/module.py`` -> ``pkg.module`` (``src/`` dropped)."""
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def named_alike(path: str, known: Iterable[str]) -> str | None:
    """The existing file for ``path``: ``path`` itself when ``known`` has it, else the one file of
    ``known`` with its file name in another folder (``tests/test_x.py`` -> ``test_x.py``); None
    when there is none, or several."""
    known = list(known)
    if path in known:
        return path
    name = path.rsplit("/", 1)[-1]
    same = [k for k in known if k.rsplit("/", 1)[-1] == name]
    return same[0] if len(same) == 1 else None


def is_test_file(rel: str) -> bool:
    """A pytest file by name (``test_*.py``, ``*_test.py``)."""
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


@dataclass
class Localized:
    """What the harness found for a task.

    Attributes:
        files: the files to show, most relevant first (sources before tests).
        symbols: ``(name, file, line)`` the task names.
        context: the prompt text (numbered files, or the repository map).
        test_file: where new tests go (the named test file, or ``tests/test_<module>.py``), or
            None when the task asks for no test.
        wants_test: the task asks for a test.
        named: existing files the task names by path (a bare file name counts only when one file
            of the repository has it); guided mode asks again when a passing answer left one
            of them unchanged.
        targets: the files of ``named`` the task asks to change (the others are named as
            context), by the rule of :mod:`.targets`; guided mode does not let a passing
            attempt leave one of them unchanged.
    """

    files: list[str] = field(default_factory=list)
    symbols: list[tuple[str, str, int]] = field(default_factory=list)
    context: str = ""
    test_file: str | None = None
    wants_test: bool = False
    named: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)

    @property
    def target(self) -> str | None:
        """The main source file (the first non-test Python file, else the first non-test file), if any."""
        return next((f for f in self.files if not is_test_file(f) and f.endswith(".py")),
                    next((f for f in self.files if not is_test_file(f)), None))


def repo_map(root: Path, files: list[str], *, budget: int = 4000) -> str:
    """``path: name, name`` lines (top-level symbols of Python files), clipped to ``budget`` chars."""
    lines = []
    for rel in files:
        names = [n for n, _ in top_level_symbols(read(root, rel))] if rel.endswith(".py") else []
        lines.append(f"{rel}: {', '.join(names)}" if names else rel)
    text = "\n".join(lines)
    return text if len(text) <= budget else text[:budget].rsplit("\n", 1)[0] + "\n..."


def _named_identifiers(goal: str) -> list[str]:
    """Identifiers a task names: with an underscore, called (``name(``), in backticks, CamelCase,
    or the owner of a called attribute (``Inventory`` of ``Inventory.total_value()``: the methods
    are not in the symbol index, and without their class the file that defines it was not shown);
    plain words such as "add" or "list" are not taken as names."""
    names = []
    for match in _IDENT_RE.finditer(goal):
        word = match.group(0)
        after = goal[match.end():match.end() + 1]
        before = goal[match.start() - 1:match.start()] if match.start() else ""
        if ("_" in word.strip("_") or after == "(" or before == "`" or re.match(r"[A-Z][a-z]+[A-Z]", word)
                or word.isupper() and len(word) > 3 or _OWNER_RE.match(goal, match.end())):
            names.append(word)
    return list(dict.fromkeys(names))


_OWNER_RE = re.compile(r"\.[A-Za-z_]\w*\(")
"""What follows the owner of a called attribute (``.total_value(``)."""
_MODULE_OWNER_RE = re.compile(r"(?:(?<=`)|\b)([A-Za-z_]\w*)\.[A-Za-z_]\w*(?=\(|`)")
"""The owner of a dotted name that is called or quoted (``receipt`` of `` `receipt.render` `` and of
``cart.apply_code("X")``): when a module has that name, the task points into it (a module's function
and a method are not in the symbol index, so without this the file was not shown)."""
_WORD_RE = re.compile(r"[a-z]{3,}")


def _words_of(text: str) -> set[str]:
    """Lowercase words of three letters or more, identifiers split at ``_`` (and a plural's ``s``
    dropped: ``categories`` and ``category`` meet as ``categorie``/``category`` do not, so both forms
    are kept)."""
    words = set(_WORD_RE.findall(text.lower().replace("_", " ")))
    return words | {w[:-1] for w in words if w.endswith("s")}


def by_words(root: Path, files: list[str], goal: str, index: dict[str, list[tuple[str, int]]], *,
             budget: int) -> list[str]:
    """The Python source files that share words with the task in their path or their top-level
    names, most shared first, as many as fit in ``budget`` characters. A task that names no file,
    symbol or quoted text of the code ("add a `categories` command to ledger") otherwise got only a
    repository map, and the model wrote the module anew without the code it had to keep."""
    wanted = _words_of(goal)
    names: dict[str, set[str]] = {}
    for name, places in index.items():
        for rel, _ in places:
            names.setdefault(rel, set()).update(_words_of(name))
    scored = []
    for rel in files:
        if not rel.endswith(".py") or is_test_file(rel):
            continue
        shared = len(wanted & (_words_of(rel.replace("/", " ").removesuffix(".py")) | names.get(rel, set())))
        if shared:
            scored.append((-shared, rel))
    out, used = [], 0
    for _, rel in sorted(scored):
        size = len(read(root, rel))
        if size and used + size <= budget:
            out.append(rel)
            used += size
    return out


_VALUE_RE = re.compile(r"[^\s()\[\]{}<>'\"`]*\d[^\s()\[\]{}<>'\"`]*")
_VALUE_EDGES = "()[]{}<>'\"`,.;:!?"


def written_values(goal: str) -> list[str]:
    """The values a task writes out, unquoted: words with a digit and a sign in them (``$1,234.56``,
    ``2026-01-03``, ``10%``), four characters or more, without the punctuation around them."""
    out = []
    for match in _VALUE_RE.finditer(goal):
        word = match.group(0).strip(_VALUE_EDGES)
        if len(word) >= 4 and re.search(r"\d", word) and re.search(r"[^\w]", word):
            out.append(word)
    return list(dict.fromkeys(out))


def by_value(root: Path, files: list[str], goal: str, *, most: int = 2) -> list[str]:
    """The Python source files (not tests) that hold a value the task writes out (:func:`written_values`),
    when at most ``most`` files hold it: a bug report quotes the output it wants ("should read
    $1,234.56"), and the function's docstring or code that makes it often holds the same value.
    Without it, a task naming no file showed first the file sharing the most words with it, and
    the model changed that one."""
    values = written_values(goal)
    texts = {rel: read(root, rel) for rel in files if values and rel.endswith(".py") and not is_test_file(rel)
             and not rel.startswith(("tests/", "test/"))}  # (each file read once, and none for no value)
    out: list[str] = []
    for value in values:
        holders = [rel for rel, text in texts.items() if value in text]
        if len(holders) <= most:
            out.extend(rel for rel in holders if rel not in out)
    return out


def _rank(rel: str) -> int:
    """Where a picked file goes in the list: Python code first, then other files, tests last. A
    task's words found in documentation (a README's usage lines quote the same command) must not
    put the documentation forward as the file to change, nor name its test file."""
    return 2 if is_test_file(rel) else 0 if rel.endswith(".py") else 1


def localize(root: Path, goal: str, *, budget: int = 12_000, want_test: bool = False) -> Localized:
    """Find and show what ``goal`` names in the repository at ``root``.

    Args:
        root: the worktree.
        goal: the task's text.
        budget: characters of context at most.
        want_test: the task is to be tested as one that asks for a test (``wants_test``, with
            its ``test_file``) whatever its text says.

    Returns:
        The :class:`Localized` result.
    """
    root = Path(root)
    files = list_files(root)
    index = symbol_index(root, files)
    found = Localized()
    picked: list[str] = []

    def pick(rel: str) -> None:
        if rel in files and rel not in picked:
            picked.append(rel)

    mentions: list[Mention] = []
    for match in _PATH_RE.finditer(goal):
        raw = match.group(1)
        raw = raw.strip("./") if raw.startswith("./") else raw
        if raw in files:
            pick(raw)
            found.named.append(raw)
            mentions.append((match.start(1), match.end(1), raw))
        elif "/" not in raw:
            same = [rel for rel in files if rel.endswith("/" + raw)]
            for rel in same:
                pick(rel)
            if len(same) == 1:
                found.named.append(same[0])
                mentions.append((match.start(1), match.end(1), same[0]))
    for ident in _named_identifiers(goal):
        for rel, line in index.get(ident, [])[:3]:
            found.symbols.append((ident, rel, line))
            pick(rel)
    for owner in _MODULE_OWNER_RE.findall(goal):  # (`receipt.render`, cart.apply_code(...): the module receipt.py)
        for rel in files:
            if (rel.endswith(f"/{owner}.py") or rel == f"{owner}.py") and not is_test_file(rel):
                pick(rel)
    if not picked:
        for quoted in _QUOTED_RE.findall(goal):
            for rel in files:
                if quoted in read(root, rel):
                    pick(rel)
    for rel in by_value(root, files, goal):
        pick(rel)
    if not any(rel.endswith(".py") and not is_test_file(rel) for rel in picked):
        for rel in by_words(root, files, goal, index, budget=budget // 2):
            pick(rel)
    lower = goal.lower()
    found.wants_test = want_test or bool(re.search(r"\btests?\b|\btest_\w+", lower))
    named_tests = [t for t in _TEST_PATH_RE.findall(goal)]
    picked.sort(key=_rank)  # code, then other files (a README), then tests; stable
    found.files = picked
    found.named = list(dict.fromkeys(found.named))
    for ident in _named_identifiers(goal):
        owners = [rel for rel, _ in index.get(ident, []) if rel in found.named]
        for match in re.finditer(rf"(?<![\w/.]){re.escape(ident)}\b", goal):
            mentions.extend((match.start(), match.end(), rel) for rel in owners)
    found.targets = change_targets(goal, mentions)
    if found.wants_test:
        target = found.target
        if named_tests:
            found.test_file = named_tests[0]
        elif target:  # the repository's own test_<stem>.py, wherever it is: a second one of that
            # name in another folder stops pytest's collection ("import file mismatch")
            name = f"tests/test_{Path(target).stem}.py"
            found.test_file = named_alike(name, files) or name
    found.context = _render(root, found, files, budget)
    return found


def _render(root: Path, found: Localized, files: list[str], budget: int) -> str:
    if not found.files:
        return "Repository map (files and their top-level definitions):\n" + repo_map(root, files, budget=budget)
    parts: list[str] = []
    used = 0
    for rel in found.files:
        text = read(root, rel)
        whole = f"{rel}:\n{numbered(text)}"
        if used + len(whole) <= budget:
            parts.append(whole)
            used += len(whole)
            continue
        regions = sorted({line for name, path, line in found.symbols if path == rel})
        if not regions:
            continue
        total = len(text.split("\n"))
        pieces = [numbered(text, max(1, line - 3), min(total, line + 30)) for line in regions]
        clipped = f"{rel} (parts):\n" + "\n...\n".join(pieces)
        if used + len(clipped) <= budget:
            parts.append(clipped)
            used += len(clipped)
    return "\n\n".join(parts)


__all__ = ["Localized", "by_value", "is_test_file", "list_files", "localize", "module_name", "named_alike", "numbered", "read", "repo_map",
           "symbol_index", "written_values"]
