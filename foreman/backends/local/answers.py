"""A guided-mode answer: code blocks (definitions or a new file) and SEARCH/REPLACE blocks.

The guided mode asks for "only the new or changed definitions, complete, in one block per file,
the first line ``# file: <path>``". Small models follow that loosely, so each block's file is
taken from, in order: that first comment line; a path on the line just before the block (with
backticks, bold, "File:" or a trailing colon); the default file the harness chose. Pure: no I/O.

:func:`plan_answer` turns the blocks into new file texts with :mod:`.placement` (Python files)
or :func:`.edits.plan_edit` (SEARCH/REPLACE); a block that cannot be placed is a counted
failure with its reason, never a guess.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from dataclasses import dataclass, field
from typing import Callable

from . import edits, placement, symbols
from . import probe as probes
from .localize import is_test_file, module_name, named_alike

_FENCE_RE = re.compile(r"^[ \t]*(```|~~~)[ \t]*([\w+.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
_SR_RE = re.compile(r"<{5,9} ?SEARCH[^\n]*\n(.*?)\n?={5,9}[^\n]*\n(.*?)\n?>{5,9} ?REPLACE[^\n]*", re.S)
_FILE_COMMENT_RE = re.compile(r"^\s*(?:#|//)\s*(?:file(?:name)?\s*[:=]\s*)?([\w./-]+\.[A-Za-z0-9]{1,8})\s*$", re.I)
_PATH_IN_LINE_RE = re.compile(r"([\w./-]*[\w-]+\.[A-Za-z0-9]{1,8})\b")
_INNER_FILE_RE = re.compile(r"^(?:#|//)[ \t]*file(?:name)?[ \t]*[:=][ \t]*([\w./-]+\.[A-Za-z0-9]{1,8})[ \t]*$",
                            re.I | re.M)


@dataclass
class Block:
    """One block of an answer: ``code`` (definitions or a file) or ``search``/``replace``."""

    path: str | None
    code: str = ""
    search: str | None = None
    replace: str = ""


@dataclass
class Planned:
    """The outcome of an answer: new texts by path, what was done, what failed."""

    texts: dict[str, str] = field(default_factory=dict)
    actions: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def _path_before(text: str, start: int) -> str | None:
    lines = text[:start].rstrip("\n").split("\n")
    for line in reversed(lines[-2:]):
        if not line.strip():
            continue
        found = [p for p in _PATH_IN_LINE_RE.findall(line.replace("`", " ").replace("*", " ")) if "/" in p or
                 re.search(r"\.(py|js|ts|md|toml|txt|json|cfg|ini|yml|yaml|sh|rs|go)$", p)]
        return found[-1].strip("./") if len(found) == 1 else None
    return None


def _split_files(path: str | None, body: str) -> list[tuple[str | None, str]]:
    """One fenced block holding further ``# file: <path>`` lines (at column 0, the ``file:`` word
    written) is one block per file: a model may put two files in one fence, and all of it would
    go to the first file."""
    parts, start = [], 0
    for match in _INNER_FILE_RE.finditer(body):
        parts.append((path, body[start:match.start()]))
        path = match.group(1)[2:] if match.group(1).startswith("./") else match.group(1)
        start = match.end() + 1
    parts.append((path, body[start:]))
    return [(p, b) for p, b in parts if b.strip()]


def blocks_of(reply: str) -> list[Block]:
    """The blocks of a reply: fenced code blocks, SEARCH/REPLACE blocks (fenced or not), or
    the whole reply when it is bare Python code."""
    out: list[Block] = []
    for match in _FENCE_RE.finditer(reply):
        body = match.group(3)
        path = _path_before(reply, match.start())
        first = body.split("\n", 1)[0]
        comment = _FILE_COMMENT_RE.match(first)
        if comment:
            path = comment.group(1).lstrip("./") if comment.group(1).startswith("./") else comment.group(1)
            body = body.split("\n", 1)[1] if "\n" in body else ""
        pairs = list(_SR_RE.finditer(body))
        if pairs:
            out.extend(Block(path, search=m.group(1), replace=m.group(2)) for m in pairs)
        elif body.strip():
            out.extend(Block(p, code=unnumbered(b)) for p, b in _split_files(path, body))
    if not out:
        for m in _SR_RE.finditer(reply):
            out.append(Block(_path_before(reply, m.start()), search=m.group(1), replace=m.group(2)))
    if not out and reply.strip():
        try:
            compile(reply, "answer", "exec")
        except (SyntaxError, ValueError):
            return []
        out.append(Block(None, code=reply))
    return out


_NUMBERED_RE = re.compile(r"^[ \t]*\d+\|(?: |$)")


def unnumbered(code: str) -> str:
    """``code`` without the ``NN| `` line numbers of the numbered view the asks show
    (:func:`.localize.numbered`), when every non-blank line carries one: a model copying the shown
    definition sends them along, and the block would not parse. Unchanged otherwise."""
    lines = code.split("\n")
    if not any(line.strip() for line in lines) or not all(_NUMBERED_RE.match(line) for line in lines if line.strip()):
        return code
    return "\n".join(_NUMBERED_RE.sub("", line, count=1) for line in lines)


_DEF_START_RE = re.compile(r"[ \t]*(?:async[ \t]+def|def|class)[ \t]")


def complete_part(reply: str) -> str:
    """A reply cut at max_tokens, ended after its last complete definition: the code of its open
    fenced block (or the bare code) up to the start of its last ``def``/``class`` (and that one's
    decorators), the one the cut went through, and the fence closed. When that part does not
    compile (a class cut inside its first method: its header alone), the start before it is tried,
    and so on; the last start is kept when none compiles (not Python). Unchanged when nothing
    complete comes before that definition, or when the reply holds no open block of code.

    Test replies are cut most: a model may write one complete test after another until the token
    cap, and then nothing would be placed. Guided mode keeps the complete part of a cut
    test reply (a test function stands alone), and of one cut in its test file after whole code blocks
    (:meth:`.guided.GuidedTask._place`), not of one cut inside code.
    """
    fences = list(re.finditer(r"^[ \t]*```", reply, re.M))
    if len(fences) % 2 == 1:
        opener = fences[-1]
        newline = reply.find("\n", opener.end())
        if newline < 0:
            return reply
        head, body = reply[:newline + 1], reply[newline + 1:]
    elif not fences:
        head, body = "", reply
    else:
        return reply
    lines = body.split("\n")
    starts = [i for i, line in enumerate(lines) if _DEF_START_RE.match(line)]
    last = lines[-1].strip()
    if last and any(word.startswith(last) for word in ("def", "class", "async def")):
        starts.append(len(lines) - 1)  # cut inside the keyword of a definition's first line
    starts = [i for i in starts if _outside_functions(lines, starts, i)]
    if len(starts) < 2:
        return reply
    cuts = []
    for start in starts[1:]:
        while start > 0 and lines[start - 1].lstrip().startswith("@"):
            start -= 1
        cuts.append(start)
    kept = next((text for cut in reversed(cuts) if _compiles(text := "\n".join(lines[:cut]).rstrip())),
                "\n".join(lines[:cuts[-1]]).rstrip())
    return f"{head}{kept}\n```\n" if head else f"{kept}\n"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _outside_functions(lines: list[str], starts: list[int], i: int) -> bool:
    """Whether the definition starting at line ``i`` is at the top level or a class's member, not
    inside a function (where a cut before it would keep half the function: a nested ``def``, or a
    body line ``a`` cut to look like the start of ``async def``)."""
    level = _indent(lines[i])
    for j in reversed([k for k in starts if k < i]):
        if _indent(lines[j]) < level:
            return lines[j].lstrip().startswith("class") and _outside_functions(lines, starts, j)
    return level == 0 or not starts or _indent(lines[starts[0]]) >= level


def _compiles(code: str) -> bool:
    try:
        compile(code, "answer", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def only_definitions(code: str, names: list[str]) -> str:
    """``code`` with only its imports and the top-level functions and classes (with their decorators)
    named in ``names``: the answer to an ask for those definitions alone. Asked for one function and shown
    only the file's signatures, a model may send made-up bodies for the other functions, which
    would replace the real ones. The code is returned
    whole when it does not parse (placement then says why), "" when it holds none of ``names``."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    lines = code.split("\n")
    kept = []
    for node in tree.body:
        wanted = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names
        if wanted or isinstance(node, (ast.Import, ast.ImportFrom)):
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            kept.append((wanted, "\n".join(lines[start - 1:node.end_lineno])))
    if not any(wanted for wanted, _ in kept):
        return ""
    return "\n\n\n".join(text for _, text in kept) + "\n"


