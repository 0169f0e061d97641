"""Guided mode's pure parts: localization, answer blocks, failure summaries, profile keys."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local.answers import blocks_of, blocks_of_json, plan_answer
from foreman.backends.local.guided_text import (absent_definitions, asked_classes, goal_text, stable, stated_def_lines,
                                                 summarize_failure)
from foreman.backends.local.localize import localize, module_name
from foreman.backends.local.profiles import parse_profile
from foreman.errors import ConfigError


def _repo(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/fmt.py": "import os\n\n\ndef format_age(x):\n    return x\n\n\nclass Shelf:\n    pass\n",
        "pkg/other.py": "LIMIT = 3\n\n\ndef helper():\n    return LIMIT\n",
        "tests/test_fmt.py": "from pkg.fmt import format_age\n\n\ndef test_a():\n    assert format_age(1) == 1\n",
        ".gitignore": "secret/\n",
        "secret/hidden.py": "def hidden():\n    pass\n",
    }
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def test_localize_finds_named_paths_and_symbols_with_line_numbers(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    found = localize(root, "Fix format_age in fmt.py; add a test.")
    assert found.files == ["pkg/fmt.py"] and found.target == "pkg/fmt.py"
    assert ("format_age", "pkg/fmt.py", 4) in found.symbols
    assert "pkg/fmt.py:\n1| import os\n" in found.context and "\n4| def format_age(x):\n" in found.context
    assert found.wants_test and found.test_file == "tests/test_fmt.py"
    named = localize(root, "Make helper() return LIMIT + 1; check it in tests/test_helper.py.")
    assert named.files == ["pkg/other.py"] and named.test_file == "tests/test_helper.py"


def test_localize_shows_a_gitignore_aware_repo_map_when_nothing_is_named(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    found = localize(root, "Make the program faster.")
    assert found.files == [] and not found.wants_test
    assert "pkg/fmt.py: format_age, Shelf" in found.context and "pkg/other.py: LIMIT, helper" in found.context
    assert "secret" not in found.context


def test_localize_keeps_to_the_budget(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "pkg" / "fmt.py").write_text("import os\n" + "".join(f"X{i} = {i}\n" for i in range(400))
                                         + "\n\ndef format_age(x):\n    return x\n")
    found = localize(root, "Fix format_age in pkg/fmt.py.", budget=1500)
    assert len(found.context) <= 1500 and "def format_age(x):" in found.context and "(parts)" in found.context


def test_module_names() -> None:
    assert module_name("pkg/fmt.py") == "pkg.fmt" and module_name("src/a/__init__.py") == "a"


def test_blocks_take_the_file_from_a_comment_a_line_before_or_the_default() -> None:
    reply = ("Updated `pkg/fmt.py`:\n```python\ndef a():\n    pass\n```\n\n```python\n# file: tests/test_x.py\n"
             "def test_a():\n    assert a() is None\n```\n```\ndef b():\n    pass\n```")
    blocks = blocks_of(reply)
    assert [b.path for b in blocks] == ["pkg/fmt.py", "tests/test_x.py", None]
    assert blocks[1].code.startswith("def test_a")
    assert [b.path for b in blocks_of("def f():\n    return 1\n")] == [None]  # bare code
    assert blocks_of("I think you should change the function.") == []
    assert blocks_of_json('{"edits": [{"file": "a.py", "code": "x = 1"}]}')[0].path == "a.py"
    assert blocks_of_json("not json") == [] and blocks_of_json('{"edits": 3}') == []


def test_plan_answer_places_defs_tests_with_imports_and_counts_failures(tmp_path: Path) -> None:
    root = _repo(tmp_path)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    known = ["pkg/fmt.py", "pkg/other.py", "tests/test_fmt.py"]
    reply = ("```python\ndef shout(t):\n    return t.upper()\n```\n```python\ndef test_shout():\n"
             "    assert shout('a') == 'A'\n```\nfmt.py\n```\n<<<<<<< SEARCH\nnot in the file\n=======\nx\n"
             ">>>>>>> REPLACE\n```")
    planned = plan_answer(blocks_of(reply), read=read, known=known, default="pkg/fmt.py",
                          test_file="tests/test_shout.py")
    assert "def shout(t):" in planned.texts["pkg/fmt.py"]
    assert planned.texts["tests/test_shout.py"].startswith("from pkg.fmt import shout\n")
    assert len(planned.failures) == 1 and "does not match" in planned.failures[0]  # counted, never a guess
    bad = plan_answer(blocks_of("```python\ndef broken(:\n```"), read=read, known=known, default="pkg/fmt.py",
                      test_file=None)
    assert bad.texts == {} and "not valid Python" in bad.failures[0]


def test_summarize_failure_keeps_the_errors() -> None:
    out = "\n".join(["noise"] * 50 + ["    def test_a():", ">       assert f(1) == 2", "E       assert 1 == 2",
                                     "FAILED tests/test_a.py::test_a - assert 1 == 2", "1 failed, 3 passed in 0.1s"])
    summary = summarize_failure(out)
    assert "E       assert 1 == 2" in summary and "FAILED tests/test_a.py::test_a" in summary
    assert "noise" not in summary


def test_a_collection_error_without_e_lines_keeps_its_reason(tmp_path: Path) -> None:
    """Two test modules of one name in folders that are not packages: pytest stops at collection
    ("import file mismatch"), and its summary alone ("ERROR tests/test_n.py", "1 error") does
    not say why."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "test_n.py").write_text("def test_a():\n    assert True\n")
    (tmp_path / "tests" / "test_n.py").write_text("def test_b():\n    assert True\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "import file mismatch" in run.stdout
    summary = summarize_failure(run.stdout)
    assert "import file mismatch" in summary and "1 error" in summary
    assert summary.count("import file mismatch") == 1


def test_profile_modes_and_guided_keys() -> None:
    p = parse_profile("q", {"mode": "auto", "small": True, "attempts": 5, "repairs": 0, "constrained": "auto"})
    assert (p.mode, p.small, p.attempts, p.repairs, p.constrained) == ("auto", True, 5, 0, "auto")
    assert parse_profile("d", {}).mode == "agent"
    with pytest.raises(ConfigError, match="mode"):
        parse_profile("q", {"mode": "fast"})
    with pytest.raises(ConfigError, match="small"):
        parse_profile("q", {"small": "yes"})


def test_a_block_naming_no_file_goes_to_the_shown_file_that_defines_its_function(tmp_path: Path) -> None:
    root = _repo(tmp_path)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    planned = plan_answer(blocks_of("```python\ndef helper():\n    return LIMIT + 1\n```"), read=read,
                          known=["pkg/fmt.py", "pkg/other.py"], default="pkg/fmt.py", test_file=None,
                          owners={"helper": "pkg/other.py", "format_age": "pkg/fmt.py"})
    assert list(planned.texts) == ["pkg/other.py"] and "return LIMIT + 1" in planned.texts["pkg/other.py"]


def test_localize_names_existing_files_by_path_and_only_unique_bare_names(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "pkg/cli").mkdir()
    (root / "pkg/cli/fmt.py").write_text("def cli():\n    pass\n")
    found = localize(root, "Change pkg/other.py and pkg/cli/fmt.py, see other.py, fmt.py and pkg/missing.py; "
                           "format_age stays.")
    assert found.named == ["pkg/other.py", "pkg/cli/fmt.py"]  # fmt.py is two files: not named
    assert "pkg/fmt.py" in found.files  # still shown (by the bare name and the symbol)
    assert localize(root, "Rename helper in other.py.").named == ["pkg/other.py"]


def test_named_files_left_unchanged_and_the_marker(tmp_path: Path) -> None:
    from foreman.backends.local import named

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    original = {"a.py": b"x = 0\n", "b.py": b"y = 2\n"}  # a.py changed, b.py written back as it was
    assert named.untouched(tmp_path, ["a.py", "b.py", "c.py"], original) == ["b.py", "c.py"]
    assert named.declines("UNCHANGED") and named.declines("No change needed: UNCHANGED.")
    assert not named.declines("```python\n# UNCHANGED\nx = 1\n```") and not named.declines("unchanged")
    assert named.note([], "why") == "" and "b.py" in named.named_ask(["b.py"])


def test_a_placed_test_gets_the_helper_imports_the_repository_tests_use(tmp_path: Path) -> None:
    """The 1.5B model's asked test for task 5 (bench trace s8-q15-r1, attempt 3) called the
    repository's ``run_cli`` helper without the ``from helpers import run_cli`` the example test
    had, and failed on its own NameError. The nearest test file's import wins over a farther one."""
    root = _repo(tmp_path)
    extra = {"tests/helpers.py": "def run_cli(path, *args):\n    return 0, '', ''\n",
             "tests/test_cli.py": "import tempfile\nimport unittest\nfrom helpers import run_cli\n\n\n"
                                  "class CliTest(unittest.TestCase):\n    def test_cli(self):\n        run_cli('x')\n",
             "tests/deep/test_far.py": "from far_helpers import run_cli, other_helper\n\n\ndef test_far():\n"
                                       "    run_cli(other_helper)\n"}
    for rel, body in extra.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    known = ["pkg/fmt.py", "tests/deep/test_far.py", "tests/helpers.py", "tests/test_cli.py", "tests/test_fmt.py"]
    reply = ("```python\n# file: tests/test_fmt_asked.py\nimport unittest\n\n\nclass SearchTest(unittest.TestCase):\n"
             "    def test_cli(self):\n        with tempfile.TemporaryDirectory() as tmp:\n"
             "            path = Path(tmp) / 'notes.json'\n            code, out, _ = run_cli(path, 'search', 'bread')\n"
             "            self.assertEqual(format_age(code), 2)\n            other_helper(never_imported)\n```")
    planned = plan_answer(blocks_of(reply), read=read, known=known, default="pkg/fmt.py",
                          test_file="tests/test_fmt_asked.py")
    text = planned.texts["tests/test_fmt_asked.py"]
    head = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
    assert sorted(head) == sorted(["import unittest", "import tempfile", "from pathlib import Path",
                                   "from helpers import run_cli", "from pkg.fmt import format_age",
                                   "from far_helpers import other_helper"])
    assert "from far_helpers import run_cli" not in text  # the test beside it lends run_cli, not the farther one
    assert "never_imported" in text and "import never_imported" not in text  # what no test imports stays missing
    assert any("import" in a and "run_cli" in a for a in planned.actions)


def test_a_placed_test_loses_an_import_the_module_lacks_and_the_test_never_uses(tmp_path: Path) -> None:
    """The 1.5B model's word_count test imported a made-up ``format_word_count`` beside the name it
    used; the whole file then failed to collect, and the repair kept that import (bench
    s9-q15-r1, attempt 3). A missing name the test does use stays, so the failure names it."""
    root = _repo(tmp_path)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    reply = ("```python\n# file: tests/test_words.py\nimport unittest\n"
             "from pkg.fmt import format_word_count, format_age, Shelf as S, os, ghost\n\n\n"
             "class WordsTest(unittest.TestCase):\n    def test_age(self):\n"
             "        self.assertEqual(format_age(ghost), 1)\n```")
    planned = plan_answer(blocks_of(reply), read=read, known=["pkg/fmt.py", "tests/test_fmt.py"],
                          default="pkg/fmt.py", test_file="tests/test_words.py")
    text = planned.texts["tests/test_words.py"]
    assert "from pkg.fmt import format_age, Shelf as S, os, ghost\n" in text  # bound by fmt.py, or used
    assert "format_word_count" not in text
    assert any("dropped the import of format_word_count" in a for a in planned.actions)
    only = plan_answer(blocks_of(reply.replace("format_age, Shelf as S, os, ghost", "nothing_here")), read=read,
                       known=["pkg/fmt.py"], default="pkg/fmt.py", test_file="tests/test_words.py")
    assert "from pkg.fmt import" not in only.texts["tests/test_words.py"].replace("from pkg.fmt import format_age", "")


def test_a_test_of_a_function_the_task_adds_gets_its_import_and_is_kept(tmp_path: Path) -> None:
    """The asked test is written before the change: the 1.5B model's test_count_matches used the
    count_matches the task adds, and was dropped as using a name nothing defines, leaving only its
    copy of the example test (bench s9-q15-r1, task 5). Imported from the target, it fails there
    on that import, for the task, until the change adds it."""
    root = _repo(tmp_path)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    reply = ("```python\n# file: tests/test_fmt_asked.py\ndef test_old():\n    assert format_age(1) == 1\n\n\n"
             "def test_new():\n    assert count_words('a b') == 2\n```")
    kw = dict(read=read, known=["pkg/fmt.py", "tests/test_fmt.py"], default="pkg/fmt.py",
              test_file="tests/test_fmt_asked.py")
    planned = plan_answer(blocks_of(reply), adds=("count_words",), **kw)
    text = planned.texts["tests/test_fmt_asked.py"]
    assert "def test_new" in text and "from pkg.fmt import count_words, format_age" in text
    without = plan_answer(blocks_of(reply), **kw).texts["tests/test_fmt_asked.py"]
    assert "def test_new" not in without  # a name nothing defines and the task does not add: dropped


def test_a_cut_reply_ends_after_its_last_complete_definition() -> None:
    from foreman.backends.local.answers import complete_part

    cut = ("Here:\n```python\n# file: tests/test_x.py\nimport x\n\n\nclass T:\n    def setUp(self):\n"
           "        self.p = 1\n\n    def test_a(self):\n        assert self.p\n\n    @skip\n    def test_b(self):\n"
           "        assert run(")
    assert complete_part(cut) == ("Here:\n```python\n# file: tests/test_x.py\nimport x\n\n\nclass T:\n"
                                  "    def setUp(self):\n        self.p = 1\n\n    def test_a(self):\n"
                                  "        assert self.p\n```\n")
    assert complete_part("def test_a():\n    assert 1\n\ndef test_b():\n    assert (") == \
        "def test_a():\n    assert 1\n"  # bare code
    one = "```python\ndef test_a():\n    assert run("
    assert complete_part(one) == one  # nothing complete before the cut definition
    closed = "```python\ndef a():\n    pass\n\ndef b():\n    pass\n```\nAnd then I would"
    assert complete_part(closed) == closed  # the cut went through prose after a closed block


def test_a_cut_through_a_definitions_keyword_or_a_class_first_method_keeps_what_compiles() -> None:
    """Bench s13-q15-7, task 6: the repair sent notes.py whole, then its test, cut at ``    def``
    after setUp; the kept part ended in a class header with no body and could not be placed."""
    from foreman.backends.local.answers import complete_part

    code = "```python\n# file: pkg/notes.py\ndef run_list(args):\n    return 0\n\n# file: tests/test_n.py\nimport unittest\n\n"
    after_setup = code + "class CliTest(unittest.TestCase):\n    def setUp(self):\n        self.p = 1\n\n    def"
    assert complete_part(after_setup) == after_setup[:-len("\n\n    def")] + "\n```\n"  # setUp kept, 'def' dropped
    for partial in ("    de", "    class", "    async d"):  # the keyword itself cut
        assert complete_part(after_setup[:-len("    def")] + partial).endswith("        self.p = 1\n```\n")
    in_first = code + "class CliTest(unittest.TestCase):\n    def setUp(self):\n        self.p = ("
    kept = complete_part(in_first)
    assert kept == code.rstrip() + "\n```\n"  # the class header alone does not compile: dropped with it
    compile(kept.split("\n", 1)[1].rsplit("```", 1)[0], "kept", "exec")
    assert complete_part("def a():\n    pass\n\nrest = (") == "def a():\n    pass\n\nrest = (" \
        and complete_part("```js\nfunction a() {}\nclass B {\n  x() {\n  }\n}\nclass C {") == \
        "```js\nfunction a() {}\nclass B {\n  x() {\n  }\n}\n```\n"  # nothing compiles: the last start, as before
    # a body line cut to look like a keyword, or a def nested in a test, is no place to end: the test is half
    head = "```python\nfrom m import f\n\n\ndef test_ok():\n    assert f(1) == 1\n\n\ndef test_y():\n"
    for tail in ("    out = f(2)\n    a", "    out = f(2)\n    as", "    def helper():\n        return 1\n"
                 "    assert helper() == 2\n    assert ("):
        assert complete_part(head + tail) == "```python\nfrom m import f\n\n\ndef test_ok():\n    assert f(1) == 1\n```\n"
    alone = "```python\ndef test_y():\n    out = f(2)\n    as"
    assert complete_part(alone) == alone  # nothing complete before it


def test_only_the_asked_definitions_are_kept_with_the_imports() -> None:
    from foreman.backends.local.answers import only_definitions

    code = "import re\n\n\ndef format_age(x):\n    return 0\n\n\n@cache\ndef word_count(t):\n    return 1\n\n\nX = 1\n"
    assert only_definitions(code, ["word_count"]) == "import re\n\n\n@cache\ndef word_count(t):\n    return 1\n"
    assert only_definitions(code, ["shout"]) == ""
    assert only_definitions("def (", ["x"]) == "def ("


def test_new_tests_of_nothing_the_task_names_are_dropped_when_one_tests_it(tmp_path: Path) -> None:
    """Asked for tests of shout, the 0.5B model sent the example's FormattingTest again (test_date,
    test_age with made-up values) beside a test of shout; their failures failed the right code in
    every attempt (bench s9-q05-m1)."""
    from foreman.backends.local.guided_text import task_words

    root = _repo(tmp_path)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    goal = "Add a function shout(text) to pkg/fmt.py. Add a `--loud` option to the `show` command."
    words = frozenset(task_words(goal, [("format_age", "pkg/fmt.py", 4)]))
    assert words == {"shout", "format_age", "--loud", "show"}
    reply = ("```python\n# file: tests/test_shout.py\nimport unittest\nfrom pkg.fmt import shout, format_age\n\n\n"
             "class FormattingTest(unittest.TestCase):\n    def test_date(self):\n        self.assertEqual(len('x'), 2)\n\n"
             "    def test_shout(self):\n        self.assertEqual(shout('hi'), 'HI!')\n\n\n"
             "def test_cli():\n    assert str(['show', '--loud'])\n\n\ndef test_other():\n    assert 1 == 2\n```")
    kw = dict(read=read, known=["pkg/fmt.py", "tests/test_fmt.py"], default="pkg/fmt.py", test_file="tests/test_shout.py")
    planned = plan_answer(blocks_of(reply), task_words=words, **kw)
    text = planned.texts["tests/test_shout.py"]
    assert "def test_shout" in text and "def test_cli" in text  # a name, or a token of a string, of the task
    assert "def test_date" not in text and "def test_other" not in text
    assert sum("tests nothing the task names" in a for a in planned.actions) == 2
    alone = reply.split("    def test_shout")[0] + "```"  # no test of the task: nothing is dropped
    assert "def test_date" in plan_answer(blocks_of(alone), task_words=words, **kw).texts["tests/test_shout.py"]


def test_a_json_edit_holding_a_second_file_is_split_like_a_fenced_block() -> None:
    """The 1.5B model's constrained is_blank edit (bench s8-q15-c1, attempt 1) put its test file
    inside the same ``code`` string after a ``# file:`` line; all of it went to formatting.py."""
    code = ("def is_blank(text: str) -> bool:\n    return not text.strip()\n\n# file: pocket_notes/test_is_blank.py\n"
            "import unittest\nfrom pocket_notes.formatting import is_blank\n\nclass TestIsBlank(unittest.TestCase):\n"
            "    def test_is_blank_empty(self):\n        self.assertTrue(is_blank(''))\n")
    reply = json.dumps({"edits": [{"file": "pocket_notes/formatting.py", "code": code}]}, indent=2)
    blocks = blocks_of_json(reply)
    assert [b.path for b in blocks] == ["pocket_notes/formatting.py", "pocket_notes/test_is_blank.py"]
    assert blocks[0].code.strip() == "def is_blank(text: str) -> bool:\n    return not text.strip()"
    assert blocks[1].code.startswith("import unittest\n") and "# file:" not in blocks[1].code
    named = blocks_of_json(json.dumps({"edits": [{"file": "", "code": "# file: a/b.py\ndef f():\n    pass\n"}]}))
    assert [(b.path, b.code) for b in named] == [("a/b.py", "def f():\n    pass\n")]  # the first line names it
    both = blocks_of_json(json.dumps({"edits": [{"file": "x.py", "code": "# file: y.py\nX = 1\n"}]}))
    assert [(b.path, b.code) for b in both] == [("x.py", "X = 1\n")]  # the file field wins


def test_a_json_code_string_whose_literal_was_cut_by_a_line_break_is_rejoined() -> None:
    """The 1.5B model's constrained answers (bench s8-q15-c1, is_blank attempt 1 and 3 more) wrote
    ``'   \\n'`` in Python as a JSON ``\\n``: decoded, the literal spans two lines and the code does
    not parse. The line is joined to the next with the escape written out; code broken in
    another way is left as it was, to be refused by placement."""
    code = ("def is_blank(text: str) -> bool:\n    return not text.strip()\n\n# file: tests/test_is_blank.py\n"
            "def test_whitespace():\n    assert is_blank('   \n')\n    assert is_blank('\n\t\n')\n")
    blocks = blocks_of_json(json.dumps({"edits": [{"file": "pocket_notes/formatting.py", "code": code}]}))
    assert blocks[1].code == "def test_whitespace():\n    assert is_blank('   \\n')\n    assert is_blank('\\n\t\\n')\n"
    namespace: dict = {"is_blank": lambda t: not t.strip()}
    exec(blocks[1].code, namespace)
    namespace["test_whitespace"]()
    broken = "def f(:\n    x = 'a\n'\n"
    assert blocks_of_json(json.dumps({"edits": [{"file": "a.py", "code": broken}]}))[0].code == broken
    fenced = blocks_of("```python\n# file: a.py\nX = 'a\nb'\n```")  # a fence is the model's own text: left alone
    assert fenced[0].code == "X = 'a\nb'\n"


def test_an_unnamed_test_class_goes_to_the_test_file_without_its_broken_test(tmp_path: Path) -> None:
    """Bench s8-q05-n1, word_count: the 0.5B model's test reply named no file and held
    ``class FormattingTest(unittest.TestCase)``: it went to formatting.py (and was refused there),
    so the test file the task asks for was never written. Its ``test_date`` used the ``NOW`` of
    tests/test_formatting.py, a sure NameError: that function is dropped, test_word_count kept."""
    from foreman.backends.sim.demo_repo import create_demo_repo

    root = tmp_path / "repo"
    create_demo_repo(root)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    (root / "pocket_notes/formatting.py").write_text(read("pocket_notes/formatting.py")
                                                     + "\n\ndef word_count(text: str) -> int:\n"
                                                       "    return len(text.split())\n")
    reply = ("```python\nimport unittest\nfrom datetime import datetime, timedelta, timezone\n"
             "from pocket_notes.formatting import format_age, format_date, format_line\n"
             "from pocket_notes.notes import Note\n\n\nclass FormattingTest(unittest.TestCase):\n"
             "    def test_date(self):\n        self.assertEqual(format_date(NOW), \"2025-03-04\")\n\n"
             "    def test_word_count(self):\n        self.assertEqual(word_count('two words'), 2)\n```")
    known = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    planned = plan_answer(blocks_of(reply), read=read, known=known, default="pocket_notes/formatting.py",
                          test_file="tests/test_word_count.py")
    assert planned.failures == [] and list(planned.texts) == ["tests/test_word_count.py"]
    text = planned.texts["tests/test_word_count.py"]
    assert "def test_word_count" in text and "def test_date" not in text and "word_count" in text.split("class")[0]
    assert ("tests/test_word_count.py: dropped FormattingTest.test_date (uses NOW, which nothing defines)"
            in planned.actions)
    (root / "tests/test_word_count.py").write_text(text)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_word_count.py"],
                         cwd=root, capture_output=True, text=True)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout


