"""The worktree as an agent's actions see it: bounded inspection and guarded changes.

Every path is relative to the worktree root and must stay inside it (symbolic links that lead
out, ``..`` escapes and the ``.git`` link are refused). The workspace remembers what the model
has *seen*: for each file, the sha256 of the version it read and whether it saw all of it.
Changes follow propose -> (the caller asks the policy) -> commit:

- :meth:`Workspace.propose` computes the change in memory (the diff), refusing an edit of a
  file the model has not read, or that changed on disk since it read it (stale);
- :meth:`Workspace.commit` re-checks every file it touches against the proposal's snapshot,
  writes, and returns what the model gets back: the resulting file region.

A ranged or clipped read never authorises replacing a whole existing file.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import edits
from .edits import EditRefused, sha256_text
from .registry import ActionBase, Copy, Create, Delete, Edit, Mkdir, Move, Read, Rename

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache",
                       ".tox", "dist", "build", ".ruff_cache"})
MAX_FILE_BYTES = 2 * 1024 * 1024


class Refused(ValueError):
    """An action cannot run; the message is advice for the model."""


@dataclass(frozen=True)
class Seen:
    """What the model saw of a file: the version's sha256 and whether it saw all of it."""

    sha: str
    whole: bool


@dataclass
class ReadOut:
    """A read's text for the model, and its identity for the repeat guard."""

    text: str
    key: tuple[str, str, int | None, int | None]


@dataclass
class Change:
    """A proposed change, computed in memory.

    Attributes:
        action: the action.
        tool: the policy tool name (Write, Edit).
        policy_path: the path the policy is asked about (absolute).
        preview: a diff or a one-line description.
        expect: path -> sha256 the file must still have at commit time ("" = must not exist).
        new_text: the file's new text (edit/create).
        first_line / last_line: the changed lines in the new text (edit).
    """

    action: ActionBase
    tool: str
    policy_path: str
    preview: str
    expect: dict[str, str] = field(default_factory=dict)
    new_text: str | None = None
    first_line: int = 1
    last_line: int = 0


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        raise Refused(f"{path.name} is a binary file; it cannot be read as text")
    return data.decode("utf-8", "surrogateescape")


