"""Crash recovery covers CI (issue 12 item 9): a CI run that survived a SIGKILLed daemon is
recorded (pid + creation time) and killed at the next start, before CI runs again; a restart
never runs a second CI beside a surviving one. Real processes, real git, the daemon killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from foreman.config import resolve

from ..rig import conductor_daemon, make_repo, wait_for
from .ci_child import ci_flags, work
from .scripted import ScriptedRunner

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.timeout(120)
async def test_a_ci_run_that_survived_a_crash_is_killed_before_ci_runs_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    home = tmp_path / "home"
    runs, seen = tmp_path / "ci-runs", tmp_path / "ci-saw-alive"
    script = tmp_path / "ci.sh"
    script.write_text(  # each run: note any earlier run still alive, record itself; the first one hangs
        f'for p in $(cat {runs} 2>/dev/null); do\n'
        f'  s=$(cut -d")" -f2 /proc/$p/stat 2>/dev/null | cut -c2)\n'  # the process state; Z: a zombie
        f'  [ -n "$s" ] && [ "$s" != Z ] && echo "$$ saw $p" >> {seen}\n'
        'done\n'
        f'echo $$ >> {runs}\n'
        f'[ "$(wc -l < {runs})" -eq 1 ] && exec sleep 1000\n'
        'exit 0\n')
    ci = f"sh {script}"
    child = subprocess.Popen([sys.executable, "-m", "tests.conductor.ci_child", str(home), str(repo), ci], cwd=ROOT,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    daemon = None
    first = 0
    try:
        await wait_for(lambda: runs.exists() and runs.read_text().strip() or child.poll() is not None, 60,
                       "the first CI run")
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        first = int(runs.read_text().split()[0])
        child.send_signal(signal.SIGKILL)  # a crash: no clean-up of any kind
        child.wait(10)
        assert alive(first), "the CI run should survive its daemon (it runs in its own session)"

        daemon = conductor_daemon(resolve(ci_flags(home, repo, ci), env={}), ScriptedRunner(lambda req: work),
                                  name="scripted")
        await daemon.start()
        world = daemon.core.world
        await wait_for(lambda: any(d.kind == "merge" and d.status == "open" for d in world.decisions.values()), 60,
                       "the merge decision after CI ran again")
        assert not alive(first), "the surviving CI run was not killed"
        assert len(runs.read_text().split()) == 2, runs.read_text()
        assert not seen.exists(), f"a second CI ran beside a surviving one: {seen.read_text()}"
        assert world.records.get("process", {}) == {}
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        if daemon is not None:
            await daemon.stop()
        if first and alive(first):
            os.kill(first, signal.SIGKILL)