def test_every_new_test_broken_is_left_for_the_checks_to_report(tmp_path: Path) -> None:
    root = _repo(tmp_path)

    def read(rel: str) -> str | None:
        return (root / rel).read_text() if (root / rel).is_file() else None

    reply = "```python\n# file: tests/test_new.py\ndef test_a():\n    assert format_age(NOW) == 1\n```"
    planned = plan_answer(blocks_of(reply), read=read, known=["pkg/fmt.py"], default="pkg/fmt.py",
                          test_file="tests/test_new.py")
    assert "def test_a" in planned.texts["tests/test_new.py"]  # nothing would be left: kept, the run says why
    assert not any("dropped" in a for a in planned.actions)


def test_a_json_code_string_holding_a_fence_is_read_inside_it() -> None:
    """The 1.5B model's constrained answers for task 6 (bench s8-q15-mc1, all 6) began the code
    string with ```python and a ``# file:`` line: 'not valid Python (line 1)' every time."""
    fenced = "```python\n# file: pkg/cmd.py\n\ndef run(args):\n    return 0\n```"
    blocks = blocks_of_json(json.dumps({"edits": [{"file": "pkg/cmd.py", "code": fenced}]}))
    assert [(b.path, b.code.strip()) for b in blocks] == [("pkg/cmd.py", "def run(args):\n    return 0")]
    cut = "```python\ndef run(args):\n    return 0\n"  # cut before the closing fence
    assert blocks_of_json(json.dumps({"edits": [{"file": "a.py", "code": cut}]}))[0].code.strip() == \
        "def run(args):\n    return 0"
    prose = "Here:\n```python\n# file: b.py\nX = 1\n```\nand\n```python\nY = 2\n```"
    got = blocks_of_json(json.dumps({"edits": [{"file": "a.py", "code": prose}]}))
    assert [(b.path, b.code.strip()) for b in got] == [("b.py", "X = 1"), ("a.py", "Y = 2")]


