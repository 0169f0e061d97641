"""The ``mutant`` check end to end: a test-only task in a real git worktree, the LocalRunner against
the scripted HTTP server, real pytest runs of the new test on broken copies of the code it calls."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from foreman.backends.local import mutants, pipeline
from foreman.backends.local import uncalled as uncalled_mod

from .fakeserver import last_user, text
from .test_guided_runner import run as guided_turn

CALC = "def add(a, b):\n    return a + b\n"
FILES = {"calc.py": CALC, "test_calc.py": "def test_nothing():\n    assert True\n"}
GOAL = "Nothing tests calc.py yet. Please put a test in test_add.py that checks the sum of two numbers."
CALLABLE = "```python\n# file: test_add.py\nimport calc\n\n\ndef test_add_exists():\n    assert callable(calc.add)\n```"
TYPE_ONLY = ("```python\n# file: test_add.py\nimport calc\n\n\ndef test_add_gives_a_number():\n"
             "    assert isinstance(calc.add(2, 3), int)\n```")
STRONG = "```python\n# file: test_add.py\nimport calc\n\n\ndef test_add_sums():\n    assert calc.add(2, 3) == 5\n```"


def replies(*answers: str):
    """A responder that answers ``answers`` in order (the last one again after them)."""
    left = list(answers)
    return lambda req: text(left.pop(0) if len(left) > 1 else left[0])


async def test_a_test_that_never_calls_the_function_is_refused_naming_it(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(CALLABLE), files=FILES, goal=GOAL,
                                                           attempts=1, repairs=0)
    assert not stats.passed
    assert [(a.outcome, a.detail) for a in stats.attempts] == [(mutants.SURVIVED, "add in calc.py")]
    assert stats.stages[f"validate: {mutants.SURVIVED}"] == 1 and stats.stages["commit: task blocked"] == 1
    assert (repo / "calc.py").read_text() == CALC and not (repo / "test_add.py").exists()  # the copy was broken, not this


async def test_a_test_of_the_type_alone_is_refused(tmp_path: Path) -> None:
    """The value mutant keeps the type (add returns 6 for 5): a test of the type alone passes it."""
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(TYPE_ONLY), files=FILES, goal=GOAL,
                                                           attempts=1, repairs=0)
    assert not stats.passed and stats.attempts[0].outcome == mutants.SURVIVED


async def test_a_test_of_the_value_is_accepted(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(STRONG), files=FILES, goal=GOAL,
                                                           attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    assert stats.stages["validate: mutant killed"] == 1 and stats.stages["commit: committed, to review"] == 1
    assert (repo / "calc.py").read_text() == CALC


async def test_ablated_a_test_that_never_calls_the_function_is_accepted(tmp_path: Path) -> None:
    assert pipeline.parse_ablate(["mutant"]) == ("mutant",)  # the name --ablate takes
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(CALLABLE), files=FILES, goal=GOAL,
                                                           attempts=1, repairs=0, ablate=("continue", "mutant"))
    assert stats.passed, stats.attempts
    assert not any(key.startswith("validate: mutant") for key in stats.stages)


async def test_a_weak_test_goes_back_once_and_the_strong_one_ends_the_task_done(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(CALLABLE, STRONG), files=FILES,
                                                           goal=GOAL, attempts=1, repairs=1)
    assert stats.passed and stats.attempts[0].repairs == 1, stats.attempts
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert len(asked) == 2 and "also pass when add returns wrong values" in asked[1]
    assert "the tests never call it" in asked[1] and "call add and assert the exact values" in asked[1]
    assert stats.stages[f"validate: {mutants.SURVIVED}"] == 1 and stats.stages["repair: repair asked"] == 1
    assert stats.stages["validate: mutant killed"] == 1 and stats.stages["commit: committed, to review"] == 1
    assert "calc.add(2, 3) == 5" in (repo / "test_add.py").read_text()
    traces = [json.loads(line) for f in (tmp_path / "home" / "local" / "traces" / "guided").glob("*.jsonl")
              for line in f.read_text().splitlines()]
    probes = [t["mutants"] for t in traces if t["step"] == "mutant probe"]
    assert probes == [[["calc.py:add", "value", "survived"], ["calc.py:add", "raise", "survived"]],
                      [["calc.py:add", "value", "killed"]]]


async def test_a_test_that_reaches_the_code_only_through_a_subprocess_cannot_be_told_and_passes(tmp_path: Path) -> None:
    """No function of the repository is imported: nothing to break, the check says it cannot tell."""
    through = ("```python\n# file: test_add.py\nimport subprocess\nimport sys\n\n\ndef test_add_sums():\n"
               "    out = subprocess.run([sys.executable, '-c', 'import calc; print(calc.add(2, 3))'],\n"
               "                         capture_output=True, text=True, check=True).stdout\n"
               "    assert out.strip() == '5'\n```")
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(through), files=FILES, goal=GOAL,
                                                           attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    assert stats.stages["validate: mutants: cannot tell"] == 1 and stats.stages["validate: mutant killed"] == 0
    traces = [json.loads(line) for f in (tmp_path / "home" / "local" / "traces" / "guided").glob("*.jsonl")
              for line in f.read_text().splitlines()]
    assert [t["why"] for t in traces if t["step"] == "mutant probe"] == [
        "the new tests call no function of the repository that has a mutant"]


KINDS_OF_VALUE = {  # a function with nothing to break but its return, and a test of the exact value it returns
    "Path": ("import pathlib\n\n\ndef where(name):\n    return pathlib.Path('data') / name\n",
             "import pathlib\n\nfrom calc import where\n\n\ndef test_where():\n"
             "    assert where('x') == pathlib.Path('data/x')\n"),
    "Decimal": ("from decimal import Decimal\n\n\ndef where(name):\n    return Decimal(name)\n",
                "from decimal import Decimal\n\nfrom calc import where\n\n\ndef test_where():\n"
                "    assert where('1.5') == Decimal('1.5')\n"),
    "date": ("import datetime\n\n\ndef where(name):\n    return datetime.date.fromisoformat(name)\n",
             "import datetime\n\nfrom calc import where\n\n\ndef test_where():\n"
             "    assert where('2020-01-02') == datetime.date(2020, 1, 2)\n"),
    "Enum": ("import enum\n\n\nclass Kind(enum.Enum):\n    A = 'a'\n    B = 'b'\n\n\ndef where(name):\n"
             "    return Kind(name)\n",
             "from calc import Kind, where\n\n\ndef test_where():\n    assert where('a') is Kind.A\n"),
    "dataclass": ("import dataclasses\n\n\n@dataclasses.dataclass\nclass At:\n    name: str\n\n\ndef where(name):\n"
                  "    return At(name.strip())\n",
                  "from calc import At, where\n\n\ndef test_where():\n    assert where(' x ') == At('x')\n"),
    "inf": ("def where(name):\n    return float(name)\n",
            "import math\n\nfrom calc import where\n\n\ndef test_where():\n    assert where('inf') == math.inf\n"),
    "object": ("class Box:\n    def __eq__(self, other):\n        return isinstance(other, Box)\n\n\n"
               "def where(name):\n    return Box()\n",
               "from calc import Box, where\n\n\ndef test_where():\n    assert where('x') == Box()\n"),
}


@pytest.mark.parametrize("kind", sorted(KINDS_OF_VALUE))
async def test_a_test_of_the_exact_value_of_any_type_is_not_refused(tmp_path: Path, kind: str) -> None:
    """The value mutant of a return whose type it cannot change (a Path, a Decimal, a date, an
    enum member, a dataclass, an object) must not count as a broken version that survived: that
    refused a test of the exact value, and no answer could pass."""
    code, test = KINDS_OF_VALUE[kind]
    answer = f"```python\n# file: test_add.py\n{test}```"
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(answer), files={"calc.py": code, "test_calc.py": "def test_nothing():\n    assert True\n"},
        goal="Nothing tests where in calc.py yet. Please put a test in test_add.py.", attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    assert stats.stages[f"validate: {mutants.SURVIVED}"] == 0


@pytest.mark.parametrize("layout", ["a package named env", "an absolute symlink"])
async def test_a_mutant_is_never_written_into_the_worktree(tmp_path: Path, layout: str) -> None:
    """The copy linked a top-level ``env`` folder (a package here, not an environment) to the
    worktree's, and wrote through a symlink to an absolute path: the worktree's own code was
    broken while the mutant ran (and stayed broken had the run been cut)."""
    repo, seen = tmp_path / "wt", tmp_path / "seen.txt"
    if layout == "a package named env":
        files, module, original = {"env/__init__.py": "", "env/calc.py": CALC}, "env.calc", repo / "env" / "calc.py"
    else:
        repo.mkdir()
        (repo / "calc.py").symlink_to(repo / "impl.py")
        files, module, original = {"impl.py": CALC}, "calc", repo / "impl.py"
    answer = (f"```python\n# file: test_add.py\nimport pathlib\n\nimport {module} as calc\n\n\n"
              f"def test_add_sums():\n    with open({str(seen)!r}, 'a') as out:\n"
              f"        out.write(pathlib.Path({str(original)!r}).read_text())\n    assert calc.add(2, 3) == 5\n```")
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(answer), files={**files, "test_calc.py": "def test_nothing():\n    assert True\n"},
        goal="Nothing tests add yet. Please put a test in test_add.py.", attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    assert seen.read_text().count("def add") >= 2  # the test ran at least twice: as it is, and on a mutant
    assert "_foreman_other" not in seen.read_text() and original.read_text() == CALC


@pytest.mark.parametrize("special", ["a named pipe", "a socket"])
async def test_a_file_that_cannot_be_copied_does_not_end_the_turn(tmp_path: Path, special: str) -> None:
    """A named pipe or a socket in the worktree (a tool's, untracked) made the copy raise
    shutil.Error out of the turn: such a file is no code, the copy leaves it out."""
    where = tmp_path / "wt" / "run"
    where.mkdir(parents=True)
    listening = socket.socket(socket.AF_UNIX)
    try:
        if special == "a named pipe":
            os.mkfifo(where / "pipe")
        else:
            listening.bind(str(where / "sock"))
        result, tools, server, stats, repo = await guided_turn(tmp_path, replies(STRONG), files=FILES, goal=GOAL,
                                                               attempts=1, repairs=0)
    finally:
        listening.close()
    assert stats.passed, stats.attempts
    assert stats.stages["validate: mutant killed"] == 1


async def test_a_weak_test_of_a_function_a_package_re_exports_is_refused(tmp_path: Path) -> None:
    files = {"shop/__init__.py": "from .calc import *\n", "shop/calc.py": CALC,
             "test_calc.py": "def test_nothing():\n    assert True\n"}
    weak = "```python\n# file: test_add.py\nfrom shop import add\n\n\ndef test_add_exists():\n    assert callable(add)\n```"
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(weak), files=files, goal=GOAL,
                                                           attempts=1, repairs=0)
    assert [(a.outcome, a.detail) for a in stats.attempts] == [(mutants.SURVIVED, "add in shop/calc.py")]


async def test_the_test_suite_s_own_helpers_are_not_broken(tmp_path: Path) -> None:
    """A helper module of the tests (tests/helpers.py) is no code under test: breaking it killed
    a test that checked nothing of ``add`` (its value mutant made the helper's list one short)."""
    files = {"calc.py": CALC, "tests/__init__.py": "", "tests/helpers.py": "def operands():\n    return [2, 3]\n",
             "tests/test_calc.py": "def test_nothing():\n    assert True\n"}
    weak = ("```python\n# file: tests/test_add.py\nimport calc\nfrom tests.helpers import operands\n\n\n"
            "def test_add_gives_a_number():\n    a, b = operands()\n    assert isinstance(calc.add(a, b), int)\n```")
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(weak), files=files, goal="Nothing tests calc.py yet. Please put a test in tests/test_add.py.",
        attempts=1, repairs=0)
    assert [(a.outcome, a.detail) for a in stats.attempts] == [(mutants.SURVIVED, "add in calc.py")]


async def test_a_task_that_asks_for_tests_alone_is_asked_for_the_test_first(tmp_path: Path) -> None:
    """Asked first for "the new or changed code" with calc.py as the example path, a model sends
    calc.py back unchanged and the attempt's first answer changes nothing; the test ask comes first."""
    goal = "Please add a test to test_calc.py that checks the sum of two numbers. Do not change calc.py."
    strong = STRONG.replace("# file: test_add.py", "# file: test_calc.py")
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(strong), files=FILES, goal=goal,
                                                           attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert len(asked) == 1 and asked[0].startswith("Task:") and "Now write pytest test functions" in asked[0]
    assert "new or changed code" not in asked[0]
    assert stats.stages["propose: tests"] == 1 and "propose: edit" not in stats.stages


async def test_a_task_that_changes_code_and_asks_for_a_test_is_asked_for_the_code_first(tmp_path: Path) -> None:
    code = "```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n```"
    test = "```python\n# file: test_add.py\nimport calc\n\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n```"
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(code, test), files=FILES, goal="Add sub(a, b) to calc.py and a test of it in test_add.py.",
        attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert "new or changed code" in asked[0] and "Now write pytest test functions" in asked[1]


SUB = "```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n```"
SUB_TESTS = ("```python\n# file: test_add.py\nimport calc\n\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n\n\n"
             "def test_sub_rounded():\n    assert calc.sub(5.5, 3, places=0) == 2\n```")


async def test_a_new_test_calling_the_code_with_an_argument_the_task_never_names_is_dropped(tmp_path: Path) -> None:
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(SUB, SUB_TESTS), files=FILES, goal="Add sub(a, b) to calc.py and a test of it in test_add.py.",
        attempts=1, repairs=0)
    assert stats.passed, stats.attempts
    assert stats.stages["check: unasked tests dropped"] == 1
    test = (repo / "test_add.py").read_text()
    assert "def test_sub():" in test and "test_sub_rounded" not in test
    assert any("dropped test_sub_rounded (calls the code with an argument the task never names)" in a
               for a in stats.attempts[0].actions)


