"""The claude backend, offline (the fake CLI behind the real SDK): the repository's AGENTS.md
reaches the CLI in the appended system prompt while no settings source is loaded (the user's
~/.claude stays out), and the cost the CLI reports lands on the agent, task and goal and
survives a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..claude.fake_claude import FakeClaude, opt
from .harness import PROJECT, Rig, cli_runs, commit, mcp, run, wait_for, write
from .. import rig as rigmod


async def test_agents_md_reaches_the_cli_and_cost_lands_on_entities(tmp_path: Path, fake: FakeClaude, monkeypatch) -> None:
    home = tmp_path / "userhome"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("USER-LEVEL RULE: always answer in French.\n")
    monkeypatch.setenv("HOME", str(home))
    repo = rigmod.make_repo(tmp_path, files={**PROJECT, "AGENTS.md": "PROJECT RULE: keep functions pure.\n"})
    fake.script(queues={"kit": [run([write("x.py", "X = 1\n"), commit("x"), mcp("update_task", status="review")],
                                    session_id="kit-1", cost=0.25)]})
    rig = Rig(tmp_path, fake, monkeypatch, repo=repo, lead_review=False)
    c = await rig.start()
    try:
        goal = rig.d.act(lambda core, now: core.submit_goal("x", now, repo="proj")).id
        t1 = rig.task("Add x", assignee="kit", goal=goal)
        await wait_for(lambda: c.tasks.get(t1, {}).get("status") in ("review", "done"), 30, "t1 in review")
        argv = cli_runs(fake, "kit")[0]["argv"]
        system = str(opt(argv, "--append-system-prompt"))
        assert "PROJECT RULE: keep functions pure." in system and "(AGENTS.md)" in system
        assert "USER-LEVEL RULE" not in " ".join(argv)
        assert opt(argv, "--setting-sources") in ("", None, True)  # no user (nor project) settings loaded
        await wait_for(lambda: rig.world.agents["kit"].usage.turns == 1, 10, "usage recorded")
        assert rig.world.agents["kit"].usage.cost_usd == pytest.approx(0.25)
        assert rig.world.tasks[t1].usage.cost_usd == pytest.approx(0.25)
        assert rig.world.goals[goal].usage.cost_usd == pytest.approx(0.25)
    finally:
        await rig.stop()
    await rig.start()
    try:
        assert rig.world.agents["kit"].usage.cost_usd == pytest.approx(0.25)
        assert rig.world.goals[goal].usage.cost_usd == pytest.approx(0.25)
    finally:
        await rig.stop()