@pytest.mark.parametrize(("goal", "names", "lines"), [
    ("Add a function shout(text: str) -> str to pocket_notes/formatting.py that returns", ["shout"],
     ["def shout(text: str) -> str:"]),
    ("Add a function is_blank(text: str) -> bool.", ["is_blank"], ["def is_blank(text: str) -> bool:"]),
    ("Add pairs(items: list[tuple[int, str]]) -> dict[str, int] to x.py", ["pairs"],
     ["def pairs(items: list[tuple[int, str]]) -> dict[str, int]:"]),
    ("Add a function count_matches(notes, query) to search.py that returns", ["count_matches"],
     ["def count_matches(notes, query):"]),
    ("Add a function bad(x: ) -> str", ["bad"], []),  # not a def line: none is stated
    ("Add a function shout that shouts", ["shout"], []),  # no parameter list in the task
    ("Add a(x) and b(y: int) -> int.", ["a", "b"], ["def a(x):", "def b(y: int) -> int:"]),
    # found by review: the first mention was a call, the annotation held `|` or brackets, or async
    ("Make main() call shout(name). Add a function shout(text: str) -> str to x.py", ["shout"],
     ["def shout(text: str) -> str:"]),
    ("Make format_age(seconds=90) return '1m 30s': add format_age(seconds: int) -> str.", ["format_age"],
     ["def format_age(seconds: int) -> str:"]),
    ("Add a function find_note(title: str) -> Note | None to store.py", ["find_note"],
     ["def find_note(title: str) -> Note | None:"]),
    ("Add a function g(x) -> dict[str, list[int]] to y.py", ["g"], ["def g(x) -> dict[str, list[int]]:"]),
    ("Add async def fetch(url: str) -> bytes to net.py", ["fetch"], ["async def fetch(url: str) -> bytes:"]),
    ("Add a function count(x) -> int in utils.py", ["count"], ["def count(x) -> int:"]),  # not `int in utils.py`
])
def test_the_def_lines_a_task_states(goal: str, names: list[str], lines: list[str]) -> None:
    assert stated_def_lines(goal, names) == lines


