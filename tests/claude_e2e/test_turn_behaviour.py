"""One worker on the whole daemon with the fake CLI: world mapping, the permission round trip,
a failed turn and its retry (with per-turn costs), and abort through agent.pause / agent.resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..claude.fake_claude import FakeClaude, opt
from .harness import Rig, bash, cli_runs, commit, edit, live, mcp, read, run, wait_for, write

pytestmark = pytest.mark.timeout(90)


def pairs(upserts: list[dict]) -> list[tuple[str, str]]:
    """(state, station) of each agent.upsert, consecutive repeats dropped."""
    out: list[tuple[str, str]] = []
    for a in upserts:
        pair = (a["state"], a["station"])
        if not out or out[-1] != pair:
            out.append(pair)
    return out


async def test_world_mapping_of_a_claude_turn(tmp_path: Path, fake: FakeClaude, monkeypatch) -> None:
    fake.script(queues={"kit": [run([
        {"text": "Let me look around first."},
        read("proj.py"),
        write("notes.md", "draft\n"),
        edit("notes.md", "draft", "final"),
        bash("python3 -m unittest -q"),
        commit("notes"),
        mcp("ask_user", question="Should notes.md stay?", options=["Keep it", "Drop it"]),
        {"text": "Keeping the notes as you said."},
        mcp("update_task", status="review"),
    ], session_id="kit-map")]})
    rig = Rig(tmp_path, fake, monkeypatch, lead_review=False)
    c = await rig.start()
    try:
        task = rig.task("Write notes", assignee="kit")
        question = await wait_for(lambda: c.open_decisions("question", askedBy="kit"), 30, "kit's question")
        assert question[0]["prompt"] == "Should notes.md stay?" and question[0]["task"] == task
        assert c.agents["kit"]["state"] == "waiting_user" and c.agents["kit"]["station"] == "user"
        await c.answer(question[0], 0)
        await wait_for(lambda: c.open_decisions("merge", task=task), 30, "the merge decision")

        seen = pairs(c.upserts("kit"))
        expected = [("reading", "library"), ("editing", "desk"), ("testing", "testbench"), ("running", "terminal"),
                    ("waiting_user", "user")]
        positions = [seen.index(p) for p in expected]
        assert positions == sorted(positions), seen
        activities = [a["activity"] for a in c.upserts("kit")]
        assert "Read proj.py" in activities and "Edit notes.md" in activities
        assert "python3 -m unittest -q" in activities
        # streamed text became log lines; tool calls too
        lines = c.log_lines("kit")
        texts = [ln["text"] for ln in lines if ln["kind"] == "text"]
        assert "Let me look around first." in texts and "Keeping the notes as you said." in texts
        assert any(ln["kind"] == "tool" and ln["text"] == "Bash: python3 -m unittest -q" for ln in lines)
        # the answer reached the model as the ask_user tool result
        answers = [e["text"] for e in fake.events("mcp_result") if e["mcp_result"] == "ask_user"]
        assert answers == ["The user answered: Keep it"]
        assert (rig.worktree("kit", task) / "notes.md").read_text() == "final\n"
    finally:
        await rig.stop()


async def test_permission_round_trip(tmp_path: Path, fake: FakeClaude, monkeypatch) -> None:
    first = run([
        bash("mkdir -p build && touch build/keep"),
        bash("rm -r build"),            # ask -> Deny
        bash("test -d build && echo still-there"),
        bash("rm -r build"),            # ask -> Allow
        bash("mkdir -p build"),
        bash("rm -r build"),            # ask -> Always allow for this agent
        bash("git push origin main"),   # deny-level: never a decision
        mcp("update_task", status="review"),
    ], session_id="kit-perm-1")
    second = run([bash("mkdir -p build/sub && rm -r build"), mcp("update_task", status="review")],
                 session_id="kit-perm-2")
    fake.script(queues={"kit": [first, second]})
    rig = Rig(tmp_path, fake, monkeypatch, lead_review=False)
    c = await rig.start()
    try:
        t1 = rig.task("Clean the build", assignee="kit")
        wt = rig.worktree
        answered: list[str] = []
        for option in (1, 0, 2):  # Deny, Allow, Always allow for this agent
            dec = await wait_for(lambda: [d for d in c.open_decisions("permission", askedBy="kit")
                                          if d["id"] not in answered], 30, "a permission decision")
            assert "rm -r build" in dec[0]["prompt"] and dec[0]["task"] == t1
            assert dec[0]["options"][2].lower().startswith("always allow")
            if option == 1:
                assert (wt("kit", t1) / "build" / "keep").exists()
            answered.append(dec[0]["id"])
            await c.answer(dec[0], option)
        await wait_for(lambda: c.tasks.get(t1, {}).get("status") in ("done", "review"), 30, "t1 finished")
        bash_permissions = [(e["behavior"], e.get("message", "")) for e in fake.events("permission")
                            if e["permission"] == "Bash"]
        assert [b for b, _ in bash_permissions] == ["allow", "deny", "allow", "allow", "allow", "allow", "deny"]
        assert bash_permissions[1][1] == "the user denied it"
        assert "git push" in bash_permissions[6][1]
        ran = fake.commands()
        # Deny: the command did not run (the directory was still there); Allow: it ran
        assert ran.count("rm -r build") == 2 and "git push origin main" not in ran
        assert any(e["output"] == "still-there" for e, command in zip(fake.events("ran"), fake.commands())
                   if command.startswith("test -d"))
        assert not (wt("kit", t1) / "build").exists()
        assert rig.world.meta["grants"]["kit"] == ["Bash:rm -r"]
        assert not [d for d in c.decisions.values() if "git push" in d["prompt"]]

        # another turn (a new task, a new session): the grant holds, no decision
        t2 = rig.task("Clean again", assignee="kit")
        await wait_for(lambda: c.tasks.get(t2, {}).get("status") in ("done", "review"), 30, "t2 finished")
        assert len([d for d in c.decisions.values() if d["kind"] == "permission"]) == 3
        assert fake.commands()[-1] == "mkdir -p build/sub && rm -r build"
        assert not (wt("kit", t2) / "build").exists()
        assert len(cli_runs(fake, "kit")) == 2
    finally:
        await rig.stop()


async def test_failed_turn_blocks_the_task_and_retry_runs_it_again(tmp_path: Path, fake: FakeClaude,
                                                                   monkeypatch) -> None:
    failing = run([{"text": "Starting."}, {"api_error": {"status": 529, "message": "Overloaded"}}],
                  session_id="kit-f", cost=0.3)
    again = run([write("fixed.py", "X = 1\n"), commit("fixed"), mcp("update_task", status="review")],
                expect_resume="kit-f", cost=0.2)
    fake.script(queues={"kit": [failing, again]})
    rig = Rig(tmp_path, fake, monkeypatch, lead_review=False)
    c = await rig.start()
    try:
        t1 = rig.task("Fix it", assignee="kit")
        await wait_for(lambda: c.tasks.get(t1, {}).get("status") == "blocked", 30, "the task blocked")
        assert "529" in c.tasks[t1]["blockedReason"] and "Overloaded" in c.tasks[t1]["blockedReason"]
        assert c.agents["kit"]["state"] == "error"
        assert any(ln["kind"] == "error" and "529" in ln["text"] for ln in c.log_lines("kit"))
        assert rig.world.meta["costs"]["agent"]["kit"] == pytest.approx(0.3)

        await c.ok({"type": "task.retry", "task": t1})
        await wait_for(lambda: c.open_decisions("merge", task=t1), 30, "the retried task's merge decision")
        runs = cli_runs(fake, "kit")
        assert len(runs) == 2 and opt(runs[1]["argv"], "--resume") == "kit-f"
        assert c.agents["kit"]["state"] != "error"
        costs = rig.world.meta["costs"]
        assert costs["agent"]["kit"] == pytest.approx(0.5) and costs["task"][t1] == pytest.approx(0.5)
    finally:
        await rig.stop()


async def test_pause_kills_a_stubborn_cli_tree_before_the_next_turn(tmp_path: Path, fake: FakeClaude,
                                                                     monkeypatch) -> None:
    pids = str(fake.pids_path)
    stubborn = run([{"spawn": {"ignore_sigterm": True}}, {"spawn": {"ignore_sigterm": True, "orphan": True}},
                    {"text": "Working on it."}, {"hang": True}],
                   session_id="kit-a", ignore_sigterm=True, ignore_interrupt=True, ignore_eof=True, pids_file=pids)
    after = run([mcp("update_task", status="blocked", note="paused work resumed")], check_dead=pids,
                expect_resume="kit-a")
    fake.script(queues={"kit": [stubborn, after]})
    rig = Rig(tmp_path, fake, monkeypatch, lead_review=False)
    c = await rig.start()
    try:
        t1 = rig.task("Long work", assignee="kit")
        await wait_for(lambda: len(fake.pids()) == 3, 30, "the CLI and its two children")
        await wait_for(lambda: c.agents["kit"]["activity"] == "Working on it." or
                       any(ln["text"] == "Working on it." for ln in c.log_lines("kit")), 10, "the turn running")
        tree = fake.pids()
        assert len(live(tree)) == 3
        await c.ok({"type": "agent.pause", "agent": "kit"})
        await c.ok({"type": "agent.resume", "agent": "kit"})  # at once: the next turn must wait for the clean-up
        await wait_for(lambda: c.tasks.get(t1, {}).get("status") == "blocked", 30, "the resumed turn")
        assert live(tree) == []
        runs = cli_runs(fake, "kit")
        assert len(runs) == 2 and opt(runs[1]["argv"], "--resume") == "kit-a"
        (check,) = fake.events("check_dead")
        assert sorted(check["check_dead"]) == sorted(tree) and check["alive"] == []
        assert fake.events("interrupt"), "the turn was interrupted first"
    finally:
        await rig.stop()
