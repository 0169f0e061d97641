"""Symbol placement: definitions placed by name with the ast parser."""

from __future__ import annotations

import ast

import pytest

from foreman.backends.local.placement import PlacementRefused, place_python
from foreman.backends.local.symbols import add_imports_for, top_level_symbols, undefined_names, unique_definitions

BASE = '''"""Formatting helpers."""

from datetime import datetime


def format_age(created, now):
    delta = now - created
    seconds = delta.seconds
    return f"{seconds} s"


def title(text):
    return text.title()
'''


def test_existing_function_is_replaced_in_place():
    snippet = "def format_age(created, now):\n    return str(int((now - created).total_seconds()))\n"
    out = place_python(BASE, snippet)
    assert out.actions == ["replaced def format_age"]
    assert "delta.seconds" not in out.text
    assert out.text.index("def format_age") < out.text.index("def title")  # same place
    assert out.text.count("def format_age") == 1
    assert "def title(text):\n    return text.title()\n" in out.text


def test_new_function_is_appended_with_the_files_spacing():
    out = place_python(BASE, "def shout(text: str) -> str:\n    return text.upper() + '!'\n")
    assert out.actions == ["appended def shout"]
    assert out.text.endswith("    return text.title()\n\n\ndef shout(text: str) -> str:\n    return text.upper() + '!'\n")
    ns: dict = {}
    exec(compile(out.text, "f", "exec"), ns)
    assert ns["shout"]("hi") == "HI!"


def test_snippet_indented_as_a_list_item_is_dedented():
    out = place_python(BASE, "    def is_blank(text):\n        return not text.strip()\n")
    assert "\ndef is_blank(text):\n    return not text.strip()\n" in out.text


CLASS = '''class Store:
    """Notes."""

    limit = 10

    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)


def helper():
    return 1
'''


def test_method_in_a_class_is_replaced_and_other_methods_kept():
    snippet = "class Store:\n    def add(self, item):\n        self.items.insert(0, item)\n"
    out = place_python(CLASS, snippet)
    assert out.actions == ["replaced method Store.add"]
    assert "self.items.insert(0, item)" in out.text and "append" not in out.text
    assert "def __init__(self):" in out.text and "limit = 10" in out.text


def test_new_method_goes_inside_the_class_not_at_the_end():
    out = place_python(CLASS, "class Store:\n    def count(self):\n        return len(self.items)\n")
    assert out.actions == ["appended method Store.count"]
    tree = ast.parse(out.text)
    store = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert [m.name for m in store.body if isinstance(m, ast.FunctionDef)] == ["__init__", "add", "count"]
    assert out.text.rstrip().endswith("return 1")


def test_bare_method_lands_in_the_class_that_has_it():
    out = place_python(CLASS, "def add(self, item):\n    self.items += [item]\n")
    assert out.actions == ["replaced method Store.add"]
    assert "    def add(self, item):\n        self.items += [item]\n" in out.text


def test_decorators_are_replaced_with_the_definition():
    text = "import functools\n\n\n@functools.cache\ndef f(x):\n    return x\n"
    out = place_python(text, "@functools.lru_cache(maxsize=2)\ndef f(x):\n    return x * 2\n")
    assert "@functools.cache" not in out.text
    assert "@functools.lru_cache(maxsize=2)\ndef f(x):\n    return x * 2\n" in out.text
    kept = place_python(text, "def f(x):\n    return 3\n")  # no decorator in the snippet: it goes too
    assert kept.text.count("@") == 0


def test_imports_are_merged_without_duplicates():
    snippet = ("import re\nfrom datetime import datetime, timedelta\n\n"
               "def word_count(text):\n    return len(re.findall(r'\\S+', text))\n")
    out = place_python(BASE, snippet)
    assert "from datetime import datetime, timedelta\n" in out.text
    assert out.text.count("from datetime") == 1 and out.text.count("import re\n") == 1
    assert out.text.index("import re") < out.text.index("def format_age")
    again = place_python(out.text, snippet)
    assert again.text.count("import re") == 1 and again.text.count("timedelta") == out.text.count("timedelta")


def test_import_of_the_files_own_module_is_skipped():
    out = place_python(BASE, "from pocket_notes.formatting import title\n\ndef t2(x):\n    return title(x)\n",
                       module="pocket_notes.formatting")
    assert "import title" not in out.text


def test_import_into_a_file_without_imports_goes_on_top():
    out = place_python("def a():\n    return 1\n", "import os\n\ndef b():\n    return os.sep\n")
    assert out.text.startswith("import os\n\n\ndef a():")
    ast.parse(out.text)


