"""The sim's team and a team of models go through the same flow (issue 35).

The same task (the demo's t1, "Add tags to notes": the same files, one commit) is carried from the
plan to its merge twice: by the sim's scripted team (the default backend), and by the local
backend's runner talking to a scripted OpenAI-compatible server over real HTTP (the openai client,
native tool calls). Every input the flow applies for that task is recorded in order (a spy on
:meth:`FlowRunner.submit`: it records and passes on); both runs apply the same ones, in the same
order: start, work, the check of the worktree, CI, the lead's review, the merge decision, the
merge queue's merge test and landing, the retirement of the worktree.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.sim import patches
from foreman.config import resolve
from foreman.daemon import Daemon
from foreman.flow.runner import FlowRunner
from tests.local_backend.fakeserver import FakeOpenAI, Reply, calls, system_of
from tests.local_backend.helpers import demo_daemon

STEP = patches.steps_for("t1")[0]
CONTENT = patches.task("t1")


def spy(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every input the flow applies (then apply it as always)."""
    seen: list[Any] = []
    submit = FlowRunner.submit

    def recording(self: FlowRunner, inp: Any) -> None:
        seen.append(inp)
        submit(self, inp)

    monkeypatch.setattr(FlowRunner, "submit", recording)
    return seen


def retired(daemon: Any, task: str) -> bool:
    """``task`` is done and its worktree removed (the last step of its life in the flow)."""
    world = daemon.core.world
    wts = [w for w in world.records.get("worktree", {}).values() if w.task == task]
    return task in world.tasks and world.tasks[task].status == "done" and bool(wts) and all(
        w.state == "removed" for w in wts)


def of_task(inputs: list[Any], daemon: Any, task: str) -> list[str]:
    """The kinds of the inputs about ``task`` (by its id, its decision's or its worktree's), in order;
    scheduling passes and feed reports, which are about no task, left out."""
    world = daemon.core.world
    out = []
    for inp in inputs:
        about = getattr(inp, "task", None)
        if about is None and (dec := world.decisions.get(getattr(inp, "decision", None) or "")) is not None:
            about = dec.task
        if about is None and getattr(inp, "worktree", None):
            about = getattr(world.records.get("worktree", {}).get(inp.worktree), "task", None)
        if about == task:
            out.append(type(inp).__name__)
    return out


async def wait_until(pred: Any, timeout: float = 60.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not pred():
        assert asyncio.get_running_loop().time() < end, "condition not reached in time"
        await asyncio.sleep(0.05)


async def sim_run(tmp: Path) -> list[str]:
    settings = resolve({"backend": "sim", "home": str(tmp / "home"), "sandbox": str(tmp / "sb"), "port": 0,
                        "speed": 1000.0, "notify": False, "reset": True, "ambient": False,
                        "auto_answer": ["merge", "permission", "question"]}, env={})
    d = Daemon(settings)
    inputs: list[Any] = []
    with pytest.MonkeyPatch.context() as mp:
        inputs = spy(mp)
        await d.start()
        try:
            await wait_until(lambda: retired(d, "t1"))
            await asyncio.sleep(0.3)
            return of_task(inputs, d, "t1")
        finally:
            await d.stop()


def responder(repo: Path) -> Any:
    """The model's side: the lead plans t1 for juniper and asks for its merge; juniper writes the
    step's files (edits of the existing ones, a new test file), commits them and says it is done."""
    def reply(req: dict[str, Any]) -> Reply:
        who = system_of(req)
        first = next(m["content"] for m in req["messages"] if m["role"] == "user")
        step = sum(1 for m in req["messages"] if m["role"] == "assistant")
        if "Marlow" in who and first.startswith("New goal"):
            return calls(("create_task", {"title": CONTENT.title, "description": CONTENT.description,
                                          "assignee": "juniper"}), ("final", {"summary": "Planned t1."}))
        if "Marlow" in who:
            return calls(("request_merge", {"task_id": "t1", "summary": "tags, with a test"}),
                         ("final", {"summary": "Asked for the merge."}))
        existing = [p for p in STEP.writes if (repo / p).exists()]
        script = [calls(*(("delete", {"path": p}) for p in existing)),
                  calls(*(("create", {"path": p, "content": text}) for p, text in STEP.writes.items())),
                  calls(("run", {"command": f"git add -A && git commit -q -m '{STEP.message}'"})),
                  calls(("final", {"summary": "Tags: model, store, add --tag, the tag command, tests."}))]
        return script[min(step, len(script) - 1)]
    return reply


async def local_run(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    inputs = spy(monkeypatch)
    from foreman.backends.sim.demo_repo import create_demo_repo

    repo = tmp / "pocket-notes"
    create_demo_repo(repo)
    with FakeOpenAI(responder(repo)) as server:
        async with demo_daemon(tmp, server.url, protocol="native", goal=CONTENT.title,
                               options={"auto_answer": ["merge"],
                                        "ci": f"{sys.executable} -m unittest discover -s tests"}) as (daemon, _):
            await wait_until(lambda: retired(daemon, "t1"))
            await asyncio.sleep(0.3)
            return of_task(inputs, daemon, "t1")


async def test_the_sims_team_and_a_team_of_models_pass_a_task_through_the_same_flow(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sim = await sim_run(tmp_path / "sim")
    local = await local_run(tmp_path / "local", monkeypatch)
    assert sim == local, f"\nsim:   {sim}\nlocal: {local}"
    for step in ("TaskPrepared", "WorkChecked", "CiFinished", "ReviewReady", "MergePrepared", "MergeAnswered",
                 "MergeTesting", "MergeTried"):
        assert step in sim, (step, sim)
