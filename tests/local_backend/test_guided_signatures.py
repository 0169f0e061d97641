"""What a guided test ask shows, and how a failing test the model wrote is told back (issue 13).

The 1.5B model's tests failed on their own mistakes: ``Note(title=..., body=...)`` for a dataclass
of ``id, title, body, created`` it was never shown (task 5), and a ``run_list(None, store,
limit=...)`` test of a right ``--limit`` change (task 6), after which the repair changed the right
code, not the test. Now a test ask shows the signatures of what a test would call, and a repair
whose every failure is in the test written for the task says so. Real ``ast`` on real texts; the
turns go through the real LocalRunner, real git and the scripted HTTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.backends.local.guided_text import failing_files
from foreman.backends.local.examples import example_fixtures
from foreman.backends.local.signatures import (
    api_text,
    fixture_sources,
    import_names,
    imported_files,
    signature_lines,
    through_packages,
)

from .fakeserver import last_user, text
from .test_guided_runner import run as guided_turn

MODELS = '''"""The models."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Item:
    """One stored item."""

    id: int
    name: str
    tags: list[str] = field(default_factory=list)

    def label(self, upper: bool = False) -> str:
        """The name, with its id."""
        return f"{self.id}: {self.name}"

    def _hidden(self):
        pass


class Store:
    """Items in memory."""

    def __init__(self, path: str, *, create: bool = True) -> None:
        self.items = []

    async def load(self) -> None:
        pass


def _private():
    pass


def make(name, *names, count=1, **extra) -> Item:
    """Make an item.

    More text that is not shown.
    """
    return Item(count, name)