def blocks_of_json(reply: str) -> list[Block]:
    """The blocks of a constrained (JSON) reply ``{"edits": [{"file": ..., "code": ...}]}``
    ([] when it is not that shape); a ``# file: <path>`` line inside a code string starts another
    file's block, and a code string that holds a fenced block is read as a reply of its own, as
    :func:`blocks_of` reads one."""
    try:
        data = json.loads(reply)
    except ValueError:
        return []
    items = data.get("edits") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    out: list[Block] = []
    for item in items:
        code = str(item.get("code") or "") if isinstance(item, dict) else ""
        if not code.strip():
            continue
        path = str(item.get("file") or "") or None
        # a fence inside the string (a model may begin every code string with ```python)
        stripped = code.strip()
        if stripped.startswith(("```", "~~~")):  # the whole string fenced (closed or cut off): its body
            code = re.sub(r"\n[ \t]*(```|~~~)[ \t]*$", "\n", stripped.split("\n", 1)[1] if "\n" in stripped else "")
        elif _FENCE_RE.search(code):  # prose around fenced blocks: read as a reply of its own
            out.extend(Block(b.path or path, code=b.code, search=b.search, replace=b.replace) for b in blocks_of(code))
            continue
        comment = _FILE_COMMENT_RE.match(code.split("\n", 1)[0])
        if comment:  # the code names its file on its first line (the "file" field, when given, wins)
            path = path or comment.group(1).removeprefix("./")
            code = code.split("\n", 1)[1] if "\n" in code else ""
        # a second file inside one code string (an edit that carries its test after a `# file:` line)
        out.extend(Block(p, code=_literal_newlines(b)) for p, b in _split_files(path, code))
    return out


