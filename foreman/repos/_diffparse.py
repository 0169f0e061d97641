"""Parsing ``git diff`` output into the protocol's :class:`~protocol.diff.Diff` (pure, no I/O).

Two outputs of the same tree-to-tree diff are combined (git-diff(1), "RAW OUTPUT FORMAT",
``--numstat``, "GENERATING PATCH TEXT WITH -P"):

* ``--raw --numstat -z``: one raw record per file pair (modes, status letter, paths as raw
  bytes) followed by one numstat record per pair (``-``/``-`` for binary files);
* ``-p``: one ``diff --git a/<old> b/<new>`` section per pair - two for a type change (the old
  file deleted, the new one added). Sections are matched to raw records by that header line, so
  a path with spaces, quotes or bytes that are not UTF-8 is never split by guessing.

Patch text is fed line by line; a section longer than a per-file limit, or past a total limit,
is dropped and its file marked ``truncated`` (stats only). Lines lose their end-of-line
(``\\n`` or ``\\r\\n``); bytes that are not UTF-8 are replaced.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from protocol.diff import Diff, DiffFile, DiffHunk, DiffLine, FileStatus

GITLINK = "160000"
SYMLINK = "120000"

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


@dataclass
class RawEntry:
    """One file pair from ``--raw -z`` plus its ``--numstat`` counts."""

    old_mode: str
    new_mode: str
    status: str
    path: bytes
    old_path: bytes | None = None
    additions: int = 0
    deletions: int = 0
    binary: bool = False


def parse_raw_numstat(data: bytes) -> list[RawEntry]:
    """Parse ``git diff --raw --numstat -z`` output (raw records first, then numstat records).

    Raises:
        ValueError: the output does not have the documented shape.
    """
    tokens = data.split(b"\0")
    entries: list[RawEntry] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith(b":"):
        meta = tokens[i][1:].split(b" ")
        if len(meta) != 5:
            raise ValueError(f"bad raw diff record: {tokens[i]!r}")
        letter = meta[4][:1].decode()
        if letter in ("R", "C"):
            entries.append(RawEntry(meta[0].decode(), meta[1].decode(), letter, tokens[i + 2], tokens[i + 1]))
            i += 3
        else:
            entries.append(RawEntry(meta[0].decode(), meta[1].decode(), letter, tokens[i + 1]))
            i += 2
    for entry in entries:
        adds, dels, rest = tokens[i].split(b"\t", 2)
        i += 3 if rest == b"" else 1  # a rename's paths follow as two tokens
        if adds == b"-":
            entry.binary = True
        else:
            entry.additions, entry.deletions = int(adds), int(dels)
    return entries


def _cquote(name: bytes) -> bytes:
    """Quote a path as git's ``quote_c_style`` does with ``core.quotepath=off``."""
    specials = {0x07: b"\\a", 0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0B: b"\\v", 0x0C: b"\\f",
                0x0D: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}
    if not any(b < 0x20 or b in (0x22, 0x5C, 0x7F) for b in name):
        return name
    out = bytearray(b'"')
    for b in name:
        if b in specials:
            out += specials[b]
        elif b < 0x20 or b == 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out + b'"')


def section_header(entry: RawEntry) -> bytes:
    """The ``diff --git`` line git prints for ``entry`` (prefixes ``a/`` and ``b/``)."""
    old = entry.old_path if entry.old_path is not None else entry.path
    return b"diff --git " + _cquote(b"a/" + old) + b" " + _cquote(b"b/" + entry.path)


