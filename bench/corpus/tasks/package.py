"""Tasks on the "package" shape (package.py): the inventory package, pytest with fixtures."""

from _spec import append, edit, mutant, variant, write

SHAPE = "package"
REPO = "package.py"

ITEMS = '''
from inventory import Inventory, Item
def stock():
    return Inventory([Item("S-300", "Sandpaper P120", 12, 0.8, "supplies"), Item("B-100", "Bolt M6", 40, 0.12, "hardware"),
                      Item("B-050", "Carriage bolt", 5, 0.3, "hardware"), Item("G-200", "Wood glue", 3, 6.5, "supplies")])
def raises(error, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except error:
        return True
    return False
'''
"""Shared set-up of the checks below: four items in two categories."""

TASKS = [
    {
        "id": "pkg-search", "split": "dev", "kind": "add-function",
        "goal": """
            I'd like to look items up by name. Add a method `search(text)` to `Inventory` (inventory/store.py)
            that returns a list of the items whose name contains `text`, ignoring upper/lower case, sorted by
            SKU. No match gives an empty list.
        """,
        "setup": ITEMS, "check": """
            inv = stock()
            assert [i.sku for i in inv.search("bolt")] == ["B-050", "B-100"], inv.search("bolt")
            assert [i.sku for i in inv.search("GLUE")] == ["G-200"]
            assert list(inv.search("hammer")) == []
            assert len(inv) == 4
        """,
        "solution": [edit("inventory/store.py", '''
            def items(self):''', '''
            def search(self, text):
                """The items whose name contains text (any case), by SKU."""
                needle = text.lower()
                return sorted((item for item in self._items if needle in item.name.lower()), key=lambda item: item.sku)

            def items(self):''', indent=4)],
    },
    {
        "id": "pkg-value-by-category", "split": "holdout", "kind": "add-function",
        "goal": """
            For the monthly report we need the stock value per category. Please add
            `Inventory.value_by_category()` returning a dict that maps each category to the total value
            (quantity times price) of its items, rounded to cents. An empty inventory gives {}.
        """,
        "setup": ITEMS, "check": """
            got = stock().value_by_category()
            assert set(got) == {"hardware", "supplies"}, got
            assert abs(got["hardware"] - 6.3) < 0.005 and abs(got["supplies"] - 29.1) < 0.005, got
            assert dict(Inventory().value_by_category()) == {}
        """,
        "solution": [edit("inventory/store.py", '''
            def low_stock(self, threshold=5):''', '''
            def value_by_category(self):
                """The stock's value per category, rounded to cents."""
                totals = {}
                for item in self._items:
                    totals[item.category] = totals.get(item.category, 0) + item.value
                return {category: round(value, 2) for category, value in totals.items()}

            def low_stock(self, threshold=5):''', indent=4)],
    },
    {
        "id": "pkg-csv-quoted-names", "split": "dev", "kind": "fix-bug",
        "goal": """
            An inventory saved with save_csv cannot be loaded back when an item's name has a comma in it:

                >>> inv = Inventory([Item("S-1", "Screw, wood, 4x40", 100, 0.04, "hardware")])
                >>> save_csv(inv, "stock.csv")
                >>> load_csv("stock.csv")
                Traceback (most recent call last):
                  ...
                ValueError: too many values to unpack (expected 5)

            Loading what save_csv wrote must always work and give back the same items.
        """,
        "setup": ITEMS, "check": """
            import os, tempfile
            from inventory.csvio import load_csv, save_csv
            path = os.path.join(tempfile.mkdtemp(), "stock.csv")
            inv = stock()
            inv.add(Item("S-1", "Screw, wood, 4x40", 100, 0.04, "hardware"))
            inv.add(Item("T-9", 'Tape "gaffer", black', 2, 7.25, "supplies"))
            save_csv(inv, path)
            back = load_csv(path)
            want = [(i.sku, i.name, i.qty, i.price, i.category) for i in inv.items()]
            got = [(i.sku, i.name, i.qty, i.price, i.category) for i in back.items()]
            assert got == want, got
        """,
        "solution": [edit("inventory/csvio.py", '''
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines()
                for line in lines[1:]:
                    if not line.strip():
                        continue
                    sku, name, qty, price, category = line.split(",")''', '''
                with open(path, newline="", encoding="utf-8") as f:
                    rows = list(csv.reader(f))
                for row in rows[1:]:
                    if not "".join(row).strip():
                        continue
                    sku, name, qty, price, category = row''', indent=4)],
    },
    {
        "id": "pkg-low-stock-threshold", "split": "holdout", "kind": "fix-bug",
        "goal": """
            low_stock() misses items that are exactly at the threshold. We have 3 tubes of wood glue left and
            `inventory.low_stock(3)` does not list them, although the docstring says "at or below threshold".
            Same with the default threshold of 5: an item with 5 units is not reported.
        """,
        "setup": ITEMS, "check": """
            inv = stock()
            assert sorted(i.sku for i in inv.low_stock(3)) == ["G-200"], inv.low_stock(3)
            assert sorted(i.sku for i in inv.low_stock()) == ["B-050", "G-200"], inv.low_stock()
            assert sorted(i.sku for i in inv.low_stock(12)) == ["B-050", "G-200", "S-300"]
            assert list(inv.low_stock(2)) == []
        """,
        "solution": [edit("inventory/store.py", "if item.qty < threshold]", "if item.qty <= threshold]")],
    },
    {
        "id": "pkg-total-value-category", "split": "dev", "kind": "add-parameter",
        "goal": """
            Inventory.total_value() gives the value of all the stock. Please give it an optional `category`
            parameter: when given, only that category's items count (an unknown category gives 0); without it
            the result is the same as today.
        """,
        "setup": ITEMS, "check": """
            inv = stock()
            assert abs(inv.total_value(category="supplies") - 29.1) < 0.005, inv.total_value(category="supplies")
            assert abs(inv.total_value(category="hardware") - 6.3) < 0.005
            assert inv.total_value(category="garden") == 0
            assert abs(inv.total_value() - 35.4) < 0.005
        """,
        "solution": [edit("inventory/store.py", '''
            def total_value(self):
                """The value of all the stock, rounded to cents."""
                return round(sum(item.value for item in self._items), 2)''', '''
            def total_value(self, category=None):
                """The value of the stock (of one category when given), rounded to cents."""
                return round(sum(item.value for item in self._items if category in (None, item.category)), 2)''',
            indent=4)],
    },
    {
        "id": "pkg-load-skip-invalid", "split": "holdout", "kind": "add-parameter",
        "goal": """
            Spreadsheets exported by the shop sometimes contain broken rows (a quantity like "many", or a row
            with missing columns). load_csv then fails with ValueError, which is right by default, but we want
            the option to skip such rows: add a parameter `skip_invalid` to load_csv, default False. With
            skip_invalid=True, rows that cannot be read are left out and the good rows are loaded.
        """,
        "check": """
            import os, tempfile
            from inventory.csvio import load_csv
            path = os.path.join(tempfile.mkdtemp(), "stock.csv")
            with open(path, "w") as f:
                f.write("sku,name,qty,price,category\\nN-1,Nail,100,0.05,hardware\\nX-1,Broken,many,1.00,misc\\n"
                        "X-2,Short row\\nX-3,Bad price,4,cheap,misc\\nT-2,Tape,2,3.00,supplies\\n")
            try:
                load_csv(path)
            except ValueError:
                pass
            else:
                raise AssertionError("the default must still refuse a broken row")
            inv = load_csv(path, skip_invalid=True)
            assert [i.sku for i in inv.items()] == ["N-1", "T-2"], [i.sku for i in inv.items()]
            assert inv.items()[1].price == 3.0
        """,
        "solution": [
            edit("inventory/csvio.py", "def load_csv(path):", "def load_csv(path, skip_invalid=False):"),
            edit("inventory/csvio.py", '''
                    sku, name, qty, price, category = line.split(",")
                    inventory.add(Item(sku, name, int(qty), float(price), category))''', '''
                    try:
                        sku, name, qty, price, category = line.split(",")
                        item = Item(sku, name, int(qty), float(price), category)
                    except ValueError:
                        if skip_invalid:
                            continue
                        raise
                    inventory.add(item)''', indent=8),
        ],
    },
    {
        "id": "pkg-insufficient-stock", "split": "dev", "kind": "raise-error",
        "goal": """
            Inventory.remove() lets us take out more units than we have: removing 5 tubes of glue when there
            are 3 silently drops the item. It should raise a new error `InsufficientStock` instead (define it
            in inventory/errors.py as a subclass of InventoryError), and leave the stock as it was. Removing
            exactly what is left still works as today.
        """,
        "setup": ITEMS, "check": """
            from inventory import InventoryError, UnknownSku
            from inventory.errors import InsufficientStock
            assert issubclass(InsufficientStock, InventoryError)
            inv = stock()
            assert raises(InsufficientStock, inv.remove, "G-200", 5), "removing 5 of 3 raised no InsufficientStock"
            assert [i.qty for i in inv.items() if i.sku == "G-200"] == [3], "the stock changed"
            inv.remove("G-200", 3)
            assert "G-200" not in [i.sku for i in inv.items()]
            assert raises(UnknownSku, inv.remove, "X-999", 1)
        """,
        "solution": [
            edit("inventory/errors.py", '''
                class UnknownSku(InventoryError, KeyError):
                    """No item has this SKU."""''', '''
                class UnknownSku(InventoryError, KeyError):
                    """No item has this SKU."""


                class InsufficientStock(InventoryError):
                    """Fewer units are in stock than asked for."""'''),
            edit("inventory/store.py", "from inventory.errors import UnknownSku",
                 "from inventory.errors import InsufficientStock, UnknownSku"),
            edit("inventory/store.py", '''
                    item = self.get_item(sku)
                    item.qty -= qty''', '''
                    item = self.get_item(sku)
                    if qty > item.qty:
                        raise InsufficientStock(f"{sku}: {item.qty} in stock, {qty} asked")
                    item.qty -= qty''', indent=8),
        ],
    },
    {
        "id": "pkg-item-validation", "split": "holdout", "kind": "raise-error",
        "goal": """
            Items with a negative quantity or a negative price end up in our stock files from typos. Creating
            an `Item` with qty below 0 or price below 0 should raise ValueError. Zero is fine for both.
        """,
        "setup": ITEMS, "check": """
            assert raises(ValueError, Item, "A-1", "Anvil", -1, 10.0), "a negative qty was accepted"
            assert raises(ValueError, Item, "A-1", "Anvil", 1, -0.5), "a negative price was accepted"
            assert raises(ValueError, Item, "A-1", "Anvil", qty=-3, price=1.0, category="tools")
            free = Item("A-2", "Sample", 0, 0.0)
            assert free.value == 0 and free.category == "general"
            assert len(stock()) == 4
        """,
        "solution": [edit("inventory/models.py", '''
                @property
                def value(self):''', '''
                def __post_init__(self):
                    if self.qty < 0:
                        raise ValueError(f"{self.sku}: quantity must not be negative ({self.qty})")
                    if self.price < 0:
                        raise ValueError(f"{self.sku}: price must not be negative ({self.price})")

                @property
                def value(self):''', indent=4)],
    },
    {
        "id": "pkg-parse-row", "split": "dev", "kind": "refactor",
        "goal": """
            We want to reuse the conversion of one CSV row into an Item elsewhere. In inventory/csvio.py, pull
            it out of load_csv into a function `parse_row(row)` that takes the row's fields as a list of
            strings (sku, name, qty, price, category) and returns the Item, and make load_csv use it.
            load_csv must behave exactly as before.
        """,
        "check": """
            import os, tempfile
            import inventory.csvio as csvio
            from inventory import Item
            got = csvio.parse_row(["N-1", "Nail", "100", "0.05", "hardware"])
            assert got == Item("N-1", "Nail", 100, 0.05, "hardware"), got
            path = os.path.join(tempfile.mkdtemp(), "stock.csv")
            with open(path, "w") as f:
                f.write("sku,name,qty,price,category\\nN-1,Nail,100,0.05,hardware\\n\\nT-2,Tape,2,3.00,supplies\\n")
            calls = []
            real = csvio.parse_row
            csvio.parse_row = lambda row: calls.append(list(row)) or real(row)
            try:
                inv = csvio.load_csv(path)
            finally:
                csvio.parse_row = real
            assert [(i.sku, i.qty, i.price) for i in inv.items()] == [("N-1", 100, 0.05), ("T-2", 2, 3.0)]
            assert ["T-2", "Tape", "2", "3.00", "supplies"] in calls, "load_csv does not use parse_row"
        """,
        "solution": [
            edit("inventory/csvio.py", '''
                sku, name, qty, price, category = line.split(",")
                inventory.add(Item(sku, name, int(qty), float(price), category))''', '''
                inventory.add(parse_row(line.split(",")))''', indent=8),
            append("inventory/csvio.py", '''
                def parse_row(row):
                    """The Item of one CSV row: [sku, name, qty, price, category]."""
                    sku, name, qty, price, category = row
                    return Item(sku, name, int(qty), float(price), category)'''),
        ],
    },
    {
        "id": "pkg-get-rename", "split": "holdout", "kind": "refactor",
        "goal": """
            `Inventory.get_item(sku)` should be called `Inventory.get(sku)` like everything else in our code.
            Please rename it to `get`, use the new name inside the package, and keep `get_item` working for
            old callers as a deprecated alias that emits a DeprecationWarning. Behaviour otherwise unchanged
            (an unknown SKU still raises UnknownSku).
        """,
        "setup": ITEMS, "check": """
            import warnings
            from inventory import UnknownSku
            inv = stock()
            assert inv.get("B-100").name == "Bolt M6"
            assert raises(UnknownSku, inv.get, "X-999")
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                assert inv.get_item("B-100") is inv.get("B-100")
            assert any(issubclass(w.category, DeprecationWarning) for w in seen), "get_item gives no DeprecationWarning"
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                inv.remove("B-100", 40)
                assert raises(UnknownSku, inv.get_item, "B-100")
                inv.remove("G-200", 1)
            assert len(inv) == 3 and inv.get("G-200").qty == 2
        """,
        "solution": [
            edit("inventory/store.py", '''
                def get_item(self, sku):
                    """The item with this SKU. Raises UnknownSku when there is none."""''', '''
                def get(self, sku):
                    """The item with this SKU. Raises UnknownSku when there is none."""''', indent=4),
            edit("inventory/store.py", '''
                    raise UnknownSku(sku)

                def remove(self, sku, qty=1):''', '''
                    raise UnknownSku(sku)

                def get_item(self, sku):
                    """Deprecated: use get."""
                    warnings.warn("Inventory.get_item is deprecated, use Inventory.get", DeprecationWarning, stacklevel=2)
                    return self.get(sku)

                def remove(self, sku, qty=1):''', indent=4),
            edit("inventory/store.py", "        item = self.get_item(sku)\n", "        item = self.get(sku)\n"),
            edit("inventory/store.py", "from inventory.errors import UnknownSku", "import warnings\n\nfrom inventory.errors import UnknownSku"),
        ],
    },
    {
        "id": "pkg-roundtrip-test", "split": "dev", "kind": "add-test",
        "goal": """
            Please add a test to tests/test_csvio.py that an inventory saved with save_csv and read back with
            load_csv has the same items, every field equal (SKU, name, quantity, price, category). Use items
            with prices that have cents and with categories other than the default. The code in inventory/
            should not change.
        """,
        "mutants": [
            mutant("inventory/csvio.py", 'f"{item.price:.2f}"', 'f"{item.price:.0f}"', "prices lose their cents"),
            mutant("inventory/csvio.py", "item.qty, f", "item.qty + 1, f", "quantities are saved off by one"),
            mutant("inventory/csvio.py", "item.category])", '"general"])', "categories are not saved"),
        ],
        "solution": [edit("tests/test_csvio.py", '''
            def test_load_reads_each_field(csv_path):''', '''
            def test_a_saved_inventory_loads_back_the_same(inventory, csv_path):
                save_csv(inventory, csv_path)
                assert load_csv(csv_path).items() == inventory.items()


            def test_load_reads_each_field(csv_path):''')],
    },
    {
        "id": "pkg-remove-all-test", "split": "holdout", "kind": "add-test",
        "goal": """
            There is no test that removing all the units of an item takes the item out of the inventory: it
            no longer appears in items() and looking it up raises UnknownSku. Please add one to
            tests/test_store.py (use the fixtures in conftest.py). Don't change the inventory code.
        """,
        "mutants": [
            mutant("inventory/store.py", "if item.qty <= 0:", "if item.qty < 0:",
                   "an item with no units left stays in the inventory"),
        ],
        "solution": [edit("tests/test_store.py", '''
            def test_unknown_sku(inventory):''', '''
            def test_removing_every_unit_drops_the_item(inventory):
                inventory.remove("G-200", 3)
                assert "G-200" not in [item.sku for item in inventory.items()]
                with pytest.raises(UnknownSku):
                    inventory.get_item("G-200")


            def test_unknown_sku(inventory):''')],
    },
]

