"""Shell words after expansion: quoting, ANSI-C escapes, tilde, brace expansion, globs.

The walker turns a word node into an *escaped form*: unquoted text stays as typed (backslash
escapes kept), quoted text has every character that matters to expansion escaped with a
backslash. Tilde, brace expansion and glob detection then look only at unescaped characters,
which is how bash itself keeps quoted text literal (bash(1), "EXPANSION").
"""

from __future__ import annotations

#: Characters that expansion treats specially when unquoted.
_SPECIAL = frozenset("\\*?[]{},~=:")
_GLOB = frozenset("*?[")

#: The most words one brace expansion may produce before the word counts as unknown.
MAX_BRACE_WORDS = 64

LIT = "lit"          # a known string
UNKNOWN = "unknown"  # value depends on a variable, substitution or the user's home
WTLIST = "wtlist"    # a list of paths inside the worktree ($(git ls-files), xargs input from find)
FD = "fd"            # a process substitution: a pipe path like /dev/fd/63


class Arg:
    """One shell word after expansion.

    Attributes:
        kind: :data:`LIT`, :data:`UNKNOWN`, :data:`WTLIST` or :data:`FD`.
        text: the word's value for ``LIT`` and ``FD`` words, else ``None``.
        glob: the word holds an unquoted ``*``, ``?`` or ``[``.
        src: the source text of the word, for messages.
        data: for a substitution whose output the policy knows (``$(echo git push)``,
            ``<(printf ls)``), that output as a :class:`~foreman.policy.context.Result` ``out``
            tuple (``("text", s)``); else None. The word itself stays unknown.
    """

    __slots__ = ("kind", "text", "glob", "src", "data")

    def __init__(self, kind: str, text: str | None, glob: bool = False, src: str = "", data=None) -> None:
        self.kind = kind
        self.text = text
        self.glob = glob
        self.src = src
        self.data = data

    @property
    def value(self) -> str:
        """The text of a ``LIT`` or ``FD`` word, for a caller that checked the kind (``text`` is
        None only for the other kinds)."""
        if self.text is None:
            raise ValueError(f"the {self.kind} word {self.src!r} has no text")
        return self.text

    @classmethod
    def lit(cls, text: str) -> "Arg":
        """A literal word with no glob characters."""
        return cls(LIT, text, False, text)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Arg({self.kind}, {self.text!r}{', glob' if self.glob else ''})"


def static_text(arg: Arg) -> str | None:
    """The text of a word when it is known before run time: a literal, or a substitution with
    a known output (``$(echo git)`` -> ``git``, as bash would split it); else None."""
    if arg.kind == LIT:
        return arg.text
    if arg.data is not None and arg.data[0] == "text":
        return " ".join(arg.data[1].split())
    return None


def quote_escape(text: str) -> str:
    """Escape ``text`` (a quoted piece) so expansion leaves it literal."""
    if not any(c in _SPECIAL for c in text):
        return text
    return "".join("\\" + c if c in _SPECIAL else c for c in text)


def unescape(esc: str) -> str:
    """Drop the escaping backslashes of an escaped form."""
    if "\\" not in esc:
        return esc
    out = []
    i, n = 0, len(esc)
    while i < n:
        c = esc[i]
        if c == "\\" and i + 1 < n:
            out.append(esc[i + 1])
            i += 2
        elif c == "\\":
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def has_unescaped(esc: str, chars: frozenset[str]) -> bool:
    """Whether ``esc`` holds one of ``chars`` that is not backslash-escaped."""
    i, n = 0, len(esc)
    while i < n:
        c = esc[i]
        if c == "\\":
            i += 2
            continue
        if c in chars:
            return True
        i += 1
    return False


def is_glob(esc: str) -> bool:
    """Whether the escaped form has an unquoted glob character (``*``, ``?``, ``[``)."""
    return has_unescaped(esc, _GLOB)


