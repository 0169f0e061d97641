"""A hand-off waits for a running command that ignores SIGTERM before the new owner starts
(issue 12 item 20): the old turn's process tree is killed (SIGKILL after the grace) first."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from foreman.procs import ProcRef

from .harness import Rig, Turn, wait_for


async def test_reassign_waits_for_a_command_that_ignores_sigterm(tmp_path: Path) -> None:
    rig = Rig(tmp_path, workers=["kit", "wren"])
    started: dict[str, ProcRef] = {}
    trapped = tmp_path / "trapped"
    seen: dict[str, bool] = {}

    async def kit_works(turn: Turn) -> None:
        (turn.req.cwd / "kit.txt").write_text("kit\n")
        proc = await turn.start_command("sh", "-c", f"trap '' TERM; : > {shlex.quote(str(trapped))}; sleep 60")
        started["stubborn"] = ProcRef.of(proc.pid)
        await asyncio.Event().wait()

    async def wren_takes_over(turn: Turn) -> None:
        seen["stubborn alive at take-over"] = started["stubborn"].alive()
        seen["kit's work there"] = (turn.req.cwd / "kit.txt").exists()
        await asyncio.Event().wait()

    rig.puppet.on(("kit", "work"), kit_works)
    rig.puppet.on(("wren", "work"), wren_takes_over)
    async with rig:
        t1 = rig.task("Stubborn command", assignee="kit")
        await wait_for(lambda: "stubborn" in started, what="kit's command")
        await wait_for(trapped.exists, what="the shell's trap")  # (a SIGTERM before it would end it early)
        await rig.c.ok({"type": "task.reassign", "task": t1, "agent": "wren"})
        await rig.turn("wren")
        assert seen == {"stubborn alive at take-over": False, "kit's work there": True}
