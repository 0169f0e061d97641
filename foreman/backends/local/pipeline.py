"""Guided mode as a pipeline: its stages, its named checks, and the counts a run keeps (pure).

One guided attempt (:mod:`.guided_steps`) passes through fixed stages over one attempt state:

- ``locate``: the files and symbols the task names (:mod:`.localize`), once per turn;
- ``propose``: the model is asked for code (or a test) and the answer is placed in the files;
- ``check``: cheap checks of the placed answer, without running the code's tests;
- ``validate``: the repository's checks run, and what a pass must also prove;
- ``repair``: a failed check's finding goes back to the model for a bounded number of rounds;
- ``commit``: the passing attempt's files are committed and the task goes to review (the runner).

Each check beyond the core of the stages is a named unit (:data:`CHECKS`) that ``--ablate NAME``
(the profile's ``ablate``) switches off, so a bench can measure what each one is worth. A check's
``prevents`` says the general failure it stops; that is its whole justification.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

STAGES = ("locate", "propose", "check", "validate", "repair", "commit")
"""The stages of a guided attempt, in order (see the module docstring)."""


@dataclass(frozen=True)
class Check:
    """One named check of guided mode.

    Attributes:
        name: the name ``--ablate`` takes (lowercase, dashes).
        stage: the stage it runs in (one of :data:`STAGES`).
        prevents: the general failure it stops, in one sentence.
    """

    name: str
    stage: str
    prevents: str


CHECKS: tuple[Check, ...] = (
    Check("asked-test", "propose", "a change to untested behaviour passes the old tests whatever it does: a test of "
          "the asked behaviour is written first and must fail on the unchanged code"),
    Check("keep-test", "propose", "a refactor keeps what the code does, so no test of it fails on the unchanged code "
          "and every asked test was refused until the attempts ran out: a test of the kept behaviour that passes "
          "there is locked (it must still pass), the answer must write every function the task names, and a file "
          "whose change keeps behaviour is not asked to be needed by the test"),
    Check("task-error", "check", "a test of the asked behaviour is thrown away because it fails with the very error "
          "the task describes (or pytest's 'DID NOT RAISE' of the error the task asks for)"),
    Check("test-alone", "check", "a new test that cannot run (a missing import, an undefined name), or that calls "
          "the code with an argument the task never names, is counted as a failing test of the task: each new test "
          "file is run alone before it counts"),
    Check("repeat-test", "check", "a test that repeats an existing test is counted as new: it checks nothing the task "
          "adds"),
    Check("continue", "propose", "an answer cut at the reply-length limit loses its end: the model is asked to "
          "continue it"),
    Check("unloop", "propose", "a model that fell into a repetition loop (one line repeated until the reply's limit) "
          "loops the same way when asked again: the task's later asks carry a repetition penalty"),
    Check("function-ask", "repair", "an answer leaves out a function or class the task asks for by name (or sends "
          "its file back unchanged without it): that definition is asked for alone"),
    Check("raise-ask", "repair", "a new test expects an error that the function it calls does not raise yet, and "
          "told only that the test failed, the model rewrites the test or the error class: that function is shown "
          "and asked for alone, changed to raise it (once an attempt, beside the repair rounds)"),
    Check("line-ask", "repair", "an answer sends the code the task names back unchanged: the line the task names is "
          "asked for alone"),
    Check("cut-table", "propose", "a test cut inside its parametrize table loses every case: the complete rows are "
          "kept and the function under them asked for"),
    Check("made-up-cases", "validate", "a test case whose expected value the task never states fails the right "
          "change: such cases are dropped"),
    Check("proof", "validate", "a test that passes without the change (or without one target's change) lets a wrong "
          "change through"),
    Check("mutant", "validate", "a new test that still passes when the code it calls is broken proves nothing: a "
          "test added with no change to the code must call each function the task names and fail on a broken "
          "version (a mutant) of what it calls"),
    Check("uses", "validate", "an answer that adds the function a task asks the code to share, and leaves the old "
          "copies doing the work, passes every test of the new function: some code must call it"),
    Check("raise-first", "validate", "an answer raises the asked error only after it changed the object (a count "
          "lowered, an item dropped), so a test expecting the error passes while the refused call leaves a half-made "
          "change: an added raise must come before any change of state"),
    Check("raise-where", "validate", "a test that expects the asked error from a helper, not from the call the task "
          "says must raise, passes while that call still accepts the bad input: a new test's raises-block must call a "
          "function the task names"),
    Check("named-file", "validate", "a pass leaves a file the task asks to change unchanged: the model is asked for "
          "it once"),
)
"""Every check ``--ablate`` can switch off, in pipeline order."""

NAMES = tuple(check.name for check in CHECKS)


def parse_ablate(names: Iterable[str]) -> tuple[str, ...]:
    """The checks to switch off, validated and in pipeline order.

    Args:
        names: check names (each may itself be comma-separated: ``"proof,line-ask"``).

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    wanted = {part.strip() for name in names for part in name.split(",") if part.strip()}
    unknown = sorted(wanted - set(NAMES))
    if unknown:
        raise ValueError(f"unknown check {', '.join(unknown)} (known: {', '.join(NAMES)})")
    return tuple(name for name in NAMES if name in wanted)


class StageCounts(Counter[str]):
    """Outcome counts of a guided run, keyed ``"stage: outcome"`` (``"check: test broken"``)."""

    def mark(self, stage: str, outcome: str) -> None:
        """Count one ``outcome`` of ``stage``.

        Raises:
            ValueError: ``stage`` is not one of :data:`STAGES` (a typo would hide a count).
        """
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}")
        self[f"{stage}: {outcome}"] += 1

    def by_stage(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """The counts grouped by stage, stages in pipeline order, outcomes by name."""
        out = []
        for stage in STAGES:
            rows = sorted((key.split(": ", 1)[1], n) for key, n in self.items() if key.startswith(f"{stage}: "))
            if rows:
                out.append((stage, rows))
        return out


@dataclass(frozen=True)
class Finding:
    """A stage's verdict that the attempt cannot pass as it is.

    Attributes:
        stage: the stage that found it.
        outcome: the attempt's outcome if no repair follows ("checks failed", ...).
        detail: what exactly (shown in the task's history).
        ask: the repair request.
        fresh: the request starts a new conversation (system prompt and the request only).
        step: the kind of the ask that follows.
        free: the ask uses no repair round (an ask made at most once an attempt, whose need shows
            only after the rounds went to what came before it).
    """

    stage: str
    outcome: str
    detail: str
    ask: str
    fresh: bool = False
    step: str = "repair"
    free: bool = False


PASSED = Finding("validate", "passed", "", "")
"""The verdict that ends the attempt as passed (``attempt.outcome`` is set by the stage)."""


__all__ = ["CHECKS", "NAMES", "PASSED", "STAGES", "Check", "Finding", "StageCounts", "parse_ablate"]
