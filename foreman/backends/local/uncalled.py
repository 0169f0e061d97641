"""The functions a task names that its new tests never call (pure).

A task asking for a test of named code ("a test that an inventory saved with save_csv and read
back with load_csv has the same items") is checked by the ``mutant`` check (:mod:`.mutants`) only
for *some* function its tests call: a test that reads a hand-written file with ``load_csv`` and
never calls ``save_csv`` kills a ``load_csv`` mutant and passed as the round trip's test, though
``save_csv`` could write anything. So the functions the task names are each called by a new test,
or the model is asked for tests that call them.

What counts as named: a name written as code in the task, in backticks (`` `save_csv` ``), with a
call's parenthesis (``title_case()``) or with an underscore (``save_csv``), that a non-test file of
the repository defines as a function or method. A plain word (``add``, ``list``) is not one: the
task's prose uses such words for what it asks ("add a test"), not for the code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .probe import test_words

_CODE_NAME_RE = re.compile(r"`([A-Za-z_]\w*)(?:\(\))?`|\b([A-Za-z_]\w*)\(|\b([A-Za-z]\w*_\w+)\b")


def named_functions(goal: str, defined: Iterable[str]) -> list[str]:
    """The names of ``defined`` (function or method names, ``Class.name`` or ``name``) that
    ``goal`` writes as code (the module docstring), in the goal's order, each once."""
    simple = {qualname.rpartition(".")[2] for qualname in defined} - {"__init__"}
    found: list[str] = []
    for m in _CODE_NAME_RE.finditer(goal):
        name = next(g for g in m.groups() if g)
        if name in simple and name not in found:
            found.append(name)
    return found


def uncalled(test_text: str, new: list[str], goal: str, defined: Iterable[str]) -> list[str]:
    """The functions ``goal`` names (:func:`named_functions`) that no new test function of
    ``test_text`` (names in ``new``) uses (:func:`.probe.test_words`: its body, fixtures and the
    helpers it reaches), in the goal's order; [] when the test file does not parse."""
    words = test_words(test_text)
    if not words:
        return []
    used = set().union(*(w for label, w in words.items() if label.rsplit(".", 1)[-1] in new))
    return [name for name in named_functions(goal, defined) if name not in used]


__all__ = ["named_functions", "uncalled"]
