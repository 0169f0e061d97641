"""Display-safe text: what titles and names may hold, and how clients show everything else.

A text that holds bidirectional controls or control characters can look like another text: a
right-to-left override turns ``Reject`` into something that reads like ``Merge``, a NUL or an
escape sequence cuts or recolours a terminal line. So that every client shows the text that is
stored, and every client the same:

* **Titles and names** (:data:`TITLE_FIELDS`) may hold none of :func:`unsafe` characters but
  newline and tab: the daemon refuses them with the error code ``bad_text`` (nothing changes).
* **Everything else a client shows** (message bodies: messages, feed items, log lines, decision
  prompts and details, task descriptions and reasons, activity lines, repository paths, and any
  title stored before this rule) is shown through :func:`display`: each such character as
  ``<U+XXXX>``.

Source of the character sets: Unicode's bidirectional algorithm (UAX #9, "Explicit Directional
Embeddings, Overrides and Isolates" and the implicit marks) and the C0/C1 control blocks.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS: tuple[str, ...] = (
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # LRE, RLE, PDF, LRO, RLO
    "\u2066", "\u2067", "\u2068", "\u2069",  # LRI, RLI, FSI, PDI
    "\u200e", "\u200f", "\u061c",  # LRM, RLM, ALM
)
"""The bidirectional formatting characters (UAX #9): embeddings, overrides, isolates, marks."""

ALLOWED_CONTROLS = ("\n", "\t")
"""The control characters titles and bodies may hold as they are."""

TITLE_FIELDS: tuple[str, ...] = (
    "Task.title", "Goal.text", "Agent.title", "Agent.name", "Decision.options", "MemoryNote.note",
)
"""The wire fields that are titles and names: the daemon refuses text with an :func:`unsafe`
character (``bad_text``) wherever it comes from (a client's ``goal.submit``, an agent's
``create_task`` or ``ask_user``, the configuration). Agent names and memory note names are
already ids of plain ASCII letters, digits, ``.``, ``-`` and ``_``."""

_BIDI = frozenset(BIDI_CONTROLS)


def unsafe(ch: str) -> bool:
    """Whether the character ``ch`` is one a client could show as another text: a bidi control
    (:data:`BIDI_CONTROLS`), a C0 control other than newline and tab (U+0000..U+001F), DEL
    (U+007F) or a C1 control (U+0080..U+009F, ``U+009B`` starts a terminal escape)."""
    code = ord(ch)
    return ch in _BIDI or (code < 0x20 and ch not in ALLOWED_CONTROLS) or 0x7F <= code <= 0x9F


def escape(ch: str) -> str:
    """How :func:`display` shows one :func:`unsafe` character: ``<U+202E>``."""
    return f"<U+{ord(ch):04X}>"


def display(text: str) -> str:
    """``text`` as a client shows it: every :func:`unsafe` character as ``<U+XXXX>`` (a CR before
    a newline is part of the line break and dropped); text without one is returned as it is."""
    if not any(unsafe(ch) for ch in text):
        return text
    text = text.replace("\r\n", "\n")
    return "".join(escape(ch) if unsafe(ch) else ch for ch in text)


def title_problem(what: str, text: str) -> str | None:
    """Why ``text`` may not be a title or name (``what``: ``"a task title"``), else None: the
    first :func:`unsafe` character, by code point, name and position."""
    for i, ch in enumerate(text):
        if unsafe(ch):
            name = unicodedata.name(ch, "a control character")
            return (f"{what} may not hold {escape(ch)} ({name}, at character {i + 1}): titles and names take no "
                    "bidirectional controls and no control characters other than newline and tab, so that every "
                    f"client shows the text that is stored; shown as it would be displayed: {display(text)[:120]!r}")
    return None


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... ``11th`` ... ``21st``: a place (a merge queue's
    ``Task.merge_queue``) as every client and the feed write it."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
