"""The ``raise-first`` check end to end: a task asking for an error on bad input, in a real git
worktree, the LocalRunner against the scripted HTTP server, the real test runs. An answer that
changes the stock and then raises passes its own test; the check sends it back, and the answer
that checks first ends done."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.local import raiseask, raisefirst

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
                                                           goal=GOAL, attempts=1, repairs=0)
    asked = [r["messages"] for r in server.requests if r.get("stream")]
    assert stats.passed, (stats.attempts, [m[-1]["content"][:200] for m in asked])  # no repair round: it is free
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


SHOP = {"pricing.py": "CODES = {'SAVE10': 10}\n\n\ndef discount_for(code):\n    return CODES.get(code, 0)\n",
        "cart.py": "import pricing\n\n\nclass Cart:\n    def __init__(self):\n        self.code = None\n\n"
                   "    def apply_code(self, code):\n        self.code = code\n\n"
                   "    def percent(self):\n        return pricing.discount_for(self.code)\n",
        "test_cart.py": "from cart import Cart\n\n\ndef test_known():\n    c = Cart()\n    c.apply_code('SAVE10')\n"
                        "    assert c.percent() == 10\n"}
SHOP_GOAL = ("A typo in a discount code goes unnoticed: `cart.apply_code(\"SAEV10\")` is accepted. Applying a code "
             "that does not exist should raise a new exception `UnknownCode` (define it in pricing.py as a subclass "
             "of ValueError) right away. Add a test to test_cart.py.")
IN_PRICING = ("```python\n# file: pricing.py\nclass UnknownCode(ValueError):\n    pass\n\n\ndef discount_for(code):\n"
              "    if code not in CODES:\n        raise UnknownCode(code)\n    return CODES[code]\n```")
PRICING_TEST = ("```python\n# file: test_cart.py\nimport pytest\nfrom pricing import UnknownCode, discount_for\n\n\n"
                "def test_unknown():\n    with pytest.raises(UnknownCode):\n        discount_for('SAEV10')\n```")
AT_APPLY = ("```python\n# file: test_cart.py\nimport pytest\nfrom pricing import UnknownCode\n\n\n"
            "def test_unknown():\n    with pytest.raises(UnknownCode):\n        Cart().apply_code('SAEV10')\n```\n"
            "```python\n# file: cart.py\n    def apply_code(self, code):\n        if code not in pricing.CODES:\n"
            "            raise pricing.UnknownCode(code)\n        self.code = code\n```")


async def test_an_error_tested_only_from_a_helper_goes_back_to_the_call_the_task_names(tmp_path: Path) -> None:
    """The answer raised the new error where the discount is computed and tested it there; the call
    the task says must raise still took the bad code. The check sends it back; the answer that
    raises from that call ends done."""
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(IN_PRICING, PRICING_TEST, AT_APPLY),
                                                           files=SHOP, goal=SHOP_GOAL, attempts=1, repairs=1)
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert stats.passed, (stats.attempts, asked)
    assert stats.stages[f"validate: {raiseask.ELSEWHERE}"] == 1
    assert "The task says apply_code() must raise the error, but the new tests expect UnknownCode only from " \
           "discount_for()" in asked[-1]
    assert "raise pricing.UnknownCode(code)" in (repo / "cart.py").read_text()


async def test_ablated_an_error_tested_only_from_a_helper_passes(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(IN_PRICING, PRICING_TEST), files=SHOP,
                                                           goal=SHOP_GOAL, attempts=1, repairs=0,
                                                           ablate=("continue", "raise-where"))
    assert stats.passed, stats.attempts
    assert "raise" not in (repo / "cart.py").read_text()  # the false success the check exists to stop
