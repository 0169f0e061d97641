"""How ``v2-midflow.tar.gz`` was made: a home of the Foreman at commit ba6d838 (store schema 2,
flow state in untyped ``meta`` keys), killed in the middle of a flow.

Run once with that commit's code (``python -m tests.core.homes.make_v2_home OUT.tar.gz``); it is
kept as the record of what the archive holds, not run by the tests (later code cannot make an
old home). The archive holds ``root/home`` (profile ``sim`` of a conductor daemon with a
scripted team) and ``root/proj`` (its repository), at the moment of the SIGKILL:

* t1 (kit): worked, CI passed, merge decision d2 open (meta ``merge_commits``);
* t2 (wren): doing; wren's turn asked question d1 and waits for it (session running);
* t3: juniper worked on it, the user reassigned it to kit (a hand-off: meta ``handoffs``,
  juniper's worktree retired through ``removals``); kit's turn on t3 runs (session running).

:mod:`tests.core.test_old_home` opens it with today's code: the typed records replace the meta
keys and the flow carries on to the goal's end.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

CHILD = "tests.core.homes.make_v2_home"


async def _child(root: Path) -> None:
    from foreman.backends.turns import TurnResult
    from foreman.config import resolve
    from tests.conductor.scripted import ScriptedRunner, write_and_commit
    from tests.rig import conductor_daemon

    async def script(req, tools):  # type: ignore[no-untyped-def]
        tools.session_started(f"{req.agent}-{req.task}")
        if req.task == "t1":
            await write_and_commit(req, "greet.py", "def greet():\n    return 'hi'\n", "kit: greet")
            await tools.call("update_task", {"status": "review"})
            return TurnResult(ok=True, session_id=f"{req.agent}-{req.task}", text="done")
        if req.task == "t2":
            await write_and_commit(req, "farewell.py", "WORD = None\n", "wren: farewell stub")
            await tools.call("ask_user", {"question": "Which word for farewell?", "options": ["Bye", "Farewell"]})
        if req.task == "t3" and req.agent == "juniper":
            await write_and_commit(req, "shout.py", "def shout(s):\n    return s\n", "juniper: shout stub")
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    flags = {"home": str(root / "home"), "port": 0, "backend": "sim", "workers": ["3"], "repo_poll_ms": 600_000,
             "lead_review": False, "repo": [str(root / "proj")], "ci": "true", "log_level": "WARNING",
             "os_sandbox": "off", "notify": False}
    daemon = conductor_daemon(resolve(flags, env={}), ScriptedRunner(lambda req: script), name="scripted")
    await daemon.start()
    for title, who in (("Add greet", "kit"), ("Add farewell", "wren"), ("Add shout", "juniper")):
        daemon.act(lambda c, now, title=title, who=who: c.create_task(title, now, repo="proj", assignee=who))
    w = daemon.core.world

    async def until(pred, what):  # type: ignore[no-untyped-def]
        for _ in range(1500):
            if pred():
                return
            await asyncio.sleep(0.02)
        raise AssertionError(what)

    await until(lambda: any(d.kind == "merge" and d.status == "open" for d in w.decisions.values()), "t1's merge")
    await until(lambda: any(d.kind == "question" and d.status == "open" for d in w.decisions.values()), "t2's question")
    await until(lambda: (root / "proj" / ".git" / "worktrees").exists() and w.tasks["t3"].status == "doing"
                and "juniper-t3" in w.meta.get("worktrees", {}) and
                subprocess.run(["git", "log", "--oneline", "-1", w.meta["worktrees"]["juniper-t3"]["branch"]],
                               cwd=root / "proj", capture_output=True, text=True).stdout.find("shout") >= 0,
                "juniper's commit on t3")
    daemon.act(lambda c, now: c.reassign_task("t3", "kit", now))
    await until(lambda: w.tasks["t3"].status == "doing" and w.tasks["t3"].assignee == "kit"
                and "kit-t3" in w.meta.get("worktrees", {}) and not w.meta.get("removals"), "kit on t3")
    await asyncio.sleep(0.5)
    (root / "ready").write_text("ok")
    await asyncio.Event().wait()


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        asyncio.run(_child(Path(sys.argv[2])))
        return 0
    out = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from tests.rig import PYPROJECT, make_repo

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        make_repo(root, files=PYPROJECT)
        proc = subprocess.Popen([sys.executable, "-m", CHILD, "--child", str(root)], cwd=Path(__file__).resolve().parents[3],
                                start_new_session=True)
        deadline = time.monotonic() + 60
        while not (root / "ready").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("the child did not reach the state")
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        (root / "ready").unlink()
        with tarfile.open(out, "w:gz") as tar:
            tar.add(root, arcname="root")
        print(f"wrote {out} from {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
