"""A team as large as the cluster: ``--workers N`` beyond the five named workers.

Generated names and their errors (pure rules and the resolved settings), then a real daemon on
an ephemeral port with the scripted runner: a twelve-worker team under ``--max-concurrent 3``,
a lead that plans for the team it has, and restarts that keep every name and seat.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.config import resolve
from foreman.core.roster import DEFAULT_WORKER_NAMES, NAMED_WORKERS, roster
from foreman.errors import ConfigError

from .scripted import ScriptedRig, commits_then_review, done

pytestmark = pytest.mark.timeout(180)


# ---------------------------------------------------------------------- names
def test_generated_names_follow_the_list_then_the_pattern_numbered_by_seat() -> None:
    team = roster(["12"], DEFAULT_WORKER_NAMES)
    assert team.workers == (*NAMED_WORKERS, "ash", "bryn", "cedar", "dale", "ember", "fern", "hazel")
    assert team.on_shift == team.workers
    assert roster(["9"], ["ash", "w{n}"]).workers[5:] == ("ash", "w7", "w8", "w9")
    assert roster(["100"], DEFAULT_WORKER_NAMES).workers[-1] == "worker-100"
    assert len(set(roster(["100"], DEFAULT_WORKER_NAMES).workers)) == 100
    small = roster(["3"], DEFAULT_WORKER_NAMES)  # up to five: the first N named workers, as before
    assert (small.workers, small.on_shift) == (NAMED_WORKERS, ("juniper", "kit", "wren"))
    named = roster(["kit", "bryn"], DEFAULT_WORKER_NAMES)  # a generated worker by name
    assert (named.workers, named.on_shift) == ((*NAMED_WORKERS, "bryn"), ("kit", "bryn"))


def _file(home: Path, data: dict[str, Any]) -> None:
    (home / "sim").mkdir(parents=True, exist_ok=True)
    (home / "sim" / "config.json").write_text(json.dumps(data))


@pytest.mark.parametrize("flags,env,file,fragments", [
    ({"workers": "0"}, {}, None, ["--workers: a team size is 1..100, got 0"]),
    ({}, {"AGENTCRAFT_WORKERS": "-3"}, None, ["AGENTCRAFT_WORKERS: a team size is 1..100, got -3"]),
    ({}, {}, {"workers": 5000}, ["config.json: workers: a team size is 1..100, got 5000"]),
    ({"workers": "kit,wren,kit"}, {}, None, ["--workers:", "has 'kit' twice"]),
    ({"workers": "kit,marlow"}, {}, None, ["--workers:", "'marlow' is the lead's name"]),
    ({"workers": "kit,all"}, {}, None, ["--workers:", "'all' is a word the protocol reserves"]),
    ({"workers": "kit,bob"}, {}, None, ["--workers: unknown worker 'bob'", "add it to workerNames",
                                            "a team size (a number, 1 to 100)"]),
    ({"workers": "8,kit"}, {}, None, ["--workers:", "either a team size or names"]),
    ({}, {}, {"workerNames": ["ash", "ash"]}, ["config.json: workerNames:", "has 'ash' twice"]),
    ({}, {}, {"workerNames": ["Marlow"]}, ["config.json: workerNames:", "the lead's name"]),
    ({}, {}, {"workerNames": ["ash", "kit"]}, ["config.json: workerNames:", "'kit' is already a named worker"]),
    ({}, {}, {"workerNames": ["w{n}", "ash"]}, ["workerNames:", "must be the last worker name"]),
    ({}, {}, {"workerNames": ["{n}"]}, ["workerNames:", "must start with a letter"]),
    ({"workers": "9"}, {}, {"workerNames": ["ash", "bryn"]},
     ["--workers: a team of 9 needs 4 names", "has 2", "worker-{n}", "worker names from", "config.json: workerNames"]),
])
def test_bad_team_values_name_the_key_and_the_fix(tmp_path: Path, flags: dict, env: dict, file: dict | None,
                                                  fragments: list[str]) -> None:
    if file is not None:
        _file(tmp_path, file)
    with pytest.raises(ConfigError) as info:
        resolve({"home": str(tmp_path), **flags}, env)
    for fragment in fragments:
        assert fragment in info.value.message, info.value.message


def test_a_start_with_a_bad_team_is_refused_and_writes_no_state(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = subprocess.run([sys.executable, "-m", "foreman", "start", "--home", str(home), "--port", "0",
                          "--workers", "kit,kit"], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode != 0
    assert "--workers:" in out.stderr + out.stdout and "'kit' twice" in out.stderr + out.stdout
    assert not (home / "sim").exists()


# ---------------------------------------------------------------------- a real daemon
async def test_twelve_workers_never_run_more_than_three_turns_at_once(tmp_path: Path) -> None:
    running: set[str] = set()
    peak = [0]
    worked: list[tuple[str, str]] = []

    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        running.add(req.agent)
        peak[0] = max(peak[0], len(running))
        try:
            for _ in range(40):  # hold the turn until three run (or 2 s): a fourth would show in the peak
                if len(running) >= 3:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.1)
            worked.append((req.agent, req.task or ""))
            return await commits_then_review()(req, tools)
        finally:
            running.discard(req.agent)

    rig = ScriptedRig.worker(tmp_path, work, workers=["12"], max_concurrent=3)
    await rig.start()
    try:
        team = [a for a in rig.world.agents.values() if a.role == "worker"]
        assert len(team) == 12 and all(a.active for a in team)
        assert sorted(a.seat for a in team) == list(range(1, 13))
        tasks = {rig.task(f"part {a.name}", assignee=a.name): a.name for a in team}
        for task in tasks:
            await rig.wait_status(task, "review", timeout=120)
        assert peak[0] == 3, peak  # the cap was reached and never passed
        assert sorted(worked) == sorted((agent, task) for task, agent in tasks.items())
        assert rig.worktree("hazel", next(t for t, a in tasks.items() if a == "hazel")).is_dir()
    finally:
        await rig.stop()


async def test_the_lead_plans_for_the_team_it_has(tmp_path: Path) -> None:
    def pick(req: TurnRequest):
        async def plan(req: TurnRequest, tools: AgentTools) -> TurnResult:
            await tools.call("create_task", {"title": "Add greet", "description": "greet()", "assignee": "ash"})
            await tools.call("create_task", {"title": "Add farewell", "description": "farewell()", "assignee": "cedar"})
            return done("lead-plan")

        return plan if req.job == "plan" else commits_then_review()

    rig = ScriptedRig(tmp_path, pick, workers=["8"], lead_review=False, ci="true")
    await rig.start()
    try:
        await rig.c.ok({"type": "agent.stop", "agent": "bryn"})
        await rig.c.ok({"type": "goal.submit", "text": "greet and farewell", "repo": "proj"})
        await rig.wait_status("t1", "review", timeout=60)
        await rig.wait_status("t2", "review", timeout=60)
        plan = next(r for r in rig.runner.requests if r.job == "plan")
        assert ("Your team: 7 workers on shift: juniper, kit, wren, rowan, tove, ash, cedar (off shift: bryn); "
                "at most 3 work at once") in plan.system
        assert {(r.agent, r.task) for r in rig.runner.requests if r.job == "work"} == {("ash", "t1"), ("cedar", "t2")}
        assert rig.world.tasks["t1"].branch.startswith("agentcraft/ash/t1")
    finally:
        await rig.stop()


async def test_a_restart_keeps_every_name_and_seat(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review(), workers=["12"])
    await rig.start()
    try:
        seats = {name: a["seat"] for name, a in rig.c.agents.items()}  # as a client sees them
        assert seats["marlow"] == 0 and seats["juniper"] == 1 and seats["tove"] == 5 and seats["hazel"] == 12
        assert len(set(seats.values())) == 13
        await rig.stop()
        await rig.start()
        assert {name: a["seat"] for name, a in rig.c.agents.items()} == seats
        assert all(a["active"] for a in rig.c.agents.values())

        await rig.stop()  # a smaller team: the extra workers go off shift, keeping names and seats
        rig.settings = resolve({**rig.flags, "workers": ["8"]}, env={})
        await rig.start()
        assert {name: a["seat"] for name, a in rig.c.agents.items()} == seats
        off = sorted(n for n, a in rig.c.agents.items() if not a["active"])
        assert off == ["dale", "ember", "fern", "hazel"]
        assert any("went off shift" in f.text and "hazel" in f.text for f in rig.d.core.world.feed)

        await rig.stop()  # the team grows again: they are back on shift, in the same seats
        rig.settings = resolve({**rig.flags, "workers": ["12"]}, env={})
        await rig.start()
        assert {name: a["seat"] for name, a in rig.c.agents.items()} == seats
        assert all(a["active"] for a in rig.c.agents.values())
        task = rig.task("late work", assignee="hazel")
        await rig.wait_status(task, "review", timeout=60)
    finally:
        await rig.stop()


def test_a_generated_worker_can_have_its_own_backend_and_model(tmp_path: Path) -> None:
    from foreman.flow.assemble import make_backend

    home = tmp_path / "home"
    (home / "claude").mkdir(parents=True)
    (home / "claude" / "config.json").write_text(json.dumps({"workers": 7, "agents": {"bryn": {"backend": "local",
                                                                                             "model": "qwen"}}}))
    c = make_backend(resolve({"home": str(home), "backend": "claude"}, env={"ANTHROPIC_API_KEY": "x"}))
    assert (c.runners["bryn"].name, c.models["bryn"]) == ("local", "qwen")
    assert (c.runners["ash"].name, c.models["ash"]) == ("claude", "sonnet")
    assert c.name == "mixed" and c.workers == [*NAMED_WORKERS, "ash", "bryn"]
    with pytest.raises(ConfigError) as info:  # a team of five has no bryn
        resolve({"home": str(home), "backend": "claude", "workers": "5"}, env={})
    assert "config.json: agents: unknown agent 'bryn'" in info.value.message
    assert "make the team larger (--workers)" in info.value.message


def test_seats_are_given_once_lowest_free_first_and_kept() -> None:
    from foreman.core.core import Core

    core = Core()
    core.add_agent("kit", 0.0)  # a worker before the lead: seats start at 1 for workers
    core.add_agent("marlow", 0.0, role="lead")
    core.add_agent("wren", 0.0)
    assert {n: a.seat for n, a in core.world.agents.items()} == {"kit": 1, "marlow": 0, "wren": 2}
    core.add_agent("kit", 0.0, backend="local", model="q")  # an update keeps the seat
    assert core.world.agents["kit"].seat == 1 and core.world.agents["kit"].backend == "local"
    # an agent stored by a Foreman older than seats gets the lowest free one at its next add
    core.world.agents["ash"] = core.world.agents["wren"].model_copy(update={"name": "ash", "seat": None})
    core.world.agents["wren"] = core.world.agents["wren"].model_copy(update={"seat": 3})
    core.add_agent("ash", 0.0)
    assert core.world.agents["ash"].seat == 2
