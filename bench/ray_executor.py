"""The Ray executor's overhead per turn and per CI run against the local executor's, in one run.

Starts a Ray cluster on this machine (a head and one worker node, one CPU each, 100 MB object
stores), then for the demo repository and a generated 5,000-file repository runs the same turns
(a scripted runner: write one file, commit) and CI runs (``true``) through both executors, and
prints times and bundle sizes (the first turn on a node carries the history, the next ones only
new commits).

    .venv/bin/python bench/ray_executor.py [turns]      # default 5 turns and 3 CI runs per repository
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foreman.backends.turns import TurnRequest, TurnResult  # noqa: E402
from foreman.executors import LocalExecutor, Place  # noqa: E402

ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "b@x.invalid", "GIT_COMMITTER_NAME": "Bench",
       "GIT_COMMITTER_EMAIL": "b@x.invalid"}


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True, env={**os.environ, **ENV}).stdout


class OneCommit:
    """A runner whose every turn writes ``turn-<n>.txt`` and commits it."""

    name = "bench"

    async def preflight(self) -> None:
        return None

    async def run_turn(self, req: TurnRequest, tools: object) -> TurnResult:
        (req.cwd / f"turn-{req.turn_id.replace(':', '-')}.txt").write_text(f"{req.turn_id}\n")
        await asyncio.to_thread(subprocess.run, ["git", "add", "-A"], cwd=req.cwd, env=req.env, check=True)
        await asyncio.to_thread(subprocess.run, ["git", "commit", "-qm", req.turn_id], cwd=req.cwd, env=req.env,
                                check=True)
        return TurnResult(ok=True, text="done")


class QuietTools:
    agent = "kit"
    turn_id = ""

    def log(self, *a: object, **k: object) -> None: ...
    def activity(self, *a: object, **k: object) -> None: ...
    def unread(self) -> list[str]: return []
    def session_started(self, *a: object) -> None: ...
    def track_process(self, *a: object) -> None: ...


def make_repos(tmp: Path) -> dict[str, Path]:
    from foreman.backends.sim.demo_repo import create_demo_repo

    demo = tmp / "demo"
    create_demo_repo(demo)
    big = tmp / "big"
    big.mkdir()
    sh(big, "git", "init", "-q", "-b", "main")
    for i in range(5000):
        d = big / f"pkg{i // 100:02d}"
        d.mkdir(exist_ok=True)
        (d / f"mod{i:04d}.py").write_text(f'"""Module {i}."""\n\n\ndef f{i}(x):\n    return x * {i} + {i % 7}\n')
    sh(big, "git", "add", "-A")
    sh(big, "git", "commit", "-qm", "5,000 files")
    return {"demo repository": demo, "5,000-file repository": big}


def place_for(repo: Path, tmp: Path, name: str) -> Place:
    base = sh(repo, "git", "rev-parse", "--abbrev-ref", "HEAD").strip()
    wt = tmp / f"wt-{repo.name}-{name}"
    sh(repo, "git", "worktree", "add", "-q", "-b", f"kit/{name}", str(wt), base)
    return Place(repo=repo, worktree=wt, branch=f"kit/{name}", base=base, agent="kit", task=name)


async def measure(executor: object, place: Place, turns: int, cis: int) -> dict[str, list[float]]:
    from foreman.repos.gitsafety import safety_env

    out: dict[str, list[float]] = {"turn": [], "ci": []}
    for n in range(turns):
        req = TurnRequest(turn_id=f"kit:{place.task}:{n}", agent="kit", lead=False, job="work", prompt="p", system="s",
                          cwd=place.worktree, task=place.task, env=safety_env(os.environ, agent="kit",
                                                                               worktree=place.worktree))
        t = time.perf_counter()
        res = await executor.run_turn(OneCommit(), req, QuietTools(), place)
        out["turn"].append(time.perf_counter() - t)
        assert res.ok, res.error
    for _ in range(cis):
        t = time.perf_counter()
        res = await executor.run_ci("true", place=place, env=safety_env(os.environ, agent="kit", worktree=place.worktree),
                                    timeout=60)
        out["ci"].append(time.perf_counter() - t)
        assert res.ok, res.output
    return out


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:,.0f} ms"


async def main(turns: int) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from foreman.executors.ray import RayExecutor

    with tempfile.TemporaryDirectory(prefix="foreman-ray-bench-") as td:
        tmp = Path(td)
        repos = make_repos(tmp)
        os.environ["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
        t = time.perf_counter()
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 100 << 20,
                                                                 "include_dashboard": False})
        cluster.add_node(num_cpus=1, resources={"foreman_worker": 1}, object_store_memory=100 << 20)
        cluster.wait_for_nodes()
        print(f"cluster up in {time.perf_counter() - t:.1f} s")
        try:
            print("| repository | executor | first turn | next turns (median) | CI (median) | bytes to the node, first turn | bytes to the node, next | bytes back per turn |")
            print("|---|---|---|---|---|---|---|---|")
            for label, repo in repos.items():
                local = await measure(LocalExecutor(), place_for(repo, tmp, "local"), turns, 3)
                print(f"| {label} | local | {ms(local['turn'][:1])} | {ms(local['turn'][1:])} | {ms(local['ci'])} | - | - | - |")
                ex = RayExecutor(SimpleNamespace(ray_address=cluster.address, ray_resources={"foreman_worker": 1},
                                                 ray_heartbeat=1.0))
                remote = await measure(ex, place_for(repo, tmp, "ray"), turns, 3)
                tp = [p for p in ex.placements if p["what"] == "turn"]
                print(f"| {label} | ray | {ms(remote['turn'][:1])} | {ms(remote['turn'][1:])} | {ms(remote['ci'])} | "
                      f"{tp[0]['bytes_out']:,} | {statistics.median(p['bytes_out'] for p in tp[1:]):,.0f} | "
                      f"{statistics.median(p['bytes_in'] for p in tp):,.0f} |")
                for agent, w in list(ex.workers.items()):
                    ex._drop(agent, w)
        finally:
            if ray.is_initialized():
                ray.shutdown()
            cluster.shutdown()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
