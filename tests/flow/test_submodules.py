"""Submodules (issue 37 item 11): a task's worktree has the repository's submodules checked out;
when they cannot be (a source out of reach), the task starts anyway and its worker and the feed
are told plainly. Before, worktrees of such a repository lacked the submodules' files, silently."""

from __future__ import annotations

import subprocess
from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult

from ..conductor.scripted import ScriptedRig, commits_then_review
from ..rig import make_repo, wait_for


def add_submodule(repo: Path, source: Path, where: str = "vendor/lib") -> None:
    ident = ["-c", "user.name=User One", "-c", "user.email=one@example.com", "-c", "protocol.file.allow=always"]
    subprocess.run(["git", *ident, "submodule", "add", "-q", str(source), where], cwd=repo, check=True,
                   capture_output=True)
    subprocess.run(["git", *ident, "commit", "-qm", "vendor lib"], cwd=repo, check=True)


async def test_a_worktree_has_the_repositorys_submodules(tmp_path: Path) -> None:
    lib = make_repo(tmp_path, name="lib", files={"lib.py": "ANSWER = 42\n"})
    seen: list[bool] = []

    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        seen.append((req.cwd / "vendor" / "lib" / "lib.py").is_file())
        return await commits_then_review()(req, tools)

    rig = ScriptedRig.worker(tmp_path, work)
    add_submodule(rig.repo, lib)
    try:
        await rig.start()
        t1 = rig.task("Use the lib", assignee="kit")
        await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision")
        assert seen == [True]
        assert not [f for f in rig.c.feed() if "submodules are not" in f]
    finally:
        await rig.stop()


async def test_submodules_out_of_reach_are_said_plainly_and_the_task_goes_on(tmp_path: Path) -> None:
    lib = make_repo(tmp_path, name="lib", files={"lib.py": "ANSWER = 42\n"})
    prompts: list[str] = []

    async def work(req: TurnRequest, tools: AgentTools) -> TurnResult:
        prompts.append(req.prompt)
        return await commits_then_review()(req, tools)

    rig = ScriptedRig.worker(tmp_path, work)
    add_submodule(rig.repo, lib)
    lib.rename(tmp_path / "lib-moved-away")  # the source the repository names is gone
    try:
        await rig.start()
        t1 = rig.task("Use the lib", assignee="kit")
        await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision")
        assert "submodules are not in this worktree" in prompts[0] and "goes on without them" in prompts[0]
        assert any(f.startswith(f"{t1}: the repository's submodules are not in this worktree") for f in rig.c.feed())
    finally:
        await rig.stop()
