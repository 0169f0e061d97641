"""Made-up cases: the cases of a task's test that neither the old code nor the change satisfy,
and whose values the task never states.

A model may write a right change and a test table whose rows are mostly right but a few made up
(``(31 days, "1 month ago")`` for code that has no months). Each repair tends to send the same
table back, and the task would end blocked with a right change. Here the harness judges such
cases itself, after the checks failed only in that test:

1. *Split* (:func:`.cases.split_cases`): each new test function becomes one case per row of its one
   ``parametrize`` table, or one case per ``assert`` of its body, each written as a test
   function of its own in a probe file beside the test.
2. *Run the cases* on the changed code and, with every changed file that is not a test put
   back, on the old code (:mod:`.probe`, pytest's JUnit report).
3. *Judge* (:func:`made_up`): a case is made up when it fails on an ``assert`` on both (so the
   code it calls exists on the old code too: a task that adds a function never gets here, its
   cases fail on the import there), the change moved it (its assert's message differs on the
   two), its expected value holds a word that neither the task, the code nor the test's inputs
   hold (``month`` of ``'1 month ago'``: no code can print it without being told) and no value of it is stated by the task (a quoted string of
   the task, or one of its shape with other digits, ``"5 days ago"`` beside ``'2 days ago'``,
   or the assert written in the task). Cases are dropped only when every failing case is made
   up and one case *anchors* the test: stated, passing on the change, failing on the old code
   on an assert (:func:`anchors`: an equality with a stated expected value). A case that passed on the old code and fails on the change is a regression,
   never dropped.

A failing case the change did not move (the same assert message on both codes) and whose value the
task does not state is never dropped, but the repair names it (:func:`unmoved`): it checks a value
the change leaves alone, so either the code is still wrong or the test expects a value the code
never gave.

The test keeps its other cases and still has to pass the checks and fail on the old code
(:func:`.proof.proves_the_change`). Pure functions here (the test's cases: :mod:`.cases`); the runs are
:func:`drop_made_up`'s.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from .answers import Planned
from .cases import Case, input_words, lower_words, split_cases, without
from .guided_text import failing_files
from .localize import is_test_file
from .proof import run_probe, run_probe_without

if TYPE_CHECKING:
    from .guided import Attempt, GuidedTask
    from .localize import Localized

logger = logging.getLogger(__name__)

_QUOTE_RE = re.compile(r"""(?:^|(?<=[\s(\[=,:]))(['"`])([^'"`\n]{1,120}?)\1(?=$|[\s).,;:!?\]])""")


def invented(case: Case, known: set[str]) -> bool:
    """Whether an expected value of ``case`` holds a word (three letters or more) that ``known``
    (the task's, the code's and the test's input words) does not, nor a part or a whole of one
    (``hours`` beside ``hour``, ``foo`` beside ``foobarbaz``): output no code can print without being
    told to (``'1 month ago'`` from a function whose code has no months). Never for a case that
    feeds the code letters of its own (``to_snake('FooBarBaz')``: the code builds from them)."""
    if any(re.search(r"[A-Za-z]", value) for value in case.strings if value not in case.expected):
        return False  # the case feeds the code text of its own: what it expects may be built from it
    longer = [k for k in known if len(k) >= 3]
    return any(not any(word in k or k in word for k in longer)
               for value in case.expected for word in lower_words(value) - known)


def task_quotes(goal: str) -> set[str]:
    """The strings the task quotes (``'2 days ago'``, ``"HI!"``, a backticked one); a quote must
    open after a space or bracket and close before one, so ``parse_date's`` is not one."""
    return {m.group(2) for m in _QUOTE_RE.finditer(goal)}


def _shape(value: str) -> str:
    return re.sub(r"\d+", "#", value)


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text).replace('"', "'")


def stated(case: Case, goal: str) -> bool:
    """Whether the task states a value of ``case``: one of its strings (two characters or more)
    is quoted by the task, or has the shape of one with other digits (``"5 days ago"`` beside
    ``'2 days ago'``), or is written out in it unquoted (four characters or more, not letters
    alone: ``$1,234.56`` in "they should read $1,234.56"), or the case's source is written in the
    task (``count_words('two words') == 2``).
    """
    quotes = {q for q in task_quotes(goal) if len(q.strip()) >= 2}
    shapes = {_shape(q) for q in quotes if re.search(r"\d", q)}
    for value in case.strings:
        if len(value.strip()) < 2:
            continue
        if value in quotes or (re.search(r"\d", value) and _shape(value) in shapes):
            return True
        if len(value.strip()) >= 4 and re.search(r"[^A-Za-z]", value) and re.search(
                rf"(?<![\w$€£]){re.escape(value)}(?![\w])", goal):
            return True  # written out unquoted: "They should read $1,234.56"
    sources = [case.source]
    if case.source.count(" == ") == 1:  # expected first or second alike
        left, right = case.source.split(" == ")
        sources.append(f"{right} == {left}")
    return any(len(_squeeze(src)) >= 6 and _squeeze(src) in _squeeze(goal) for src in sources)


def anchors(case: Case, goal: str) -> bool:
    """Whether ``case`` is an equality check of what the task states: its expected value is stated
    (quoted by the task, or of a quoted value's shape), or its ``a == b`` is written in the task.
    ``assert age != 'just now'`` quotes the task too, but passes whatever wrong value the change
    returns."""
    if case.expected and stated(Case(0, "", case.kind, 0, "", case.expected), goal):
        return True
    return case.kind == "assert" and case.source.count(" == ") == 1 and stated(Case(0, "", case.kind, 0, case.source, ()), goal)


def made_up(cases: list[Case], now: dict[str, tuple[str, str]], before: dict[str, tuple[str, str]],
            goal: str, known: set[str] | frozenset[str] = frozenset()) -> list[Case]:
    """The cases to drop (the module's rule); [] when none may be.

    A case is dropped only when the change moved it: its assert's message differs on the two codes
    (``assert '31 days ago' == '1 month ago'`` against ``assert 'just now' == ...``). A case the
    change left as the old code had it is what a change that fixes the stated input alone (a
    hard-coded ``if text == 'Hello World'``) fails, and stays. And only
    when its expected value holds a word nothing gave the code (:func:`invented`): a change that
    half-fixes ``pop`` moves a case ``pop() == 'kiwi'`` too, and 'kiwi' was pushed by the test.

    Args:
        cases: the cases (:func:`.cases.split_cases`).
        now: each case's probe result on the changed code, ``case.name`` -> ``(kind, detail)``
            (kind: ``asserts``, ``new name``, ``own error``, ``passed``, ``skipped``; detail: the
            exception line; :class:`.probe.ProbeOutcome`).
        before: the same on the old code.
        goal: the task's text.
        known: the words of the code the attempt changed (as it was and as it is) and of the
            test's inputs (:func:`.cases.input_words`); the task's are added here.
    """
    known = set(known) | lower_words(goal)
    if not cases or any(case.name not in now or case.name not in before for case in cases):
        return []
    failing = [case for case in cases if now[case.name][0] != "passed"]
    if not failing:
        return []
    drop = [case for case in failing if now[case.name][0] == "asserts" and before[case.name][0] == "asserts"
            and now[case.name][1] != before[case.name][1] and not stated(case, goal) and invented(case, known)]
    if len(drop) != len(failing):
        return []
    anchored = any(now[c.name][0] == "passed" and before[c.name][0] == "asserts" and anchors(c, goal) for c in cases)
    return drop if anchored else []


def probe_path(path: str) -> str:
    """The probe file beside a test file: ``tests/test_x.py`` -> ``tests/test_x_foreman_cases.py``."""
    pure = PurePosixPath(path)
    return str(pure.with_name(f"{pure.stem}_foreman_cases.py"))


def unmoved(cases: list[Case], now: dict[str, tuple[str, str]], before: dict[str, tuple[str, str]],
            goal: str) -> list[tuple[Case, str]]:
    """The failing cases the change did not move, with their failure: each fails on an assert with
    the same message on the old code and on the change (``'1.0 MB' != '1 MB'`` on both), and the
    task states none of its values. Such a case checks a value the change leaves alone: either the
    task asks to change it and the code is still wrong, or the test expects a value the code never
    gave. The repair says which it is not (:data:`.guided_text.UNMOVED`); nothing is dropped (a
    change that fixes the stated input alone fails such a case, :func:`made_up`)."""
    return [(case, now[case.name][1]) for case in cases if case.name in now and case.name in before
            and now[case.name][0] == "asserts" and now[case.name] == before[case.name] and not stated(case, goal)]


_COMPARED_RE = re.compile(r"^(?:AssertionError: )?(?:assert )?(.+?) (?:!=|==) (.+?)$")


def listed(case: Case, failure: str) -> str:
    """One line of a repair's list of :func:`unmoved` asserts: ``- f(x) gives 'A', not 'B'`` when
    the failure compares the case's expected value with another (unittest's ``'A' != 'B'``,
    pytest's ``assert 'A' == 'B'``, either order), else the assert and its failure as they are."""
    compared = _COMPARED_RE.match(failure.strip())
    parts = case.source.split(" == ")
    if compared and len(parts) == 2 and len(case.expected) == 1:
        sides, wanted = compared.groups(), repr(case.expected[0])
        if wanted in sides and sides[0] != sides[1]:
            got = sides[1] if sides[0] == wanted else sides[0]
            call = parts[0] if parts[1].strip() == wanted else parts[1]  # (ast.unparse writes the repr)
            return f"- {call.strip()} gives {got}, not {wanted}"
    return f"- {case.source} ({failure})"


@dataclass
class Judged:
    """What :func:`drop_made_up` found: the ``dropped`` cases, and the failing cases it left that
    the change did not move (:func:`unmoved`: ``(case, failure)``)."""

    dropped: list[Case] = field(default_factory=list)
    unmoved: list[tuple[Case, str]] = field(default_factory=list)
    changed: bool = True
    """The attempt changed code (False: a test alone was added, and ``unmoved`` are its failing asserts)."""


async def drop_made_up(task: GuidedTask, attempt: Attempt, where: Localized, summary: str) -> Judged:
    """When the checks failed only in the test the task asks for, drop its made-up cases (the
    module's rule) and rewrite it; the :class:`Judged` cases (none when the rule does not apply:
    another file fails, the test has no case to split, the check command is not plain pytest;
    none dropped when no case is made up or none anchors the test, or no code changed: then its
    failing asserts are ``unmoved``). The probe file is removed whatever happens."""
    path = where.test_file
    if not (where.wants_test and path and path != task.locked) or failing_files(summary) != {path}:
        return Judged()
    code = {rel: data for rel, data in task.original.items() if not is_test_file(rel)}
    text = task._read(path)
    new = task._new_tests(path)
    try:
        split = split_cases(text or "", new)
    except Exception as exc:  # noqa: BLE001 - the harness's own judgement failed: nothing is dropped
        logger.warning("cannot split the cases of %s: %r", path, exc)
        return Judged()
    if split is None or not split[1]:
        return Judged()
    probe_text, cases = split
    probe = task.root / probe_path(path)
    allowed, _ = await task.tools.permit("Write", {"file_path": str(probe)})
    if probe.exists() or not allowed:
        return Judged()
    try:
        probe.write_text(probe_text, encoding="utf-8")
        now = {o.name: (o.kind, o.detail) for o in await run_probe(task, attempt, probe_path(path), where, "cases probe")}
        before = {o.name: (o.kind, o.detail) for o in await run_probe_without(task, attempt, probe_path(path), where,
                                                                           code, "cases probe (old code)")} if code else now
    finally:
        probe.unlink(missing_ok=True)
    if not code:  # a test of what the code already does: nothing to drop, its failing asserts to name
        return Judged(unmoved=unmoved(cases, now, before, task.goal), changed=False)
    known = input_words(text or "", new)
    for rel, data in code.items():
        known |= lower_words((data or b"").decode("utf-8", "replace")) | lower_words(task._read(rel) or "")
    drop = made_up(cases, now, before, task.goal, known)
    if not drop:
        return Judged(unmoved=unmoved(cases, now, before, task.goal))
    try:
        rewritten = without(text or "", drop)
    except Exception as exc:  # noqa: BLE001 - as above
        logger.warning("cannot drop the made-up cases of %s: %r", path, exc)
        return Judged()
    if not await task._write(Planned(texts={path: rewritten})):  # through the policy, as every write
        return Judged()
    task._trace(attempt.number, "made-up cases", attempt.temperature, "", None,
                outcomes=[[c.function, c.kind, c.source[:200]] for c in drop])
    return Judged(dropped=drop)


__all__ = ["Judged", "anchors", "drop_made_up", "invented", "listed", "made_up", "probe_path", "stated", "task_quotes", "unmoved"]
