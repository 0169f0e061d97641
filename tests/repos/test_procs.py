"""Process trees: whole-tree aborts, orphans found by session or by the turn's environment marker,
reused pids never signalled."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from foreman.procs import (
    MARKER_ENV,
    ProcRef,
    abort,
    find_by_marker,
    kill_by_marker,
    new_marker,
    kill_tree,
    session_members,
    snapshot_tree,
    spawn,
    wait_exit,
)

from ..rig import start_process, wait_for

pytestmark = pytest.mark.timeout(60)

# The leader ignores SIGTERM, starts a child and a grandchild that ignore it too, and an orphan:
# a process whose parent exits at once, so it is re-parented away from the tree.
STUBBORN = r"""
trap '' TERM
sh -c "trap '' TERM; sleep 1000 & echo \$! > grandchild.pid; sleep 1000" &
sh -c "sleep 1000 & echo \$! > orphan.pid"
while [ ! -s grandchild.pid ] || [ ! -s orphan.pid ]; do sleep 0.01; done
echo ready
sleep 1000
"""


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_abort_kills_a_stubborn_tree_with_orphans(tmp_path: Path) -> None:
    proc = await start_process("sh", "-c", STUBBORN, cwd=tmp_path)
    try:
        await _stubborn(proc, tmp_path)
    finally:
        await abort(proc, grace=0.1)


async def _stubborn(proc: asyncio.subprocess.Process, tmp_path: Path) -> None:
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 10) == b"ready\n"
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    orphan = int((tmp_path / "orphan.pid").read_text())
    assert psutil.Process(orphan).ppid() != proc.pid and orphan not in [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    tree = snapshot_tree(proc.pid)
    pids = {r.pid for r in tree}
    assert {proc.pid, grandchild, orphan} <= pids and tree[0].pid == proc.pid
    report = await abort(proc, grace=0.3)
    assert proc.returncode is not None and report.survivors == []
    assert all(gone(pid) for pid in pids)
    assert session_members(tree[0]) == []


async def test_orphans_are_found_after_the_leader_exited(tmp_path: Path) -> None:
    popen = spawn("sh", "-c", "read go; sleep 1000 & echo $! > bg.pid", cwd=tmp_path, stdin=subprocess.PIPE,
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    leader = ProcRef.of(popen.pid)  # recorded at start, as the daemon does
    assert leader is not None
    try:
        assert popen.stdin is not None
        popen.stdin.write(b"go\n")
        popen.stdin.close()
        assert await asyncio.wait_for(wait_exit(popen), 10) == 0
        background = int((tmp_path / "bg.pid").read_text())
        assert not gone(background)
        assert [r.pid for r in session_members(leader)] == [background]
        report = await abort(leader, grace=1.0)
        assert gone(background) and [r.pid for r in report.signalled] == [background]
    finally:
        await abort(leader, grace=0.1)


async def test_a_reused_pid_is_never_signalled() -> None:
    bystander = await asyncio.create_subprocess_exec("sleep", "30")  # same session as the tests: not ours
    try:
        real = ProcRef.of(bystander.pid)
        assert real is not None
        stale = ProcRef(bystander.pid, real.create_time - 100.0)  # what we recorded for an older process
        assert not stale.alive()
        assert await kill_tree([stale], grace=0.1) == []
        report = await abort(stale, grace=0.1)
        assert report.skipped == [stale] and report.signalled == []
        assert bystander.returncode is None and real.alive()
    finally:
        bystander.kill()
        await bystander.wait()


async def test_abort_of_a_finished_process_is_a_no_op(tmp_path: Path) -> None:
    proc = await start_process("true", cwd=tmp_path)
    await proc.wait()
    report = await abort(proc, grace=0.1)
    assert report.signalled == [] and report.survivors == []


async def test_process_that_exits_on_sigterm_is_not_killed_hard(tmp_path: Path) -> None:
    proc = await start_process("sleep", "1000", cwd=tmp_path)
    report = await abort(proc, grace=5.0)
    assert proc.returncode == -15 and len(report.signalled) == 1


async def test_spawn_wait_exit_and_abort_a_popen(tmp_path: Path) -> None:
    quick = spawn("sh", "-c", "exit 7", cwd=tmp_path)
    assert await asyncio.wait_for(wait_exit(quick), 10) == 7
    slow = spawn("sh", "-c", "trap '' TERM; : > trapped; sleep 1000", cwd=tmp_path)
    ready = tmp_path / "trapped"  # a SIGTERM before the shell set its trap would end it as -15 (seen under load)
    await wait_for(lambda: ready.exists(), 10, "the shell's trap")
    report = await abort(slow, grace=0.2)
    assert slow.returncode == -9 and report.survivors == []


# Starts a command detached in a session of its own (as the Claude Code CLI starts Bash commands),
# one that ignores SIGTERM, and exits: both are re-parented away, out of the leader's session.
DETACHED = r"""
read go
setsid sleep 1000 > /dev/null 2>&1 < /dev/null &
echo $! > detached.pid
setsid sh -c "trap '' TERM; exec sleep 1000" > /dev/null 2>&1 < /dev/null &
echo $! > stubborn.pid
"""


async def _start_detached(tmp_path: Path, name: str, marker: str | None, started: list[ProcRef]) -> list[ProcRef]:
    """Run DETACHED in ``tmp_path/name`` with ``marker`` (or none) in its environment; return the
    refs of its two detached processes once its own leader has exited (each also added to
    ``started`` at once, for the test's cleanup)."""
    where = tmp_path / name
    where.mkdir()
    env = {k: v for k, v in os.environ.items() if k != MARKER_ENV}
    if marker is not None:
        env[MARKER_ENV] = marker
    popen = spawn("sh", "-c", DETACHED, cwd=where, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL)
    leader = ProcRef.of(popen.pid)  # recorded at start, as the daemon does
    assert leader is not None and popen.stdin is not None
    popen.stdin.write(b"go\n")
    popen.stdin.close()
    assert await asyncio.wait_for(wait_exit(popen), 10) == 0
    refs = []
    for f in ("detached.pid", "stubborn.pid"):
        ref = ProcRef.of(int((where / f).read_text()))
        assert ref is not None
        started.append(ref)
        await wait_for(lambda r=ref: os.getsid(r.pid) == r.pid, 10, "setsid")  # a session of its own
        assert ref.pid != leader.pid
        refs.append(ref)
    assert session_members(leader) == []  # the session sweep cannot see them
    await abort(leader, grace=0.1)
    assert all(r.alive() for r in refs)  # nor can the tree sweep
    return refs


async def test_detached_processes_are_killed_by_their_turn_marker_only(tmp_path: Path) -> None:
    mine, other = new_marker("scope", "kit:1"), new_marker("scope", "kit:1")  # same turn id, a later run
    assert mine != other
    started: list[ProcRef] = []
    try:
        ours = await _start_detached(tmp_path, "ours", mine, started)
        theirs = await _start_detached(tmp_path, "theirs", other, started)
        unmarked = await _start_detached(tmp_path, "unmarked", None, started)
        assert sorted(find_by_marker(mine)) == sorted(ours)
        killed = await kill_by_marker(mine, grace=0.3)
        assert killed == sorted(r.pid for r in ours)
        assert all(gone(r.pid) for r in ours)  # the one ignoring SIGTERM too (SIGKILL after the grace)
        assert all(r.alive() for r in theirs + unmarked)
        assert find_by_marker(mine) == [] and await kill_by_marker(mine, grace=0.1) == []
        assert find_by_marker("") == []
    finally:
        await kill_tree(started, grace=0.0)


# A marked shell runs a marked sweeper (python) and a marked sleep; the sweeper kills by the
# marker it carries itself: the sleep dies, the sweeper and its parent shell survive.
SWEEPER = r"""
sleep 1000 &
echo $! > sleep.pid
"$PYTHON" -c 'import asyncio, os
from foreman.procs import MARKER_ENV, kill_by_marker
print(asyncio.run(kill_by_marker(os.environ[MARKER_ENV], grace=1.0)))'
echo survived
"""


async def test_the_marker_sweep_never_kills_the_sweeper_or_its_parents(tmp_path: Path) -> None:
    marker = new_marker("scope", "lead:1")
    env = {**os.environ, MARKER_ENV: marker, "PYTHON": sys.executable}
    proc = await start_process("sh", "-c", SWEEPER, cwd=tmp_path, env=env)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        sleeper = int((tmp_path / "sleep.pid").read_text())
        assert out.decode().split() == [f"[{sleeper}]", "survived"], err.decode()
        assert gone(sleeper) and proc.returncode == 0
    finally:
        await abort(proc, grace=0.1)
