#!/usr/bin/env python3
"""Issue 4 (sim backend) benchmark: the full scenario at maximum speed with auto-answers.

Subcommands (default ``all``)::

    process    wall time of ``foreman start --backend sim --reset --speed 1e6 --auto-answer
               merge,permission,question`` as a real child process: from spawn (interpreter
               start and imports included) to the scenario's last feed line, seen by a client;
               ``--code DIR`` (repeatable) also runs another checkout's default engine, interleaved
    split      the same scenario (the team on the flow) in this process (a :class:`foreman.daemon.Daemon`
               on its own loop), with timing wrappers around every git call, every CI (test) run, the demo
               repository's creation and the store's commits; the rest is the daemon itself
               (core, scenario, encoding, broadcast, event loop)

The scenario's pauses are scaled by ``--speed`` (1e6 makes them microseconds), so what is left
is real work. Wrapped calls are awaited nearly one at a time (the flow's serial runner carries
out its git and CI jobs in turn; a worktree removal or a scripted turn's own git commit may
overlap them), so their wall times add up with little overlap. Times are ``time.perf_counter`` wall seconds; each figure is the
median of ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect

DONE_TEXT = "The sim scenario is complete"
SPEED = "1000000"
AUTO = "merge,permission,question"


# ----------------------------------------------------------------------------- process
async def _watch(port: int, timeout: float, token: str | None = None) -> None:
    async with connect(f"ws://127.0.0.1:{port}", max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "sim-bench", "since": 0, "token": token}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
            items = [msg["item"]] if msg["type"] == "feed.append" else msg.get("feed", [])
            if any(i["text"] == DONE_TEXT for i in items):
                return
    raise TimeoutError("the scenario did not finish")


def run_process(tmp: Path, timeout: float = 120.0, extra: tuple[str, ...] = (), code: Path = ROOT) -> float:
    """Spawn the daemon of the checkout ``code`` (with ``extra`` flags), wait for the scenario's end
    through the protocol; return wall seconds."""
    home = tmp / "home"
    cmd = [sys.executable, "-m", "foreman", "start", "--backend", "sim", "--reset", "--home", str(home),
           "--sandbox", str(tmp / "sb"), "--port", "0", "--speed", SPEED, "--auto-answer", AUTO, "--no-notify",
           "--log-level", "WARNING", *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}
    if code != ROOT:
        env["PYTHONPATH"] = str(code)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=code, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        record = home / "sim" / "foreman.json"
        while True:
            if proc.poll() is not None:
                raise RuntimeError("the daemon exited")
            try:
                data = json.loads(record.read_text())
                if data.get("pid") == proc.pid:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.005)
        asyncio.run(_watch(int(data["port"]), timeout, data.get("token")))
        return time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait(15)


# ----------------------------------------------------------------------------- split
class Timers:
    """Wall seconds and call counts per bucket."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap_async(self, bucket: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.seconds[bucket] += time.perf_counter() - t
                self.calls[bucket] += 1
        return timed

    def wrap_sync(self, bucket: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[bucket] += time.perf_counter() - t
                self.calls[bucket] += 1
        return timed


def install(timers: Timers) -> Callable[[], None]:
    """Wrap git, CI runs, demo creation and store commits everywhere they were imported; return an undo."""
    import foreman.repos._git as gitmod
    from foreman.backends.sim import demo_repo
    from foreman.repos import ci
    from foreman.store import Store

    undo: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, new: Any) -> None:
        undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, new)

    original_git = gitmod.git
    timed_git = timers.wrap_async("git", original_git)
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("foreman") and getattr(mod, "git", None) is original_git:
            patch(mod, "git", timed_git)
    patch(ci, "run_ci", timers.wrap_async("tests", ci.run_ci))
    original_demo = demo_repo.create_demo_repo
    timed_demo = timers.wrap_sync("demo repo", original_demo)
    for mod in list(sys.modules.values()):  # (the sim's backends import it by name)
        if getattr(mod, "__name__", "").startswith("foreman") and getattr(mod, "create_demo_repo", None) is original_demo:
            patch(mod, "create_demo_repo", timed_demo)
    patch(Store, "commit", timers.wrap_sync("store", Store.commit))

    def restore() -> None:
        for owner, name, old in reversed(undo):
            setattr(owner, name, old)
    return restore