'''


def test_signature_lines_give_parameters_and_the_first_docstring_line() -> None:
    assert signature_lines(MODELS) == [
        "class Item(id: int, name: str, tags: list[str] = field(default_factory=list))  # One stored item.",
        "    def label(upper: bool=False) -> str  # The name, with its id.",
        "class Store(path: str, *, create: bool=True)  # Items in memory.",
        "    async def load() -> None",
        "def make(name, *names, count=1, **extra) -> Item  # Make an item.",
    ]
    assert signature_lines("def (:") == [] and signature_lines("X = 1\n") == []


def test_imported_files_are_found_in_the_package_and_beside_a_test() -> None:
    known = ["app/__init__.py", "app/models.py", "app/cli/__init__.py", "tests/helpers.py", "tests/test_app.py"]
    test = "import os\nfrom helpers import run\nfrom app.models import Item\nimport app.cli\nfrom . import x\n"
    assert imported_files(test, "tests/test_app.py", known) == ["tests/helpers.py", "app/models.py",
                                                                "app/cli/__init__.py"]
    # a name a from-import brings may be a module of the package: its file is read too
    assert imported_files("from app import models\n", "app/x.py", known) == ["app/__init__.py", "app/models.py"]
    assert imported_files("def (", "x.py", known) == []


def test_relative_imports_are_resolved_against_the_file_s_package() -> None:
    known = ["inv/__init__.py", "inv/models.py", "inv/io/__init__.py", "inv/io/csv.py", "src/lib/__init__.py",
             "src/lib/core.py", "src/lib/util.py"]
    assert import_names("from .models import Item\nfrom . import io\n", "inv/__init__.py") == [
        "inv.models", "inv.models.Item", "inv", "inv.io"]
    assert imported_files("from .models import Item\n", "inv/__init__.py", known) == ["inv/models.py"]
    assert imported_files("from ..models import Item\nfrom .csv import read\n", "inv/io/__init__.py", known) == [
        "inv/models.py", "inv/io/csv.py"]
    assert imported_files("from .util import f\nfrom lib.core import g\n", "src/lib/core.py", known) == [
        "src/lib/util.py"]  # (a src/ layout: the file does not list itself)
    # more dots than packages, or no path to resolve against: left out
    assert import_names("from ...x import y\n", "inv/models.py") == [] and import_names("from .x import y\n") == []


def test_a_package_that_re_exports_relatively_brings_its_modules() -> None:
    files = {"inv/__init__.py": "from .models import Item\n", "inv/models.py": "class Item: ...\n"}
    assert through_packages(["inv/__init__.py"], files.get, files) == ["inv/__init__.py", "inv/models.py"]


def test_api_text_stays_within_its_budget() -> None:
    read = {"a.py": MODELS, "b.py": "def b(x):\n    pass\n", "c.py": "x = 1\n"}.get
    both = api_text(["a.py", "b.py", "c.py", "missing.py"], read)
    assert both.startswith("# a.py\nclass Item(") and both.endswith("# b.py\ndef b(x)")
    assert api_text(["a.py", "b.py"], read, budget=40) == ""  # a.py alone is over: nothing is cut midway
    assert api_text(["b.py", "a.py"], read, budget=40) == "# b.py\ndef b(x)"


def test_failing_files_are_read_from_pytest_short_summary() -> None:
    out = ("FAILED tests/test_limit.py::test_limit[2] - TypeError: run_list() got an unexpected keyword\n"
           "ERROR tests/test_other.py - ImportError: cannot import name 'x'\n"
           "FAILED test_calc.py::CalcTest::test_sub - AssertionError\nfailed: nothing here\n")
    assert failing_files(out) == {"tests/test_limit.py", "tests/test_other.py", "test_calc.py"}
    assert failing_files("1 passed in 0.1s") == set()


FILES = {
    "app/__init__.py": "",
    "app/models.py": MODELS,
    "app/report.py": "from app.models import Item\n\n\ndef report(items):\n    return [i.name for i in items]\n",
    "tests/test_report.py": "from app.models import Item\nfrom app.report import report\n\n\n"
                            "def test_report():\n    assert report([Item(1, 'a')]) == ['a']\n",
}
GOAL = "Make report in app/report.py sort the names."
CODE = "```python\n# file: app/report.py\ndef report(items):\n    return sorted(i.name for i in items)\n```"
ASKED = ("```python\n# file: tests/test_report_asked.py\nfrom app.models import Item\nfrom app.report import report\n\n\n"
         "def test_sorted():\n    assert report([Item(1, 'b'), Item(2, 'a')]) == ['a', 'b']\n```")


async def test_the_asked_test_request_shows_the_signatures_of_what_a_test_calls(tmp_path: Path) -> None:
    replies = iter([ASKED, CODE])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=GOAL, attempts=1, asked_test=True)
    asked = last_user(server.requests[0])
    assert "What a test can call (signatures, from files not shown above):" in asked
    assert "# app/models.py\nclass Item(id: int, name: str, tags: list[str] = field(default_factory=list))" in asked
    assert "def report(items)" in asked  # the target, shown whole with line numbers, not as a signature
    assert "# app/report.py" not in asked
    assert stats.passed


async def test_a_repair_whose_failures_are_all_in_the_new_test_says_the_test_is_wrong(tmp_path: Path) -> None:
    goal = GOAL + " Add a test in tests/test_sorting.py."
    wrong = ("```python\n# file: tests/test_sorting.py\nfrom app.report import report\n\n\n"
             "def test_sorted():\n    assert report(['b', 'a']) == ['a', 'b']\n```")  # strings have no .name
    right = ASKED.replace("tests/test_report_asked.py", "tests/test_sorting.py")
    replies = iter([CODE, wrong, right])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=goal, attempts=1, repairs=1)
    tests_ask, repair = last_user(server.requests[1]), last_user(server.requests[2])
    assert "What a test can call" in tests_ask and "class Item(id: int, name: str" in tests_ask
    assert "Every failure is in tests/test_sorting.py, the test written for this task" in repair
    # the failure is an error raised in the code (AttributeError): the code stays shown, not "send only the test"
    # (told so, the 1.5B model rewrote its test around a wrong store.all(limit=...), bench s14-q15-3)
    assert "Send only" not in repair and "app/report.py now reads:" in repair
    assert stats.passed and "Item(2, 'a')" in (repo / "tests/test_sorting.py").read_text()


async def test_a_repair_whose_failures_are_asserts_of_the_new_test_shows_and_asks_for_the_test_alone(
        tmp_path: Path) -> None:
    goal = GOAL + " Add a test in tests/test_sorting.py."
    wrong = ("```python\n# file: tests/test_sorting.py\nfrom app.models import Item\nfrom app.report import report\n\n\n"
             "def test_sorted():\n    assert report([Item(1, 'b'), Item(2, 'a')]) == ['b', 'a']\n```")  # expects unsorted
    right = ASKED.replace("tests/test_report_asked.py", "tests/test_sorting.py")
    replies = iter([CODE, wrong, right])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=goal, attempts=1, repairs=1)
    repair = last_user(server.requests[2])
    assert "Every failure is in tests/test_sorting.py" in repair and "Send only tests/test_sorting.py" in repair
    # the test is shown as it now reads; the code it tests is not shown again (the model sent it back whole)
    assert "tests/test_sorting.py now reads:" in repair and "app/report.py now reads:" not in repair
    assert stats.passed


async def test_a_failure_in_the_code_is_not_blamed_on_the_test(tmp_path: Path) -> None:
    goal = GOAL + " Add a test in tests/test_sorting.py."
    broken = "```python\n# file: app/report.py\ndef report(items):\n    return sorted(i.title for i in items)\n```"
    replies = iter([broken, ASKED.replace("tests/test_report_asked.py", "tests/test_sorting.py"), CODE])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=goal, attempts=1, repairs=1)
    repair = last_user(server.requests[2])
    assert "The checks" in repair and "Every failure is in" not in repair  # test_report.py fails too
    assert "app/report.py now reads:" in repair and "tests/test_sorting.py now reads:" in repair
    assert stats.passed


async def test_new_tests_that_never_run_do_not_prove_the_change(tmp_path: Path) -> None:
    """A new test in a class pytest does not collect (no ``Test`` prefix, not a TestCase) never
    runs: the file's old test passes on the old code and the new one is absent from the run, which
    proved the change until stop 14."""
    goal = GOAL + " Add a test in tests/test_report.py."
    hidden = ("```python\n# file: tests/test_report.py\nfrom app.models import Item\nfrom app.report import report\n\n\n"
              "class Checks:\n    def test_sorted(self):\n        assert report([Item(1, 'b'), Item(2, 'a')]) == ['a', 'b']\n```")
    replies = iter([CODE, hidden])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=goal, attempts=1, repairs=0)
    # the file's old test_report is not the attempt's: the test was asked for (counted as new until stop 14)
    assert len(server.requests) == 2 and "Now write pytest test functions" in last_user(server.requests[1])
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [("the new tests pass without the change", "test_sorted")]


async def test_an_old_test_of_the_named_file_failing_is_not_blamed_on_the_new_test(tmp_path: Path) -> None:
    """A review's path (stop 14): the task names the existing tests/test_report.py; the wrong code
    breaks its old test_report too. The repair must not say the new test is wrong (nor hide the code)."""
    goal = "Make report in app/report.py sort the names in reverse. Add a test in tests/test_report.py."
    wrong = "```python\n# file: app/report.py\ndef report(items):\n    return sorted((i.name for i in items), reverse=True)[1:]\n```"
    test = ("```python\n# file: tests/test_report.py\nfrom app.models import Item\nfrom app.report import report\n\n\n"
            "def test_reverse():\n    assert report([Item(1, 'a'), Item(2, 'b')]) == ['b', 'a']\n```")
    replies = iter([wrong, test, wrong])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=goal, attempts=1, repairs=1)
    repair = last_user(server.requests[2])
    assert "FAILED tests/test_report.py::test_report" in repair
    assert "Every failure is in" not in repair and "app/report.py now reads:" in repair
    assert not stats.passed


@pytest.mark.parametrize("test", [
    "@pytest.mark.skip\ndef test_sorted():\n    assert report([Item(1, 'b'), Item(2, 'a')]) == ['a', 'b']\n",
    "@pytest.mark.xfail\ndef test_sorted():\n    assert report([Item(1, 'b'), Item(2, 'a')]) == ['a', 'b']\n",
], ids=["skipped", "xfail"])
async def test_a_new_test_that_never_runs_on_the_old_code_proves_nothing(tmp_path: Path, test: str) -> None:
    """A review's paths (stop 14): a new test file whose only test pytest skips or expects to fail;
    each passed the attempt before. (One pytest never collects, alone in a new file, is still taken
    as proof: the run cannot tell it from a report that names the file otherwise.)"""
    goal = GOAL + " Add a test in tests/test_sorting.py."
    reply = ("```python\n# file: tests/test_sorting.py\nimport pytest\nfrom app.models import Item\n"
             f"from app.report import report\n\n\n{test}```")
    replies = iter([CODE, reply])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=FILES,
                                                           goal=goal, attempts=1, repairs=0)
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [("the new tests pass without the change", "test_sorted")]


def test_failing_tests_reads_the_short_summary() -> None:
    from foreman.backends.local.guided_text import failing_tests

    out = ("FAILED tests/test_a.py::test_x - assert 1\r\nFAILED tests/test_a.py::Cls::test_y[case-1] - E\n"
           "ERROR tests/test_b.py - ImportError\nfailed: no\n")
    assert failing_tests(out) == [("tests/test_a.py", "test_x", "assert 1"), ("tests/test_a.py", "test_y", "E"),
                                  ("tests/test_b.py", None, "ImportError")]


def test_defined_names_are_a_modules_own_definitions() -> None:
    from foreman.backends.local.symbols import defined_names

    src = ("from a import b, c as d\nimport os.path\nfrom x import *\n\n\ndef c():\n    pass\n\n\nd = 1\n"
           "class e:\n    pass\nasync def f():\n    pass\nif True:\n    def g():\n        pass\n")
    assert defined_names(src) == {"c", "e", "f"}
    assert defined_names("def (") == set()


async def test_a_right_test_passes_when_the_tests_folder_has_its_own_pytest_ini(tmp_path: Path) -> None:
    """A review's regression (stop 14): with tests/pytest.ini the report names the case without its
    folder, so the probe finds none of the file's tests; that is "cannot tell", not "unproven"."""
    files = {**FILES, "tests/pytest.ini": "[pytest]\n"}
    right = ASKED.replace("tests/test_report_asked.py", "tests/test_sorting.py")
    replies = iter([CODE, right])
    result, tools, server, stats, repo = await guided_turn(tmp_path, lambda req: text(next(replies)), files=files,
                                                           goal=GOAL + " Add a test in tests/test_sorting.py.",
                                                           attempts=1, repairs=0)
    assert stats.passed


def test_using_follows_helpers_fixtures_and_setup() -> None:
    from foreman.backends.local.probe import using

    src = ("import unittest\nfrom m import count, find\n\nTOTAL = count([], 'a')\n\n\ndef helper():\n    return count\n\n\n"
           "def test_direct():\n    assert count(['a'], 'a') == 1\n\n\ndef test_helper():\n    assert helper()\n\n\n"
           "def test_constant():\n    assert TOTAL == 0\n\n\ndef test_string():\n    assert find(['count'], 'count')\n\n\n"
           "class C(unittest.TestCase):\n    def setUp(self):\n        self.n = count(['a'], 'a')\n\n"
           "    def test_setup(self):\n        self.assertEqual(self.n, 1)\n\n\n"
           "class D(unittest.TestCase):\n    def test_other(self):\n        self.assertEqual(find([], 'a'), [])\n")
    assert using(src, {"count"}) == {"test_direct", "test_helper", "test_constant", "C.test_setup"}
    assert using("def (", {"count"}) == set()


def test_a_test_skipped_in_its_body_or_by_its_module_uses_nothing() -> None:
    """A review's paths (stop 14): ``pytest.skip()`` in the body, ``pytestmark = pytest.mark.skip``."""
    from foreman.backends.local.probe import using

    body = ("import pytest\nfrom m import count\n\n\ndef test_a():\n    pytest.skip('later')\n    assert count()\n\n\n"
            "def test_c():\n    assert count()\n")
    assert using(body, {"count"}) == {"test_c"}
    assert using(body.replace("import pytest\n", "import pytest\npytestmark = pytest.mark.skip\n"), {"count"}) == set()
    assert using(body.replace("import pytest\n", "import pytest\npytestmark = [pytest.mark.slow]\n"), {"count"}) == {"test_c"}


def test_a_package_that_re_exports_its_classes_is_followed_to_where_they_are_defined() -> None:
    files = {"shop/__init__.py": "from shop.models import Item\nfrom shop.store import Store\n__all__ = ['Item']\n",
             "shop/models.py": MODELS, "shop/store.py": "class Store:\n    pass\n", "tests/test_shop.py": ""}
    found = imported_files("from shop import Item\n", "tests/test_shop.py", files)
    assert found == ["shop/__init__.py"]  # the import names the package, which defines nothing itself
    assert through_packages(found, files.get, files) == ["shop/__init__.py", "shop/models.py", "shop/store.py"]
    assert through_packages(["shop/models.py", "shop/__init__.py"], files.get, files) == [
        "shop/models.py", "shop/__init__.py", "shop/store.py"]  # no file twice, order kept
    assert "class Item(id: int, name: str" in api_text(through_packages(found, files.get, files), files.get)


CONFTEST = '''import pytest