def test_crlf_file_stays_crlf_on_every_line():
    crlf = BASE.replace("\n", "\r\n")
    out = place_python(crlf, "import re\n\ndef shout(text):\n    return text.upper()\n\n"
                             "def format_age(created, now):\n    return 'x'\n")
    assert out.text.count("\n") == out.text.count("\r\n") > 10
    assert "def shout(text):\r\n    return text.upper()\r\n" in out.text


def test_tab_indented_file_keeps_tabs():
    out = place_python("def a():\n\treturn 1\n", "def b():\n    if True:\n        return 2\n")
    assert "def b():\n\tif True:\n\t\treturn 2\n" in out.text


def test_syntax_error_is_refused_and_nothing_placed():
    with pytest.raises(PlacementRefused, match="not valid Python"):
        place_python(BASE, "def shout(text)\n    return text\n")


def test_stray_statements_are_dropped_and_listed():
    out = place_python(BASE, "def shout(t):\n    return t\n\nprint(shout('x'))\nif __name__ == '__main__':\n    pass\n")
    assert out.actions == ["appended def shout"]
    assert out.dropped == ["print(shout('x'))", "if __name__ == '__main__':"]
    assert "print(" not in out.text


def test_a_block_with_nothing_to_place_is_refused():
    with pytest.raises(PlacementRefused, match="no function"):
        place_python(BASE, "print('hello')\n")


def test_constants_replace_or_go_after_the_imports():
    out = place_python("import os\n\nLIMIT = 3\n\n\ndef f():\n    return LIMIT\n", "LIMIT = 5\nSEP = ','\n")
    assert "LIMIT = 5" in out.text and "LIMIT = 3" not in out.text
    assert out.text.index("SEP = ','") < out.text.index("def f")


def test_new_file_takes_the_snippet():
    out = place_python("", "import pytest\n\ndef test_a():\n    assert 1\n")
    assert out.text == "import pytest\n\ndef test_a():\n    assert 1\n"


def test_test_file_gets_the_imports_it_needs():
    text = "def test_shout():\n    assert shout('hi') == 'HI!'\n    with pytest.raises(TypeError):\n        shout(1)\n"
    assert undefined_names(text) == {"shout", "pytest"}
    out = add_imports_for(text, "pocket_notes.formatting", {"shout", "title"})
    assert out.text.startswith("import pytest\nfrom pocket_notes.formatting import shout\n")
    assert add_imports_for(out.text, "pocket_notes.formatting", {"shout"}).actions == []


def test_a_test_file_gets_the_standard_imports_its_module_or_tests_use():
    """The 1.5B model's format_age test (bench traces q15-guided-r2, attempt 2): ``datetime`` and
    ``timedelta`` used, never imported; the test failed on that, not on the code."""
    source = "from __future__ import annotations\n\nfrom datetime import datetime, timezone\n\n\ndef format_age(a, b):\n" \
             "    return ''\n"
    test = ("def test_format_age():\n    now = datetime.now()\n    created = now - timedelta(days=2, seconds=30)\n"
            "    assert format_age(created, now) == '2 days ago'\n    assert Path('x').name == 'x' and os.sep\n"
            "    assert unknown_thing\n")
    out = add_imports_for(test, "pocket_notes.formatting", {"format_age"}, source=source)
    head = out.text.split("\n\n")[0].split("\n")
    assert sorted(head) == sorted(["from pocket_notes.formatting import format_age", "from datetime import datetime",
                                   "from datetime import timedelta", "from pathlib import Path", "import os"])
    assert undefined_names(out.text) == {"unknown_thing"}  # a name nothing provides stays missing
    assert "timezone" not in out.text and "__future__" not in out.text
    assert add_imports_for(out.text, "pocket_notes.formatting", {"format_age"}, source=source).actions == []