def test_a_task_quoting_a_command_its_readme_shows_localizes_the_code_not_the_readme(tmp_path: Path) -> None:
    """The README's usage lines quote the same command as the task; the file to change, and the
    test file named after it, come from the code."""
    root = tmp_path / "cli"
    files = {"README.md": "# tool\n\n    python -m tool add 5 food --date 2026-01-03\n",
             "tool/__init__.py": "", "tool/cli.py": "def main(argv=None):\n    parser.add_argument('--date')\n",
             "tests/test_cli.py": "def test_add():\n    assert True\n"}
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    found = localize(root, "`--date` on `tool add` is ignored; fix it and add a test.")
    assert found.files[0] == "tool/cli.py" and found.target == "tool/cli.py", found.files
    assert found.test_file == "tests/test_cli.py"


def test_a_task_naming_no_code_shows_the_sources_that_share_its_words(tmp_path: Path) -> None:
    """Nothing the task says is a file, symbol or quoted text of the code: the sources whose path or
    names share its words are shown (most first, within the budget), not only a repository map."""
    root = tmp_path / "cli"
    files = {"ledger/__init__.py": "", "ledger/cli.py": "def build_parser():\n    pass\n\n\ndef main():\n    pass\n",
             "ledger/book.py": "def load(path):\n    pass\n\n\ndef total(entries, category=None):\n    pass\n",
             "other/util.py": "def helper():\n    pass\n", "tests/test_cli.py": "def test_main():\n    assert True\n"}
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    found = localize(root, "Add a `categories` command to ledger: it prints each category with its total.")
    assert found.files == ["ledger/book.py", "ledger/cli.py"], found.files
    assert "def total(entries, category=None):" in found.context
    assert localize(root, "Make the program faster.").files == []  # no word shared: the map, as before
    small = localize(root, "Add a `categories` command to ledger: it prints each category with its total.",
                     budget=120)
    assert small.files == ["ledger/cli.py"]  # what fits in half the budget (book.py does not)


