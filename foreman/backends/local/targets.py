"""Which named files a task asks to change ("targets"), and which it names only as context.

A task's text names files for two reasons: to say where a change goes ("add ``parse_date``
to ``dates.py``", "make ``run_show`` in ``commands/show.py`` print ...") or to point at an
example ("see ``module.py``", "like ``to_snake`` in ``module.py``"). Guided mode
refuses a passing attempt that left a *target* unchanged, and only notes an unchanged context
file, so the two must be told apart. The rule, kept simple on purpose:

1. The text is cut into sentences (``.``, ``!``, ``?``, ``;`` followed by a space, or a line
   break; ``e.g.``/``i.e.`` do not end one).
2. A file is *mentioned* by its path (as :func:`.localize.localize` resolves it) or by a
   top-level symbol defined in it (``run_show``).
3. For each mention, the words of its clause before it (back to the last ``, ( ) : —``) are
   scanned; the last *change verb* (add, make, change, fix, update, use, print, write, rename,
   remove, replace, implement, edit, modify, move, set, return, call, ... in any inflection) or
   *context marker* (see, like, as in, the same as, similar to, such as, based on, for example, for instance,
   e.g., cf.) decides: a verb makes it a target, a marker makes it context. A mention followed
   by "shows", "show how", "demonstrates" or "is an example" is context.
4. With neither in its clause, the mention is a target when its sentence carries a change verb
   anywhere ("In X, parse_date uses ..."); otherwise it is *neutral*, and becomes a target when
   the next sentence carries a change verb but mentions no file ("The bug is in X. Fix it."), or
   the sentence before did ("Fix the crash. It happens in X.").
5. A change verb does not count where it is negated ("don't change X", "without editing X",
   "X must not change"; any ``n't`` with a straight or typographic apostrophe, "cannot"; but not
   "not only", "don't just", "don't forget", "do not hesitate to") or where it asks for a test of
   the code (a mention after "write a test for", "add tests of", "a test that checks" ...): such a
   file is context, unless it is a test file itself, and so is one after "don't touch/alter/break"
   or "without breaking/affecting ..." (a few words before it), right after "not (to/in)", "instead
   of", "rather than", "no changes to", in "leave/keep X alone/unchanged/as it is", or followed by
   "is fine", "stays unchanged", "must not be changed", "isn't changed". Otherwise a test-only answer that rightly
   leaves the code alone is refused as leaving a target unchanged. A file named for a test (or
   neutral) is a target all the same when a fix follows, later in its sentence with no other code file named
   after it, or in the next sentence naming no file ("add tests of X and fix it", "then correct
   the function").

A file is a target when any of its mentions is.
"""

from __future__ import annotations

import re
from typing import Iterable

_STEMS = ("add", "append", "insert", "create", "make", "change", "fix", "update", "use", "print", "write", "rename",
          "remove", "delete", "replace", "implement", "edit", "modify", "move", "set", "return", "call", "extend",
          "refactor", "convert", "handle", "support", "accept", "output", "emit", "register", "raise", "drop", "rewrite")
_IRREGULAR = {"made", "wrote", "written", "rewrote", "rewritten"}


def _forms(stem: str) -> set[str]:
    forms = {stem, stem + "s", stem + "ed", stem + "ing", stem + "es"}
    if stem.endswith("e"):
        forms |= {stem + "d", stem[:-1] + "ing"}
    if stem.endswith("y"):
        forms |= {stem[:-1] + "ies", stem[:-1] + "ied"}
    if stem in ("set", "emit", "drop"):
        forms |= {stem + stem[-1] + "ing", stem + stem[-1] + "ed"}
    return forms


