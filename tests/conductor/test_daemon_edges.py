"""Daemon edges: diffs of retired worktrees, auto-answers left open by a crash."""

from __future__ import annotations

import subprocess
from pathlib import Path

from foreman.core.records import Worktree
from foreman.config import resolve
from foreman.daemon import Daemon

from .test_flow import make_repo


class NoTeam:
    """A backend with no agents (the daemon's own edges are under test)."""

    name = "none"

    def status(self) -> tuple[str, str]:
        return ("none", "")

    async def start(self, daemon) -> None:
        daemon.act(lambda c, now: c.add_agent("kit", now))

    def on_effect(self, effect) -> None:
        return None

    async def stop(self) -> None:
        return None


async def test_the_diff_of_a_retired_worktree_comes_from_its_kept_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    wt = tmp_path / "wt"
    subprocess.run(["git", "worktree", "add", "-q", "-b", "agentcraft/kit/t1-x", str(wt)], cwd=repo, check=True)
    (wt / "new.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=wt, check=True)
    subprocess.run(["git", "-c", "user.name=K", "-c", "user.email=k@x", "commit", "-qm", "new"], cwd=wt, check=True)
    settings = resolve({"home": str(tmp_path / "home"), "port": 0, "backend": "sim"}, env={})
    daemon = Daemon(settings, backend=NoTeam())
    await daemon.start()
    try:
        await daemon.add_repo(str(repo))
        daemon.act(lambda c, now: c.put_record(Worktree(
            id="kit-t1", repo="proj", path=str(wt), branch="agentcraft/kit/t1-x", agent="kit", task="t1", base="main")))
        live = await daemon.diff_for(worktree="kit-t1")
        subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=repo, check=True)
        assert not wt.exists()
        retired = await daemon.diff_for(worktree="kit-t1")
        assert [f.path for f in live.files] == [f.path for f in retired.files] == ["new.py"]
        assert retired.files[0].status == "added" and retired.additions == 1
    finally:
        await daemon.stop()


async def test_an_auto_answer_missed_by_a_crash_happens_at_the_next_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = resolve({"home": str(home), "port": 0, "backend": "sim"}, env={})
    first = Daemon(settings, backend=NoTeam())
    await first.start()
    d = first.act(lambda c, now: c.open_decision("merge", "Merge?", ["Merge", "No"], now, asked_by="kit"))
    await first.stop()
    assert first.core.world.decisions[d.id].status == "open"
    settings = resolve({"home": str(home), "port": 0, "backend": "sim", "auto_answer": ["merge"]}, env={})
    second = Daemon(settings, backend=NoTeam())
    await second.start()
    try:
        answered = await second.wait_decision(d.id)
        assert answered.status == "answered" and answered.answer is not None and answered.answer.by == "auto"
    finally:
        await second.stop()


