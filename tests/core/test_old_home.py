"""A home made by an older Foreman opens and carries on (issue 35 item 1: migration).

``homes/v2-midflow.tar.gz`` is a real home of the Foreman at commit ba6d838 (store schema 2, the
flow's state in untyped ``meta`` keys), killed mid-flow with a merge decision open, a question
waiting, a hand-off done and two turns running (``homes/make_v2_home.py`` says how it was made).
Today's daemon opens it: the keys become typed records, and the same flow goes on to every task
merged.
"""

from __future__ import annotations

import json
import sqlite3
import tarfile
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.config import resolve
from foreman.core.records import OLD_META_KEYS, CiRun, HandOff, MergeRecord, Session, Worktree

from ..conductor.scripted import ScriptedRunner, write_and_commit
from ..rig import conductor_daemon, git, wait_for

HOME = Path(__file__).parent / "homes" / "v2-midflow.tar.gz"


def unpack(tmp: Path) -> Path:
    """Unpack the old home under ``tmp`` and move its absolute paths there (the database's and git's)."""
    with tarfile.open(HOME) as tar:
        tar.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))  # (3.11.4+)
    root = tmp / "root"
    db = sqlite3.connect(root / "home" / "sim" / "state.db")
    (repo_json,) = db.execute("SELECT json FROM entities WHERE kind='repo'").fetchone()
    old = json.loads(repo_json)["path"].removesuffix("/proj")
    for table, key in (("entities", "json"), ("meta", "value")):
        db.execute(f"UPDATE {table} SET {key}=replace({key}, ?, ?)", (old, str(root)))
    db.commit()
    db.close()
    for gitdir in (root / "proj" / ".git" / "worktrees").glob("*/gitdir"):
        gitdir.write_text(gitdir.read_text().replace(old, str(root)))
    for link in (root / "home" / "sim" / "worktrees" / "proj").glob("*/.git"):
        link.write_text(link.read_text().replace(old, str(root)))
    return root


async def carry_on(req: TurnRequest, tools: AgentTools) -> TurnResult:
    """Every resumed or new turn finishes its task: a file of its own, committed, then review."""
    await write_and_commit(req, f"{req.task}.txt", f"{req.task} by {req.agent}\n", f"{req.agent}: {req.task}")
    await tools.call("update_task", {"status": "review"})
    return TurnResult(ok=True, session_id=req.session_id or f"{req.agent}-{req.task}", text="done")


async def test_a_schema_2_home_opens_with_typed_records_and_the_flow_carries_on(tmp_path: Path) -> None:
    root = unpack(tmp_path)
    flags = {"home": str(root / "home"), "port": 0, "backend": "sim", "workers": ["3"], "repo_poll_ms": 600_000,
             "lead_review": False, "ci": "true", "log_level": "WARNING", "os_sandbox": "off", "notify": False}
    runner = ScriptedRunner(lambda req: carry_on)
    daemon = conductor_daemon(resolve(flags, env={}), runner, name="scripted")
    await daemon.start()
    try:
        core, w = daemon.core, daemon.core.world
        assert not set(OLD_META_KEYS) & set(w.meta)
        # what the old meta said, now typed
        assert core.record(MergeRecord, "d2").branch == "agentcraft/kit/t1-add-greet"  # type: ignore[union-attr]
        assert core.record(HandOff, "t3") == HandOff(id="t3", from_agent="juniper",
                                                     branch="agentcraft/juniper/t3-add-shout")
        assert set(core.records(Worktree)) == {"kit-t1", "wren-t2", "juniper-t3", "kit-t3"}
        assert core.records(Worktree)["kit-t3"].path == str(root / "home" / "sim" / "worktrees" / "proj" / "kit-t3")
        sessions = core.records(Session)
        assert (sessions["kit:t1"].state, sessions["juniper:t3"].state) == ("done", "aborted")
        assert sessions["wren:t2"].question == "d1"  # the question its turn waits for
        # the flow carries on: wren's resumed turn waits for its question; the merge decision opened
        # before the restart is watched again
        await wait_for(lambda: [r.task for r in runner.requests] and True, 30, "the resumed turns")
        daemon.act(lambda c, now: c.answer_decision("d1", 0, now))
        daemon.act(lambda c, now: c.answer_decision("d2", 0, now))
        for _ in range(2):  # t2 and t3 come to their merge decisions
            dec = await wait_for(lambda: next((d for d in w.decisions.values() if d.kind == "merge"
                                               and d.status == "open"), None), 60, "a merge decision")
            daemon.act(lambda c, now, i=dec.id: c.answer_decision(i, 0, now))
        await wait_for(lambda: all(t.status == "done" for t in w.tasks.values()), 60, "every task merged")
        assert {t: (r.state, r.verdict) for t, r in core.records(CiRun).items()} == {
            "t2": ("passed", "passed"), "t3": ("passed", "passed")}  # (t1's CI ran before the records)
        resumed = {(r.agent, r.task, r.session_id) for r in runner.requests}
        assert {("wren", "t2", "wren-t2"), ("kit", "t3", "kit-t3")} <= resumed  # the old sessions went on
        assert "The user answered: Bye" in next(r.prompt for r in runner.requests if r.agent == "wren")
        files = git(root / "proj", "ls-tree", "-r", "--name-only", "main").split()
        assert {"greet.py", "farewell.py", "t2.txt", "shout.py", "t3.txt"} <= set(files)  # juniper's work went on
        assert git(root / "proj", "status", "--porcelain") == ""
    finally:
        await daemon.stop()
