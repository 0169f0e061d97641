"""The suite's guard of the user's home (``tests/conftest.py``): a run gets a ``HOME`` of its own,
and a run that writes into a home fails, naming what it wrote.

Each case runs a small pytest in a subprocess with this suite's conftest as its only plugin and
a made-up "real" home holding one file, so nothing here touches the home of the one running it.
Found by a newcomer (issue 38): a shell under tmux left its history in the user's home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_TEST = '''
import os
from pathlib import Path


def test_it():
    home = Path(os.environ["HOME"])
    real = Path(os.environ["THE_REAL_HOME"])
    assert home != real and list(home.iterdir()) == []  # a home of the run's own, empty
    {write}
'''


@pytest.mark.parametrize("write,written", [
    ("pass", None),
    ("(home / '.bash_history').write_text('x')", ".bash_history (the suite's HOME)"),
    ("(home / '.cache' / 'tool').mkdir(parents=True)", ".cache/tool (the suite's HOME)"),
    ("(real / '.python_history').write_text('x')", ".python_history (the real HOME)"),
    ("(real / '.agentcraft' / 'sim').mkdir()", ".agentcraft/sim (the real HOME)"),
], ids=["nothing", "home", "home-subfolder", "real-home", "real-agentcraft"])
def test_a_run_that_writes_into_a_home_fails_naming_the_file(tmp_path: Path, write: str, written: str | None) -> None:
    real = tmp_path / "real-home"
    (real / ".agentcraft").mkdir(parents=True)
    (real / ".profile").write_text("# the user's own\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "pytest.ini").write_text("[pytest]\n")
    (run / "test_writes.py").write_text(_TEST.format(write=write))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    (tmp_path / "tmp").mkdir()  # the run's own home is made there (and kept when written into)
    env.update(HOME=str(real), THE_REAL_HOME=str(real), PYTHONPATH=str(ROOT), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               TMPDIR=str(tmp_path / "tmp"))
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q",
                          "test_writes.py"], cwd=run, env=env, capture_output=True, text=True, timeout=120)
    assert "1 passed" in out.stdout, out.stdout + out.stderr
    if written is None:
        assert out.returncode == 0, out.stdout
        assert "wrote into a home" not in out.stdout
    else:
        assert out.returncode == 1, out.stdout
        assert "the test suite wrote into a home" in out.stdout
        lines = [line.strip() for line in out.stdout.splitlines() if line.strip().endswith("HOME)")]
        assert any(line.endswith(written) for line in lines), out.stdout
        if written.endswith("(the real HOME)"):
            assert lines == [str(real / written)]
    assert sorted(p.name for p in real.iterdir()) == sorted({".agentcraft", ".profile", *(
        [written.split("/")[0].split(" ")[0]] if written and "real" in written else [])})
    kept = list((tmp_path / "tmp").glob("foreman-tests-home-*"))
    assert len(kept) == (0 if written is None or "real" in written else 1)  # removed when nothing was written there
    assert not list(Path(os.environ["HOME"]).iterdir())  # this run's own home stays empty too
