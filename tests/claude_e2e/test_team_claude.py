"""A team beyond the five named workers on the claude backend, offline (the fake CLI behind the
real SDK): the lead's appended system prompt names the whole team, and the lead's task for a
generated worker runs as that worker's own CLI session in its own worktree."""

from __future__ import annotations

from pathlib import Path

from ..claude.fake_claude import FakeClaude, opt
from .harness import Rig, cli_runs, commit, mcp, run, wait_for, write


async def test_the_claude_lead_sees_the_team_and_a_generated_worker_takes_its_task(
        tmp_path: Path, fake: FakeClaude, monkeypatch) -> None:
    plan = run([mcp("create_task", title="Add x", description="x.py", assignee="cedar"), {"text": "One task."}],
               session_id="lead-plan")
    cedar = run([write("x.py", "X = 1\n"), commit("x"), mcp("update_task", status="review"), {"text": "Done."}],
                session_id="cedar-1")
    fake.script(queues={"marlow": [plan], "cedar": [cedar]})
    rig = Rig(tmp_path, fake, monkeypatch, workers=["8"], max_concurrent=4, lead_review=False)
    c = await rig.start()
    try:
        await c.ok({"type": "goal.submit", "text": "add x", "repo": "proj"})
        await wait_for(lambda: c.tasks.get("t1", {}).get("status") in ("review", "done"), 60, "t1 in review")
        lead = str(opt(cli_runs(fake, "marlow")[0]["argv"], "--append-system-prompt"))
        assert ("Your team: 8 workers on shift: juniper, kit, wren, rowan, tove, ash, bryn, cedar; "
                "at most 4 work at once") in lead
        assert c.tasks["t1"]["assignee"] == "cedar"
        assert (rig.worktree("cedar", "t1") / "x.py").read_text() == "X = 1\n"
        assert c.agents["cedar"]["backend"] == "claude" and c.agents["cedar"]["model"] == c.agents["juniper"]["model"]
        assert c.agents["cedar"]["seat"] == 8
    finally:
        await rig.stop()
