"""Flow paths through the daemon (issue 12 item 20): a restart resumes each interrupted job with
its job kind; a refused merge re-opens its decision and a later Merge succeeds; a conflict goes
back to the worker, who merges the base in, then CI, review and a fresh decision."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from foreman.backends.turns import TurnRequest, TurnResult

from ..rig import git, wait_for
from .scripted import ScriptedRig, commits_then_review, done, sh, write_and_commit

RESTARTED = "The Foreman restarted; continue where you were."


async def test_a_restart_resumes_each_interrupted_job_with_its_job_kind(tmp_path: Path) -> None:
    phase = {"n": 1}

    def pick(req: TurnRequest):
        async def script(req: TurnRequest, tools) -> TurnResult:
            if phase["n"] == 1:
                await asyncio.Event().wait()  # in flight when the daemon stops
            if req.job == "work":
                await write_and_commit(req, f"{req.agent}.txt", "x\n", "work")
                await tools.call("update_task", {"status": "review"})
            if req.job == "review":
                await tools.call("request_merge", {"task": req.task, "summary": "fine"})
            return done(f"{req.agent}-{req.job}")
        return script

    rig = ScriptedRig(tmp_path, pick, ci="true", workers=["juniper", "kit"])
    try:
        await rig.start()
        t1 = rig.task("Work", assignee="juniper")
        await wait_for(lambda: any(r.agent == "juniper" and r.job == "work" for r in rig.runner.requests))
        rig.d.act(lambda c, now: c.send_message("user", "kit", "a question for you", now))
        await wait_for(lambda: any(r.agent == "kit" and r.job == "followup" for r in rig.runner.requests))
        goal = rig.d.act(lambda c, now: c.submit_goal("plan something", now, repo="proj")).id
        await wait_for(lambda: any(r.agent == "marlow" and r.job == "plan" for r in rig.runner.requests))
        await rig.stop()  # three jobs in flight: plan (lead), work (juniper), follow-up (kit)

        before = len(rig.runner.requests)
        phase["n"] = 2
        await rig.start()
        await wait_for(lambda: len(rig.runner.requests) - before >= 3, what="the resumed turns")
        resumed = {(r.agent, r.job, r.task or r.goal) for r in rig.runner.requests[before:] if r.prompt.startswith(RESTARTED)}
        assert {("marlow", "plan", goal), ("juniper", "work", t1), ("kit", "followup", None)} <= resumed, resumed

        # a review in flight resumes as a review
        await wait_for(lambda: any(r.agent == "marlow" and r.job == "review" for r in rig.runner.requests[before:]))
        await wait_for(lambda: rig.open_decision(t1), what="the decision after the review")
        t2 = rig.task("More work", assignee="kit")
        phase["n"] = 1
        rig.runner.pick = lambda req: pick(req) if req.job == "review" else commits_then_review()
        await wait_for(lambda: any(r.agent == "marlow" and r.job == "review" and r.task == t2
                                   for r in rig.runner.requests), what="the review of t2 in flight")
        await rig.stop()
        before = len(rig.runner.requests)
        phase["n"] = 2
        rig.runner.pick = pick
        await rig.start()
        await wait_for(lambda: rig.open_decision(t2), what="the resumed review's decision")
        assert ("marlow", "review", t2) in {(r.agent, r.job, r.task) for r in rig.runner.requests[before:]
                                            if r.prompt.startswith(RESTARTED)}
    finally:
        await rig.stop()


async def test_a_refused_merge_reopens_its_decision_and_a_later_merge_succeeds(tmp_path: Path) -> None:
    rig = ScriptedRig.worker(tmp_path, commits_then_review())
    try:
        await rig.start()
        t1 = rig.task("Add a file", assignee="kit")
        dec = await wait_for(lambda: rig.open_decision(t1), what="the merge decision")
        (rig.repo / "proj.py").write_text("# the user's own edit, not committed\n")  # a dirty checkout

        await rig.c.answer(dec.id, 0)
        await wait_for(lambda: rig.world.decisions[dec.id].status == "open"
                       and "refused" in (rig.world.decisions[dec.id].detail or ""), what="the decision re-opened")
        assert rig.status(t1) == "review" and git(rig.repo, "status", "--porcelain").strip() == "M proj.py"

        git(rig.repo, "checkout", "--", "proj.py")  # the user fixes it and merges again
        await rig.c.answer(dec.id, 0)
        await rig.wait_status(t1, "done")
        assert f"kit-{t1}.txt" in git(rig.repo, "ls-tree", "--name-only", "main")
    finally:
        await rig.stop()


async def test_a_conflict_goes_back_to_the_worker_who_merges_the_base_then_ci_review_and_a_fresh_decision(
        tmp_path: Path) -> None:
    prompts: list[str] = []

    def pick(req: TurnRequest):
        async def work(req: TurnRequest, tools) -> TurnResult:
            prompts.append(req.prompt)
            if req.job == "work":
                await write_and_commit(req, "proj.py", "HELLO = 'kit'\n", "kit edits proj")
            else:  # the conflict follow-up: merge the base in and resolve it
                env = req.env
                res = await asyncio.to_thread(subprocess.run, ["git", "merge", "-q", "main"], cwd=req.cwd, env=env,
                                              capture_output=True, text=True)
                assert res.returncode != 0  # the conflict the Foreman reported
                (req.cwd / "proj.py").write_text("HELLO = 'kit'\nUSER = 'user'\n")
                await asyncio.to_thread(sh, req.cwd, "git", "add", "-A", env=env)
                await asyncio.to_thread(sh, req.cwd, "git", "commit", "-q", "--no-edit", env=env)
            await tools.call("update_task", {"status": "review"})
            return done()

        async def review(req: TurnRequest, tools) -> TurnResult:
            await tools.call("request_merge", {"task": req.task, "summary": "fine"})
            return done()

        return review if req.job == "review" else work

    rig = ScriptedRig(tmp_path, pick, ci="true")
    try:
        await rig.start()
        t1 = rig.task("Edit proj", assignee="kit")
        first = await wait_for(lambda: rig.open_decision(t1), what="the first decision")
        (rig.repo / "proj.py").write_text("USER = 'user'\n")
        git(rig.repo, "commit", "-qam", "the user edits proj too")

        await rig.c.answer(first.id, 0)
        second = await wait_for(lambda: (d := rig.open_decision(t1)) is not None and d.id != first.id and d,
                                what="a fresh decision after the conflict round")
        assert any("conflicts in: proj.py" in p for p in prompts), prompts
        reviews = [r for r in rig.runner.requests if r.job == "review" and r.task == t1]
        assert len(reviews) == 2 and sum(f.text == f"CI passed on {t1}" for f in rig.world.feed) == 2
        await rig.c.answer(second.id, 0)
        await rig.wait_status(t1, "done")
        assert git(rig.repo, "show", "main:proj.py") == "HELLO = 'kit'\nUSER = 'user'\n"
    finally:
        await rig.stop()