def test_a_report_writing_out_the_value_it_wants_shows_the_code_holding_that_value_first(tmp_path: Path) -> None:
    """A bug report names no file and quotes no text, but writes the output it wants ("should read
    $1,234.56"); the function that makes it says the same in its docstring. Shown first were the
    files sharing the most words with the report, and the model changed one of those."""
    root = tmp_path / "shop"
    files = {"shop/__init__.py": "", "shop/pricing.py": "def discount_for(code, subtotal):\n    return 0\n",
             "shop/receipt.py": "from shop import money\n\n\ndef render(cart):\n    return money.format_money(1)\n",
             "shop/money.py": "def format_money(cents):\n    \"\"\"Cents as dollars: 123456 -> '$1,234.56'.\"\"\"\n"
                              "    return f'${cents // 100}.{cents % 100:02d}'\n",
             "shop/rates.py": "RATES = {'a': 0.08, 'b': 0.08, 'c': 0.08}\n",
             "shop/tax.py": "RATE = 0.08\n", "shop/more.py": "OTHER = 0.08\n",
             "tests/test_money.py": "def test_money():\n    assert '$1,234.56'\n"}
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    report = ("Receipts of large orders have no thousands separator: the total shows $1234.56 for a receipt "
              "order. It should read $1,234.56 (with tax at 0.08).")
    found = localize(root, report)
    assert found.files[0] == "shop/money.py", found.files
    # a value held by more than two files says nothing of where the change goes; tests never count
    assert not {"shop/rates.py", "shop/tax.py", "shop/more.py", "tests/test_money.py"} & set(found.files)