async def test_a_new_test_calling_with_an_argument_the_task_names_blames_the_code(tmp_path: Path) -> None:
    """The task asks for places=: a test using it that the code fails is the change's to pass."""
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(SUB, SUB_TESTS), files=FILES, attempts=1, repairs=0,
        goal="Add sub(a, b, places=None) to calc.py, rounding to places when given, and a test of it in test_add.py.")
    assert not stats.passed
    assert "check: unasked tests dropped" not in stats.stages
    assert stats.attempts[0].outcome == "checks failed", stats.attempts


async def test_new_tests_that_all_call_with_unasked_arguments_go_back_as_broken(tmp_path: Path) -> None:
    only = SUB_TESTS.replace("def test_sub():\n    assert calc.sub(5, 3) == 2\n\n\n", "")
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(SUB, only), files=FILES, goal="Add sub(a, b) to calc.py and a test of it in test_add.py.",
        attempts=1, repairs=0)
    assert not stats.passed
    assert stats.attempts[0].outcome == "test broken" and "unexpected keyword argument 'places'" in stats.attempts[0].detail


def test_the_functions_a_task_names_are_those_written_as_code() -> None:
    defined = ["save_csv", "load_csv", "Inventory.add", "Inventory.__init__", "title_case", "total", "list"]
    goal = ("Please add a test that an inventory saved with save_csv and read back with load_csv has the same items; "
            "add it to the list in `total`, and check title_case() too. Don't touch other_thing.")
    assert uncalled_mod.named_functions(goal, defined) == ["save_csv", "load_csv", "total", "title_case"]
    assert uncalled_mod.named_functions("add a test of the list", defined) == []  # prose words are not code
    test = "from inv import load_csv\n\n\ndef test_load(tmp_path):\n    assert load_csv(tmp_path) == []\n"
    assert uncalled_mod.uncalled(test, ["test_load"], goal, defined) == ["save_csv", "total", "title_case"]
    assert uncalled_mod.uncalled("def (", ["test_load"], goal, defined) == []