def _literal_newlines(code: str, tries: int = 8) -> str:
    """Python code from a JSON string whose string literal was cut by a line break: the model meant
    a backslash-n escape inside the literal (``'   ' + backslash-n``) but wrote the JSON escape
    that decodes to a real line break, so the code fails with "unterminated string literal". Each
    such line is joined to the next
    with the escape written out; the code is returned unchanged when that does not make it parse."""
    fixed = code
    for _ in range(tries):
        try:
            ast.parse(fixed)
            return fixed
        except SyntaxError as exc:
            if not (exc.msg or "").startswith("unterminated string literal") or not exc.lineno:
                return code
            lines = fixed.split("\n")
            if exc.lineno >= len(lines):
                return code
            lines[exc.lineno - 1:exc.lineno + 1] = [lines[exc.lineno - 1] + "\\n" + lines[exc.lineno]]
            fixed = "\n".join(lines)
        except ValueError:
            return code
    return code


_PLACEABLE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign,
              ast.AnnAssign)


def unusable_reason(reply: str, finish_reason: str | None = None) -> str | None:
    """Why a guided reply holds nothing the harness could place, or None when it holds some.

    The file-independent part of :func:`plan_answer` (no file is read, so a block can still
    fail to place later, e.g. a SEARCH passage that is not in the file): a reply is usable when
    one of its blocks is a SEARCH/REPLACE block, code for a file that is not Python, or Python
    that parses and defines something placement keeps (see :mod:`.placement`).

    Returns:
        None, or the reason (the names ``foreman replay`` reports): ``no_code_block`` (prose
        only), ``syntax_error`` (no block parses), ``nothing_to_place`` (no function, class,
        import or constant, e.g. only a call) or ``truncated`` (cut at ``finish_reason`` length).
    """
    blocks = blocks_of_json(reply) or blocks_of(reply)
    reasons = []
    for block in blocks:
        if block.search is not None or (block.path and not block.path.endswith(".py")):
            return None
        try:
            tree = ast.parse(textwrap.dedent(block.code.replace("\r\n", "\n")))
        except (SyntaxError, ValueError):
            reasons.append("syntax_error")
            continue
        if any(isinstance(node, _PLACEABLE) for node in tree.body):
            return None
        reasons.append("nothing_to_place")
    if finish_reason == "length":
        return "truncated"
    return reasons[0] if reasons else "no_code_block"


