"""The raise ask (issue 39): a new test expecting an error its called function does not raise yet
names that function, which is asked for alone."""

from __future__ import annotations

import ast

from foreman.backends.local.raiseask import elsewhere, not_raised, raise_ask, raised_call, raising_calls, says_not_raised

STORE = ("class Inventory:\n    def __init__(self):\n        self.items = {}\n\n"
         "    def remove(self, sku, qty=1):\n        self.items[sku] -= qty\n")
PYTEST = ("import pytest\n\n\ndef test_too_many(inventory):\n    inventory.add('G', 3)\n"
          "    with pytest.raises(InsufficientStock):\n        inventory.remove('G', 5)\n    assert len(inventory) == 1\n")


def test_a_failure_that_says_an_error_was_not_raised() -> None:
    assert says_not_raised("Failed: DID NOT RAISE <class 'inventory.errors.InsufficientStock'>")
    assert says_not_raised("Failed: DID NOT RAISE <class 'inventory.errors.Insuffi")  # cut in the short summary
    assert says_not_raised("AssertionError: UnknownCode not raised")
    assert says_not_raised("AssertionError: ValueError not raised by human_size")
    assert not says_not_raised("AssertionError: assert 5 == 3")


def test_the_call_a_test_expects_to_raise_in_each_form() -> None:
    def called(source: str, test: str = "test_too_many") -> tuple[str, str] | None:
        found = raised_call(source, test)
        return None if found is None else (ast.unparse(found[0]), found[1])

    assert called(PYTEST) == ("inventory.remove('G', 5)", "InsufficientStock")
    unittest_form = ("class T(unittest.TestCase):\n    def test_too_many(self):\n"
                     "        with self.assertRaises(ValueError):\n            human_size(-5)\n")
    assert called(unittest_form) == ("human_size(-5)", "ValueError")
    handed = "def test_too_many(self):\n    self.assertRaises(ValueError, human_size, -5)\n"
    assert called(handed) == ("human_size(-5)", "ValueError")
    dotted = PYTEST.replace("pytest.raises(InsufficientStock)", "pytest.raises(errors.InsufficientStock)")
    assert called(dotted) == ("inventory.remove('G', 5)", "InsufficientStock")
    assert called(PYTEST, "test_other") is None
    assert called("def test_too_many():\n    assert f(1) == 2\n") is None
    assert called("def broken(:\n") is None


def test_a_failing_new_test_names_the_one_function_to_change() -> None:
    failures = [("tests/test_store.py", "test_too_many",
                 "Failed: DID NOT RAISE <class 'inventory.errors.Insuff")]
    miss = not_raised(failures, {"tests/test_store.py": PYTEST}, {"inventory/store.py": STORE})
    assert miss is not None
    assert (miss.test, miss.error, miss.call, miss.path, miss.name, miss.first, miss.last) == (
        "test_too_many", "InsufficientStock", "inventory.remove('G', 5)", "inventory/store.py", "remove", 5, 6)
    ask = raise_ask("Removing too much should raise InsufficientStock.", miss, STORE)
    assert "inventory/store.py, remove:\n```python\n5|     def remove(self, sku, qty=1):\n6|" in ask
    assert "calls `inventory.remove('G', 5)` and expects InsufficientStock, but remove raised nothing" in ask
    assert ask.endswith("whose first line is `# file: inventory/store.py`. No explanations.")


def test_no_ask_when_the_place_is_unclear() -> None:
    failures = [("tests/test_store.py", "test_too_many", "Failed: DID NOT RAISE <class 'E'>")]
    twice = {"inventory/store.py": STORE, "inventory/other.py": "def remove(x):\n    pass\n"}
    assert not_raised(failures, {"tests/test_store.py": PYTEST}, twice) is None  # two definitions
    assert not_raised(failures, {"tests/test_store.py": PYTEST}, {"inventory/x.py": "def add():\n    pass\n"}) is None
    assert not_raised(failures, {}, {"inventory/store.py": STORE}) is None  # not a new test's failure
    other = [("tests/test_store.py", "test_too_many", "AssertionError: assert 5 == 3")]
    assert not_raised(other, {"tests/test_store.py": PYTEST}, {"inventory/store.py": STORE}) is None


def test_the_calls_new_tests_expect_an_error_from() -> None:
    unit = ("class T(unittest.TestCase):\n    def test_bad(self):\n        with self.assertRaises(UnknownCode):\n"
            "            self.cart.apply_code('X')\n\n    def test_plain(self):\n        self.assertTrue(1)\n")
    assert raising_calls(unit, ["test_bad", "test_plain"]) == [("apply_code", "UnknownCode")]
    assert raising_calls(PYTEST, ["test_too_many"]) == [("remove", "InsufficientStock")]
    assert raising_calls(PYTEST, ["test_missing"]) == []


def test_an_error_expected_only_from_a_call_the_task_does_not_name_is_sent_back() -> None:
    detail, ask = elsewhere(["apply_code"], [("discount_for", "UnknownCode")]) or ("", "")
    assert detail == "the tests expect UnknownCode from discount_for(), the task names apply_code()"
    assert "The task says apply_code() must raise the error, but the new tests expect UnknownCode only from " \
           "discount_for()" in ask
    assert elsewhere(["apply_code"], [("discount_for", "E"), ("apply_code", "E")]) is None  # one block calls it
    assert elsewhere([], [("discount_for", "E")]) is None  # the task names no function of the code
    assert elsewhere(["apply_code"], []) is None  # no test expects an error
    raised_in_the_test = "def test_x():\n    with pytest.raises(E):\n        raise E('x')\n"
    assert elsewhere(["remove"], raising_calls(raised_in_the_test, ["test_x"])) is not None  # checks nothing
