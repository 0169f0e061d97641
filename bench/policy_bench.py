"""Benchmark the permission policy: commands classified per second and per-command latency.

Run: ``.venv/bin/python bench/policy_bench.py [--rounds N] [--baseline DIR]``. Classifies a mixed
corpus (the test table's commands: reads, dev commands, git, outside paths, nested shells,
pushes, and the disguised commands of issue 14) with the real ``os.path.realpath`` against a
worktree made in a temp dir, and prints commands/s and the p50/p99 latency per command, for
the whole corpus and for the issue-14 part alone. Targets (docs/reference/performance.md):
>= 5,000/s, p99 <= 2 ms; the last line says whether the throughput target holds.

``--baseline DIR`` also classifies the same corpus with the policy of another checkout (for
example ``/work/main`` before a change), in a subprocess, in the same run, so the two figures
are measured under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = 5_000  # commands per second


def measure(corpus: list[str], rounds: int) -> dict:
    """Classify ``corpus`` ``rounds`` times with the importable ``foreman.policy``.

    Returns:
        ``{"n", "per_s", "per_cpu_s", "p50_ms", "p99_ms", "max_ms", "mean_ms"}``: ``per_s`` by
        the wall clock, ``per_cpu_s`` by this process's CPU time (steadier on a loaded machine).
    """
    from foreman.policy import classify_command

    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, "wt")
        os.makedirs(os.path.join(wt, "src"))
        for cmd in corpus[:50]:  # warm-up: parser, handler tables
            classify_command(cmd, worktree=wt)
        lat = []
        cpu0 = time.process_time()
        start = time.perf_counter()
        for _ in range(rounds):
            for cmd in corpus:
                t0 = time.perf_counter()
                classify_command(cmd, worktree=wt)
                lat.append(time.perf_counter() - t0)
        total = time.perf_counter() - start
        cpu = time.process_time() - cpu0
    lat.sort()
    n = len(lat)
    return {"n": n, "per_s": n / total, "per_cpu_s": n / cpu, "p50_ms": lat[n // 2] * 1e3, "p99_ms": lat[int(n * 0.99)] * 1e3,
            "max_ms": lat[-1] * 1e3, "mean_ms": statistics.fmean(lat) * 1e3}


def _line(label: str, r: dict) -> str:
    return (f"{label}: {r['per_s']:,.0f} commands/s ({r['per_cpu_s']:,.0f} per CPU second)  p50 {r['p50_ms']:.3f} ms  p99 {r['p99_ms']:.3f} ms  "
            f"max {r['max_ms']:.3f} ms  mean {r['mean_ms']:.3f} ms  ({r['n']} classifications)")


def _baseline(root: str, corpus: list[str], rounds: int) -> dict:
    """Measure ``corpus`` with the policy of the checkout at ``root`` (a subprocess)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(corpus, f)
    try:
        out = subprocess.run([sys.executable, __file__, "--measure-only", f.name, "--rounds", str(rounds)],
                             cwd=root, env={**os.environ, "PYTHONPATH": root}, capture_output=True, text=True,
                             check=True).stdout
    finally:
        os.unlink(f.name)
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--baseline", help="another checkout whose policy classifies the same corpus")
    parser.add_argument("--measure-only", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_only:
        # Child of --baseline: the checkout to measure is on PYTHONPATH, the corpus in a file.
        with open(args.measure_only) as f:
            print(json.dumps(measure(json.load(f), args.rounds)))
        return 0
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from tests.policy.cases import CASES, LEAD_CASES
    from tests.policy.cases_containment import CONTAINMENT_CASES

    corpus = [c[0] for c in CASES] + [c[0] for c in LEAD_CASES]
    disguised = [c[0] for c in CONTAINMENT_CASES]
    print(f"corpus: {len(corpus)} commands ({len(disguised)} of them the issue-14 kinds) x {args.rounds} rounds")
    whole = measure(corpus, args.rounds)
    print(_line("all commands", whole))
    print(_line("issue-14 kinds", measure(disguised, args.rounds)))
    if args.baseline:
        print(_line(f"baseline {args.baseline}, same corpus", _baseline(args.baseline, corpus, args.rounds)))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    ok = whole["per_s"] >= TARGET
    print(f"target >= {TARGET:,} commands/s: {'met' if ok else 'NOT met'} by the wall clock "
          f"({whole['per_s']:,.0f}/s, load average {load:.1f} on {os.cpu_count()} CPUs); "
          f"{'met' if whole['per_cpu_s'] >= TARGET else 'NOT met'} per CPU second ({whole['per_cpu_s']:,.0f}/s)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
