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

    .venv/bin/python bench/merge_queue_bench.py [--lengths 1,2,4] [--runs 3]
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


async def one_run(length: int, tmp: Path) -> list[float]:
    """Approval-to-landing seconds of each of ``length`` merges approved at once (task order)."""
    repo = tmp / "pocket-notes"
    create_demo_repo(repo)
    settings = resolve({"home": str(tmp / "home"), "port": 0, "backend": "sim", "workers": [str(length)],
                        "lead_review": False, "max_concurrent": length}, env={})
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
    args = ap.parse_args()
    print(f"{'queue':>5} {'first landed':>13} {'last landed':>12} {'per merge':>10}   (median of {args.runs} runs, s)")
    for length in (int(x) for x in args.lengths.split(",")):
        firsts, lasts = [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="mq-bench-") as tmp:
                times = asyncio.run(one_run(length, Path(tmp)))
            firsts.append(times[0])
            lasts.append(max(times))
        last = statistics.median(lasts)
        print(f"{length:>5} {statistics.median(firsts):>13.2f} {last:>12.2f} {last / length:>10.2f}")


if __name__ == "__main__":
    main()