def test_datetime_module_attributes_on_the_class_are_repaired_in_a_test():
    """The 1.5B model's format_age tests (bench traces asked-q15-guided): ``datetime.now()`` and
    ``datetime.timedelta(days=2)`` in one test, an AttributeError of the test's own."""
    source = "from datetime import datetime\n\n\ndef format_age(a, b):\n    return ''\n"
    test = ("def test_two_days():\n    now = datetime.now()\n    created = now - datetime.timedelta(days=2)\n"
            "    assert format_age(created, now) == '2 days ago'\n")
    out = add_imports_for(test, "pocket_notes.formatting", {"format_age"}, source=source)
    assert "now - timedelta(days=2)" in out.text and "datetime.timedelta" not in out.text
    assert "from datetime import datetime" in out.text and "from datetime import timedelta" in out.text
    assert out.actions[0] == "used timedelta for datetime.timedelta (datetime is the class here)"
    namespace: dict = {"format_age": lambda a, b: "2 days ago" if (b - a).days == 2 else "?"}
    exec(out.text.replace("from pocket_notes.formatting import format_age\n", ""), namespace)
    namespace["test_two_days"]()  # the repaired test runs
    module_style = "import datetime\n\n\ndef test_a():\n    assert datetime.timedelta(days=1)\n"
    assert add_imports_for(module_style, "m", set()).text == module_style  # the module: left as written


def test_symbols_index():
    assert top_level_symbols(BASE) == [("format_age", 6), ("title", 12)]
    assert top_level_symbols("def (") == []


def test_two_imports_from_one_module_extend_the_same_line():
    out = place_python(BASE, "from datetime import timedelta\nfrom datetime import timezone\n\n"
                             "def later(d):\n    return d + timedelta(days=1)\n")
    assert "from datetime import datetime, timedelta, timezone\n" in out.text
    assert out.text.count("from datetime") == 1


def test_a_future_import_goes_before_every_other_statement():
    out = place_python(BASE, "from __future__ import annotations\nimport re\n\ndef shout(text: str) -> str:\n"
                             "    return text.upper()\n")
    assert out.text.startswith('"""Formatting helpers."""\n\nfrom __future__ import annotations\n')
    assert out.text.index("from datetime") < out.text.index("import re") < out.text.index("def format_age")
    compile(out.text, "formatting.py", "exec")
    plain = place_python("import os\n\n\ndef a():\n    return os.sep\n", "from __future__ import annotations\n")
    assert plain.text.startswith("from __future__ import annotations\nimport os\n")
    compile(plain.text, "a.py", "exec")
    again = place_python(out.text, "from __future__ import annotations\n\ndef b():\n    return 1\n")
    assert again.text.count("from __future__") == 1


def test_a_result_that_parses_but_does_not_compile_is_refused():
    # ast.parse accepts these; the compiler does not (the module would fail at import)
    with pytest.raises(PlacementRefused, match="not valid Python"):
        place_python(BASE, "def shout(text):\n    nonlocal text\n    return text\n")
    with pytest.raises(PlacementRefused, match="not valid Python"):
        place_python("", "def shout(text):\n    nonlocal text\n    return text\n")


SEARCH = '''from __future__ import annotations

from pocket_notes.notes import Note


def matches(note: Note, query: str) -> bool:
    return query in note.title


def search(notes: list[Note], query: str) -> list[Note]:
    return [note for note in notes if matches(note, query)]
'''


def test_a_definition_using_a_name_nothing_defines_is_refused():
    # seen in the 0.5B bench: merged, the repository's tests passed (none calls it), NameError
    # at the first call; `note` is bound in the file, but only inside search's comprehension
    snippet = ("def count_matches(notes, query):\n    text = f'{note.title}'.lower()\n"
               "    return sum(1 for word in text.split() if word in query)\n")
    with pytest.raises(PlacementRefused, match="count_matches uses note, which nothing defines"):
        place_python(SEARCH, snippet)
    with pytest.raises(PlacementRefused, match="Helper.size uses limit, which nothing defines"):
        place_python(SEARCH, "class Helper:\n    def size(self):\n        return limit\n")


def test_names_bound_in_every_legal_way_are_not_refused():
    snippet = '''import re
from typing import TYPE_CHECKING


def count_matches(notes: list[Note], query: Missing) -> int:
    """Annotations are not evaluated here (from __future__ import annotations)."""
    global CACHE
    CACHE = {}
    found = [n for n in notes if matches(n, query)]
    total = 0
    for i, note in enumerate(found):
        total += 1
    try:
        pattern = re.compile(query)
    except re.error as exc:
        raise ValueError(str(exc)) from exc
    if (m := pattern.search("x")) is not None:
        total += len(m.group(0))

    def inner() -> int:
        return total + len(LATER) + len(__name__)

    with open(__file__) as handle:
        handle.read()
    match query:
        case str(word):
            pass
    return inner() + len(CACHE) + sum(1 for _ in found)


class Counter:
    size = 3

    def count(self) -> int:
        return self.size + count_matches([], "") + len(Counter.__name__)
'''
    out = place_python(SEARCH + "\n\nLATER = 'x'\n", snippet)
    assert "def count_matches" in out.text and "class Counter" in out.text
    star = place_python("from os.path import *\n", "def f():\n    return join('a', 'b')\n")
    assert "def f():" in star.text  # a star import may bind anything: not checked


