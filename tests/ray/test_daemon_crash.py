"""A daemon SIGKILLed during a remote turn (issue 17 item 3: "a daemon restart reattaches to live
actors or reschedules their tasks"): the Foreman reschedules. Ray ends the dead driver's actors,
so no orphaned actor keeps working on the node; the restarted daemon runs the task on a new actor
from the last branch bundle it received (the part-1 commit, the same commit), and nothing
acknowledged is lost. Real processes: the daemon is a child process, killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from foreman.config import resolve

from ..conductor.scripted import ScriptedRunner
from ..rig import PYPROJECT, conductor_daemon, git, make_repo, wait_for
from .conftest import ROOT, Nodes
from .crash_child import crash_flags, part_one_then_hang

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def received(home: Path) -> Path | None:
    """The daemon's worktree of Kit's task, once the part-1 commit is in it."""
    for wt in home.glob("*/worktrees/*/kit-t1"):
        if (wt / "part1.py").exists() and "part 1" in git(wt, "log", "-1", "--format=%s"):
            return wt
    return None


async def test_a_daemon_killed_mid_remote_turn_reschedules_it_from_the_last_bundle(tmp_path: Path,
                                                                                  ray_nodes: Nodes) -> None:
    repo = make_repo(tmp_path, files=PYPROJECT)
    home = tmp_path / "home"
    child = subprocess.Popen([sys.executable, "-m", "tests.ray.crash_child", str(home), str(repo), ray_nodes.address],
                             cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    daemon = None
    actor = 0
    try:
        wt = await wait_for(lambda: received(home) or child.poll() is not None, 150, "part 1 in the daemon's worktree")
        assert child.poll() is None, child.stderr.read().decode()[-3000:] if child.stderr else ""
        part1 = git(wt, "rev-parse", "HEAD").strip()  # acknowledged: the daemon has it in the agent's branch
        actor = int((wt / "part1.py").read_text().split("=")[1])
        assert alive(actor), "the node's actor should be running the hung turn"
        child.send_signal(signal.SIGKILL)  # a crash: no clean-up, no recall of the turn
        child.wait(10)

        deadline = time.monotonic() + 60
        while alive(actor) and time.monotonic() < deadline:  # Ray ends a dead driver's actors
            time.sleep(0.5)
        assert not alive(actor), "the crashed daemon's actor is still running on its node"

        daemon = conductor_daemon(resolve(crash_flags(home, repo, ray_nodes.address), env={}),
                                  ScriptedRunner(lambda req: part_one_then_hang), name="scripted")
        await daemon.start()
        world = daemon.core.world
        await wait_for(lambda: any(d.kind == "merge" and d.task == "t1" and d.status == "open"
                                   for d in world.decisions.values()), 150, "the merge decision after the restart")
        ex = daemon.backend.executor
        assert [p["what"] for p in ex.placements] == ["turn", "ci"]  # the task ran again, remotely
        assert ex.workers["kit"].node["pid"] != actor
        log = git(wt, "log", "--format=%H %s", "main..HEAD").splitlines()
        assert [line.split(" ", 1)[1] for line in log] == ["part 2", "part 1"]
        assert log[1].split()[0] == part1  # resumed from the very commit received before the crash
        assert world.tasks["t1"].status == "review"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        if daemon is not None:
            await daemon.stop()
        if actor and alive(actor):
            os.kill(actor, signal.SIGKILL)
