from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import psutil
import pytest

from foreman.repos.ci import detect_ci_command, run_ci
from foreman.repos.gitsafety import safety_env

from .conftest import sh, write

pytestmark = pytest.mark.timeout(60)

PY = os.path.basename(detect_ci_command.__globals__["_python"]())


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize(("files", "expected"), [
    ({"package.json": json.dumps({"scripts": {"test": "vitest run"}})}, ["npm", "test"]),
    ({"package.json": json.dumps({"scripts": {"test": "vitest"}}), "pnpm-lock.yaml": ""}, ["pnpm", "test"]),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""}, ["yarn", "test"]),
    ({"package.json": json.dumps({"scripts": {"test": "x"}, "packageManager": "bun@1.1.0"})}, ["bun", "run", "test"]),
    ({"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}}),
      "Makefile": "test:\n\ttrue\n"}, ["make", "test"]),
    ({"Cargo.toml": "[package]\nname='x'\n"}, ["cargo", "test"]),
    ({"go.mod": "module x\n"}, ["go", "test", "./..."]),
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts='-q'\n"}, [PY, "-m", "pytest"]),
    ({"tests/test_a.py": "import pytest\n"}, [PY, "-m", "pytest"]),
    ({"tests/__init__.py": "", "tests/test_a.py": "import unittest\n"}, [PY, "-m", "unittest", "discover"]),
    ({"tests/test_a.py": "from unittest import TestCase\n"}, [PY, "-m", "unittest", "discover", "-s", "tests"]),
    ({"Makefile": "build:\n\ttrue\ntest: build\n\ttrue\n"}, ["make", "test"]),
    ({"README.md": "nothing to run"}, None),
])
def test_detect(tmp_path: Path, files: dict[str, str], expected: list[str] | None) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)
    found = detect_ci_command(tmp_path)
    if isinstance(found, list) and found and found[0].endswith(("python", "python3")):
        found = [os.path.basename(found[0]), *found[1:]]
    assert found == expected


@pytest.mark.parametrize("package", [True, False])
async def test_the_detected_unittest_command_runs_the_tests(tmp_path: Path, package: bool) -> None:
    """The command found for a ``tests/`` folder of unittest files passes when they pass and
    fails when one fails, with or without ``tests/__init__.py`` (the sim's demo repository has none)."""
    write(tmp_path / "proj.py", "def two():\n    return 2\n")
    write(tmp_path / "tests/helpers.py", "EXPECTED = 2\n")
    write(tmp_path / "tests/test_two.py", "import unittest\nfrom helpers import EXPECTED\nimport proj\n\n\n"
          "class T(unittest.TestCase):\n    def test_two(self):\n        self.assertEqual(proj.two(), EXPECTED)\n")
    if package:
        write(tmp_path / "tests/__init__.py", "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")
    command = detect_ci_command(tmp_path)
    ok = await run_ci(command, cwd=tmp_path, env=dict(os.environ), timeout=60)
    assert ok.ok and "Ran 1 test" in ok.output, ok.output
    write(tmp_path / "proj.py", "def two():\n    return 3\n")
    bad = await run_ci(command, cwd=tmp_path, env=dict(os.environ), timeout=60)
    assert not bad.ok and "FAILED" in bad.output, bad.output


async def test_passing_and_failing_runs(tmp_path: Path) -> None:
    ok = await run_ci(["sh", "-c", "echo out; echo err >&2"], cwd=tmp_path, env=dict(os.environ), timeout=10)
    assert (ok.ok, ok.exit_code, ok.timed_out) == (True, 0, False) and ok.output == "out\nerr\n"
    bad = await run_ci("exit 3", cwd=tmp_path, env=dict(os.environ), timeout=10)
    assert (bad.ok, bad.exit_code) == (False, 3)
    missing = await run_ci(["no-such-program-xyz"], cwd=tmp_path, env=dict(os.environ), timeout=10)
    assert not missing.ok and missing.exit_code is None and "no-such-program-xyz" in missing.output


async def test_output_is_bounded_head_and_tail(tmp_path: Path) -> None:
    script = "print('HEAD'); print('x' * 1_000_000); print('TAIL')"
    res = await run_ci([sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ), timeout=20,
                       max_output_bytes=10_000)
    assert res.ok and res.output.startswith("HEAD\n") and res.output.endswith("TAIL\n")
    assert "bytes of output cut" in res.output and len(res.output) < 10_100


async def test_timeout_kills_the_whole_tree(tmp_path: Path) -> None:
    script = (
        "trap '' TERM; "
        "sh -c \"trap '' TERM; sleep 1000 & echo \\$! > gc.pid; sleep 1000\" & "
        "echo $! > child.pid; echo started; sleep 1000"
    )
    res = await run_ci(script, cwd=tmp_path, env=dict(os.environ), timeout=0.5, kill_grace=0.3)
    assert res.timed_out and not res.ok and res.exit_code == -9
    assert "started" in res.output and res.duration < 5
    for name in ("child.pid", "gc.pid"):
        assert gone(int((tmp_path / name).read_text()))


async def test_processes_left_behind_are_killed(tmp_path: Path) -> None:
    res = await run_ci("sleep 1000 > /dev/null 2>&1 & echo $! > bg.pid", cwd=tmp_path, env=dict(os.environ), timeout=10)
    assert res.ok and gone(int((tmp_path / "bg.pid").read_text()))


async def test_ci_in_a_worktree_with_the_safety_env(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    sh(tmp_path, "init", "-q", "--bare", str(bare))
    write(repo / "tests" / "__init__.py", "")
    write(repo / "tests" / "test_app.py", (
        "import subprocess, unittest\n"
        "class T(unittest.TestCase):\n"
        "    def test_push_is_blocked(self):\n"
        f"        self.assertNotEqual(subprocess.call(['git', 'push', '{bare}', 'HEAD:refs/heads/x']), 0)\n"
    ))
    command = detect_ci_command(repo)
    assert command is not None and command[1:] == ["-m", "unittest", "discover"]
    res = await run_ci(command, cwd=repo, env=safety_env(os.environ, agent="kit", worktree=repo), timeout=30)
    assert res.ok, res.output
    assert "not allowed" in res.output and "OK" in res.output


async def test_background_process_holding_the_output_does_not_stall_the_run(tmp_path: Path) -> None:
    res = await run_ci("sleep 1000 & echo $! > bg.pid; echo done", cwd=tmp_path, env=dict(os.environ), timeout=20)
    assert res.ok and not res.timed_out and res.duration < 5 and "done" in res.output
    assert gone(int((tmp_path / "bg.pid").read_text()))


async def test_cancelling_a_run_kills_its_tree(tmp_path: Path) -> None:
    task = asyncio.ensure_future(run_ci("sleep 1000 & echo $! > bg.pid; sleep 1000", cwd=tmp_path,
                                        env=dict(os.environ), timeout=60, kill_grace=0.2))
    while not (tmp_path / "bg.pid").exists() or not (tmp_path / "bg.pid").read_text().strip():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(int((tmp_path / "bg.pid").read_text()))
