"""The ``raise-first`` check end to end: a task asking for an error on bad input, in a real git
worktree, the LocalRunner against the scripted HTTP server, the real test runs. An answer that
changes the stock and then raises passes its own test; the check sends it back, and the answer
that checks first ends done."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local import raisefirst

from .fakeserver import last_user
from .test_guided_mutant import replies
from .test_guided_runner import run as guided_turn

STOCK = ("class InsufficientStock(Exception):\n    pass\n\n\nclass Stock:\n    def __init__(self, qty):\n"
         "        self.qty = qty\n\n    def remove(self, n):\n        self.qty -= n\n")
FILES = {"stock.py": STOCK,
         "test_stock.py": "from stock import Stock\n\n\ndef test_remove():\n    s = Stock(3)\n    s.remove(2)\n"
                          "    assert s.qty == 1\n"}
GOAL = ("Stock.remove() in stock.py lets the quantity go below zero. Removing more than is in stock should raise "
        "InsufficientStock and leave the quantity as it was. Add a test to test_stock.py.")
TEST = ("```python\n# file: test_stock.py\nimport pytest\nfrom stock import InsufficientStock\n\n\n"
        "def test_remove_too_many():\n    with pytest.raises(InsufficientStock):\n        Stock(3).remove(5)\n```")
AFTER = ("```python\n# file: stock.py\n    def remove(self, n):\n        self.qty -= n\n        if self.qty < 0:\n"
         "            raise InsufficientStock(n)\n```")
FIRST = ("```python\n# file: stock.py\n    def remove(self, n):\n        if n > self.qty:\n"
         "            raise InsufficientStock(n)\n        self.qty -= n\n```")


async def test_a_raise_after_the_change_goes_back_and_the_checked_first_answer_ends_done(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(AFTER, TEST, FIRST), files=FILES,
                                                           goal=GOAL, attempts=1, repairs=1)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert stats.passed, (stats.attempts, asked)
    assert stats.stages[f"validate: {raisefirst.CHANGED_FIRST}"] == 1
    assert stats.stages["commit: committed, to review"] == 1
    assert "line 10 (`self.qty -= n`) runs before the raise on line 12" in asked[-1]
    assert "if n > self.qty:" in (repo / "stock.py").read_text()


async def test_ablated_the_raise_after_the_change_passes(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(AFTER, TEST), files=FILES, goal=GOAL,
                                                           attempts=1, repairs=0, ablate=("continue", "raise-first"))
    assert stats.passed, stats.attempts
    assert "self.qty -= n\n        if self.qty < 0" in (repo / "stock.py").read_text()  # what the check exists to stop


NOT_YET = ("```python\n# file: stock.py\ndef shortfall(qty, n):\n    '''Fewer units than asked.'''\n    return n - qty\n```")
TOO_MANY = ("```python\n# file: test_stock.py\nimport pytest\nfrom stock import InsufficientStock, Stock\n\n\n"
            "def test_remove_too_many():\n    s = Stock(3)\n    with pytest.raises(InsufficientStock):\n"
            "        s.remove(5)\n    assert s.qty == 3\n```")
METHOD = ("```python\n# file: stock.py\ndef remove(self, n):\n    if n > self.qty:\n        raise InsufficientStock(n)\n"
          "    self.qty -= n\n```")


async def test_a_test_expecting_an_error_not_raised_yet_gets_its_function_asked_for_alone(tmp_path: Path) -> None:
    """The answer added a helper, not the change of the function that must raise; the test the model
    wrote for it fails with DID NOT RAISE. The raise ask shows remove alone, afresh, and its answer,
    a method sent as a top-level def, goes into the class."""
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(NOT_YET, TOO_MANY, METHOD), files=FILES,
                                                           goal=GOAL, attempts=1, repairs=1)
    asked = [r["messages"] for r in server.requests if r.get("stream")]
    assert stats.passed, (stats.attempts, [m[-1]["content"][:200] for m in asked])
    assert stats.stages["repair: raise asked"] == 1
    ask = asked[-1]
    assert [m["role"] for m in ask] == ["system", "user"]  # afresh
    assert "stock.py, remove:\n```python\n" in ask[1]["content"]
    assert "calls `s.remove(5)` and expects InsufficientStock, but remove raised nothing" in ask[1]["content"]
    placed = (repo / "stock.py").read_text()
    assert "    def remove(self, n):\n        if n > self.qty:" in placed and "Fewer units" in placed


async def test_ablated_the_raise_ask_leaves_the_generic_repair(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(NOT_YET, TOO_MANY, METHOD), files=FILES,
                                                           goal=GOAL, attempts=1, repairs=1,
                                                           ablate=("continue", "raise-ask"))
    asked = [r["messages"] for r in server.requests if r.get("stream")]
    assert stats.stages["repair: raise asked"] == 0
    assert asked[-1][-1]["content"].startswith("The checks (")  # the failure, in the same conversation
