"""After a hand-off: the old worktree is retired in the background (a busy one never holds the
task, and a restart continues its removal), and a task coming back to an earlier owner starts
from its latest work."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from foreman.core.backoff import Backoff

from ..rig import retiring
from .harness import Rig, Turn, git, wait_for


def on_branch(rig: Rig, branch: str, path: str) -> str:
    return git(rig.repo, "show", f"{branch}:{path}")


def branch_exists(rig: Rig, branch: str) -> bool:
    return subprocess.run(["git", "rev-parse", "--verify", "-q", f"refs/heads/{branch}"], cwd=rig.repo,
                          capture_output=True, check=False).returncode == 0


async def writes(turn: Turn, name: str, text: str) -> None:
    (turn.req.cwd / name).write_text(text)
    await asyncio.Event().wait()


async def test_busy_old_worktree_never_holds_the_handoff_and_is_removed_after_a_restart(tmp_path: Path) -> None:
    rig = Rig(tmp_path, workers=["kit", "wren"])
    rig.puppet.on(("kit", "work"), lambda t: writes(t, "kit.txt", "kit's edit\n"))
    lingering: asyncio.subprocess.Process | None = None
    try:
        client = await rig.start()
        rig.d.backend.removal_backoff = Backoff(initial=0.1, maximum=0.3)
        t1 = rig.task("Extend notes", assignee="kit")
        await rig.turn("kit")
        old_wt = rig.worktree("kit", t1)
        await wait_for(lambda: (old_wt / "kit.txt").exists(), what="kit's edit")
        kit_branch = rig.d.worktree_info(f"kit-{t1}").branch
        # a process the turn's clean-up does not know keeps the directory busy
        lingering = await asyncio.create_subprocess_exec("sleep", "60", cwd=old_wt)

        await client.ok({"type": "task.reassign", "task": t1, "agent": "wren"})
        await rig.turn("wren")  # the hand-off went through while the old directory is busy
        assert (rig.worktree("wren", t1) / "kit.txt").read_text() == "kit's edit\n"
        assert retiring(rig).keys() == {f"kit-{t1}"}
        await wait_for(lambda: rig.d.backend.removal_backoff.delay(f"kit-{t1}") >= 0.2, what="a few retries")
        assert old_wt.exists()
        (old_wt / "late.txt").write_text("written after the hand-off\n")

        await rig.stop()  # the pending removal is durable
        lingering.kill()
        await lingering.wait()
        await rig.start()
        await wait_for(lambda: not old_wt.exists() and not retiring(rig), what="the removal")
        assert branch_exists(rig, kit_branch)
        assert on_branch(rig, kit_branch, "kit.txt") == "kit's edit\n"
        assert on_branch(rig, kit_branch, "late.txt") == "written after the hand-off\n"  # nothing lost
        assert any("late work found in kit's old worktree" in f.text for f in rig.world.feed)
        task = rig.world.tasks[t1]
        assert (task.status, task.assignee) == ("doing", "wren")
    finally:
        if lingering is not None and lingering.returncode is None:
            lingering.kill()
            await lingering.wait()
        await rig.stop()


@pytest.mark.parametrize("old_dir", ["removed", "busy"])
async def test_task_back_to_an_earlier_owner_starts_from_the_latest_work(tmp_path: Path, old_dir: str) -> None:
    """kit -> wren -> kit: kit's second worktree holds wren's work too. With ``busy``, kit's old
    directory is still busy (and gets a late write) when the task comes back: the start waits
    for it with backoff, and kit's late commit, which wren's branch lacks, is kept on a side branch."""
    rig = Rig(tmp_path, workers=["kit", "wren"])
    seen: dict[str, dict[str, bool]] = {}

    async def kit_again(turn: Turn) -> None:
        seen["kit"] = {n: (turn.req.cwd / n).exists() for n in ("kit.txt", "wren.txt", "late.txt")}
        await asyncio.Event().wait()

    rig.puppet.on(("kit", "work"), lambda t: writes(t, "kit.txt", "kit\n"), kit_again)
    rig.puppet.on(("wren", "work"), lambda t: writes(t, "wren.txt", "wren\n"))
    lingering: asyncio.subprocess.Process | None = None
    try:
        client = await rig.start()
        rig.d.backend.removal_backoff = Backoff(initial=0.1, maximum=0.2)
        t1 = rig.task("Extend notes", assignee="kit")
        await rig.turn("kit")
        kit_wt = rig.worktree("kit", t1)
        kit_branch = rig.d.worktree_info(f"kit-{t1}").branch
        await wait_for(lambda: (kit_wt / "kit.txt").exists(), what="kit's edit")
        if old_dir == "busy":
            lingering = await asyncio.create_subprocess_exec("sleep", "60", cwd=kit_wt)

        await client.ok({"type": "task.reassign", "task": t1, "agent": "wren"})
        await rig.turn("wren")
        wren_wt = rig.worktree("wren", t1)
        await wait_for(lambda: (wren_wt / "wren.txt").exists(), what="wren's edit")
        if old_dir == "removed":
            await wait_for(lambda: not kit_wt.exists(), what="kit's old worktree removed")
        else:
            (kit_wt / "late.txt").write_text("late\n")
        wren_branch = rig.world.tasks[t1].branch

        await client.ok({"type": "task.reassign", "task": t1, "agent": "kit"})
        if lingering is not None:
            await asyncio.sleep(0.5)
            assert len(rig.puppet.of("kit")) == 1 and kit_wt.exists()  # waits for the busy directory
            lingering.kill()
            await lingering.wait()
        await rig.turn("kit", 2, timeout=20)

        assert seen["kit"] == {"kit.txt": True, "wren.txt": True, "late.txt": False}
        assert rig.worktree("kit", t1) == kit_wt and git(kit_wt, "status", "--porcelain") == ""
        assert git(kit_wt, "rev-parse", "HEAD").strip() == git(rig.repo, "rev-parse", wren_branch).strip()
        task = rig.world.tasks[t1]
        assert (task.status, task.assignee, task.branch) == ("doing", "kit", kit_branch)
        assert "take over" in rig.puppet.of("kit")[1].req.prompt and "from wren" in rig.puppet.of("kit")[1].req.prompt
        kept = [b for b in git(rig.repo, "branch", "--list", "--format=%(refname:short)").split() if "-kept-" in b]
        if old_dir == "busy":
            assert len(kept) == 1 and kept[0].startswith(kit_branch + "-kept-")
            assert on_branch(rig, kept[0], "late.txt") == "late\n"  # kit's late write is not lost
            assert any(kept[0] in f.text for f in rig.world.feed)
        else:
            assert kept == []
        await wait_for(lambda: not wren_wt.exists() and not retiring(rig), what="wren's worktree removed")
        assert on_branch(rig, wren_branch, "wren.txt") == "wren\n"
    finally:
        if lingering is not None and lingering.returncode is None:
            lingering.kill()
            await lingering.wait()
        await rig.stop()
