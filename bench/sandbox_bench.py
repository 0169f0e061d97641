#!/usr/bin/env python3
"""Issue 14 (containment) benchmark: what the OS sandbox costs per command, in one run.

Measures, alternating sandboxed and unsandboxed runs so both see the same machine load:

* ``true`` directly vs ``true`` inside the bubblewrap sandbox the Foreman uses (start-up overhead);
* the demo repository's test suite (``python -m unittest discover -s tests`` in a worktree of
  ``sandbox/create_demo.py``'s repository) directly vs inside the sandbox.

Each figure is the median of N runs (default 30 for ``true``, 10 for the suite) of wall-clock
time from spawn to exit (``time.perf_counter``), with the git safety environment either way.

    .venv/bin/python bench/sandbox_bench.py [--runs 30] [--suite-runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from foreman.backends.sim.demo_repo import create_demo_repo, demo_test_command  # noqa: E402
from foreman.repos.gitsafety import safety_env  # noqa: E402
from foreman.sandbox import Sandbox, availability  # noqa: E402


def _time(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{argv[-3:]} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return took


def _pair(name: str, argv: list[str], sandbox: Sandbox, cwd: Path, env: dict[str, str], runs: int) -> None:
    wrapped = sandbox.wrap(argv, worktree=cwd, env=env)
    _time(argv, cwd, env), _time(wrapped, cwd, env)  # warm the caches once each
    plain, boxed = [], []
    for _ in range(runs):
        plain.append(_time(argv, cwd, env))
        boxed.append(_time(wrapped, cwd, env))
    p, b = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
    print(f"{name:<22} n={runs:<3} unsandboxed median {p:8.1f} ms | sandboxed median {b:8.1f} ms | "
          f"overhead {b - p:+7.1f} ms ({b / p:.2f}x)")


def main(argv: list[str] | None = None) -> int:
    """Print the medians; return 0, or 1 when bubblewrap cannot run here (saying why)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of `true` each way")
    parser.add_argument("--suite-runs", type=int, default=10, help="runs of the demo suite each way")
    args = parser.parse_args(argv)
    found = availability()
    if not found.ok:
        print(f"no OS sandbox here: {found.detail}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-") as tmp:
        root = Path(tmp)
        demo = root / "demo"
        create_demo_repo(demo)
        wt = root / "fhome" / "p" / "worktrees" / "demo" / "kit-t1"
        subprocess.run(["git", "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(wt)], cwd=demo, check=True)
        env = {**safety_env(os.environ, agent="kit", worktree=wt), "PYTHONDONTWRITEBYTECODE": "1"}
        sandbox = Sandbox(found.bwrap, hide=(root / "fhome",))
        print(f"{found.detail}; Python {sys.version.split()[0]}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f}")
        _pair("true", ["true"], sandbox, wt, env, args.runs)
        _pair("demo suite (unittest)", demo_test_command(sys.executable), sandbox, wt, env, args.suite_runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
