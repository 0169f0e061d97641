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

from foreman.core.records import Worktree
from foreman.backends.turns import TurnRequest

from ..conductor.scripted import ScriptedRig, done, write_and_commit
from ..rig import PYPROJECT, git, make_repo, wait_for
from .conftest import RAY, Nodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


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
        try:
            await wait_for(lambda: open_merge(world, "t1") and open_merge(world, "t2"), 120, "two merge decisions")
        except AssertionError:
            raise AssertionError("no two merge decisions; feed:\n" + "\n".join(rig.c.feed())) from None
        for task in ("t1", "t2"):
            rig.d.act(lambda c, now, task=task: c.answer_decision(open_merge(world, task).id, 0, now))
            await rig.wait_status(task, "done", timeout=60)
        placements = list(getattr(rig.backend.executor, "placements", []))
        rig.agents_at_end = dict(world.agents)  # type: ignore[attr-defined]  (the world is gone after stop)
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
    agents = rig.agents_at_end  # type: ignore[attr-defined]
    assert agents["marlow"].node is None and all(turns[a][:8] in (agents[a].node or "") for a in turns)
    # each node kept its own worktree in its own temporary folder
    for agent, node_id in turns.items():
        task = "t1" if agent == "juniper" else "t2"
        assert list(ray_nodes.tmp[node_id].glob(f"foreman-{agent}-*/wt/{task}/.git"))
    assert "farewell-notes.txt" in git(rig.repo, "ls-tree", "--name-only", "main")  # committed at the merge


async def two_parts(req: TurnRequest, tools: Any):
    """Commit part 1, then hang (the node is killed here); resumed elsewhere, commit part 2."""
    if not (req.cwd / "part1.py").exists():
        await write_and_commit(req, "part1.py", "PART = 1\n", "part 1")
        await asyncio.sleep(600)
    await write_and_commit(req, "part2.py", "PART = 2\n", "part 2")
    await tools.call("update_task", {"status": "review"})
    return done("resumed")


