"""The checks of a new test before it counts: it repeats no existing test (``repeat-test``) and it
runs on its own (``test-alone``), both in the pipeline's check stage (:mod:`.guided_steps`).

- *repeat-test*: a new test function whose body is an existing test's body, statement for
  statement, under the same decorators and parameters (names, comments and blank lines aside),
  checks what the code already did; it is dropped from the file, and when no new test is left
  the model is asked for one that is new.
- *test-alone*: the test file is run alone (pytest's JUnit report, as the asked test's probe runs
  it); a new test function that fails on an error no change to the code can fix (a ``NameError``,
  an import of a module that does not exist, a fixture nobody defines, a helper method its own
  test class lacks, the file not collecting) goes back to the model as the test's own fault, before the whole suite's failure would blame
  the code. A new test function that calls the code with a keyword argument the task never names
  (``search("glue", threshold=2)``: ``TypeError: ... unexpected keyword argument 'threshold'``)
  tests what nobody asked for; it is dropped while another new test is left (:func:`unasked`),
  else it goes back to the model like a broken one.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import named as named_files
from . import probe as probes
from . import proof
from .localize import Localized, is_test_file
from .pipeline import Finding
from .symbols import test_bodies, test_labels

if TYPE_CHECKING:
    from .guided import Attempt, GuidedTask

REPEATED = ("{names} in {path} repeat{s} a test the repository already has, so {it} checks nothing the task adds. "
            "Write test functions of exactly what the task asks for, with new names, in one ```python block whose "
            "first line is `# file: {path}`. No explanations.")
BROKEN = ("The tests in {path} fail on their own, before they test anything:\n{errors}\nFix the test file (import what "
          "it uses from the module that defines it; use only fixtures and helpers that exist). Send the corrected test "
          "functions with their imports in one ```python block whose first line is `# file: {path}`.")
_OWN_KINDS = ("NameError", "ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError")
_FIXTURE_RE = re.compile(r"fixture '\w+' not found")
_SELF_ATTR_RE = re.compile(r"AttributeError: '(\w+)' object has no attribute")


def repeated(text: str, new: list[str], others: list[str]) -> list[str]:
    """The new test functions of ``text`` (names in ``new``) whose body one of ``others`` (test
    file texts as they were) or an older test of ``text`` itself already has.

    Returns:
        Their labels, in the order of ``text``.
    """
    found = test_bodies(text)
    seen = {body for other in others for body in test_bodies(other).values()}
    seen |= {body for label, body in found.items() if label.rsplit(".", 1)[-1] not in new}
    return [label for label, body in found.items() if label.rsplit(".", 1)[-1] in new and body in seen]


def broken(outcomes: list[probes.ProbeOutcome], new: list[str], module: str) -> list[probes.ProbeOutcome]:
    """The outcomes that show a test broken in itself: a new test function (or the whole file,
    ``module``) failing on an error of :data:`_OWN_KINDS` or a missing fixture."""
    out = []
    for o in outcomes:
        if o.function != module and o.function.rsplit(".", 1)[-1] not in new:
            continue
        kind = o.detail.split(":", 1)[0].strip()
        own_class = _SELF_ATTR_RE.match(o.detail)  # a helper its own test class does not have
        if (o.kind == "own error" and kind in _OWN_KINDS) or _FIXTURE_RE.search(o.detail) or (
                own_class is not None and "." in o.name and own_class.group(1) == o.name.split(".", 1)[0]):
            out.append(o)
    return out


_UNASKED_RE = re.compile(r"TypeError: .*unexpected keyword argument '(\w+)'")


def unasked(outcomes: list[probes.ProbeOutcome], new: list[str], goal: str) -> list[probes.ProbeOutcome]:
    """The outcomes of new test functions failing on a keyword argument the code does not take and
    ``goal`` never names (as a word, any case): the test asks of the code what the task does not.
    An argument the task names is the change's to add (``sep=``), never counted here."""
    words = {w.lower() for w in re.findall(r"[A-Za-z_]\w*", goal)}
    return [o for o in outcomes if o.function.rsplit(".", 1)[-1] in new
            and (m := _UNASKED_RE.search(o.detail)) is not None and m.group(1).lower() not in words]


async def check_new_tests(task: GuidedTask, attempt: Attempt, path: str, where: Localized,
                          known: list[str]) -> Finding | None:
    """Check the attempt's new tests of ``path`` (the module's two checks, each unless ablated).

    Returns:
        A finding of the check stage ("test repeated", "test broken"), or None.
    """
    new = task._new_tests(path)
    if task.enabled("repeat-test") and new:
        text = task._read(path) or ""
        others = [_before(task, rel) for rel in known if is_test_file(rel) and rel != path]
        copies = repeated(text, new, [o for o in others if o])
        if copies:
            task.acted("repeat-test")
        if copies and len(copies) == len(new):
            names = ", ".join(copies)
            return Finding("check", "test repeated", names, REPEATED.format(
                names=names, path=path, s="s" if len(copies) == 1 else "", it="it" if len(copies) == 1 else "they"))
        if copies:
            named_files.forget_bytecode(task.root, path)
            (task.root / path).write_text(probes.keep_only(text, set(test_labels(text)) - set(copies)),
                                          encoding="utf-8")
            attempt.actions.append(f"{path}: dropped {', '.join(copies)} (repeats an existing test)")
            task.mark("check", "repeated tests dropped")
            new = task._new_tests(path)
    if task.enabled("test-alone") and new:
        outcomes = await proof.run_probe(task, attempt, path, where, step="new test alone", on_new_code=True)
        module = str(path).removesuffix(".py").replace("/", ".")
        bad = broken(outcomes, new, module)
        extra = unasked(outcomes, new, task.goal)
        dropped = {o.function for o in extra}
        if bad or extra:
            task.acted("test-alone")
        if extra and not bad and set(new) - {name.rsplit(".", 1)[-1] for name in dropped}:
            text = task._read(path) or ""
            named_files.forget_bytecode(task.root, path)
            (task.root / path).write_text(probes.keep_only(text, set(test_labels(text)) - dropped), encoding="utf-8")
            attempt.actions.append(f"{path}: dropped {', '.join(sorted(dropped))} (calls the code with an argument "
                                   "the task never names)")
            task.mark("check", "unasked tests dropped")
        elif extra:
            bad = [*bad, *extra]
        if bad:
            errors = "\n".join(f"- {o.name}: {o.detail[:200]}" for o in bad[:4])
            return Finding("check", "test broken", bad[0].detail[:160], BROKEN.format(path=path, errors=errors))
    return None


def _before(task: GuidedTask, rel: str) -> str:
    """A file's text as it was before the attempt ("" when it did not exist)."""
    if rel in task.original:
        data = task.original[rel]
        return data.decode("utf-8", "replace") if data is not None else ""
    return task._read(rel) or ""


__all__ = ["BROKEN", "REPEATED", "broken", "check_new_tests", "repeated", "unasked"]
