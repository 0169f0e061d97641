"""Benchmark the repositories edge on a generated repository (default 5,000 files).

Measures, as the median of several runs (wall-clock, through the real async API):

* worktree create + remove (``ensure_worktree`` + ``remove_worktree(force=True)``), target < 1 s;
* the off-tree merge (``merge_branch``: merge-tree + commit-tree + fast-forward), target < 50 ms,
  both into a checked-out base (``merge --ff-only``) and a base no checkout has (``update-ref``);
* ``repo_status`` and ``diff_commits`` of a one-file change, for reference.

Run: ``.venv/bin/python bench/git_bench.py [--files 5000] [--runs 7] [--merges-only]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foreman.repos.diffs import diff_commits
from foreman.repos.merge import merge_branch
from foreman.repos.registry import repo_status
from foreman.repos.worktrees import ensure_worktree, remove_worktree


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
    res = subprocess.run(["git", *args], cwd=cwd, env=env, input=input, capture_output=True, check=True)
    return res.stdout.decode().strip()


def make_repo(root: Path, files: int) -> Path:
    """Create ``root`` with ``files`` small text files in 100-file folders, committed on ``main``."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Bench User")
    _git(root, "config", "user.email", "bench@example.com")
    _git(root, "config", "commit.gpgsign", "false")
    for i in range(files):
        folder = root / f"pkg{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"# module {i}\nVALUE = {i}\n\ndef f{i}():\n    return VALUE\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "generated")
    return root


def make_branch(root: Path, name: str, n: int) -> None:
    """Create branch ``name`` off main with one changed file, using plumbing (no checkout)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        _git(root, "read-tree", "main", env=env)
        blob = _git(root, "hash-object", "-w", "--stdin", input=f"# change {n}\n".encode())
        _git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},changes/change{n:04d}.txt", env=env)
        tree = _git(root, "write-tree", env=env)
    commit = _git(root, "commit-tree", tree, "-p", "main", "-m", f"agent change {n}")
    _git(root, "update-ref", f"refs/heads/{name}", commit)


CPU: dict[int, list[float]] = {}
"""CPU seconds (this process and its git children, user + system) of each timed run, by id of its times list."""


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


async def timed(runs: int, prepare: Callable[[int], None], action: Callable[[int], Awaitable[object]]) -> list[float]:
    """Run ``action`` ``runs`` times (after an untimed ``prepare``) and return the durations in seconds.

    The CPU time of each run (steadier than the wall clock on a shared machine; the git
    processes it waited for included) is kept in :data:`CPU` for :func:`report`.
    """
    times: list[float] = []
    cpu: list[float] = []
    for i in range(runs):
        prepare(i)
        c0, start = _cpu(), time.perf_counter()
        await action(i)
        times.append(time.perf_counter() - start)
        cpu.append(_cpu() - c0)
    CPU[id(times)] = cpu
    return times


def report(label: str, times: list[float], target: float | None = None) -> None:
    med = statistics.median(times)
    verdict = "" if target is None else ("  OK" if med < target else "  OVER TARGET")
    goal = "" if target is None else f" (target < {target * 1000:.0f} ms)"
    cpu = CPU.get(id(times))
    spent = f"  cpu median {statistics.median(cpu) * 1000:6.1f} ms" if cpu else ""
    print(f"{label:<44} median {med * 1000:8.1f} ms  min {min(times) * 1000:8.1f}  max {max(times) * 1000:8.1f}{spent}{goal}{verdict}")


async def bench(files: int, runs: int, where: str | None = None, merges_only: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="agentcraft-bench-", dir=where) as tmp:
        base = Path(tmp).resolve()
        t0 = time.perf_counter()
        repo = make_repo(base / "repo", files)
        print(f"generated a {files}-file repository in {time.perf_counter() - t0:.1f} s (git {_git(base, 'version')})")
        wts = base / "home" / "worktrees" / "repo"

        async def create_remove(i: int) -> None:
            wt = await ensure_worktree(repo, wts / f"kit-t{i}", f"agentcraft/kit/t{i}", "main")
            await remove_worktree(repo, wt.path, force=True)

        if not merges_only:
            report("worktree create + remove", await timed(runs, lambda i: None, create_remove), 1.0)

        def prep_merge(i: int) -> None:
            make_branch(repo, f"agentcraft/kit/m{i}", i)

        async def merge(i: int) -> None:
            result = await merge_branch(repo, branch=f"agentcraft/kit/m{i}", base_branch="main", style="merge",
                                        message=f"Merge m{i}", sign=False, co_authors=[])
            assert result.commit is not None

        report("off-tree merge, base checked out (ff)", await timed(runs, prep_merge, merge), 0.050)

        _git(repo, "checkout", "-q", "--detach")

        def prep_squash(i: int) -> None:
            make_branch(repo, f"agentcraft/kit/s{i}", 1000 + i)

        async def squash(i: int) -> None:
            result = await merge_branch(repo, branch=f"agentcraft/kit/s{i}", base_branch="main", style="squash",
                                        message=f"s{i}", sign=False, co_authors=["AgentCraft Kit <kit@agentcraft.invalid>"])
            assert result.commit is not None

        report("off-tree squash, base not checked out (CAS)", await timed(runs, prep_squash, squash), 0.050)
        _git(repo, "checkout", "-q", "main")
        if merges_only:
            return
        report("repo_status", await timed(runs, lambda i: None, lambda i: repo_status(repo)))
        make_branch(repo, "agentcraft/kit/diff", 9999)
        report("diff_commits (one file)", await timed(runs, lambda i: None,
                                                      lambda i: diff_commits(repo, "main", "agentcraft/kit/diff")))


def main() -> None:
    """CLI entry: parse arguments, run the benchmark, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--dir", default=None, help="where to generate the repository (default: the temp folder)")
    parser.add_argument("--merges-only", action="store_true", help="time only the two merges (no worktrees, status, diff)")
    args = parser.parse_args()
    asyncio.run(bench(args.files, args.runs, args.dir, args.merges_only))


if __name__ == "__main__":
    main()