def test_a_plain_import_of_the_module_under_test_is_copied_into_its_test():
    """``import shlex`` (not ``from x import y``) in the module under test, used by its test: copied,
    once (this raised IndexError before: only ``from`` lines were split right)."""
    source = "import shlex\nimport os.path as osp\n\n\ndef split(text):\n    return shlex.split(text)\n"
    test = "def test_split():\n    assert split('a b') == shlex.split('a b') and osp.sep\n"
    out = add_imports_for(test, "pkg.cmd", {"split"}, source=source)
    assert sorted(out.text.split("\n\n")[0].split("\n")) == ["from pkg.cmd import split", "import os.path as osp",
                                                             "import shlex"]
    assert undefined_names(out.text) == set()


def test_a_block_that_only_repeats_the_files_definitions_says_so() -> None:
    """Told the block "holds nothing to place", a model reads a format problem and sends the same
    unchanged classes again; told they are already there, it can send what the task adds."""
    errors = ('class InventoryError(Exception):\n    """Base."""\n\n\n'
              'class UnknownSku(InventoryError, KeyError):\n    """No item has this SKU."""\n')
    with pytest.raises(PlacementRefused, match="only repeats InventoryError, UnknownSku, already in the file unchanged"):
        place_python(errors, errors)
    added = place_python(errors, errors + '\n\nclass InsufficientStock(InventoryError):\n    """Too few."""\n')
    assert added.actions == ["appended class InsufficientStock"]
    with pytest.raises(PlacementRefused, match="no function, class, import or constant"):
        place_python(errors, "x.y()\n")


def test_a_class_one_module_of_the_repository_defines_is_imported_from_it() -> None:
    """A new test file using the store's class without importing it failed on a NameError, and the
    repair asked for the import named a module that does not exist."""
    defined = unique_definitions({"inventory.store": "class Inventory:\n    pass\n\n\ndef _helper():\n    pass\n",
                                  "inventory.models": "class Item:\n    pass\n\n\ndef make():\n    pass\n",
                                  "other.models": "def make():\n    pass\n", "broken": "def (:"})
    assert defined == {"Inventory": "inventory.store", "Item": "inventory.models"}  # make: two modules
    test = ("import pytest\nfrom inventory.errors import InsufficientStock\n\n\ndef test_x():\n"
            "    inv = Inventory([Item('a', 1)])\n    with pytest.raises(InsufficientStock):\n        make(inv)\n")
    out = add_imports_for(test, "inventory.errors", {"InsufficientStock"}, defined_in=defined)
    assert out.actions and "from inventory.models import Item\nfrom inventory.store import Inventory\n" in out.text
    assert "import make" not in out.text
    assert undefined_names(out.text) == {"make"}


def test_a_definition_using_a_standard_library_module_it_never_imports_gets_the_import() -> None:
    """``build_parser`` sent with ``argparse.ArgumentParser()`` and no ``import argparse`` was refused
    as using a name nothing defines; the import is the one fix, so it is added."""
    base = '"""The command line."""\n\nimport json\n\n\ndef main():\n    return 0\n'
    out = place_python(base, "def build_parser():\n    p = argparse.ArgumentParser()\n    p.add_argument('x')\n"
                             "    return p, re.compile(json.dumps(1))\n")
    assert "import json\nimport argparse\nimport re\n\n\ndef main():" in out.text  # after the file's imports
    compile(out.text, "cli.py", "exec")
    with pytest.raises(PlacementRefused, match="parser_factory"):  # not a module of the standard library
        place_python(base, "def build_parser():\n    return parser_factory()\n")


def test_the_repository_s_definitions_are_read_only_when_a_name_is_still_missing() -> None:
    """Reading every module of the repository for each placed test block is work a test that
    imports all it uses never needs."""
    reads: list[int] = []

    def defined() -> dict[str, str]:
        reads.append(1)
        return {"Item": "inventory.models"}
    whole = "from inventory.models import Item\n\n\ndef test_x():\n    assert Item()\n"
    assert add_imports_for(whole, "inventory.errors", set(), defined_in=defined).text == whole and reads == []
    out = add_imports_for("def test_x():\n    assert Item()\n", "inventory.errors", set(), defined_in=defined)
    assert "from inventory.models import Item" in out.text and reads == [1]
