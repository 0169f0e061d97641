"""Which checks acted (``GuidedStats.fired``), and the premise ``bench/ablation.py --plan`` rests on:
a check that did not act in a run leaves that run's asks unchanged when it is switched off, so an
ablation reruns only the tasks where it fired. The LocalRunner against the scripted HTTP server,
real pytest runs in a real git worktree."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local.pipeline import NAMES

from .fakeserver import last_user, text
from .test_guided_pipeline import GOAL_TEST
from .test_guided_runner import CALC, TEST
from .test_guided_runner import run as guided_turn

HEAD = "```python\n# file: calc.py\ndef sub(a, b):\n    ret"
COPY = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_mine():\n    assert calc.sub(5, 2) == 3\n```"
FRESH = "```python\n# file: test_sub.py\nimport calc\n\n\ndef test_sub_mine():\n    assert calc.sub(9, 4) == 5\n```"
FILES = {"calc.py": CALC, "test_calc.py": TEST + "\n\ndef test_sub_again():\n    assert calc.sub(5, 2) == 3\n"}


def _responder():
    """The edit comes cut (then its rest), the first test answer repeats an existing test, the
    next is new: ``continue`` and ``repeat-test`` act, and the turn passes."""
    tests = iter([COPY, FRESH])
    edits = iter([text(HEAD, finish_reason="length"), text("urn a - b\n```")])

    def responder(req):
        ask = last_user(req)
        if "test" in ask.lower() and "# file: calc.py" not in ask and ("Now write" in ask or "test_sub.py" in ask) \
                and req["messages"][-1]["role"] == "user":
            return text(next(tests, FRESH))
        return next(edits, text("urn a - b\n```"))
    return responder


def _asks(server) -> list[list[dict]]:
    return [r["messages"] for r in server.requests if "messages" in r]


async def test_the_checks_that_acted_are_recorded_and_no_other(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, _responder(), files=FILES, goal=GOAL_TEST,
                                                           attempts=1, repairs=1, ablate=())
    assert stats.passed, stats.attempts
    assert stats.stages["propose: continued"] == 1 and stats.stages["check: test repeated"] == 1
    assert dict(stats.fired) == {"continue": 1, "repeat-test": 1}


async def test_a_check_that_did_not_act_changes_no_ask_when_switched_off(tmp_path: Path) -> None:
    """Every named check that did not fire in the all-on run, switched off alone, gives the very same
    requests (so ``bench/ablation.py`` may take the all-on run's result for it); each one that fired
    changes them."""
    _, _, base, stats, _ = await guided_turn(tmp_path / "on", _responder(), files=FILES, goal=GOAL_TEST,
                                             attempts=1, repairs=1, ablate=())
    fired = set(stats.fired)
    assert fired == {"continue", "repeat-test"}
    for name in NAMES:
        _, _, off, off_stats, _ = await guided_turn(tmp_path / name, _responder(), files=FILES, goal=GOAL_TEST,
                                                    attempts=1, repairs=1, ablate=(name,))
        assert name not in off_stats.fired
        if name in fired:
            assert _asks(off) != _asks(base), name
        else:
            assert _asks(off) == _asks(base), name
            assert off_stats.passed == stats.passed and dict(off_stats.fired) == dict(stats.fired), name
