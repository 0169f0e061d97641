"""A file guided mode puts back or rewrites never runs as its stale bytecode (``named.forget_bytecode``).

CPython checks a ``.pyc`` against its source's mtime in whole seconds and its size, so a source
rewritten at the same size within the second its bytecode was written runs the old code: a review
(stop 15) saw the target probes of two files, each put back and restored within a second, run
each other's old code. Real files and a real interpreter; the same second is pinned by ``os.utime``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from foreman.backends.local import named


def _value(root: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode on, as a user's
    out = subprocess.run([sys.executable, "-c", "import m; print(m.X)"], cwd=root, env=env,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _same_second_rewrite(root: Path, data: bytes, write) -> None:
    stamp = (root / "m.py").stat().st_mtime_ns
    write(data)
    os.utime(root / "m.py", ns=(stamp, stamp))


def test_the_same_size_rewrite_in_the_same_second_runs_stale_bytecode_without_the_fix(tmp_path: Path) -> None:
    """The hazard is real on this interpreter: a plain rewrite runs the old code."""
    (tmp_path / "m.py").write_text("X = 1\n")
    assert _value(tmp_path) == "1" and list((tmp_path / "__pycache__").glob("m.*.pyc"))
    _same_second_rewrite(tmp_path, b"X = 2\n", (tmp_path / "m.py").write_bytes)
    assert _value(tmp_path) == "1"  # stale


def test_a_file_put_back_runs_as_it_is_now(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("X = 1\n")
    assert _value(tmp_path) == "1"
    _same_second_rewrite(tmp_path, b"X = 2\n", lambda data: named.put_back(tmp_path, {"m.py": data}, {}))
    assert _value(tmp_path) == "2"


def test_forget_bytecode_leaves_other_files_bytecode(tmp_path: Path) -> None:
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    for name in ("m.cpython-311.pyc", "m.cpython-311-pytest-8.3.2.pyc", "mm.cpython-311.pyc"):
        (cache / name).write_bytes(b"")
    named.forget_bytecode(tmp_path, "m.py")
    assert sorted(p.name for p in cache.iterdir()) == ["mm.cpython-311.pyc"]