from shop import Item, Store


@pytest.fixture
def items():
    return [Item(1, "bolt"), Item(2, "glue")]


@pytest.fixture
def store(items, tmp_path):
    return Store(items)


@pytest.fixture
def unused():
    return 42


def helper():
    return 1
'''


def test_the_fixtures_a_test_takes_are_shown_with_those_they_take() -> None:
    shown = fixture_sources(CONFTEST, ["store", "tmp_path"])
    assert shown.startswith('@pytest.fixture\ndef items():\n    return [Item(1, "bolt"), Item(2, "glue")]')
    assert "def store(items, tmp_path):" in shown
    assert "unused" not in shown and "helper" not in shown
    assert fixture_sources(CONFTEST, ["helper", "nothing"]) == ""
    assert fixture_sources("def (", ["store"]) == ""
    assert fixture_sources(CONFTEST, ["store"], budget=90) == '@pytest.fixture\ndef items():\n' \
        '    return [Item(1, "bolt"), Item(2, "glue")]'  # the next one would go over: left out whole


def test_example_fixtures_come_from_the_conftest_files_pytest_would_use() -> None:
    files = {"tests/conftest.py": CONFTEST, "conftest.py": "import pytest\n\n@pytest.fixture\ndef root():\n    return 1\n",
             "other/conftest.py": CONFTEST,
             "tests/test_shop.py": "def test_a(store):\n    pass\n\nclass TestB:\n    def test_b(self, root):\n"
                                   "        pass\n\ndef helper(unused):\n    pass\n"}
    found = example_fixtures("tests/test_shop.py", files.get, list(files))
    assert [path for path, _ in found] == ["tests/conftest.py", "conftest.py"]
    assert "def store(items, tmp_path)" in found[0][1] and "unused" not in found[0][1]
    assert found[1][1] == "@pytest.fixture\ndef root():\n    return 1"
    assert example_fixtures("tests/test_none.py", {"tests/test_none.py": "def test_x():\n    pass\n"}.get,
                            ["tests/test_none.py", "tests/conftest.py"]) == []


PACKAGE = {
    "shop/__init__.py": "from shop.models import Item\nfrom shop.store import Store\n",
    "shop/models.py": MODELS,
    "shop/store.py": "class Store:\n    def __init__(self, items):\n        self.items = list(items)\n\n"
                     "    def names(self):\n        return [i.name for i in self.items]\n",
    "tests/__init__.py": "",
    "tests/conftest.py": CONFTEST.replace("Store(items)", "Store(items)\n"),
    "tests/test_store.py": "from shop import Item\n\n\ndef test_names(store):\n    assert store.names() == ['bolt', 'glue']\n",
}


async def test_a_test_ask_shows_re_exported_classes_and_the_fixtures_the_example_takes(tmp_path: Path) -> None:
    asked = ("```python\n# file: tests/test_store_asked.py\n\n\ndef test_count(store):\n    assert store.count() == 2\n```")
    code = ("```python\n# file: shop/store.py\nclass Store:\n    def __init__(self, items):\n        self.items = list(items)"
            "\n\n    def names(self):\n        return [i.name for i in self.items]\n\n    def count(self):\n"
            "        return len(self.items)\n```")
    replies = iter([asked, code])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(replies)), files=PACKAGE, goal="Add a method count() to Store in "
        "shop/store.py that returns how many items it holds.", attempts=1, asked_test=True)
    ask = last_user(server.requests[0])
    assert "# shop/models.py\nclass Item(id: int, name: str" in ask  # through shop/__init__.py
    assert "The fixtures its tests take, from tests/conftest.py:" in ask
    assert 'return [Item(1, "bolt"), Item(2, "glue")]' in ask and "def store(items, tmp_path):" in ask
    assert stats.passed


SHELF = {
    "shelf/__init__.py": "",
    "shelf/models.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Book:\n    title: str\n",
    "shelf/store.py": "class Shelf:\n    def __init__(self, books):\n        self.books = list(books)\n",
    "tests/__init__.py": "",
    "tests/test_models.py": "from shelf.models import Book\n\n\ndef test_book():\n    assert Book('a').title == 'a'\n",
}


async def test_a_new_test_using_repository_classes_without_importing_them_gets_the_imports(tmp_path: Path) -> None:
    asked = ("```python\n# file: tests/test_store_asked.py\n\n\ndef test_count():\n"
             "    assert Shelf([Book('a'), Book('b')]).count() == 2\n```")
    code = ("```python\n# file: shelf/store.py\nclass Shelf:\n    def __init__(self, books):\n        self.books = list(books)"
            "\n\n    def count(self):\n        return len(self.books)\n```")
    replies = iter([asked, code])
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, lambda req: text(next(replies)), files=SHELF, attempts=1, asked_test=True,
        goal="Add a method count() to Shelf in shelf/store.py that returns how many books it holds.")
    assert stats.passed, stats.attempts
    test = (repo / "tests" / "test_store_asked.py").read_text()
    assert "from shelf.models import Book" in test and "from shelf.store import Shelf" in test


def test_a_class_with_no_fields_shows_its_bases() -> None:
    """A test of a new error needs to know what it is (``pytest.raises(ValueError)`` catches it)."""
    text = ('class UnknownCode(ValueError):\n    """A discount code nobody defined."""\n\n\n'
            "class Empty:\n    pass\n\n\nclass Point(Base):\n    def __init__(self, x):\n        self.x = x\n")
    assert signature_lines(text) == ["class UnknownCode(ValueError)  # A discount code nobody defined.",
                                     "class Empty()", "class Point(x)"]