VERBS: frozenset[str] = frozenset({f for s in _STEMS for f in _forms(s)} | _IRREGULAR)
"""Every inflection of the change verbs."""
_VERB_RE = re.compile(r"\b(?:" + "|".join(sorted(VERBS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_MARKER_RE = re.compile(r"(?:\bsee|\blike|\bas in|\bas done in|\bsimilar to|\bsuch as|\bbased on"
                        r"|\bthe same as|\bfor example|\bfor instance|\be\.g\.|\bcf\.)(?![\w])", re.IGNORECASE)
_SHOWS_RE = re.compile(r"^[`'\")\s]*(?:shows?\b|demonstrates?\b|is an example\b|has an example\b)", re.IGNORECASE)
_SENTENCE_RE = re.compile(r"(?<=[.!?;])(?<!e\.g\.)(?<!i\.e\.)\s+|\n+")
_CLAUSE_BREAK_RE = re.compile(r"[,():\u2014]")
_NEGATION = r"(?:\bnot|\bnever|\bcannot|\bdon'?t|\bdoesn'?t|\b\w+n['\u2019]t|\bno need to|\bwithout)\s+"
_NOT_NEGATING = r"(?!(?:only|just|forget|fail|hesitate|neglect)\b)"  # "not only fix", "don't forget to update"
_NEGATED_RE = re.compile(_NEGATION + r"(?:" + _NOT_NEGATING + r"\w+\s+)?$", re.IGNORECASE)
_UNTOUCHED_RE = re.compile(r"(?:" + _NEGATION + r"(?:touch|alter|break|affect)\w*|\bwithout\s+\w+ing)"
                           r"\s+(?:\w+\s+){0,3}$", re.IGNORECASE)  # "do not touch X", "without breaking the API of X"
_NOT_HERE_RE = re.compile(r"(?:\bnot|n['\u2019]t|\binstead\s+of|\brather\s+than|\bno\s+(?:changes?|edits?|modifications?|updates?)"
                          r"\s+(?:to|in|of|for))\s+(?:(?:to|in|on|from|into|of|for)\s+)?(?:the\s+)?$", re.IGNORECASE)
_LEFT_AFTER_RE = re.compile(  # said after the mention: "X is fine", "X stays unchanged", "X must not be changed"
    r"^[`'\")\s]*(?:(?:is|are)\s+(?:already\s+)?fine\b|(?:is|are)\s+(?:correct|right)\s+as\s+(?:it\s+)?is\b"
    r"|(?:stays?|remains?|is\s+left|is\s+kept)\s+(?:as\s+(?:it\s+)?is|unchanged|untouched|alone|intact|the\s+same)\b"
    r"|(?:must|should|may|can|will|need|is|are)(?:\s+not|n['\u2019]t)\s+(?:to\s+)?(?:be\s+)?"
    r"(?:changed|modified|edited|touched|altered|rewritten)\b)", re.IGNORECASE)
_KEPT_RE = re.compile(r"\b(?:leave|leaving|keep|keeping)\s+(?:\w+\s+)?$", re.IGNORECASE)
_AS_IT_IS_RE = re.compile(r"^[`'\")\s]*(?:alone|unchanged|untouched|intact|as (?:it )?is)\b", re.IGNORECASE)
_TEST_OF_RE = re.compile(r"^\W*(?:\w+\W+){0,3}?tests?\b.*\b(?:for|of|that|covering)\b", re.IGNORECASE)
_FIX_IT_RE = re.compile(r"\b(?:fix|repair|correct|patch|chang|updat|modif|edit)\w*\s+(?:it|them|that|this|the\s+(?:bug|crash|"
                        r"error|code|function|method|problem|issue|failure|behaviou?r)s?)\b", re.IGNORECASE)
_TEST_FILE_RE = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.py$|conftest\.py$)")

Mention = tuple[int, int, str]
"""A mention in the text: ``(start, end, file)``."""


def sentences(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of ``text``'s sentences (rule 1 of the module doc)."""
    spans, start = [], 0
    for match in _SENTENCE_RE.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def _verbs(text: str) -> list[re.Match[str]]:
    """The change verbs of ``text`` that are not negated (rule 5)."""
    return [m for m in _VERB_RE.finditer(text) if not _NEGATED_RE.search(text[:m.start()])]


def _asks_change(sentence: str) -> bool:
    """True when ``sentence`` carries a change verb that is neither negated nor a test ask."""
    return any(not _TEST_OF_RE.match(sentence[m.end():]) for m in _verbs(sentence))


def _fixes(text: str) -> bool:
    """True when ``text`` asks to fix what it refers to ("fix it", "then correct the function"), not negated."""
    return any(not _NEGATED_RE.search(text[:m.start()]) for m in _FIX_IT_RE.finditer(text))


def _verdict(sentence: str, start: int, end: int, rel: str) -> str:
    """``target``, ``context``, ``neutral`` or ``tested`` (context, named for a test) for the
    mention at ``start:end`` of ``sentence``."""
    before = sentence[:start]
    breaks = [m.end() for m in _CLAUSE_BREAK_RE.finditer(before)]
    cut = breaks[-1] if breaks else 0
    clause = before[cut:]
    kept = _KEPT_RE.search(before)  # "leave X alone", but not "do not leave X unchanged"
    after = sentence[end:]
    if (_SHOWS_RE.match(after) or _LEFT_AFTER_RE.match(after) or _UNTOUCHED_RE.search(clause)
            or _NOT_HERE_RE.search(clause)
            or (kept and _AS_IT_IS_RE.match(after) and not _NEGATED_RE.search(before[:kept.start()]))):
        return "context"
    negated = [m for m in _VERB_RE.finditer(clause) if _NEGATED_RE.search(clause[:m.start()])]
    last = max([(m.start(), "target", m.end()) for m in _verbs(clause)]
               + [(m.start(), "context", 0) for m in _MARKER_RE.finditer(clause)]
               + [(m.start(), "negated", 0) for m in negated], default=None)
    if last is not None:
        if last[1] == "negated":
            return "context"
        if last[1] == "target" and not _TEST_FILE_RE.search(rel) and _TEST_OF_RE.match(clause[last[2]:]):
            return "tested"
        return last[1]
    if _TEST_FILE_RE.search(rel):
        return "target" if _verbs(sentence) else "neutral"
    return "target" if _asks_change(sentence) else "neutral"


def change_targets(text: str, mentions: Iterable[Mention]) -> list[str]:
    """The files ``text`` asks to change, by the rule of the module doc.

    Args:
        text: the task's text.
        mentions: where it mentions each file, as ``(start, end, file)`` offsets into ``text``
            (a path, or a top-level symbol defined in the file).

    Returns:
        The target files, in the order of their first mention.
    """
    ordered = sorted(mentions)
    targets: list[str] = []
    neutral: list[str] = []
    tested: list[str] = []
    asked = False  # the sentence before asked a change and named no file ("Fix the crash. It is in X.")
    for s_start, s_end in sentences(text):
        sentence = text[s_start:s_end]
        inside = [(a - s_start, b - s_start, rel) for a, b, rel in ordered if s_start <= a and b <= s_end]
        if not inside:
            if neutral and _asks_change(sentence):
                targets.extend(neutral)
            if tested and _fixes(sentence):
                targets.extend(tested)
            neutral, tested, asked = [], [], _asks_change(sentence)
            continue
        neutral, tested, was_asked, asked = [], [], asked, False
        for a, b, rel in inside:
            verdict = _verdict(sentence, a, b, rel)
            later = [m for m in inside if m[0] >= b and not _TEST_FILE_RE.search(m[2])]
            if verdict == "target" or (verdict in ("tested", "neutral") and not later and _fixes(sentence[b:])):
                targets.append(rel)
            elif verdict == "neutral" and was_asked:
                targets.append(rel)
            elif verdict == "neutral":
                neutral.append(rel)
            elif verdict == "tested":
                tested.append(rel)
    return list(dict.fromkeys(targets))


__all__ = ["Mention", "VERBS", "change_targets", "sentences"]
