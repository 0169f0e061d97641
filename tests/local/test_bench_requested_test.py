"""bench/local_agent.py's success needs the test file a task asks for: s8-q05-r1 counted three
passes whose function was right and whose requested test file did not exist."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "local_agent.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_local_agent", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_local_agent", module)
    spec.loader.exec_module(module)
    return module


def test_a_task_naming_a_test_file_needs_it_with_a_test_function(tmp_path: Path) -> None:
    bench = _bench()
    shout = next(t for t in bench.TASKS if t.title == "Add shout")
    assert bench.requested_test(shout.description, tmp_path) is False  # no file
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shout.py").write_text("from pocket_notes.formatting import shout\n")
    assert bench.requested_test(shout.description, tmp_path) is False  # no test in it
    (tmp_path / "tests" / "test_shout.py").write_text("class T:\n    def test_hi(self):\n        assert 1\n")
    assert bench.requested_test(shout.description, tmp_path) is True
    count = next(t for t in bench.TASKS if t.title == "Count search matches")
    assert bench.requested_test(count.description, tmp_path) is None  # asks for no test
