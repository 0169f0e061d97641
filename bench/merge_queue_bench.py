#!/usr/bin/env python3
"""Issue 36 (the merge queue) benchmark: the time from approving a merge to its landing on the
demo repository, and how it grows with the queue's length.

An in-process daemon (the real flow, the package's scripted runner for the team, no model) on a
fresh copy of the demo repository (``pocket-notes``, whose CI is its own unittest suite, run on
every merge commit before the base moves). Each of N workers adds one file on its own task and
hands it in; once all N merge decisions are open they are approved at once, in task order. For
each task the time from the approval to ``done`` (landed on ``main``) is recorded; the last one
is the queue's whole drain. Times are ``time.monotonic`` wall seconds; each figure is the median
of ``--runs`` runs. The OS sandbox is used when this machine has one (as a user's daemon would).

``--train 1,2`` measures each length with each ``--merge-train`` (1: one merge test at a time; 2:
the second entry tested on top of the head at once, a merge train). ``--ci-sleep S`` makes the CI
command the demo suite followed by ``S`` seconds of sleep: a test run that waits (I/O, a service,
a browser) rather than computes, which is where a train's concurrent tests pay even on 2 busy
cores; without it the CI is the demo's own suite (detected), a fraction of a second of CPU.

    .venv/bin/python bench/merge_queue_bench.py [--lengths 1,2,4] [--runs 3] [--train 1,2] [--ci-sleep 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from foreman.backends.scripted import ScriptedRunner, done, write_and_commit  # noqa: E402
from foreman.backends.sim.demo_repo import create_demo_repo  # noqa: E402
from foreman.backends.turns import AgentTools, TurnRequest, TurnResult  # noqa: E402
from foreman.config import resolve  # noqa: E402
from foreman.daemon import Daemon  # noqa: E402
from foreman.flow.conductor import ALL_WORKERS, LEAD, Conductor  # noqa: E402


async def _work(req: TurnRequest, tools: AgentTools) -> TurnResult:
    await write_and_commit(req, f"notes/{req.task}.md", f"# {req.task}\n", f"{req.task}: a note")
    await tools.call("update_task", {"status": "review"})
    return done()


async def _wait(pred: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError("the bench's team did not get there")
        await asyncio.sleep(0.01)


def sleeping_ci(seconds: float) -> str:
    """The demo suite, then ``seconds`` of sleep (its exit status kept)."""
    return f"{sys.executable} -m unittest discover -s tests -q && sleep {seconds:g}"


async def one_run(length: int, tmp: Path, train: int = 1, ci_sleep: float | None = None) -> list[float]:
    """Approval-to-landing seconds of each of ``length`` merges approved at once (task order), with
    ``--merge-train train`` (and the sleeping CI of :func:`sleeping_ci` when ``ci_sleep`` is set)."""
    repo = tmp / "pocket-notes"
    create_demo_repo(repo)
    flags: dict[str, Any] = {"home": str(tmp / "home"), "port": 0, "backend": "sim", "workers": [str(length)],
                             "lead_review": False, "max_concurrent": length, "merge_train": train}
    if ci_sleep is not None:
        flags["ci"] = sleeping_ci(ci_sleep)
    settings = resolve(flags, env={})
    runner = ScriptedRunner(lambda req: _work)
    daemon = Daemon(settings, backend=Conductor(settings, {n: runner for n in (LEAD, *ALL_WORKERS)},
                                                backend_name="scripted"))
    await daemon.start()
    try:
        await daemon.add_repo(str(repo))
        world = daemon.core.world
        agents = [a.name for a in world.agents.values() if a.role == "worker" and a.active][:length]
        repo_id = next(iter(world.repos))
        tasks = [daemon.act(lambda c, now, a=a, n=n: c.create_task(f"Note {n}", now, repo=repo_id, assignee=a)).id
                 for n, a in enumerate(agents)]

        def decision(t: str) -> Any:
            return next((d for d in world.decisions.values() if d.task == t and d.kind == "merge"
                         and d.status == "open"), None)

        await _wait(lambda: all(decision(t) for t in tasks), 300)
        decisions = [decision(t).id for t in tasks]
        approved = time.monotonic()
        for d in decisions:
            daemon.act(lambda c, now, d=d: c.answer_decision(d, 0, now))
        landed: dict[str, float] = {}

        def all_landed() -> bool:
            for t in tasks:
                if t not in landed and world.tasks[t].status == "done":
                    landed[t] = time.monotonic() - approved
                if world.tasks[t].status not in ("review", "done"):
                    raise RuntimeError(f"{t} went {world.tasks[t].status}: {world.tasks[t].merge_test}")
            return len(landed) == len(tasks)

        await _wait(all_landed, 600)
        states = {world.tasks[t].merge_test.state for t in tasks if world.tasks[t].merge_test is not None}
        if states != {"passed"}:
            raise RuntimeError(f"the merges were not tested as they landed: {states}")
        return [landed[t] for t in tasks]
    finally:
        await daemon.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="1,2,4", help="queue lengths to measure (comma-separated)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--train", default="1", help="--merge-train values to measure each length with (comma-separated)")
    ap.add_argument("--ci-sleep", type=float, default=None,
                    help="CI: the demo suite then this many seconds of sleep (default: the demo suite alone)")
    args = ap.parse_args()
    ci = "the demo suite" if args.ci_sleep is None else f"the demo suite + sleep {args.ci_sleep:g} s"
    print(f"CI: {ci}; median of {args.runs} runs, seconds")
    print(f"{'queue':>5} {'train':>5} {'first landed':>13} {'last landed':>12} {'per merge':>10}")
    for length in (int(x) for x in args.lengths.split(",")):
        for train in (int(x) for x in args.train.split(",")):
            firsts, lasts = [], []
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="mq-bench-") as tmp:
                    times = asyncio.run(one_run(length, Path(tmp), train, args.ci_sleep))
                firsts.append(times[0])
                lasts.append(max(times))
            last = statistics.median(lasts)
            print(f"{length:>5} {train:>5} {statistics.median(firsts):>13.2f} {last:>12.2f} {last / length:>10.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
