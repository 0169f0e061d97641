"""Benchmark the permission policy: commands classified per second and per-command latency.

Run: ``.venv/bin/python bench/policy_bench.py [--rounds N]``. Classifies a mixed corpus (the
test table's commands: reads, dev commands, git, outside paths, nested shells, pushes) with the
real ``os.path.realpath`` against a worktree made in a temp dir, and prints commands/s and the
p50/p99 latency per command. Targets (docs/reference/performance.md): >= 5,000/s, p99 <= 2 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from foreman.policy import classify_command  # noqa: E402
from tests.policy.cases import CASES, LEAD_CASES  # noqa: E402


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    corpus = [c[0] for c in CASES] + [c[0] for c in LEAD_CASES]
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, "wt")
        os.makedirs(os.path.join(wt, "src"))
        for cmd in corpus[:50]:  # warm-up: parser, handler tables
            classify_command(cmd, worktree=wt)
        lat = []
        start = time.perf_counter()
        for _ in range(args.rounds):
            for cmd in corpus:
                t0 = time.perf_counter()
                classify_command(cmd, worktree=wt)
                lat.append(time.perf_counter() - t0)
        total = time.perf_counter() - start
    lat.sort()
    n = len(lat)
    print(f"corpus: {len(corpus)} commands x {args.rounds} rounds = {n} classifications")
    print(f"throughput: {n / total:,.0f} commands/s")
    print(f"latency: p50 {lat[n // 2] * 1e3:.3f} ms  p99 {lat[int(n * 0.99)] * 1e3:.3f} ms  "
          f"max {lat[-1] * 1e3:.3f} ms  mean {statistics.fmean(lat) * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
