"""The Ray executor on a local multi-node cluster: workers' turns and CI on the nodes, tool
calls, permissions and merges decided in the daemon, a lost node's task resumed elsewhere.

The model edge is the suite's scripted runner (:mod:`tests.conductor.scripted`); it travels to
the nodes with the actors and commits with real git in the node's worktree.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.turns import TurnRequest

from ..conductor.scripted import ScriptedRig, done, write_and_commit
from ..rig import PYPROJECT, git, make_repo, wait_for
from .conftest import Nodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

RAY = {"executor": "ray", "ray_resources": "foreman_worker=1", "ray_heartbeat": 1.0}


async def plan(req: TurnRequest, tools: Any):
    await tools.call("create_task", {"title": "Add greet", "description": "greet()", "assignee": "juniper"})
    await tools.call("create_task", {"title": "Add farewell", "description": "farewell()", "assignee": "kit"})
    return done("lead-plan")


async def work(req: TurnRequest, tools: Any):
    name = "greet" if req.agent == "juniper" else "farewell"
    if not (req.cwd / f"{name}.py").exists():
        await write_and_commit(req, f"{name}.py", f"def {name}():\n    return '{name}'\n", f"{name}")
    (req.cwd / f"{name}-notes.txt").write_text(f"{name}: left uncommitted\n")  # uncommitted work travels too
    await tools.call("write_memory", {"note": f"{req.agent}-done", "text": f"{name} written"})
    await tools.call("update_task", {"status": "review"})
    return done(f"{req.agent}-sess")


def pick_team(req: TurnRequest):
    return plan if req.job == "plan" else work


def open_merge(world: Any, task: str) -> Any:
    return next((d for d in world.decisions.values() if d.kind == "merge" and d.task == task and d.status == "open"), None)


async def run_goal(tmp: Path, **flags: Any) -> tuple[str, ScriptedRig, list[dict[str, Any]]]:
    """Run the two-task goal to its merges (t1 first, then t2); return main's tree, the rig and
    the executor's placements (empty for the local executor)."""
    repo = make_repo(tmp, files=PYPROJECT)
    rig = ScriptedRig(tmp, pick_team, repo=repo, lead_review=False, **flags)
    await rig.start()
    try:
        rig.d.act(lambda c, now: c.submit_goal("greet and farewell", now, repo="proj"))
        world = rig.world
        await wait_for(lambda: open_merge(world, "t1") and open_merge(world, "t2"), 120, "two merge decisions")
        for task in ("t1", "t2"):
            rig.d.act(lambda c, now, task=task: c.answer_decision(open_merge(world, task).id, 0, now))
            await rig.wait_status(task, "done", timeout=60)
        placements = list(getattr(rig.backend.executor, "placements", []))
        return git(repo, "rev-parse", "main^{tree}").strip(), rig, placements
    finally:
        await rig.stop()


async def test_tasks_run_on_different_nodes_and_merge_as_with_the_local_executor(tmp_path: Path, ray_nodes: Nodes) -> None:
    local_tree, _, none = await run_goal(tmp_path / "local", executor="local")
    assert none == []
    tree, rig, placements = await run_goal(tmp_path / "ray", ray_address=ray_nodes.address, **RAY)
    assert tree == local_tree  # the same merged result
    turns = {p["agent"]: p["node_id"] for p in placements if p["what"] == "turn"}
    assert set(turns) == {"juniper", "kit"}
    assert turns["juniper"] != turns["kit"] and set(turns.values()) <= set(ray_nodes.tmp)
    ci = [p for p in placements if p["what"] == "ci"]
    assert {p["agent"] for p in ci} == {"juniper", "kit"} and all(p["node_id"] == turns[p["agent"]] for p in ci)
    # the worker turns ran on the nodes, never in this process: only the lead's plan ran here
    assert [(r.agent, r.job) for r in rig.runner.requests] == [("marlow", "plan")]
    # each node kept its own worktree in its own temporary folder
    for agent, node_id in turns.items():
        task = "t1" if agent == "juniper" else "t2"
        assert list(ray_nodes.tmp[node_id].glob(f"foreman-{agent}-*/wt/{task}/.git"))
    assert "farewell-notes.txt" in git(rig.repo, "ls-tree", "--name-only", "main")  # committed at the merge