def tilde_expands(esc: str) -> bool:
    """Whether bash would expand a ``~`` in this word (at its start, or after ``=``/``:``)."""
    if esc.startswith("~"):
        return True
    i, n = 0, len(esc)
    while i < n - 1:
        c = esc[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" and esc[i + 1] == "~":
            return True
        i += 1
    return False


def decode_dq(raw: str) -> str:
    """Decode a double-quoted piece: backslash escapes only ``$ ` " \\`` and newline."""
    if "\\" not in raw:
        return raw
    out = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_line_continuations(raw: str) -> str:
    """Remove backslash-newline pairs from unquoted text."""
    return raw.replace("\\\n", "") if "\\\n" in raw else raw


_C_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
          "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def decode_ansi_c(body: str) -> str:
    """Decode the body of a ``$'...'`` word (bash(1), "QUOTING")."""
    out = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        i += 2
        if d in _C_ESC:
            out.append(_C_ESC[d])
        elif d in "01234567":
            j = i - 1
            while j < n and j < i + 2 and body[j] in "01234567":
                j += 1
            out.append(chr(int(body[i - 1:j], 8) & 0xFF))
            i = j
        elif d in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[d]
            j = i
            while j < n and j < i + width and body[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i:
                out.append("\\" + d)
            else:
                out.append(chr(min(int(body[i:j], 16), 0x10FFFF)))
                i = j
        elif d == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + d)
    return "".join(out)


def _find_brace(esc: str) -> tuple[int, int, list[int]] | None:
    """The first ``{...}`` group that bash would expand: (open, close, top-level commas)."""
    n = len(esc)
    i = 0
    while i < n:
        c = esc[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth, j, commas = 0, i, []
            while j < n:
                cj = esc[j]
                if cj == "\\":
                    j += 2
                    continue
                if cj == "{":
                    depth += 1
                elif cj == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif cj == "," and depth == 1:
                    commas.append(j)
                j += 1
            if j < n:
                body = esc[i + 1:j]
                if commas or _sequence(body) is not None:
                    return i, j, commas
        i += 1
    return None


def _sequence(body: str) -> list[str] | None:
    """The words of a ``{a..b[..step]}`` sequence body, or None if it is not one."""
    parts = body.split("..")
    if len(parts) not in (2, 3):
        return None
    try:
        step = abs(int(parts[2])) if len(parts) == 3 else 1
    except ValueError:
        return None
    step = step or 1
    a, b = parts[0], parts[1]
    try:
        x, y = int(a), int(b)
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        if len(rng) > MAX_BRACE_WORDS:
            return ["\x00"] * (MAX_BRACE_WORDS + 1)
        return [str(v) for v in rng]
    except ValueError:
        pass
    if len(a) == 1 and len(b) == 1 and a.isalpha() and b.isalpha():
        x, y = ord(a), ord(b)
        rng = range(x, y + 1, step) if x <= y else range(x, y - 1, -step)
        return [chr(v) for v in rng]
    return None


def brace_expand(esc: str) -> list[str] | None:
    """Expand braces in an escaped form; None if the result would exceed MAX_BRACE_WORDS."""
    out: list[str] = []
    todo = [esc]
    while todo:
        word = todo.pop()
        found = _find_brace(word)
        if found is None:
            out.append(word)
            if len(out) > MAX_BRACE_WORDS:
                return None
            continue
        i, j, commas = found
        pre, post = word[:i], word[j + 1:]
        if commas:
            bounds = [i, *commas, j]
            alts = [word[bounds[k] + 1:bounds[k + 1]] for k in range(len(bounds) - 1)]
        else:
            alts = _sequence(word[i + 1:j]) or []
        if len(alts) > MAX_BRACE_WORDS or len(todo) + len(out) > 4 * MAX_BRACE_WORDS:
            return None
        todo.extend(pre + a + post for a in reversed(alts))
    return out


def words_from_escaped(esc: str, src: str) -> list[Arg]:
    """The expanded words of one escaped form (brace expansion, tilde, glob flag)."""
    if tilde_expands(esc):
        return [Arg(UNKNOWN, None, False, src)]
    if "{" in esc:
        expanded = brace_expand(esc)
        if expanded is None:
            return [Arg(UNKNOWN, None, False, src)]
    else:
        expanded = [esc]
    out = []
    for e in expanded:
        if tilde_expands(e):
            out.append(Arg(UNKNOWN, None, False, src))
        else:
            out.append(Arg(LIT, unescape(e), is_glob(e), src))
    return out


def split_glob(path: str) -> tuple[str, bool, bool] | None:
    """Split a glob path into its literal directory prefix.

    Returns:
        ``(prefix, tree, ok)`` where ``prefix`` is the directory before the first component
        holding a glob character, ``tree`` says whether matches may lie deeper than directly in
        ``prefix`` (a glob in a middle component, or ``**``), or None when a ``..`` follows a
        glob component (it could climb out through a matched link, so the path is unknown).
    """
    parts = path.split("/")
    for idx, comp in enumerate(parts):
        if any(c in comp for c in _GLOB):
            rest = parts[idx + 1:]
            if ".." in rest:
                return None
            prefix = "/".join(parts[:idx])
            if path.startswith("/") and not prefix:
                prefix = "/"
            tree = bool(rest) or "**" in comp
            return prefix or ".", tree, True
    return path, False, True
