"""Corpus shape "package": an ``inventory`` package tested with pytest and fixtures (conftest.py).

``python package.py DIR`` writes the repository into DIR (a git repository, one commit on main).
"""

from __future__ import annotations

from _repo import main

README = '''
# inventory

Stock keeping for a small workshop: items with a SKU, a quantity and a unit price, grouped by
category, saved to and loaded from CSV files.

```python
from inventory import Inventory, Item
inv = Inventory([Item("B-100", "Bolt M6", 40, 0.12, "hardware")])
inv.remove("B-100", 5)
inv.total_value()  # 4.2
```

Tests: `python -m pytest`.
'''

PYPROJECT = '''
[project]
name = "inventory"
version = "0.2.0"
requires-python = ">=3.10"

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

INIT = '''
"""Stock keeping: items, an inventory, CSV files."""

from inventory.errors import InventoryError, UnknownSku
from inventory.models import Item
from inventory.store import Inventory

__all__ = ["Inventory", "InventoryError", "Item", "UnknownSku"]
'''

ERRORS = '''
"""The errors the inventory raises."""


class InventoryError(Exception):
    """Base class of the inventory's errors."""


class UnknownSku(InventoryError, KeyError):
    """No item has this SKU."""
'''

MODELS = '''
"""The item record."""

from dataclasses import dataclass


@dataclass
class Item:
    """One stocked article: qty units at price each."""

    sku: str
    name: str
    qty: int
    price: float
    category: str = "general"

    @property
    def value(self):
        """The stock's value: qty times price."""
        return self.qty * self.price
'''

STORE = '''
"""The inventory: items by SKU, in the order they were first added."""

from inventory.errors import UnknownSku


class Inventory:
    """A collection of items with unique SKUs."""

    def __init__(self, items=()):
        self._items = []
        for item in items:
            self.add(item)

    def add(self, item):
        """Add an item; an item whose SKU is already there adds its quantity to it."""
        for existing in self._items:
            if existing.sku == item.sku:
                existing.qty += item.qty
                return
        self._items.append(item)

    def get_item(self, sku):
        """The item with this SKU. Raises UnknownSku when there is none."""
        for item in self._items:
            if item.sku == sku:
                return item
        raise UnknownSku(sku)

    def remove(self, sku, qty=1):
        """Take qty units of an item out of stock; an item with no units left is dropped."""
        item = self.get_item(sku)
        item.qty -= qty
        if item.qty <= 0:
            self._items.remove(item)

    def items(self):
        """The items, in the order they were added."""
        return list(self._items)

    def total_value(self):
        """The value of all the stock, rounded to cents."""
        return round(sum(item.value for item in self._items), 2)

    def low_stock(self, threshold=5):
        """The items whose quantity is at or below threshold."""
        return [item for item in self._items if item.qty < threshold]

    def __len__(self):
        return len(self._items)
'''

CSVIO = '''
"""Save an inventory to a CSV file and load it back."""

import csv

from inventory.models import Item
from inventory.store import Inventory

FIELDS = ["sku", "name", "qty", "price", "category"]


def save_csv(inventory, path):
    """Write the inventory to path: a header line, then one line per item."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        for item in inventory.items():
            writer.writerow([item.sku, item.name, item.qty, f"{item.price:.2f}", item.category])


def load_csv(path):
    """Read an inventory written by save_csv."""
    inventory = Inventory()
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines[1:]:
        if not line.strip():
            continue
        sku, name, qty, price, category = line.split(",")
        inventory.add(Item(sku, name, int(qty), float(price), category))
    return inventory
'''

CONFTEST = '''
import pytest

from inventory import Inventory, Item


@pytest.fixture
def items():
    return [
        Item("B-100", "Bolt M6", 40, 0.12, "hardware"),
        Item("G-200", "Wood glue", 3, 6.5, "supplies"),
        Item("S-300", "Sandpaper P120", 12, 0.8, "supplies"),
    ]


@pytest.fixture
def inventory(items):
    return Inventory(items)


@pytest.fixture
def csv_path(tmp_path):
    return tmp_path / "stock.csv"
'''

TEST_STORE = '''
import pytest

from inventory import Item, UnknownSku


def test_items_keep_their_order(inventory):
    assert [item.sku for item in inventory.items()] == ["B-100", "G-200", "S-300"]


def test_adding_a_known_sku_adds_to_its_quantity(inventory):
    inventory.add(Item("B-100", "Bolt M6", 10, 0.12, "hardware"))
    assert inventory.get_item("B-100").qty == 50
    assert len(inventory) == 3


def test_remove_takes_units_out(inventory):
    inventory.remove("B-100", 15)
    assert inventory.get_item("B-100").qty == 25


def test_unknown_sku(inventory):
    with pytest.raises(UnknownSku):
        inventory.get_item("X-999")


def test_total_value(inventory):
    assert inventory.total_value() == pytest.approx(40 * 0.12 + 3 * 6.5 + 12 * 0.8)


def test_low_stock(inventory):
    assert [item.sku for item in inventory.low_stock()] == ["G-200"]
    assert [item.sku for item in inventory.low_stock(20)] == ["G-200", "S-300"]
'''

TEST_CSVIO = '''
from inventory.csvio import load_csv, save_csv


def test_save_writes_a_header_and_one_line_per_item(inventory, csv_path):
    save_csv(inventory, csv_path)
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "sku,name,qty,price,category"
    assert len(lines) == 4


def test_load_reads_each_field(csv_path):
    csv_path.write_text("sku,name,qty,price,category\\nN-1,Nail,100,0.05,hardware\\n\\nT-2,Tape,2,3.00,supplies\\n")
    inventory = load_csv(csv_path)
    nail, tape = inventory.items()
    assert (nail.sku, nail.name, nail.qty, nail.price, nail.category) == ("N-1", "Nail", 100, 0.05, "hardware")
    assert tape.qty == 2 and tape.price == 3.0
'''

FILES = {"README.md": README, "pyproject.toml": PYPROJECT, "inventory/__init__.py": INIT,
         "inventory/errors.py": ERRORS, "inventory/models.py": MODELS, "inventory/store.py": STORE,
         "inventory/csvio.py": CSVIO, "tests/conftest.py": CONFTEST, "tests/test_store.py": TEST_STORE,
         "tests/test_csvio.py": TEST_CSVIO}

if __name__ == "__main__":
    main(FILES, "inventory: items, stock and CSV files, with tests")