def plan_answer(blocks: list[Block], *, read: Callable[[str], str | None], known: list[str], default: str | None,
                test_file: str | None, owners: dict[str, str] | None = None, adds: tuple[str, ...] = (),
                task_words: frozenset[str] = frozenset(), keep_tests: bool = False) -> Planned:
    """Place every block; later blocks see the earlier ones' results.

    Args:
        blocks: the answer's blocks.
        read: a file's current text by relative path (None when it does not exist).
        known: the repository's files (a bare file name is resolved against them).
        default: the file for a block that names none (the localized source file).
        test_file: the file for a block of test functions that names none (a test file gets
            ``pytest`` and the names of ``default`` it uses imported).
        owners: top-level name -> the shown file that defines it: a block that names no file
            but redefines such a name goes to that file.
        adds: the functions the task asks for by name: a test that uses one gets it imported
            from ``default`` as if it were there (the asked test is written before the change, and
            would otherwise be dropped as using a name nothing defines), so the test fails on its
            import, for the task, until it is added.
        task_words: the words a test of the task uses (:func:`.guided_text.task_words`): a new
            test function using none of them is dropped when another new one uses some.
        keep_tests: the task asks for tests alone: a test function named like an existing one
            of its file, with another body, is added under a new name (:func:`.symbols.renamed_tests`).

    Returns:
        The :class:`Planned` texts, actions and failures.
    """
    planned = Planned()
    for block in blocks:
        path = _resolve(block, known, default, test_file, owners or {})
        if path is None:
            planned.failures.append("a block names no file and there is no file to put it in")
            continue
        old = planned.texts.get(path, read(path))
        try:
            if block.search is not None:
                if old is None:
                    if block.search.strip():
                        raise edits.EditRefused(f"{path} does not exist")
                    new = block.replace.strip("\n") + "\n"
                else:
                    new = edits.plan_edit(old, block.search, block.replace, path=path).new
                planned.actions.append(f"{path}: SEARCH/REPLACE")
            elif path.endswith(".py"):
                code, renamed = symbols.renamed_tests(block.code, old or "") if (
                    keep_tests and is_test_file(path)) else (block.code, [])
                planned.actions.extend(f"{path}: renamed {r} (a test of that name is there)" for r in renamed)
                placed = placement.place_python(old or "", code, module=module_name(path),
                                                check_names=not is_test_file(path))
                new = placed.text
                planned.actions.extend(f"{path}: {a}" for a in placed.actions)
                planned.dropped.extend(placed.dropped)
                if is_test_file(path) and default and default.endswith(".py"):
                    source = planned.texts.get(default, read(default)) or ""
                    names = {n for n, _ in symbols.top_level_symbols(source)} | set(adds)
                    fixed = symbols.add_imports_for(new, module_name(default), names, source=source,
                                                    tests=_other_tests(path, known, read),
                                                    defined_in=lambda: _definitions(known, read, planned.texts))
                    new = fixed.text
                    planned.actions.extend(f"{path}: {a}" for a in fixed.actions)
                if is_test_file(path):
                    new = _drop_broken_tests(new, old or "", path, planned)
                    new = _drop_unrelated_tests(new, old or "", path, planned, task_words)
            elif old is None:
                new = block.code if block.code.endswith("\n") else block.code + "\n"
                planned.actions.append(f"{path}: new file")
            else:
                raise edits.EditRefused(f"{path} exists and is not Python: change it with a SEARCH/REPLACE block")
        except (edits.EditRefused, placement.PlacementRefused) as exc:
            planned.failures.append(f"{path}: {exc}")
            continue
        planned.texts[path] = new
    return planned


def _drop_broken_tests(text: str, old: str, path: str, planned: Planned) -> str:
    """``text`` without the new test functions that use a name nothing binds (a sure
    ``NameError``, e.g. a constant copied from another test file without its definition), when
    another new test function is left; each drop is an action."""
    before = set(symbols.test_labels(old))
    broken = {label: names for label, names in symbols.tests_using_undefined(text).items() if label not in before}
    labels = set(symbols.test_labels(text))
    new_left = labels - before - set(broken)
    if not broken or not new_left:
        return text
    planned.actions.extend(f"{path}: dropped {label} (uses {', '.join(names)}, which nothing defines)"
                           for label, names in sorted(broken.items()))
    return probes.keep_only(text, labels - set(broken))


def _drop_unrelated_tests(text: str, old: str, path: str, planned: Planned, words: frozenset[str]) -> str:
    """``text`` without the new test functions that use none of the task's ``words``, when another
    new test function uses some: a model may resend the example test's functions (with made-up
    values) beside the asked test, and their failures would fail right code. Each drop is an action."""
    if not words:
        return text
    before = set(symbols.test_labels(old))
    labels = set(symbols.test_labels(text))
    unrelated = set(symbols.tests_unrelated(text, set(words))) - before
    if not unrelated or not (labels - before - unrelated):
        return text
    planned.actions.extend(f"{path}: dropped {label} (it tests nothing the task names)" for label in sorted(unrelated))
    return probes.keep_only(text, labels - unrelated)


