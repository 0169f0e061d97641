"""The executor seam without Ray: settings, the local executor's place, a clear error without the extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman.config import resolve
from foreman.errors import ConfigError
from foreman.executors import LocalExecutor, from_settings


def test_executor_settings_come_through_the_config_path(tmp_path: Path) -> None:
    s = resolve({"executor": "ray", "ray_address": "10.0.0.1:6379", "ray_resources": "gpu_box=1,CPU=0.5"},
                env={"AGENTCRAFT_HOME": str(tmp_path)})
    assert (s.executor, s.ray_address, s.ray_resources) == ("ray", "10.0.0.1:6379", {"gpu_box": 1.0, "CPU": 0.5})
    s = resolve({}, env={"AGENTCRAFT_HOME": str(tmp_path), "AGENTCRAFT_EXECUTOR": "ray",
                         "AGENTCRAFT_RAY_HEARTBEAT": "2"})
    assert (s.executor, s.sources["executor"], s.ray_heartbeat) == ("ray", "env", 2.0)
    assert resolve({}, env={"AGENTCRAFT_HOME": str(tmp_path)}).executor == "local"


@pytest.mark.parametrize("bad", ["gpu_box=lots", "=1", "gpu_box=-1"])
def test_bad_resources_get_a_clear_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="ray_resources|resource"):
        resolve({"ray_resources": bad}, env={"AGENTCRAFT_HOME": str(tmp_path)})


def test_local_is_the_default_executor(tmp_path: Path) -> None:
    assert isinstance(from_settings(resolve({}, env={"AGENTCRAFT_HOME": str(tmp_path)})), LocalExecutor)


def test_ray_without_its_extra_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "foreman.executors.ray", raising=False)
    with pytest.raises(ConfigError, match=r"pip install '\.\[ray\]'"):
        from_settings(resolve({"executor": "ray"}, env={"AGENTCRAFT_HOME": str(tmp_path)}))


async def test_a_local_task_turn_says_it_runs_on_the_daemons_machine(tmp_path: Path) -> None:
    """An agent whose last turn ran on a cluster node (Agent.node set) shows None again once a
    task turn of its runs through the local executor (e.g. after a restart with --executor local)."""
    from typing import Any

    from foreman.backends.turns import TurnRequest

    from ..conductor.scripted import ScriptedRig, done, write_and_commit

    async def one_commit(req: TurnRequest, tools: Any):
        await write_and_commit(req, "local.py", "HERE = 1\n", "local work")
        await tools.call("update_task", {"status": "review"})
        return done("local")

    rig = ScriptedRig.worker(tmp_path, one_commit)
    await rig.start()
    try:
        rig.d.act(lambda c, now: c.set_agent_node("kit", "node 3f2a9c1e (10.0.0.7)"))
        assert rig.world.agents["kit"].node == "node 3f2a9c1e (10.0.0.7)"
        rig.task("Local work", assignee="kit")
        await rig.wait_status("t1", "review", timeout=60)
        assert rig.world.agents["kit"].node is None
        assert rig.world.agents["marlow"].node is None
    finally:
        await rig.stop()


async def test_a_task_whose_turns_are_lost_with_their_nodes_three_times_is_blocked(tmp_path: Path) -> None:
    """The flow's answer to a lost node (no Ray needed: the executor's NodeLost is what it gets):
    the task goes back on the board twice, and the third loss blocks it, each loss named in the feed."""
    from foreman.flow import endrules
    from foreman.flow.context import Ctx
    from foreman.flow.model import TurnEnded

    from ..conductor.scripted import ScriptedRig, done
    from ..rig import wait_for

    async def idle(req, tools):
        return done("idle")

    rig = ScriptedRig.worker(tmp_path, idle)
    await rig.start()
    try:
        tid = rig.task("Far away", assignee="kit")
        c = rig.backend
        statuses = []
        for n in range(1, 4):
            if rig.world.tasks[tid].status == "todo":  # (no await in this loop: the scheduler does not run)
                rig.d.act(lambda core, now: core.start_task(tid, "kit", now))
            lost = TurnEnded("kit", f"kit:{n}", "work", f"kit:{tid}", tid, None, ok=False, lost=f"node {n} (gone)",
                             node=f"node {n}")
            rig.d.act(lambda core, now, lost=lost: endrules.node_lost(Ctx(core, c.runner.live, rig.settings, now,
                                                                          c.backoff), lost))
            statuses.append(rig.world.tasks[tid].status)
        assert statuses == ["todo", "todo", "blocked"]
        await wait_for(lambda: "3 times" in "\n".join(rig.c.feed()), 10, "the blocking line in the feed")
        feed = "\n".join(rig.c.feed())
        assert "lost with node 1 (gone)" in feed and "goes back on the board" in feed
        assert "its turns were lost with their nodes 3 times (last: node 3)" in feed
    finally:
        await rig.stop()