async def _in_process(tmp: Path) -> float:
    from foreman.config import resolve
    from foreman.daemon import Daemon

    settings = resolve({"home": str(tmp / "home"), "backend": "sim", "reset": True, "port": 0, "speed": SPEED,
                        "auto_answer": AUTO, "sandbox": str(tmp / "sb"), "notify": False}, env={})
    daemon = Daemon(settings)
    start = time.perf_counter()
    await daemon.start()
    try:
        while not daemon.core.world.meta.get("sim", {}).get("finished"):  # (the team's wrap-up marks it)
            if time.perf_counter() - start > 120:
                raise TimeoutError("the scenario did not finish")
            await asyncio.sleep(0.005)
        return time.perf_counter() - start
    finally:
        await daemon.stop()


def run_split(tmp: Path) -> dict[str, Any]:
    """One in-process run; returns ``{total, buckets{name: (seconds, calls)}}``."""
    # import the daemon's modules first, so every module that imported git gets the wrapper
    import foreman.backends.sim.flowteam
    import foreman.daemon
    import foreman.repos.registry  # noqa: F401

    timers = Timers()
    restore = install(timers)
    try:
        total = asyncio.run(_in_process(tmp))
    finally:
        restore()
    return {"total": total, "buckets": {k: (timers.seconds[k], timers.calls[k]) for k in timers.seconds}}


# ----------------------------------------------------------------------------- main
def _fresh(fn: Callable[[Path], Any]) -> Any:
    tmp = Path(tempfile.mkdtemp(prefix="sim-bench-"))
    try:
        return fn(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", nargs="?", default="all", choices=("all", "process", "split"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code", type=Path, action="append", default=[],
                        help="process: also run this checkout's default engine (e.g. a worktree of an older commit), interleaved")
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING)
    if args.what in ("all", "process"):
        runs = {"this code": functools.partial(run_process)}
        runs.update({f"{c} (its default)": functools.partial(run_process, code=c.resolve()) for c in args.code})
        walls: dict[str, list[float]] = {e: [] for e in runs}
        print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}", flush=True)
        for _ in range(args.runs):  # (interleaved: the machine's noise falls on all alike)
            for e, run in runs.items():
                walls[e].append(_fresh(run))
        for e in runs:
            print(f"process ({e}): spawn -> scenario complete: median {statistics.median(walls[e]):.2f} s "
                  f"(min {min(walls[e]):.2f}, max {max(walls[e]):.2f}, {args.runs} runs: "
                  f"{', '.join(f'{w:.2f}' for w in walls[e])})")
        print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")
    if args.what in ("all", "split"):
        runs = [_fresh(run_split) for _ in range(args.runs)]
        total = statistics.median(r["total"] for r in runs)
        print(f"split: in-process daemon.start() -> scenario finished: median {total:.2f} s ({args.runs} runs)")
        names = ("git", "tests", "demo repo", "store")
        med = {n: statistics.median(r["buckets"].get(n, (0.0, 0))[0] for r in runs) for n in names}
        calls = {n: statistics.median(r["buckets"].get(n, (0.0, 0))[1] for r in runs) for n in names}
        daemon = statistics.median(
            r["total"] - sum(r["buckets"].get(n, (0.0, 0))[0] for n in ("git", "tests", "demo repo")) for r in runs)
        labels = {"git": "git (worktrees, commits, merges, diffs, status)", "tests": "test runs (CI, unittest)",
                  "demo repo": "demo repository creation (git, sync)", "store": "  of which the store (SQLite commits)"}
        for n in ("git", "tests", "demo repo"):
            print(f"  {labels[n]:48} {med[n]:6.2f} s  {100 * med[n] / total:4.0f}%  ({calls[n]:.0f} calls)")
        print(f"  {'the daemon itself (core, scenario, I/O loop)':48} {daemon:6.2f} s  {100 * daemon / total:4.0f}%")
        print(f"  {labels['store']:48} {med['store']:6.2f} s  {100 * med['store'] / total:4.0f}%  ({calls['store']:.0f} commits)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