OTHER_TESTS_READ = 12
"""At most this many of the repository's other test files lend their imports to a placed test."""


def _other_tests(path: str, known: list[str], read: Callable[[str], str | None]) -> tuple[str, ...]:
    """The texts of the repository's other Python test files, those beside ``path`` first (at
    most :data:`OTHER_TESTS_READ`): a placed test that uses a helper they import gets that import."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    others = [k for k in known if k != path and k.endswith(".py") and is_test_file(k)]
    others.sort(key=lambda k: ((k.rsplit("/", 1)[0] if "/" in k else "") != folder, k))
    return tuple(t for k in others[:OTHER_TESTS_READ] if (t := read(k)))


def _definitions(known: list[str], read: Callable[[str], str | None], texts: dict[str, str]) -> dict[str, str]:
    """:func:`.symbols.unique_definitions` of the repository's non-test Python files (at most
    :data:`DEFINITIONS_READ`, the answer's own texts first)."""
    code = [k for k in dict.fromkeys([*texts, *known]) if k.endswith(".py") and not is_test_file(k)
            and not k.startswith(("tests/", "test/"))][:DEFINITIONS_READ]
    return symbols.unique_definitions({module_name(k): t for k in code if (t := texts.get(k, read(k) or ""))})


DEFINITIONS_READ = 300
"""The most source files :func:`_definitions` reads (a larger repository is read in part)."""


def _resolve(block: Block, known: list[str], default: str | None, test_file: str | None,
             owners: dict[str, str]) -> str | None:
    path = block.path
    if path:
        if path in known:
            return path
        if "/" in path:
            return _same_module(path, known) or path
        matches = [k for k in known if k.rsplit("/", 1)[-1] == path]
        if len(matches) == 1:
            return matches[0]
        if default and default.rsplit("/", 1)[-1] == path:
            return default
        if test_file and test_file.rsplit("/", 1)[-1] == path:
            return test_file
        return path
    if block.code and test_file and _only_tests(block.code):
        return test_file
    named = {owners[n] for n in _defined(block.code) if n in owners}
    if len(named) == 1:
        return named.pop()
    return default


def _same_module(path: str, known: list[str]) -> str | None:
    """The existing test file a new test file ``path`` would collide with: one of the same name
    in another folder, neither folder a package (no ``__init__.py``). pytest imports such test
    modules by their bare name, and the second one stops the whole run at collection ("import file
    mismatch"), with a summary that does not say why; the tests go to the existing file instead.
    None when there is no such file (or several)."""
    name = path.rsplit("/", 1)[-1]
    if not is_test_file(path) or not name.endswith(".py"):
        return None

    def package(rel: str) -> bool:
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        return bool(folder) and f"{folder}/__init__.py" in known
    same = named_alike(path, known)
    return same if same and same != path and not package(path) and not package(same) else None


def _defined(code: str) -> list[str]:
    return [a or b for a, b in re.findall(r"^(?:async\s+)?def\s+(\w+)|^class\s+(\w+)", code, re.M)]


def _only_tests(code: str) -> bool:
    """The code defines only tests at its top level: ``test*`` functions, and classes named
    ``Test*``/``*Test(s)`` or based on ``TestCase`` (imports and assignments aside): such a block
    that names no file goes to the test file, not to the module under test."""
    try:
        tree = ast.parse(textwrap.dedent(code.replace("\r\n", "\n")))
    except (SyntaxError, ValueError):
        names = re.findall(r"^(?:async\s+)?def\s+(\w+)|^class\s+(\w+)", textwrap.dedent(code), re.M)
        flat = [a or b for a, b in names]
        return bool(flat) and all(n.startswith(("test", "Test")) or n.endswith(("Test", "Tests")) for n in flat)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]

    def test_like(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
        if isinstance(node, ast.ClassDef):
            bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
            return node.name.startswith("Test") or node.name.endswith(("Test", "Tests")) or "TestCase" in bases
        return node.name.startswith("test")

    return bool(defs) and all(test_like(n) for n in defs)


__all__ = ["Block", "Planned", "blocks_of", "blocks_of_json", "complete_part", "only_definitions", "plan_answer",
           "unnumbered", "unusable_reason"]