async def test_a_test_of_a_round_trip_that_never_calls_one_of_its_functions_goes_back(tmp_path: Path) -> None:
    """A test reading with one named function kills a mutant of it, yet checks nothing of the other."""
    files = {"calc.py": CALC + "\n\ndef double(a):\n    return add(a, a)\n", "test_calc.py": FILES["test_calc.py"]}
    goal = ("Please add a test to test_calc.py showing that double(x) gives the same as add(x, x). The code itself "
            "should not change.")
    only_add = "```python\n# file: test_calc.py\nimport calc\n\n\ndef test_add_sums():\n    assert calc.add(2, 3) == 5\n```"
    both = ("```python\n# file: test_calc.py\nimport calc\n\n\ndef test_double():\n"
            "    assert calc.double(3) == calc.add(3, 3) == 6\n```")
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(only_add, both), files=files, goal=goal,
                                                           attempts=1, repairs=1)
    assert stats.passed, stats.attempts
    asked = [last_user(r) for r in server.requests if r.get("stream")]
    assert "never call double, which the task names" in asked[1]
    assert stats.stages[f"validate: {mutants.UNCALLED}"] == 1 and stats.stages["validate: mutant killed"] == 1


async def test_a_repair_after_a_test_ask_goes_on_from_the_models_own_answer(tmp_path: Path) -> None:
    """Seeded with a made-up "Understood." turn after the tests, a small model answered the next
    ask "Understood."; roles alternate (some chat templates refuse two user turns in a row)."""
    goal = "Please add a test to test_calc.py that checks the sum of two numbers. Do not change calc.py."
    weak = CALLABLE.replace("# file: test_add.py", "# file: test_calc.py")
    strong = STRONG.replace("# file: test_add.py", "# file: test_calc.py")
    result, tools, server, stats, repo = await guided_turn(tmp_path, replies(weak, strong), files=FILES, goal=goal,
                                                           attempts=1, repairs=1)
    assert stats.passed, stats.attempts
    for request in [r for r in server.requests if r.get("stream")]:
        roles = [m["role"] for m in request["messages"]]
        assert roles[0] == "system" and all(a != b for a, b in zip(roles[1:], roles[2:])), roles
        assert all(m["content"] != "Understood." for m in request["messages"])
    repair = [r for r in server.requests if r.get("stream")][1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[1]["content"].startswith("Task:") and repair[2]["content"] == weak


async def test_a_repair_after_code_and_tests_keeps_the_conversation_alternating(tmp_path: Path) -> None:
    code = "```python\n# file: calc.py\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return b - a\n```"
    test = "```python\n# file: test_add.py\nimport calc\n\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n```"
    fixed = code.replace("return b - a", "return a - b")
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(code, test, fixed), files=FILES, goal="Add sub(a, b) to calc.py and a test of it in test_add.py.",
        attempts=1, repairs=1)
    assert stats.passed, stats.attempts
    repair = [r for r in server.requests if r.get("stream")][2]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert repair[3]["content"].startswith("Now write pytest test functions") and repair[4]["content"] == test