def _text(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")


def _line(raw: bytes) -> tuple[str, bool]:
    """A hunk line's text without its CR, and whether it had one (CR LF ending)."""
    return _text(raw), raw.endswith(b"\r")


def _mode(mode: str) -> str | None:
    return None if not mode or set(mode) == {"0"} else mode


@dataclass
class _Section:
    header: bytes
    hunks: list[DiffHunk] = field(default_factory=list)
    binary: bool = False
    truncated: bool = False
    size: int = 0


class PatchParser:
    """Incremental parser of ``git diff -p`` text, bounded in memory.

    Args:
        max_file_bytes: patch bytes kept per section; beyond it the section is truncated.
        max_total_bytes: patch bytes kept in all; later sections are truncated.
    """

    def __init__(self, *, max_file_bytes: int, max_total_bytes: int) -> None:
        self.sections: list[_Section] = []
        self._max_file = max_file_bytes
        self._max_total = max_total_bytes
        self._total = 0
        self._cur: _Section | None = None
        self._hunk: DiffHunk | None = None
        self._old = self._new = 0  # next line numbers
        self._left_old = self._left_new = 0  # lines the hunk still announces

    def feed(self, line: bytes, *, overflow: bool = False) -> None:
        """Feed one line without its ``\\n``; ``overflow`` says the line was cut for length."""
        if line.startswith(b"diff --git "):
            self._cur = _Section(line)
            self._hunk = None
            self.sections.append(self._cur)
            return
        cur = self._cur
        if cur is None or cur.truncated:
            return
        cur.size += len(line) + 1
        self._total += len(line) + 1
        if overflow or cur.size > self._max_file or self._total > self._max_total:
            cur.truncated, cur.hunks, self._hunk = True, [], None
            return
        if self._hunk is not None and (self._left_old > 0 or self._left_new > 0):
            self._hunk_line(line)
        elif line.startswith(b"@@ "):
            self._start_hunk(line)
        elif line.startswith((b"Binary files ", b"GIT binary patch")):
            cur.binary = True

    def _start_hunk(self, line: bytes) -> None:
        m = _HUNK.match(line)
        if m is None or self._cur is None:
            return
        old_start, new_start = int(m[1]), int(m[3])
        old_n = int(m[2]) if m[2] is not None else 1
        new_n = int(m[4]) if m[4] is not None else 1
        self._hunk = DiffHunk(old_start=old_start, old_lines=old_n, new_start=new_start, new_lines=new_n,
                              header=_text(m[5]), lines=[])
        self._cur.hunks.append(self._hunk)
        self._old, self._new = old_start, new_start
        self._left_old, self._left_new = old_n, new_n

    def _hunk_line(self, line: bytes) -> None:
        assert self._hunk is not None
        op = line[:1]
        if op == b"\\":  # "\ No newline at end of file"
            return
        text, crlf = _line(line[1:])
        if op == b"+":
            self._hunk.lines.append(DiffLine(op="+", text=text, new=self._new, crlf=crlf))
            self._new += 1
            self._left_new -= 1
        elif op == b"-":
            self._hunk.lines.append(DiffLine(op="-", text=text, old=self._old, crlf=crlf))
            self._old += 1
            self._left_old -= 1
        else:  # " " or an empty line (diff.suppressBlankEmpty)
            self._hunk.lines.append(DiffLine(op=" ", text=text, old=self._old, new=self._new, crlf=crlf))
            self._old += 1
            self._new += 1
            self._left_old -= 1
            self._left_new -= 1


def _status(entry: RawEntry, binary: bool) -> FileStatus:
    modes = (entry.old_mode, entry.new_mode)
    if entry.status in ("R", "C"):
        return "renamed" if entry.status == "R" else "added"
    if GITLINK in modes:
        return "submodule"
    if SYMLINK in modes:
        return "symlink"
    if entry.status == "A":
        return "added"
    if entry.status == "D":
        return "deleted"
    return "binary" if binary else "modified"


def build_diff(*, repo: str, base: str, head: str, entries: list[RawEntry], sections: list[_Section]) -> Diff:
    """Join raw/numstat entries and patch sections into a :class:`Diff`.

    Status rules: ``renamed`` for a rename (``old_path`` set); ``submodule`` or ``symlink`` when
    either side is one (added, deleted, changed or a type change); ``added``/``deleted``; a
    changed binary file is ``binary``; otherwise ``modified``. ``binary`` is also a flag, so an
    added or renamed binary file keeps its status and has ``binary=True``.
    """
    by_header: dict[bytes, deque[int]] = {}
    for idx, entry in enumerate(entries):
        by_header.setdefault(section_header(entry), deque()).append(idx)
        if entry.status == "T":  # git prints a type change as a deletion plus an addition
            by_header[section_header(entry)].append(idx)
    per_file: list[list[_Section]] = [[] for _ in entries]
    for section in sections:
        queue = by_header.get(section.header)
        if queue:
            per_file[queue.popleft()].append(section)
    files = []
    for entry, parts in zip(entries, per_file, strict=True):
        binary = entry.binary or any(s.binary for s in parts)
        truncated = any(s.truncated for s in parts)
        hunks = [] if binary or truncated else [h for s in parts for h in s.hunks]
        old_path = entry.old_path.decode("utf-8", "replace") if entry.old_path is not None else None
        files.append(DiffFile(
            path=entry.path.decode("utf-8", "replace"), old_path=old_path, status=_status(entry, binary),
            old_mode=_mode(entry.old_mode), new_mode=_mode(entry.new_mode),
            additions=entry.additions, deletions=entry.deletions, binary=binary, truncated=truncated, hunks=hunks,
        ))
    return Diff(
        repo=repo, base=base, head=head, files=files, files_changed=len(files),
        additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files),
    )
