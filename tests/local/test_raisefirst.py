"""The ``raise-first`` check (issue 39): an error an answer adds must be raised before the function
changes anything (an answer that lowered the stock and then raised passed a test that expected only
the error, and a refused call left the stock changed)."""

from __future__ import annotations

from foreman.backends.local.raisefirst import changed_first, check

BEFORE = '''class Inventory:
    def __init__(self):
        self._items = {}

    def remove(self, sku, qty=1):
        item = self._items[sku]
        item.qty -= qty
        if item.qty <= 0:
            del self._items[sku]
'''
AFTER_CHANGE = BEFORE.replace('''        item.qty -= qty
        if item.qty <= 0:''', '''        item.qty -= qty
        if item.qty < 0:
            raise InsufficientStock(sku)
        if item.qty <= 0:''')
CHECKED_FIRST = BEFORE.replace('''        item.qty -= qty''', '''        if qty > item.qty:
            raise InsufficientStock(f"{sku}: only {item.qty}")
        item.qty -= qty''')


def test_an_added_raise_after_a_change_of_state_is_found_with_both_lines() -> None:
    found = changed_first("store.py", BEFORE, AFTER_CHANGE)
    assert [(f.function, f.error, f.line, f.statement, f.raise_line) for f in found] == [
        ("Inventory.remove", "InsufficientStock(sku)", 7, "item.qty -= qty", 9)]
    detail, ask = check({"store.py": BEFORE}, {"store.py": AFTER_CHANGE}) or ("", "")
    assert detail == "Inventory.remove in store.py: line 7 changes state before the raise of InsufficientStock (line 9)"
    assert "`item.qty -= qty`" in ask and "raise before anything is changed" in ask


def test_a_raise_before_any_change_passes() -> None:
    assert changed_first("store.py", BEFORE, CHECKED_FIRST) == []
    assert check({"store.py": BEFORE}, {"store.py": CHECKED_FIRST}) is None


def test_only_raises_the_change_added_count() -> None:
    assert changed_first("store.py", AFTER_CHANGE, AFTER_CHANGE) == []  # it was there before: not this answer's
    assert [f.function for f in changed_first("store.py", None, AFTER_CHANGE)] == ["Inventory.remove"]  # a new file


def test_each_kind_of_change_counts_and_work_on_the_functions_own_containers_does_not() -> None:
    def first(body: str) -> list[int]:
        text = "def f(self, xs, key, **kw):\n" + "".join(f"    {line}\n" for line in body.splitlines())
        return [c.line for c in changed_first("m.py", "", text)]

    for change in ("self.count = 1", "xs[0] = 1", "del self.items[key]", "xs.append(1)", "self.log.write('x')",
                   "self.total += 1", "if key:\n    self.seen.add(key)"):
        assert first(f"{change}\nraise ValueError(key)"), change
    for local in ("out = []\nout.append(1)", "seen = set(xs)\nseen.discard(key)", "kw['a'] = 1",
                  "copy = dict(self.items)\ncopy[key] = 1", "n = len(xs)\nn += 1", "print(key)"):
        assert first(f"{local}\nraise ValueError(key)") == [], local


def test_paths_that_cannot_run_before_the_raise_are_not_counted() -> None:
    after = "def f(self, k):\n    if k < 0:\n        raise ValueError(k)\n    self.k = k\n"
    assert changed_first("m.py", "", after) == []  # the change comes after
    handler = ("def f(self, k):\n    try:\n        del self.items[k]\n    except KeyError:\n"
               "        raise Unknown(k) from None\n")
    assert changed_first("m.py", "", handler) == []  # the failed body is what sent it to the handler
    init = "class A:\n    def __init__(self, n):\n        self.n = n\n        if n < 0:\n            raise ValueError(n)\n"
    assert changed_first("m.py", "", init) == []  # a constructor that raises hands out no object
    nested = "def f(self, k):\n    def later():\n        self.k = k\n    raise ValueError(k)\n"
    assert changed_first("m.py", "", nested) == []  # a function defined, not run
    reraise = "def f(self, k):\n    self.k = k\n    raise\n"
    assert changed_first("m.py", "", reraise) == []  # a bare re-raise adds no error


def test_unparsable_text_finds_nothing() -> None:
    assert changed_first("m.py", "def broken(:\n", "def f(:\n") == []
    assert check({"m.py": None}, {}) is None
