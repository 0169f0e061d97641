"""A whole task through the real daemon, conductor and LocalRunner, with the model behind real
HTTP (the scripted server) and the demo repository: plan, read, edit, run tests, FINAL, CI, the
lead's review (which sees the worker's claims), and the merge decision. Both protocols."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.backends.local.trace import read_traces

from .fakeserver import FakeOpenAI, Reply, calls, system_of, text
from .helpers import demo_daemon

PLURAL = ('def _plural(count: int, unit: str) -> str:\n'
          '    return f"{count} {unit} ago" if count == 1 else f"{count} {unit}s ago"')
WORD_COUNT = PLURAL + '\n\n\ndef word_count(text: str) -> int:\n    """How many words ``text`` has."""\n    return len(text.split())'
TEST = "from pocket_notes.formatting import word_count\n\n\ndef test_word_count():\n    assert word_count(\"two words\") == 2\n"
RUN = "python -m pytest -q -p no:cacheprovider tests/test_word_count.py"


def step(req) -> int:
    return sum(1 for m in req["messages"] if m["role"] == "assistant")


def first_user(req) -> str:
    return next(m["content"] for m in req["messages"] if m["role"] == "user")


def make_responder(protocol: str, seen: dict):
    def text_reply(req) -> Reply:
        who, job, n = system_of(req), first_user(req), step(req)
        if "Marlow" in who and job.startswith("New goal"):
            return text('TOOL create_task {"title": "Add word_count", "description": "Add word_count(text) to '
                        'pocket_notes/formatting.py with a test.", "assignee": "juniper"}\nFINAL Planned one task.')
        if "Marlow" in who and job.startswith("Review task"):
            seen["review"] = job
            return text('TOOL request_merge {"task_id": "t1", "summary": "word_count with a passing test"}\n'
                        "FINAL Asked for the merge.")
        script = [
            "READ pocket_notes/formatting.py",
            f"pocket_notes/formatting.py\n<<<<<<< SEARCH\n{PLURAL}\n=======\n{WORD_COUNT}\n>>>>>>> REPLACE\n\n"
            f"tests/test_word_count.py\n```python\n<<<<<<< SEARCH\n=======\n{TEST}>>>>>>> REPLACE\n```",
            f"RUN {RUN}",
            "FINAL Added word_count(text) and tests/test_word_count.py; the new test passes.",
        ]
        return text(script[n])

    def native_reply(req) -> Reply:
        who, job, n = system_of(req), first_user(req), step(req)
        if "Marlow" in who and job.startswith("New goal"):
            return calls(("create_task", {"title": "Add word_count", "assignee": "juniper",
                                          "description": "Add word_count(text) with a test."}),
                         ("final", {"summary": "Planned one task."}))
        if "Marlow" in who and job.startswith("Review task"):
            seen["review"] = job
            return calls(("request_merge", {"task_id": "t1", "summary": "word_count with a passing test"}),
                         ("final", {"summary": "Asked for the merge."}))
        script = [
            calls(("read_file", {"path": "pocket_notes/formatting.py"})),
            calls(("edit", {"path": "pocket_notes/formatting.py", "search": PLURAL, "replace": WORD_COUNT}),
                  ("create", {"path": "tests/test_word_count.py", "content": TEST})),
            calls(("run", {"command": RUN})),
            calls(("final", {"summary": "Added word_count(text) and tests/test_word_count.py; the new test passes."})),
        ]
        return script[n]

    return native_reply if protocol == "native" else text_reply


async def wait_for(pred, timeout: float = 40.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("protocol", ["text", "native"])
async def test_demo_task_to_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: str) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    home = tmp_path / "home"
    seen: dict = {}
    with FakeOpenAI(make_responder(protocol, seen)) as server:
        async with demo_daemon(tmp_path, server.url, protocol=protocol) as (daemon, repo):
            world = daemon.core.world

            def open_merge():
                return next((d for d in world.decisions.values() if d.kind == "merge" and d.status == "open"), None)

            await wait_for(lambda: open_merge() is not None)
            assert "The worker says: Added word_count(text)" in seen["review"]
            assert "CI: passed" in seen["review"]
            daemon.act(lambda c, now: c.answer_decision(open_merge().id, 0, now))
            await wait_for(lambda: world.tasks["t1"].status == "done")
    main = subprocess.run(["git", "show", "main:pocket_notes/formatting.py"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout
    assert "def word_count(text: str) -> int:" in main
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo,
                           capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout
    scan = read_traces(home / "local" / "traces")
    assert len(scan.records) == 6 and {r.protocol for r in scan.records} == {protocol}
    assert all(r.actions for r in scan.records)
    assert len(server.requests) == 6