LOAD_BODY = '''
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines[1:]:
        if not line.strip():
            continue
        sku, name, qty, price, category = line.split(",")
        inventory.add(Item(sku, name, int(qty), float(price), category))'''
"""How load_csv reads the file, at its indentation."""

REMOVE = '''
    def remove(self, sku, qty=1):
        """Take qty units of an item out of stock; an item with no units left is dropped."""
        item = self.get_item(sku)
        item.qty -= qty'''

VARIANTS = {
    "pkg-search": {
        "alternatives": [variant("casefold and attrgetter", edit("inventory/store.py", "from inventory.errors import UnknownSku",
                                                                "from operator import attrgetter\n\nfrom inventory.errors import UnknownSku"),
                                 edit("inventory/store.py", '''
                                     def __len__(self):''', '''
                                     def search(self, text):
                                         found = [i for i in self._items if text.casefold() in i.name.casefold()]
                                         found.sort(key=attrgetter("sku"))
                                         return found

                                     def __len__(self):''', indent=4))],
        "wrong": [variant("case-sensitive", edit("inventory/store.py", '''
            def items(self):''', '''
            def search(self, text):
                return sorted((i for i in self._items if text in i.name), key=lambda i: i.sku)

            def items(self):''', indent=4))],
    },
    "pkg-value-by-category": {
        "alternatives": [variant("a defaultdict, not rounded", edit("inventory/store.py", '''
            def low_stock(self, threshold=5):''', '''
            def value_by_category(self):
                import collections
                totals = collections.defaultdict(float)
                for item in self._items:
                    totals[item.category] += item.qty * item.price
                return dict(totals)

            def low_stock(self, threshold=5):''', indent=4))],
        "wrong": [variant("prices summed, not values", edit("inventory/store.py", '''
            def low_stock(self, threshold=5):''', '''
            def value_by_category(self):
                totals = {}
                for item in self._items:
                    totals[item.category] = totals.get(item.category, 0) + item.price
                return totals

            def low_stock(self, threshold=5):''', indent=4))],
    },
    "pkg-csv-quoted-names": {
        "alternatives": [variant("csv.DictReader", edit("inventory/csvio.py", LOAD_BODY, '''
            with open(path, newline="", encoding="utf-8") as f:
                for row in csv.DictReader(f):
                    if row["sku"]:
                        inventory.add(Item(row["sku"], row["name"], int(row["qty"]), float(row["price"]), row["category"]))''',
                indent=4))],
        "wrong": [variant("the name taken as everything between the first and the last three commas",
                          edit("inventory/csvio.py", '''
                              sku, name, qty, price, category = line.split(",")''', '''
                              sku, rest = line.split(",", 1)
                              name, qty, price, category = rest.rsplit(",", 3)''', indent=8))],
    },
    "pkg-low-stock-threshold": {
        "alternatives": [variant("not above the threshold", edit("inventory/store.py", "if item.qty < threshold]",
                                                                 "if not item.qty > threshold]"))],
        "wrong": [variant("the default raised to 6 instead", edit("inventory/store.py", "def low_stock(self, threshold=5):",
                                                                  "def low_stock(self, threshold=6):"))],
    },
    "pkg-total-value-category": {
        "alternatives": [variant("items filtered first", edit("inventory/store.py", '''
            def total_value(self):
                """The value of all the stock, rounded to cents."""
                return round(sum(item.value for item in self._items), 2)''', '''
            def total_value(self, category=None):
                items = self._items
                if category is not None:
                    items = [i for i in items if i.category == category]
                return round(sum(i.value for i in items), 2)''', indent=4))],
        "wrong": [variant("an unknown category counts everything", edit("inventory/store.py", '''
            def total_value(self):
                """The value of all the stock, rounded to cents."""
                return round(sum(item.value for item in self._items), 2)''', '''
            def total_value(self, category=None):
                items = [i for i in self._items if i.category == category] or self._items
                return round(sum(i.value for i in items), 2)''', indent=4))],
    },
    "pkg-load-skip-invalid": {
        "alternatives": [variant("csv.reader and a helper", edit("inventory/csvio.py", '''
            def load_csv(path):
                """Read an inventory written by save_csv."""''', '''
            def load_csv(path, skip_invalid=False):
                inventory = Inventory()
                with open(path, newline="", encoding="utf-8") as f:
                    rows = list(csv.reader(f))[1:]
                for row in filter(None, rows):
                    try:
                        item = Item(row[0], row[1], int(row[2]), float(row[3]), row[4])
                    except (ValueError, IndexError):
                        if not skip_invalid:
                            raise ValueError(f"bad row: {row}") from None
                        continue
                    inventory.add(item)
                return inventory


            def _old_load_csv(path):'''))],
        "wrong": [variant("only short rows skipped", edit("inventory/csvio.py", "def load_csv(path):",
                                                        "def load_csv(path, skip_invalid=False):"),
                          edit("inventory/csvio.py", '''
                              sku, name, qty, price, category = line.split(",")''', '''
                              if skip_invalid and line.count(",") != 4:
                                  continue
                              sku, name, qty, price, category = line.split(",")''', indent=8))],
    },
    "pkg-insufficient-stock": {
        "alternatives": [variant("checked before the item is touched, with a message", edit(
            "inventory/errors.py", '''
                class UnknownSku(InventoryError, KeyError):''', '''
                class InsufficientStock(InventoryError):
                    def __init__(self, sku, have, want):
                        super().__init__(f"only {have} of {sku}, {want} asked")


                class UnknownSku(InventoryError, KeyError):'''),
            edit("inventory/store.py", REMOVE, '''
                def remove(self, sku, qty=1):
                    from inventory.errors import InsufficientStock
                    have = self.get_item(sku).qty
                    if have < qty:
                        raise InsufficientStock(sku, have, qty)
                    item = self.get_item(sku)
                    item.qty -= qty''', indent=4))],
        "wrong": [variant("raised after the stock was changed", edit(
            "inventory/errors.py", '''
                class UnknownSku(InventoryError, KeyError):''', '''
                class InsufficientStock(InventoryError):
                    pass


                class UnknownSku(InventoryError, KeyError):'''),
            edit("inventory/store.py", REMOVE, '''
                def remove(self, sku, qty=1):
                    from inventory.errors import InsufficientStock
                    item = self.get_item(sku)
                    item.qty -= qty
                    if item.qty < 0:
                        raise InsufficientStock(sku)''', indent=4))],
    },
    "pkg-item-validation": {
        "alternatives": [variant("one test of both", edit("inventory/models.py", '''
            @property''', '''
            def __post_init__(self):
                if min(self.qty, self.price) < 0:
                    raise ValueError("quantity and price must be at least 0")

            @property''', indent=4))],
        "wrong": [variant("checked when added to an inventory, not when created", edit("inventory/store.py", '''
            def add(self, item):
                """Add an item; an item whose SKU is already there adds its quantity to it."""''', '''
            def add(self, item):
                if item.qty < 0 or item.price < 0:
                    raise ValueError("negative")''', indent=4))],
    },
    "pkg-parse-row": {
        "alternatives": [variant("csv.reader rows handed to parse_row", edit("inventory/csvio.py", LOAD_BODY, '''
            with open(path, newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
            for row in rows[1:]:
                if row:
                    inventory.add(parse_row(row))''', indent=4),
            append("inventory/csvio.py", '''
                def parse_row(row):
                    sku, name, qty, price, category = row
                    return Item(sku=sku, name=name, qty=int(qty), price=float(price), category=category)'''))],
        "wrong": [variant("parse_row added, load_csv keeps its own copy", append("inventory/csvio.py", '''
            def parse_row(row):
                sku, name, qty, price, category = row
                return Item(sku, name, int(qty), float(price), category)'''))],
    },
    "pkg-get-rename": {
        "alternatives": [variant("get_item wraps get, remove calls get", edit("inventory/store.py", '''
            def get_item(self, sku):
                """The item with this SKU. Raises UnknownSku when there is none."""''', '''
            def get_item(self, sku):
                import warnings
                warnings.warn("use get()", DeprecationWarning)
                return self.get(sku)

            def get(self, sku):''', indent=4),
            edit("inventory/store.py", "        item = self.get_item(sku)\n", "        item = self.get(sku)\n"))],
        "wrong": [variant("a silent alias", edit("inventory/store.py", '''
            def remove(self, sku, qty=1):''', '''
            get = get_item

            def remove(self, sku, qty=1):''', indent=4))],
    },
    "pkg-roundtrip-test": {
        "alternatives": [variant("items of its own, compared field by field", write("tests/test_roundtrip.py", '''
            from inventory import Inventory, Item
            from inventory.csvio import load_csv, save_csv


            def test_round_trip(tmp_path):
                path = tmp_path / "out.csv"
                items = [Item("P-1", "Paint white", 7, 12.35, "paint"), Item("R-2", "Roller", 2, 4.5, "tools")]
                save_csv(Inventory(items), path)
                loaded = [(i.sku, i.name, i.qty, i.price, i.category) for i in load_csv(path).items()]
                assert loaded == [("P-1", "Paint white", 7, 12.35, "paint"), ("R-2", "Roller", 2, 4.5, "tools")]
            '''))],
        "wrong": [variant("only the number of items compared", write("tests/test_roundtrip.py", '''
            from inventory.csvio import load_csv, save_csv


            def test_round_trip(inventory, csv_path):
                save_csv(inventory, csv_path)
                assert len(load_csv(csv_path)) == len(inventory)
            '''))],
    },
    "pkg-remove-all-test": {
        "alternatives": [variant("a new file, the item counted out", write("tests/test_remove_all.py", '''
            def test_remove_everything(inventory):
                inventory.remove("S-300", 12)
                assert len(inventory) == 2
            '''))],
        "wrong": [variant("removes only some units", write("tests/test_remove_all.py", '''
            def test_remove_some(inventory):
                inventory.remove("S-300", 2)
                assert inventory.get_item("S-300").qty == 10
            '''))],
    },
}
