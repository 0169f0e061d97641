"""A team beyond the five named workers on the local backend: the real daemon, conductor and
LocalRunner with the model behind real HTTP (the scripted server). The lead's system prompt, as
the model receives it, names the whole team; the lead assigns a generated worker, whose turn
runs with its own name and worktree."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .fakeserver import FakeOpenAI, Reply, system_of, text
from .helpers import demo_daemon
from .test_flow_local import first_user
from ..rig import wait_for

pytestmark = pytest.mark.timeout(120)


async def test_the_local_lead_sees_the_team_and_a_generated_worker_takes_its_task(tmp_path: Path) -> None:
    systems: dict[str, str] = {}

    def reply(req) -> Reply:
        who, job = system_of(req), first_user(req)
        if "Marlow" in who and job.startswith("New goal"):
            systems["lead"] = who
            return text('TOOL create_task {"title": "Add word_count", "description": "Add word_count(text).", '
                        '"assignee": "fern"}\nFINAL Planned one task for Fern.')
        if "You are Fern" in who:
            systems["fern"] = who
        return text("FINAL Nothing to do here.")

    with FakeOpenAI(reply) as server:
        async with demo_daemon(tmp_path, server.url, goal="Add a word_count helper",
                               config={"workerNames": ["ash", "bryn", "fern", "w{n}"]},
                               options={"workers": ["10"], "max_concurrent": 2, "ci": f"{sys.executable} -c pass"}) \
                as (daemon, _repo):
            await wait_for(lambda: "fern" in systems, 60, "fern's turn")
            team = "10 workers on shift: juniper, kit, wren, rowan, tove, ash, bryn, fern, w9, w10"
            assert f"Your team: {team}; at most 2 work at once" in systems["lead"]
            task = daemon.core.world.tasks["t1"]
            assert task.assignee == "fern" and (task.branch or "").startswith("agentcraft/fern/t1")
            agents = daemon.core.world.agents
            assert (agents["fern"].backend, agents["fern"].model) == (agents["juniper"].backend, agents["juniper"].model)
            assert agents["fern"].backend == "local" and agents["fern"].seat == 8
            assert agents["w10"].title == "W10" and agents["w10"].seat == 10