def test_the_classes_a_task_asks_to_add_come_with_their_class_line() -> None:
    goal = ("Removing too much should raise a new error `InsufficientStock` instead (define it in inventory/errors.py "
            "as a subclass of InventoryError). Unknown codes raise a new exception `UnknownCode`. Add a new `Money` "
            "class. The new error class `Late` is a subclass of `errors.Base`; `Item` stays as it is.")
    assert asked_classes(goal) == {"InsufficientStock": "class InsufficientStock(InventoryError):",
                                   "UnknownCode": "class UnknownCode(Exception):", "Money": "class Money:",
                                   "Late": "class Late(errors.Base):"}
    assert asked_classes("Raise ValueError for a negative size. Keep the class `Item`.") == {}  # none new
    assert absent_definitions(["Money", "shout"], ["class Money:\n    pass\n", "def shout(t):\n    pass\n"]) == []
    assert absent_definitions(["Money"], ["def make_money():\n    pass\n"]) == ["Money"]


def test_only_definitions_keeps_an_asked_class() -> None:
    from foreman.backends.local.answers import only_definitions  # (beside the other only_definitions test)
    code = "class Late(Exception):\n    pass\n\n\nclass Other:\n    pass\n"
    assert only_definitions(code, ["Late"]) == "class Late(Exception):\n    pass\n"


