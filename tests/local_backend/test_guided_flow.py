"""Guided mode through the real daemon, conductor and LocalRunner, the model behind real HTTP (the
scripted server): attempt 1 writes a wrong function and the repository's tests catch it, attempt
2 (a higher temperature, from the same clean start) passes; the work is committed, CI runs, the
merge decision is answered and ``main`` holds exactly attempt 2's code."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from foreman.flow.assemble import make_backend
from foreman.backends.local.guided import GuidedStats
from foreman.backends.sim.demo_repo import create_demo_repo
from foreman.config import resolve
from foreman.daemon import Daemon

from .fakeserver import FakeOpenAI, Reply, last_user, text

GOAL = ("Add a function word_count(text: str) -> int to pocket_notes/formatting.py that returns how many words the "
        "text has (split on whitespace). Add a test file tests/test_word_count.py that checks "
        "word_count('two words') == 2.")
WRONG = "# file: pocket_notes/formatting.py\ndef word_count(text: str) -> int:\n    return len(text)\n"
RIGHT = "Here it is:\n```python\n# file: pocket_notes/formatting.py\ndef word_count(text: str) -> int:\n    return len(text.split())\n```\n"
TESTS = "```python\n# file: tests/test_word_count.py\ndef test_word_count():\n    assert word_count('two words') == 2\n```"


def responder(req: dict) -> Reply:
    asked = last_user(req)
    if "Now write pytest test functions" in asked:
        return text(TESTS)
    if asked.startswith("Task:"):
        return text(f"```python\n{WRONG}```" if req["temperature"] < 0.3 else RIGHT)
    return text("I do not know.")


@dataclass
class GuidedDaemon:
    """A running daemon on the local backend in guided mode, the model behind ``server``."""

    daemon: Daemon
    backend: Any
    server: FakeOpenAI
    repo: Path
    home: Path

    def task(self, title: str, description: str) -> str:
        """Create a task for Juniper in the demo repository; return its id."""
        repo_id = next(iter(self.daemon.core.world.repos))
        return self.daemon.act(lambda c, now: c.create_task(title, now, description=description, assignee="juniper",
                                                            repo=repo_id, who="user")).id

    async def blocked(self, task: str) -> None:
        """Wait until ``task`` ends; it must end blocked, with no merge decision ever opened."""
        world = self.daemon.core.world
        await wait_for(lambda: world.tasks[task].status in ("blocked", "review", "done"), world=world)
        assert world.tasks[task].status == "blocked"
        assert not [d for d in world.decisions.values() if d.kind == "merge"]

    async def merge(self, task: str) -> None:
        """Wait for ``task``'s merge decision (failing if it ends blocked instead), approve it and
        wait until the task is done."""
        world = self.daemon.core.world

        def open_merge():
            return next((d for d in world.decisions.values() if d.kind == "merge" and d.status == "open"), None)

        await wait_for(lambda: open_merge() is not None or world.tasks[task].status == "blocked", world=world)
        assert world.tasks[task].status == "review"
        self.daemon.act(lambda c, now: c.answer_decision(open_merge().id, 0, now))
        await wait_for(lambda: world.tasks[task].status == "done")


@contextlib.asynccontextmanager
async def guided_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, responder: Callable[[dict], Reply], *,
                        attempts: int, repairs: int, ci: str, asked_test: bool = False) -> AsyncIterator[GuidedDaemon]:
    """The demo repository (``tmp_path/pocket-notes``), the scripted server answering with
    ``responder``, and a daemon whose one worker runs guided mode against it (no lead review;
    the asked test of ``asked.py`` only with ``asked_test``)."""
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    repo = tmp_path / "pocket-notes"
    create_demo_repo(repo)
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    with FakeOpenAI(responder) as server:
        (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "fake", "profiles": {"fake": {
            "url": server.url, "model": "fake-coder", "maxTokens": 256, "temperature": 0.1, "mode": "guided",
            "attempts": attempts, "repairs": repairs, "askedTest": asked_test}}}}))
        settings = resolve({"home": str(home), "backend": "local", "port": 0, "workers": ["1"], "lead_review": False,
                            "ci": ci, "notify": False}, env={})
        backend = make_backend(settings)
        daemon = Daemon(settings, backend=backend)
        await daemon.start()
        try:
            await daemon.add_repo(str(repo))
            yield GuidedDaemon(daemon, backend, server, repo, home)
        finally:
            await daemon.stop()


async def wait_for(pred, timeout: float = 60.0, world=None) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            shown = "" if world is None else "\n".join(
                [f.text for f in world.feed] + [ln.text for lines in world.logs.values() for ln in lines])
            raise AssertionError(f"condition not reached in time\n{shown}")
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_guided_task_second_attempt_passes_and_merges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with guided_daemon(tmp_path, monkeypatch, responder, attempts=3, repairs=0,
                             ci=f"{sys.executable} -m pytest -q -p no:cacheprovider") as g:
        task = g.task("Add word_count", GOAL)
        await g.merge(task)
    backend, server, repo, home = g.backend, g.server, g.repo, g.home
    stats = [s for s in backend.runners["juniper"].stats.values() if isinstance(s, GuidedStats)]
    assert len(stats) == 1 and stats[0].passed
    assert [(a.number, a.outcome) for a in stats[0].attempts] == [(1, "checks failed"), (2, "passed")]
    assert [a.temperature for a in stats[0].attempts] == [0.1, 0.45]
    # 4 model requests: attempt 1 (edit, tests), attempt 2 (edit, tests)
    assert [r["temperature"] for r in server.requests] == [0.1, 0.1, 0.45, 0.45]
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    source = (repo / "pocket_notes" / "formatting.py").read_text()
    assert "return len(text.split())" in source and "return len(text)\n" not in source
    assert source.count("def word_count") == 1 and source.index("def word_count") > source.index("def _plural")
    test = (repo / "tests" / "test_word_count.py").read_text()
    assert test.startswith("from pocket_notes.formatting import word_count\n")
    suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                           capture_output=True, text=True)
    assert suite.returncode == 0, suite.stdout
    log = subprocess.run(["git", "log", "--format=%s", "main"], cwd=repo, capture_output=True, text=True).stdout
    assert "guided attempt 2/3" in log
    traces = [json.loads(line) for f in (home / "local" / "traces" / "guided").glob("*.jsonl")
              for line in f.read_text().splitlines()]
    # each attempt's new test file ran alone before it counted (the test-alone check's probe); the
    # failed attempt's test had its cases run on the change and on the old code (the made-up and
    # unmoved cases' probe, for the repair: a test of one case too, since 051b358)
    assert [(t["attempt"], t["step"]) for t in traces] == [(1, "edit"), (1, "tests"), (1, "new test alone"),
                                                           (1, "cases probe"), (1, "cases probe (old code)"),
                                                           (2, "edit"), (2, "tests"), (2, "new test alone"),
                                                           (2, "tests probe")]
    # the first reply to each request holds what was asked (a probe asks nothing)
    asks = {(t["attempt"], t["step"]): t.get("ask") for t in traces}
    assert "Task:" in asks[(1, "edit")] and "pytest test functions" in asks[(2, "tests")]
    assert asks[(1, "new test alone")] is None