async def test_a_node_killed_mid_turn_and_the_task_resumed_elsewhere_with_its_commits(tmp_path: Path,
                                                                                       ray_nodes: Nodes) -> None:
    rig = ScriptedRig.worker(tmp_path, two_parts, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("Two parts", assignee="kit")
        await wait_for(lambda: rig.d.core.record(Worktree, "kit-t1") is not None, 30, "kit's worktree")
        await wait_for(lambda: "part 1" in git(rig.worktree("kit", "t1"), "log", "--format=%s"), 90,
                       "part 1 received by the daemon")
        ex = rig.backend.executor
        lost = ex.workers["kit"].node["node_id"]
        assert lost[:8] in (rig.world.agents["kit"].node or "")  # the agent entity says where it runs
        await asyncio.to_thread(ray_nodes.kill, lost)
        await wait_for(lambda: rig.open_decision("t1") is not None, 120, "the merge decision after the resume")
        feed = "\n".join(rig.c.feed())
        assert f"lost with node {lost[:8]}" in feed and "t1 goes back on the board" in feed
        kit_turns = [p for p in ex.placements if p["what"] == "turn" and p["agent"] == "kit"]
        assert len(kit_turns) == 2 and kit_turns[0]["node_id"] == lost and kit_turns[1]["node_id"] != lost
        assert ex.placements[-1]["what"] == "ci" and ex.placements[-1]["node_id"] == kit_turns[1]["node_id"]
        assert kit_turns[1]["node_id"][:8] in (rig.world.agents["kit"].node or "")  # and where it runs now
        # the resumed turn started from the commit the daemon had received: one part-1 commit, then part 2
        assert git(rig.worktree("kit", "t1"), "log", "--format=%s", "main..HEAD").split() == ["part", "2", "part", "1"]
        assert kit_turns[1]["bytes_out"] > 0  # a new actor gets a full bundle again
        rig.d.act(lambda c, now: c.answer_decision(rig.open_decision("t1").id, 0, now))
        await rig.wait_status("t1", "done", timeout=60)
        assert {"part1.py", "part2.py"} <= set(git(rig.repo, "ls-tree", "--name-only", "main").split())
    finally:
        await rig.stop()


async def asks_permission(req: TurnRequest, tools: Any):
    """Ask for commands the policy sends to the user, and a write inside the node's worktree."""
    from foreman.errors import NotFound

    inside = await tools.permit("Write", {"file_path": str(req.cwd / "inside.py"), "content": "x"})
    first = await tools.permit("Bash", {"command": "curl https://example.com"})
    second = await tools.permit("Bash", {"command": "curl https://example.com"})
    try:
        await tools.call("update_task", {"task": "t99", "status": "review"})
        error = "none"
    except NotFound as exc:
        error = f"NotFound: {exc.message}"
    text = f"inside={inside[0]}\nfirst={first}\nsecond={second}\nerror={error}\n"
    await write_and_commit(req, "answers.txt", text, "answers")
    await tools.call("update_task", {"status": "review"})
    return done()


async def test_a_permission_round_trip_from_a_remote_turn(tmp_path: Path, ray_nodes: Nodes) -> None:
    rig = ScriptedRig.worker(tmp_path, asks_permission, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("Ask first", assignee="kit")
        for option in (0, 1):  # allow once, then deny
            dec = await wait_for(lambda: rig.open_decision("t1", "permission"), 90, "a permission decision")
            assert "curl https://example.com" in dec.prompt and dec.asked_by == "kit"
            rig.d.act(lambda c, now, dec=dec, option=option: c.answer_decision(dec.id, option, now))
            await wait_for(lambda dec=dec: rig.world.decisions[dec.id].status == "answered", 30, "the answer")
        await wait_for(lambda: rig.open_decision("t1") is not None, 90, "the merge decision")
        text = git(rig.worktree("kit", "t1"), "show", "HEAD:answers.txt")
        assert "inside=True" in text  # the node's path was judged as the daemon's worktree
        assert "first=(True, 'the user allowed it')" in text and "second=(False, 'the user denied it')" in text
        assert "error=NotFound: " in text and "t99" in text
        assert [p["what"] for p in rig.backend.executor.placements] == ["turn", "ci"]
    finally:
        await rig.stop()


async def test_ci_lost_with_its_node_runs_again_on_another(tmp_path: Path, ray_nodes: Nodes) -> None:
    async def work_once(req: TurnRequest, tools: Any):
        await write_and_commit(req, "slow.txt", "slow\n", "slow")
        await tools.call("update_task", {"status": "review"})
        return done()

    rig = ScriptedRig.worker(tmp_path, work_once, ray_address=ray_nodes.address, ci="sleep 6", **RAY)
    await rig.start()
    try:
        rig.task("Slow CI", assignee="kit")
        ex = await wait_for(lambda: getattr(rig.backend, "executor", None), 60, "the executor")
        await wait_for(lambda: ex.placements and ex.placements[-1]["what"] == "ci", 90, "CI on a node")
        lost = ex.placements[-1]["node_id"]
        await asyncio.to_thread(ray_nodes.kill, lost)
        await wait_for(lambda: rig.open_decision("t1") is not None, 120, "the merge decision")
        runs = [p for p in ex.placements if p["what"] == "ci"]
        assert [p["node_id"] == lost for p in runs] == [True, False]
        feed = "\n".join(rig.c.feed())
        assert f"CI for t1 was lost with node {lost[:8]}" in feed and "CI passed on t1" in feed
    finally:
        await rig.stop()


def test_doctor_checks_the_cluster_and_each_node(tmp_path: Path, ray_nodes: Nodes) -> None:
    import subprocess
    import sys

    def doctor(resources: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "foreman", "doctor", "--home", str(tmp_path / "h"), "--port", "0",
                               "--executor", "ray", "--ray-address", ray_nodes.address, "--ray-resources", resources],
                              capture_output=True, text=True, timeout=180)

    good = doctor("foreman_worker=1")
    assert f"[ok] Ray cluster at {ray_nodes.address} reachable" in good.stdout, good.stdout + good.stderr
    for node_id in ray_nodes.tmp:
        assert f"node {node_id[:8]}" in good.stdout and "can host workers" in good.stdout
    assert "[ok] 2 node(s) with foreman_worker=1 for the remote workers" in good.stdout
    assert "Python 3." in good.stdout and "git version" in good.stdout
    bad = doctor("gpu_box=1")
    assert bad.returncode == 1 and "[FAIL] 0 node(s) with gpu_box=1 for the remote workers" in bad.stdout


async def test_a_node_that_stops_answering_is_lost_by_its_heartbeat(tmp_path: Path, ray_nodes: Nodes) -> None:
    import os
    import signal

    rig = ScriptedRig.worker(tmp_path, two_parts, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    pid = 0
    try:
        rig.task("Two parts", assignee="kit")
        await wait_for(lambda: rig.d.core.record(Worktree, "kit-t1") is not None, 30, "kit's worktree")
        await wait_for(lambda: "part 1" in git(rig.worktree("kit", "t1"), "log", "--format=%s"), 90,
                       "part 1 received by the daemon")
        ex = rig.backend.executor
        hung = ex.workers["kit"].node
        pid = int(hung["pid"])
        os.kill(pid, signal.SIGSTOP)  # the actor's process freezes: no Ray failure, only silence
        await wait_for(lambda: rig.open_decision("t1") is not None, 120, "the merge decision after the resume")
        feed = "\n".join(rig.c.feed())
        assert f"lost with node {hung['node_id'][:8]}" in feed and "(no heartbeat for 3 s)" in feed
        assert git(rig.worktree("kit", "t1"), "log", "--format=%s", "main..HEAD").split() == ["part", "2", "part", "1"]
    finally:
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)  # (the frozen actor process this test stopped)
            except ProcessLookupError:
                pass
        await rig.stop()


async def drafts(req: TurnRequest, tools: Any):
    """Leave an uncommitted draft, say so, and keep working (until paused)."""
    (req.cwd / "draft.txt").write_text("half done\n")
    tools.activity("editing", "drafting")
    await asyncio.sleep(600)
    return done()


async def test_a_paused_remote_turn_brings_its_uncommitted_work_back(tmp_path: Path, ray_nodes: Nodes) -> None:
    rig = ScriptedRig.worker(tmp_path, drafts, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("Draft", assignee="kit")
        await wait_for(lambda: rig.world.agents["kit"].activity == "drafting", 90, "the draft on the node")
        wt = rig.worktree("kit", "t1")
        assert not (wt / "draft.txt").exists()  # only on the node so far
        await rig.c.ok({"type": "agent.pause", "agent": "kit"})
        await wait_for(lambda: "kit" not in rig.backend.running and "kit" not in rig.backend.cleaning, 60,
                       "the aborted turn's clean-up")
        assert (wt / "draft.txt").read_text() == "half done\n"
    finally:
        await rig.stop()


async def reads_messages(req: TurnRequest, tools: Any):
    """Wait for a message from the user (as a runner reads them between model rounds), commit it."""
    lines: list[str] = []
    for _ in range(900):
        lines = tools.unread()
        if lines:
            break
        await asyncio.sleep(0.1)
    await write_and_commit(req, "inbox.txt", "\n".join(lines) + "\n", "inbox")
    await tools.call("update_task", {"status": "review"})
    return done()


async def test_messages_reach_a_remote_turn_between_its_rounds(tmp_path: Path, ray_nodes: Nodes) -> None:
    rig = ScriptedRig.worker(tmp_path, reads_messages, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("Listen", assignee="kit")
        await wait_for(lambda: getattr(rig.backend, "executor", None) and rig.backend.executor.placements, 90,
                       "kit's turn on a node")
        await rig.c.ok({"type": "message.send", "to": "kit", "text": "use tabs, please"})
        await wait_for(lambda: rig.open_decision("t1") is not None, 90, "the merge decision")
        assert "use tabs, please" in git(rig.worktree("kit", "t1"), "show", "HEAD:inbox.txt")
    finally:
        await rig.stop()


async def test_a_daemon_restart_reschedules_a_remote_turn_on_a_new_actor(tmp_path: Path, ray_nodes: Nodes) -> None:
    rig = ScriptedRig.worker(tmp_path, two_parts, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("Two parts", assignee="kit")
        await wait_for(lambda: rig.d.core.record(Worktree, "kit-t1") is not None, 30, "kit's worktree")
        await wait_for(lambda: "part 1" in git(rig.worktree("kit", "t1"), "log", "--format=%s"), 90,
                       "part 1 received by the daemon")
        first = rig.backend.executor.workers["kit"].node["pid"]
        await rig.stop()  # the daemon stops mid-turn: its actors go with it
        await rig.start()
        await wait_for(lambda: rig.open_decision("t1") is not None, 120, "the merge decision after the restart")
        ex = rig.backend.executor
        assert [p["what"] for p in ex.placements] == ["turn", "ci"] and ex.workers["kit"].node["pid"] != first
        assert git(rig.worktree("kit", "t1"), "log", "--format=%s", "main..HEAD").split() == ["part", "2", "part", "1"]
    finally:
        await rig.stop()


async def breaks_its_worktree(req: TurnRequest, tools: Any):
    """Remove the worktree's .git link on the node: the node's own git steps fail afterwards."""
    (req.cwd / ".git").unlink()
    return done()


async def test_a_failure_of_the_foremans_code_on_a_live_node_blocks_the_task_instead_of_looping(
        tmp_path: Path, ray_nodes: Nodes) -> None:
    rig = ScriptedRig.worker(tmp_path, breaks_its_worktree, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("Break it", assignee="kit")
        await rig.wait_status("t1", "blocked", timeout=90)
        reason = rig.world.tasks["t1"].blocked_reason or ""
        assert "the turn failed on node" in reason and "lost" not in reason, "\n".join(rig.c.feed())
        assert [p["what"] for p in rig.backend.executor.placements] == ["turn"]  # not rescheduled
    finally:
        await rig.stop()


def ends_before_reading(flag: Path):
    """First turn: once the test sent its message (``flag`` exists), ask for messages once (the
    daemon delivers it to the node) and end before reading it. Later turns: commit what they got."""
    async def script(req: TurnRequest, tools: Any):
        seen = flag.with_suffix(".first")
        if not seen.exists():
            seen.write_text("1")
            for _ in range(900):
                if flag.exists():
                    break
                await asyncio.sleep(0.1)
            tools.unread()  # nothing yet: the daemon now sends the message to the node
            await asyncio.sleep(3)  # it arrives in the node's inbox; the turn ends without reading it
            return done()
        lines = [req.prompt, *tools.unread()]
        await write_and_commit(req, "inbox.txt", "\n".join(lines) + "\n", "inbox")
        await tools.call("update_task", {"status": "review"})
        return done()
    return script


async def test_a_message_delivered_to_a_node_but_never_read_stays_unread_for_the_next_turn(
        tmp_path: Path, ray_nodes: Nodes) -> None:
    flag = tmp_path / "sent"
    rig = ScriptedRig.worker(tmp_path, ends_before_reading(flag), ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("Listen late", assignee="kit")
        await wait_for(lambda: flag.with_suffix(".first").exists(), 90, "kit's first turn on a node")
        await rig.c.ok({"type": "message.send", "to": "kit", "text": "use tabs, please"})
        flag.write_text("1")
        await wait_for(lambda: rig.open_decision("t1") is not None, 120, "the merge decision")
        assert "use tabs, please" in git(rig.worktree("kit", "t1"), "show", "HEAD:inbox.txt"), "\n".join(rig.c.feed())
    finally:
        await rig.stop()


async def commits_its_task(req: TurnRequest, tools: Any):
    await write_and_commit(req, f"{req.task}.txt", f"{req.task}\n", req.task or "work")
    await tools.call("update_task", {"status": "review"})
    return done()


async def test_a_node_that_lost_its_repository_gets_the_whole_history_and_the_turn_proceeds(
        tmp_path: Path, ray_nodes: Nodes) -> None:
    import shutil

    rig = ScriptedRig.worker(tmp_path, commits_its_task, ray_address=ray_nodes.address, **RAY)
    await rig.start()
    try:
        rig.task("First", assignee="kit")
        await wait_for(lambda: rig.open_decision("t1") is not None, 90, "t1's merge decision")
        w = rig.backend.executor.workers["kit"]
        shutil.rmtree(Path(w.node["root"]) / "repo.git")  # (the node's temporary folder was cleaned)
        rig.task("Second", assignee="kit")
        await wait_for(lambda: rig.open_decision("t2") is not None, 90, "t2's merge decision")
        assert rig.backend.executor.workers["kit"] is w  # the same actor: not a loss
        assert git(rig.worktree("kit", "t2"), "show", "HEAD:t2.txt") == "t2\n"
        lines = [line.text for line in rig.world.logs.get("kit", [])]
        assert any("whole history" in t for t in lines), lines[-20:]
    finally:
        await rig.stop()