async def test_a_new_test_file_named_like_an_existing_test_module_goes_into_that_module(tmp_path: Path) -> None:
    """tests/test_calc.py beside a root test_calc.py (no packages): pytest imports both as test_calc
    and stops the whole run at collection ("import file mismatch"), a summary that never says why."""
    test = "```python\n# file: tests/test_calc.py\nimport calc\n\n\ndef test_sub():\n    assert calc.sub(5, 3) == 2\n```"
    result, tools, server, stats, repo = await guided_turn(
        tmp_path, replies(SUB, test), files=FILES, goal="Add sub(a, b) to calc.py and a test of it.", attempts=1,
        repairs=0)
    assert stats.passed, stats.attempts
    assert "def test_sub():" in (repo / "test_calc.py").read_text() and not (repo / "tests").exists()


def test_a_new_test_file_in_a_package_keeps_its_path() -> None:
    from foreman.backends.local.answers import Block, plan_answer  # (this test's alone)
    files = {"calc.py": CALC, "test_calc.py": "", "tests/__init__.py": ""}
    planned = plan_answer([Block("tests/test_calc.py", code="def test_x():\n    assert True\n")], read=files.get,
                          known=list(files), default="calc.py", test_file=None)
    assert "tests/test_calc.py" in planned.texts and planned.texts.get("test_calc.py") is None
