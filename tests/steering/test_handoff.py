"""Hand-off without loss: a stopped or reassigned worker's edits and processes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from foreman.procs import ProcRef

from ..rig import retiring
from .harness import Rig, Turn, git, wait_for


def processes_inside(path: Path) -> list[int]:
    """Pids whose working directory is inside ``path``."""
    found = []
    for proc in psutil.process_iter(["cwd"]):
        cwd = proc.info.get("cwd")
        if cwd and (cwd == str(path) or cwd.startswith(str(path) + os.sep)):
            found.append(proc.pid)
    return found


@pytest.mark.parametrize("how", ["stop", "reassign"])
async def test_handoff_keeps_uncommitted_work_and_leaves_no_process(tmp_path: Path, how: str) -> None:
    rig = Rig(tmp_path, workers=["kit"] if how == "stop" else ["kit", "wren"])
    started: dict[str, ProcRef] = {}
    seen_at_takeover: dict[str, bool] = {}

    async def kit_works(turn: Turn) -> None:
        (turn.req.cwd / "notes.txt").write_text("first line\nkit's second line\n")
        (turn.req.cwd / "draft.md").write_text("# Draft by kit\n")
        proc = await turn.start_command("sleep", "30")
        started["sleep"] = ProcRef.of(proc.pid)
        await turn.tools.call("ask_user", {"question": "Tabs or spaces?", "options": ["Tabs", "Spaces"]})
        await asyncio.Event().wait()

    async def wren_takes_over(turn: Turn) -> None:
        seen_at_takeover["old process alive"] = started["sleep"].alive()
        await asyncio.Event().wait()

    rig.puppet.on(("kit", "work"), kit_works)
    rig.puppet.on(("wren", "work"), wren_takes_over)
    try:
        client = await rig.start()
        t1 = rig.task("Extend notes", assignee="kit")
        first = await rig.turn("kit")
        question = await wait_for(lambda: next((d for d in rig.world.decisions.values()
                                                if d.asked_by == "kit" and d.status == "open"), None))
        await client.ok({"type": "decision.answer", "decision": question.id, "option": 1, "text": "four of them"})
        await wait_for(lambda: "sleep" in started)
        old_wt = rig.worktree("kit", t1)
        assert git(old_wt, "status", "--porcelain").strip()  # uncommitted work, a command running

        if how == "stop":
            await client.ok({"type": "agent.stop", "agent": "kit"})
            await client.ok({"type": "task.reassign", "task": t1, "agent": "wren"})
            await client.ok({"type": "agent.spawn", "agent": "wren"})
        else:
            await client.ok({"type": "task.reassign", "task": t1, "agent": "wren"})

        taking = await rig.turn("wren")
        assert first.cancelled
        assert seen_at_takeover == {"old process alive": False}
        new_wt = rig.worktree("wren", t1)
        assert new_wt != old_wt
        assert (new_wt / "notes.txt").read_text() == "first line\nkit's second line\n"
        assert (new_wt / "draft.md").read_text() == "# Draft by kit\n"
        assert git(new_wt, "status", "--porcelain") == ""
        kit_branch = rig.d.worktree_info(f"kit-{t1}").branch
        assert git(rig.repo, "log", "-1", "--format=%an|%s", kit_branch).strip() == \
            f"AgentCraft Kit|Hand-off of {t1}: work in progress by kit"
        # the old worktree is retired: its directory goes, its branch (with all its work) stays
        await wait_for(lambda: not old_wt.exists() and not retiring(rig), what="old worktree removed")
        assert processes_inside(old_wt) == []
        assert f"worktree {old_wt}" not in git(rig.repo, "worktree", "list", "--porcelain")
        head_new = git(new_wt, "rev-parse", "HEAD").strip()
        assert head_new == git(rig.repo, "rev-parse", kit_branch).strip()
        prompt = taking.req.prompt
        assert f"take over {t1} from kit" in prompt
        assert "Tabs or spaces? -> Spaces (four of them)" in prompt
        task = rig.world.tasks[t1]
        assert task.status == "doing" and task.assignee == "wren" and task.branch != kit_branch
    finally:
        await rig.stop()
