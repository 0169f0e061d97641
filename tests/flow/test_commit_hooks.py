"""The repository's commit hooks run on the commit the Foreman makes for a worker's merge (issue 37
item 4): a refusal opens no merge decision and sends the task back to its worker with the hook's
output; the decision shows which hooks ran. Before, the leftovers were committed with no hook and
merged, whatever the hook said."""

from __future__ import annotations

from pathlib import Path

from foreman.backends.turns import AgentTools, TurnRequest, TurnResult
from foreman.flow.mergerules import MAX_HOOK_REFUSALS

from ..conductor.scripted import ScriptedRig, done
from ..rig import git, wait_for

NO_TODO = """#!/bin/sh
if git diff --cached | grep -q TODO; then
  echo "TODO left in $(git diff --cached --name-only | tr '\\n' ' ')" >&2
  exit 1
fi
"""


def install_hook(repo: Path, name: str, body: str) -> None:
    path = repo / ".git" / "hooks" / name
    path.write_text(body)
    path.chmod(0o755)


def leaves_uncommitted(texts: list[str]):
    """A worker that writes ``notes.txt`` (the next of ``texts`` each turn), commits nothing and
    hands the task in."""
    async def script(req: TurnRequest, tools: AgentTools) -> TurnResult:
        (req.cwd / "notes.txt").write_text(texts.pop(0) if len(texts) > 1 else texts[0])
        await tools.call("update_task", {"status": "review"})
        return done()
    return script


async def test_a_refusing_hook_sends_the_work_back_and_the_fix_lands(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, leaves_uncommitted(["draft\nTODO: finish\n", "finished\n"]))
    install_hook(rig.repo, "pre-commit", NO_TODO)
    install_hook(rig.repo, "commit-msg", '#!/bin/sh\nprintf "\\nHooked: yes\\n" >> "$1"\n')
    try:
        await rig.start()
        t1 = rig.task("Write the notes", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision after the fix")
        feed = rig.c.feed()
        assert any(f"{t1}: the repository's pre-commit hook refused the commit (exit 1)" in f for f in feed), feed
        followups = [r for r in rig.runner.requests if r.task == t1 and r.job == "followup"]
        assert len(followups) == 1 and "TODO left in notes.txt" in followups[0].prompt
        assert "Hooks passed on the commit of the worker's leftovers: pre-commit, commit-msg." in dec.detail
        branch = rig.world.tasks[t1].branch
        assert "TODO" not in git(rig.repo, "log", "-p", branch)  # the refused work never reached the branch
        assert "Hooked: yes" in git(rig.repo, "log", "-1", "--format=%B", branch)
        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "done", timeout=30)
        assert git(rig.repo, "show", "main:notes.txt").strip() == "finished"
    finally:
        await rig.stop()


async def test_a_hook_that_never_passes_blocks_the_task_with_its_words(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, leaves_uncommitted(["TODO\n"]))
    install_hook(rig.repo, "pre-commit", NO_TODO)
    try:
        await rig.start()
        t1 = rig.task("Write the notes", assignee="kit")
        await rig.wait_status(t1, "blocked", timeout=90)
        reason = rig.world.tasks[t1].history[-1].what
        assert f"pre-commit hook refused the commit (exit 1) ({MAX_HOOK_REFUSALS} times in a row)" in reason, reason
        assert "TODO left in notes.txt" in reason
        assert rig.open_decision(t1) is None
        assert len([r for r in rig.runner.requests if r.task == t1]) == MAX_HOOK_REFUSALS
    finally:
        await rig.stop()


async def test_without_hooks_the_decision_says_so(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, leaves_uncommitted(["plain\n"]))
    try:
        await rig.start()
        t1 = rig.task("Write the notes", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), 60, "the merge decision")
        assert "No commit hook in the repository." in dec.detail
    finally:
        await rig.stop()
