"""The ``mutant`` check's pure parts: which functions a new test calls, and each way of breaking one."""

from __future__ import annotations

import pytest

from foreman.backends.local.mutants import KINDS, called, definitions, imported_modules, mutated

SOURCE = '''"""Shop."""
from __future__ import annotations


def total(prices):
    # the sum, less one cent per item over three
    out = sum(prices)
    if len(prices) > 3:
        out -= 1
    return out


def log(rows, line):
    rows.append(line)


class Cart:
    def __init__(self):
        self.items = []

    def label(self, name):
        return name.upper() if name else "?"
'''


def run(text: str, call: str):
    space: dict = {}
    exec(compile(text, "<mutant>", "exec"), space)
    return eval(call, space)


def test_each_kind_breaks_the_function_and_leaves_the_rest_as_it_was() -> None:
    assert run(SOURCE, "total([1, 2, 3, 4])") == 9
    value = mutated(SOURCE, "total", "value")
    assert value is not None and value.startswith('"""Shop."""\nfrom __future__ import annotations\n')
    assert run(value, "total([1, 2, 3, 4])") == 10 and run(value, "Cart().label('a')") == "A"  # another int, same type
    assert run(mutated(SOURCE, "total", "condition") or "", "total([1, 2, 3, 4])") == 10  # > became <=
    assert run(mutated(SOURCE, "total", "arithmetic") or "", "total([1, 2, 3, 4])") == 11  # -= 1 became += 1
    rows: list = []
    run(mutated(SOURCE, "log", "call") or "", "log")(rows, "x")
    assert rows == []  # the append dropped
    assert run(mutated(SOURCE, "Cart.label", "value") or "", "Cart().label('a')") == "A~"
    assert run(mutated(SOURCE, "Cart.label", "condition") or "", "Cart().label('a')") == "?"  # the ternary's test
    with pytest.raises(RuntimeError, match="mutant"):
        run(mutated(SOURCE, "total", "raise") or "", "total([1])")


def test_a_kind_with_nothing_to_break_gives_none() -> None:
    assert mutated(SOURCE, "log", "value") is None and mutated(SOURCE, "log", "arithmetic") is None
    assert mutated(SOURCE, "Cart.__init__", "condition") is None and mutated(SOURCE, "nowhere", "value") is None
    assert mutated("def broken(:\n", "broken", "value") is None
    assert [k for k in KINDS if mutated(SOURCE, "Cart.label", k)] == ["value", "condition"]


def test_the_value_mutant_keeps_the_type_of_what_it_returns() -> None:
    text = "def f(x):\n    return x\n"
    other = mutated(text, "f", "value") or ""
    for given, broken in [(True, False), (2, 3), (1.5, 2.5), ("ab", "ab~"), ([1, 2], [2]), ((), (None,)),
                          ({"a": 1, "b": 2}, {"b": 2}), (None, None)]:
        assert run(other, f"f({given!r})") == broken


def test_the_functions_a_new_test_calls_are_those_its_imports_bring_goal_named_first() -> None:
    sources = {"shop/cart.py": SOURCE, "shop/__init__.py": "", "other.py": "def total(x):\n    return x\n"}
    test = ("from shop.cart import Cart, total\n\n\ndef test_old():\n    assert total([]) == 0\n\n\n"
            "def test_label():\n    cart = Cart()\n    assert cart.label('a') == 'A' and total([1]) == 1\n")
    assert imported_modules(test) == {"shop", "shop.cart", "shop.cart.Cart", "shop.cart.total"}
    assert definitions(SOURCE) == ["total", "log", "Cart.__init__", "Cart.label"]
    found = called(test, ["test_label"], sources, "A label is upper-case.")
    assert found == [("shop/cart.py", "Cart.label"), ("shop/cart.py", "total"), ("shop/cart.py", "Cart.__init__")]
    assert called(test, ["test_label"], sources, "Check the total.")[0] == ("shop/cart.py", "total")
    assert called("def test_x():\n    assert callable(total)\n", ["test_x"], sources, "") == []  # imported from nowhere


def test_the_value_mutant_changes_values_of_every_type_it_knows_and_keeps_the_type() -> None:
    """A Decimal, a Fraction, a complex, a date, a timedelta, a path, an enum member, a dataclass,
    an infinite, huge or nan float, a bytearray: each came back unchanged (a mutant that broke
    nothing, counted as one that survived)."""
    text = ("import dataclasses, datetime, decimal, enum, fractions, math, pathlib\n\n\n"
            "class Kind(enum.Enum):\n    A = 1\n    B = 2\n\n\n@dataclasses.dataclass(frozen=True)\nclass At:\n"
            "    name: str\n    size: int = 0\n\n\ndef f(x):\n    return x\n")
    values = ["decimal.Decimal('1.5')", "fractions.Fraction(1, 3)", "1j", "datetime.date(2020, 1, 2)",
              "datetime.datetime(2020, 1, 2, 3)", "datetime.timedelta(1)", "pathlib.Path('a/b')",
              "pathlib.PurePosixPath('/')", "Kind.A", "At('x')", "math.inf", "1e20", "math.nan", "bytearray(b'x')"]
    space: dict = {}
    exec(compile(mutated(text, "f", "value") or "", "<mutant>", "exec"), space)
    for value in values:
        given, broken = eval(value, space), eval(f"f({value})", space)
        assert type(broken) is type(given) and not (broken == given or broken != broken), value