def test_a_block_copied_from_the_numbered_view_loses_its_numbers() -> None:
    from foreman.backends.local.answers import blocks_of, unnumbered  # (beside the other answers tests)
    reply = ("```python\n# file: shop/cart.py\n19|     def apply_code(self, code):\n20|         \"\"\"Use a code.\"\"\"\n"
             "21|         self.code = code.upper()\n\n 9|         return 1\n```")
    assert blocks_of(reply)[0].code == ("    def apply_code(self, code):\n        \"\"\"Use a code.\"\"\"\n"
                                        "        self.code = code.upper()\n\n        return 1\n")
    assert unnumbered("x = {1: 2}\n3| y") == "x = {1: 2}\n3| y"  # numbers on some lines only: left alone
    assert unnumbered("t = a |b\n") == "t = a |b\n"


def test_a_check_runs_output_reads_alike_on_every_run() -> None:
    """The worktree's absolute path and the run's duration are not told to the model: with seeded
    replies a repeated run must get the same asks (a duration differing in the repair ask made the
    same attempt's next reply differ)."""
    root = "/tmp/local-bench-5hq70k45/home/local/worktrees/repo/juniper-t1"
    output = (f"FAILED tests/test_money.py::test_split - ImportError: cannot import name 'split' from 'shop.money' "
              f"({root}/shop/money.py)\n{root}/shop/money.py:20: ValueError\n"
              "========================= 1 failed, 5 passed in 0.71s =========================\n"
              "1 failed, 5 passed, 2 warnings in 12.03s (0:00:12)\nRan 6 tests in 0.002s\nFAILED (failures=1)\n"
              "assert parse('in 3.5s') == 3.5")
    text = stable(output, root)
    assert text == ("FAILED tests/test_money.py::test_split - ImportError: cannot import name 'split' from 'shop.money' "
                    "(shop/money.py)\nshop/money.py:20: ValueError\n"
                    "========================= 1 failed, 5 passed =========================\n"
                    "1 failed, 5 passed, 2 warnings\nRan 6 tests\nFAILED (failures=1)\n"
                    "assert parse('in 3.5s') == 3.5")
    assert stable(output.replace("0.71s", "0.15s"), root) == text


def test_the_goal_is_the_tasks_own_text_without_where_the_worktree_starts() -> None:
    """The sentence on the worktree's start quotes the base's commit subject ("..., with tests"): read
    as the task's words it made a task that asks for no test ask for one (and skip the test-first
    step). The work prompt's other parts stay."""
    from foreman.backends.prompts import work_prompt
    from protocol import Task

    task = Task(id="t1", title="thousands", description="Amounts should read $1,234.56.")
    for base in ("Your worktree starts from main at ab9f3c6 (shop: cart and receipt, with tests).",
                 "Your branch agentcraft/kit/t1 left main at ab9f3c6; main has moved on by 1 commit since (now "
                 "1b2c3d4 (add tests)): add tests. Merge main into your branch when your work depends on them."):
        prompt = work_prompt(task, takeover_from="ann", answered=[], unread=[], base=base)
        goal = goal_text(prompt)
        assert goal == ("Your task t1: thousands\n\nAmounts should read $1,234.56.\n\n"
                        "You take over t1 from ann: their work so far is committed on your branch.")
        assert "test" not in goal