class Workspace:
    """One agent's worktree for one turn.

    Args:
        root: the worktree.
        max_read_chars: a read without a range is clipped after this many characters.
        max_hits: results kept for list/glob/grep/search.
    """

    def __init__(self, root: Path, *, max_read_chars: int = 16_000, max_hits: int = 60) -> None:
        self.root = Path(os.path.realpath(root))
        self.max_read_chars = max_read_chars
        self.max_hits = max_hits
        self.seen: dict[str, Seen] = {}

    # -- paths -------------------------------------------------------------------------
    def rel(self, raw: str) -> str:
        """Return ``raw`` as a clean path relative to the root.

        Raises:
            Refused: the path leaves the worktree or points into ``.git``.
        """
        text = raw.strip().strip("`'\"")
        joined = Path(text) if os.path.isabs(text) else self.root / text
        real = Path(os.path.realpath(joined))
        if real != self.root and self.root not in real.parents:
            raise Refused(f"{raw} is outside your worktree; use paths relative to it")
        rel = real.relative_to(self.root).as_posix() if real != self.root else "."
        if rel == ".git" or rel.startswith(".git/"):
            raise Refused("the .git folder is off limits; use git commands with RUN")
        return rel

    def abs(self, rel: str) -> Path:
        """Return the absolute path of a relative one."""
        return self.root / rel if rel != "." else self.root

    def sha(self, rel: str) -> str:
        """The current sha256 of a file, or "" when it does not exist."""
        path = self.abs(rel)
        if not path.is_file():
            return "" if not path.exists() else "<dir>"
        return sha256_text(_read_text(path))

    # -- inspection --------------------------------------------------------------------
    def read(self, action: Read) -> ReadOut:
        """Read a file (a line range, or clipped); record what the model saw.

        Raises:
            Refused: missing file, a directory, binary, or a range past the end.
        """
        rel = self.rel(action.path)
        path = self.abs(rel)
        if path.is_dir():
            raise Refused(f"{rel} is a directory; use LIST {rel}")
        if not path.is_file():
            raise Refused(f"{rel} does not exist; use GLOB or LIST to find the right path")
        text = _read_text(path)
        sha = sha256_text(text)
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        total = len(lines)
        first = action.start or 1
        last = min(action.end or total, total)
        if total and first > total:
            raise Refused(f"{rel} has only {total} lines")
        body_lines = lines[first - 1:last]
        body = "\n".join(body_lines)
        clipped = False
        if len(body) > self.max_read_chars:
            kept, size = [], 0
            for line in body_lines:
                if size + len(line) + 1 > self.max_read_chars:
                    break
                kept.append(line)
                size += len(line) + 1
            last = first + len(kept) - 1
            body = "\n".join(kept)
            clipped = True
        whole = first == 1 and last >= total and not clipped
        previous = self.seen.get(rel)
        if whole or previous is None or previous.sha != sha:
            self.seen[rel] = Seen(sha, whole or (previous is not None and previous.sha == sha and previous.whole))
        head = f"{rel}: lines {first}-{last} of {total}" if total else f"{rel}: empty file"
        if clipped:
            head += f" (clipped; READ {rel}:{last + 1}-{min(total, last + 200)} for more)"
        return ReadOut(f"{head}\n{body}" if body else head, (rel, sha, action.start, action.end))

    def _walk(self, base: Path):
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for name in sorted(files):
                yield Path(folder) / name

    def list(self, raw: str) -> str:
        """One directory level: folders end with ``/``."""
        rel = self.rel(raw or ".")
        path = self.abs(rel)
        if not path.is_dir():
            raise Refused(f"{rel} is not a directory" + ("; use READ" if path.is_file() else ""))
        entries = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir() if p.name not in SKIP_DIRS)
        shown = entries[: self.max_hits]
        more = f"\n... and {len(entries) - len(shown)} more" if len(entries) > len(shown) else ""
        return f"{rel}/ ({len(entries)} entries)\n" + "\n".join(shown) + more

    def glob(self, pattern: str) -> str:
        """Files whose relative path matches ``pattern`` (``**`` spans folders)."""
        pat = pattern.strip().lstrip("./") if pattern.strip() not in (".", "./") else "*"
        hits = []
        for path in self._walk(self.root):
            rel = path.relative_to(self.root).as_posix()
            if fnmatch.fnmatch(rel, pat) or ("/" not in pat and fnmatch.fnmatch(path.name, pat)) \
                    or (pat.startswith("**/") and fnmatch.fnmatch(rel, pat[3:])):
                hits.append(rel)
        if not hits:
            return f"no file matches {pattern}"
        more = f"\n... and {len(hits) - self.max_hits} more" if len(hits) > self.max_hits else ""
        return "\n".join(hits[: self.max_hits]) + more

    def grep(self, pattern: str, *, literal: bool = False) -> str:
        """Lines matching a regular expression (or a literal text) in every text file."""
        try:
            regex = re.compile(re.escape(pattern) if literal else pattern)
        except re.error as exc:
            raise Refused(f"bad regular expression {pattern!r}: {exc}; use SEARCH for literal text") from None
        hits: list[str] = []
        for path in self._walk(self.root):
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = _read_text(path)
            except (OSError, Refused):
                continue
            rel = path.relative_to(self.root).as_posix()
            for number, line in enumerate(text.split("\n"), 1):
                if regex.search(line):
                    hits.append(f"{rel}:{number}: {line.strip()[:200]}")
                    if len(hits) > self.max_hits:
                        return "\n".join(hits[: self.max_hits]) + "\n... more matches; narrow the pattern"
        return "\n".join(hits) if hits else f"no line matches {pattern}"

    # -- changes -----------------------------------------------------------------------
    def propose(self, action: ActionBase) -> Change:
        """Compute a change in memory (nothing is written).

        Raises:
            Refused: the change is not allowed as proposed (advice in the message).
        """
        if isinstance(action, Edit):
            return self._propose_edit(action)
        if isinstance(action, Create):
            return self._propose_create(action)
        if isinstance(action, Delete):
            rel = self.rel(action.path)
            if rel == ".":
                raise Refused("the worktree root cannot be deleted")
            if not self.abs(rel).exists():
                raise Refused(f"{rel} does not exist")
            return Change(action, "Write", str(self.abs(rel)), f"delete {rel}", {rel: self.sha(rel)})
        if isinstance(action, Mkdir):
            rel = self.rel(action.path)
            if self.abs(rel).is_file():
                raise Refused(f"{rel} is a file")
            return Change(action, "Write", str(self.abs(rel)), f"mkdir {rel}")
        if isinstance(action, (Move, Copy, Rename)):
            src, dst = self.rel(action.source), self.rel(action.destination)
            if not self.abs(src).exists():
                raise Refused(f"{src} does not exist")
            if self.abs(dst).exists():
                raise Refused(f"{dst} already exists; DELETE it first if you mean to replace it")
            return Change(action, "Write", str(self.abs(dst)), f"{action.kind} {src} -> {dst}",
                          {src: self.sha(src), dst: ""})
        raise Refused(f"{action.kind} is not a file change")

    def _propose_edit(self, action: Edit) -> Change:
        rel = self.rel(action.path)
        path = self.abs(rel)
        if not path.is_file():
            raise Refused(f"{rel} does not exist; to create it use a block with an empty SEARCH part")
        seen = self.seen.get(rel)
        if seen is None:
            raise Refused(f"READ {rel} first: an edit applies only to a version of the file you have seen")
        text = _read_text(path)
        current = sha256_text(text)
        if current != seen.sha:
            raise Refused(f"{rel} changed on disk since you read it (stale edit refused); READ {rel} again "
                          "and write the edit against what it holds now")
        if action.search.strip("\n") == text.strip("\n") and not seen.whole:
            raise Refused(f"you saw only part of {rel}; a ranged or clipped read does not allow replacing the whole "
                          "file. Change it with a SEARCH/REPLACE of the lines you read")
        try:
            plan = edits.plan_edit(text, action.search, action.replace, path=rel)
        except EditRefused as exc:
            raise Refused(str(exc)) from None
        return Change(action, "Edit", str(path), plan.diff, {rel: current}, plan.new, plan.first_line, plan.last_line)

    def _propose_create(self, action: Create) -> Change:
        rel = self.rel(action.path)
        path = self.abs(rel)
        content = action.content if action.content.endswith("\n") or not action.content else action.content + "\n"
        if path.is_dir():
            raise Refused(f"{rel} is a directory")
        if path.exists():
            seen = self.seen.get(rel)
            current = self.sha(rel)
            if seen is None or not seen.whole:
                raise Refused(f"{rel} already exists and you have not read all of it; a ranged or clipped read "
                              "does not allow replacing the whole file. Use a SEARCH/REPLACE edit")
            if seen.sha != current:
                raise Refused(f"{rel} changed on disk since you read it (stale); READ {rel} again")
            old = _read_text(path)
            if "\r\n" in old and old.count("\r\n") * 2 >= old.count("\n"):  # keep the file's CRLF line ends
                content = content.replace("\r\n", "\n").replace("\n", "\r\n")
            lines = content.count("\n")
            return Change(action, "Write", str(path), edits.unified_diff(old, content, rel), {rel: current},
                          content, 1, lines)
        return Change(action, "Write", str(path), edits.unified_diff("", content, rel), {rel: ""}, content, 1,
                      content.count("\n"))

    def commit(self, change: Change) -> str:
        """Re-check the proposal's snapshot, write, and return the result for the model.

        Raises:
            Refused: a file changed between the proposal and now (stale; nothing written), or
                the file system refused.
        """
        for rel, sha in change.expect.items():
            if self.sha(rel) != sha:
                raise Refused(f"{rel} changed while the change waited for approval (stale); nothing was written. "
                              f"READ {rel} again")
        action = change.action
        try:
            if isinstance(action, (Edit, Create)):
                rel = self.rel(action.path)
                path = self.abs(rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                assert change.new_text is not None
                path.write_bytes(change.new_text.encode("utf-8", "surrogateescape"))
                self.seen[rel] = Seen(sha256_text(change.new_text), True)
                shown = edits.region(change.new_text, change.first_line, change.last_line,
                                     context=3 if isinstance(action, Edit) else 0)
                verb = "edited" if isinstance(action, Edit) else "wrote"
                return f"{verb} {rel}; it now reads (lines {max(1, change.first_line - 3)}+):\n{shown}"
            if isinstance(action, Delete):
                rel = self.rel(action.path)
                path = self.abs(rel)
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
                self.seen.pop(rel, None)
                return f"deleted {rel}"
            if isinstance(action, Mkdir):
                rel = self.rel(action.path)
                self.abs(rel).mkdir(parents=True, exist_ok=True)
                return f"created directory {rel}"
            if isinstance(action, (Move, Copy, Rename)):
                src, dst = self.rel(action.source), self.rel(action.destination)
                self.abs(dst).parent.mkdir(parents=True, exist_ok=True)
                if isinstance(action, Copy):
                    if self.abs(src).is_dir():
                        shutil.copytree(self.abs(src), self.abs(dst), symlinks=True)
                    else:
                        shutil.copy2(self.abs(src), self.abs(dst), follow_symlinks=False)
                else:
                    os.rename(self.abs(src), self.abs(dst))
                    if src in self.seen:
                        self.seen[dst] = self.seen.pop(src)
                return f"{action.kind}: {src} -> {dst}"
        except OSError as exc:
            raise Refused(f"the file system refused: {exc.strerror or exc}") from None
        raise Refused(f"{action.kind} is not a file change")

    def file_map(self, limit: int = 80) -> str:
        """A compact list of the worktree's files (for the first prompt)."""
        files = [p.relative_to(self.root).as_posix() for p in self._walk(self.root)]
        more = f"\n... and {len(files) - limit} more" if len(files) > limit else ""
        return "\n".join(files[:limit]) + more