REDEFINED = '''from typing import overload


@overload
def f(x: int) -> int: ...
@overload
def f(x: str) -> str: ...
def f(x):
    return x * 2


class C:
    def __init__(self):
        self._v = 0

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        if value < 0:
            raise ValueError(value)
        self._v = value


def g():
    return 1


def g():
    return 2
'''


def test_every_definition_of_a_name_is_broken_and_named_once() -> None:
    """An overloaded function (stubs first), a property's setter and a function defined twice:
    only the first definition was broken (a stub, the getter, dead code), so a strong test of
    the one that runs was refused, or a weak one could not be told."""
    assert definitions(REDEFINED) == ["f", "C.__init__", "C.v", "g"]
    assert run(mutated(REDEFINED, "f", "value") or "", "f(2)") == 5
    assert run(mutated(REDEFINED, "g", "value") or "", "g()") == 3
    with pytest.raises(ValueError):
        run(mutated(REDEFINED, "C.v", "condition") or "", "setattr(C(), 'v', 1)")
    with pytest.raises(RuntimeError, match="mutant"):
        run(mutated(REDEFINED, "C.v", "raise") or "", "setattr(C(), 'v', 1)")


def test_a_function_a_package_re_exports_is_found_where_it_is_defined() -> None:
    """``from shop import total`` with ``total`` defined in shop/cart.py and brought by shop's
    ``__init__`` (``from .cart import total``, ``from shop.tax import rate``, ``from .util import *``):
    nothing was found, so the check could not tell and any test of it passed."""
    sources = {"shop/__init__.py": "from .cart import total\nfrom shop.tax import rate\nfrom .util import *\n",
               "shop/cart.py": "def total(xs):\n    return sum(xs)\n", "shop/tax.py": "def rate():\n    return 2\n",
               "shop/util.py": "def fmt(x):\n    return str(x)\n", "other.py": "def fmt(x):\n    return x\n"}
    for test in ("from shop import total, rate, fmt\n", "from shop import *\n", "import shop\n"):
        test += "\n\ndef test_x():\n    assert total([1]) == 1 and rate() == 2 and fmt(1) == '1'\n"
        assert sorted(called(test, ["test_x"], sources, "")) == [
            ("shop/cart.py", "total"), ("shop/tax.py", "rate"), ("shop/util.py", "fmt")], test


def test_the_value_mutant_notes_each_outcome_once_however_often_it_returns(tmp_path, monkeypatch) -> None:
    """Each call opened and appended to the notes file: a test calling the function in a loop ran
    many times slower on the mutant, and a timeout counts as a kill (a weak test accepted)."""
    notes = tmp_path / "notes.txt"
    monkeypatch.setenv("FOREMAN_MUTANT_NOTES", str(notes))
    space: dict = {}
    exec(compile(mutated("def f(x):\n    return x\n", "f", "value") or "", "<mutant>", "exec"), space)
    for i in range(1000):
        space["f"](i)
        space["f"](None)
    assert sorted(notes.read_text().split()) == ["changed", "same"]


def test_a_function_named_only_as_another_object_s_attribute_ranks_after_those_called() -> None:
    """``d.get``, ``d.items``, ``d.keys`` on a dict matched the repository's ``get``, ``items`` and
    ``keys`` first (by place) and filled the :data:`MAX_FUNCTIONS` slots: ``total``, the one the test
    calls, was never broken, every mutant survived and a strong test was refused."""
    sources = {"store.py": "def get(k):\n    return k\n\n\ndef items():\n    return [1]\n\n\ndef keys():\n"
                           "    return [2]\n\n\ndef total(xs):\n    return sum(xs)\n"}
    for imported, call in (("from store import *", "total"), ("import store", "store.total"),
                           ("import store as s", "s.total")):
        test = (f"{imported}\n\n\ndef test_t():\n    d = {{'a': 1}}\n    assert d.get('a') == 1 and list(d.items()) "
                f"and d.keys()\n    assert {call}([1, 2]) == 3\n")
        assert called(test, ["test_t"], sources, "Add a test of the store.")[0] == ("store.py", "total"), imported
