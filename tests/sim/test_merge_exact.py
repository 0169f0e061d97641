"""The decision is the merge (issue 12 items 1 and 6): with the sim backend, Merge merges exactly
the commit the decision showed and scanned; a branch that moved re-opens the decision with the
new commit's diff and risk scan, and ``/diff <decision>`` shows the merged work afterwards."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from ._sim import SimClient, git, start_daemon
from .conftest import run_async

KEY = "deploy/id_rsa"


def _not_merges(decision: dict[str, Any], client: SimClient) -> int | None:
    """Answer everything with option 0 except merge decisions (the test answers those)."""
    return None if decision["kind"] == "merge" else 0


def _worktree_of(repo: Path, branch: str) -> Path:
    """The worktree folder that has ``branch`` checked out (from ``git worktree list``)."""
    path = None
    for line in git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            path = Path(line.split(" ", 1)[1])
        elif line == f"branch refs/heads/{branch}":
            assert path is not None
            return path
    raise AssertionError(f"no worktree has {branch}")


def _commit_key(wt: Path) -> str:
    """Commit a private key file in the worktree, as someone (or an agent) could after the review."""
    (wt / KEY).parent.mkdir(parents=True, exist_ok=True)
    (wt / KEY).write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                          "-----END OPENSSH PRIVATE KEY-----\n")
    ident = ["-c", "user.name=Someone", "-c", "user.email=someone@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *ident, "add", KEY], cwd=wt, check=True, capture_output=True)
    subprocess.run(["git", *ident, "commit", "-q", "--no-verify", "-m", "add a deploy key"], cwd=wt, check=True,
                   capture_output=True)
    return git(wt, "rev-parse", "HEAD")


async def _answer(client: SimClient, decision_id: str, label: str) -> None:
    options = client.decisions[decision_id]["options"]
    reply = await client.request({"type": "decision.answer", "decision": decision_id, "option": options.index(label)})
    assert reply["type"] == "ack", reply


async def _scenario(home: Path) -> None:
    daemon = start_daemon(home)
    client = SimClient(answer=_not_merges)
    try:
        await client.connect(daemon.port)
        await client.wait_for(lambda c: any(d["kind"] == "merge" and d["status"] == "open" for d in c.decisions.values()),
                              60, "the first merge decision")
        dec = next(d for d in client.decisions.values() if d["kind"] == "merge" and d["status"] == "open")
        did, task = dec["id"], dec["task"]
        branch = client.tasks[task]["branch"]
        repo = daemon.repo
        shown_tip = git(repo, "rev-parse", f"refs/heads/{branch}")
        shown = (await client.request({"type": "diff.request", "decision": did}))["diff"]
        assert shown["head"] == shown_tip  # the decision recorded the commit it shows
        assert KEY not in {f["path"] for f in shown["files"]}
        assert dec["options"][0] == "Merge"

        moved_tip = _commit_key(_worktree_of(repo, branch))
        main_before = git(repo, "rev-parse", "refs/heads/main")
        await _answer(client, did, "Merge")

        def reopened(c: SimClient) -> bool:
            d = c.decisions[did]
            return d["status"] == "open" and "moved" in (d.get("detail") or "")

        await client.wait_for(reopened, 30, f"{did} re-opened because the branch moved")
        # the answer merged nothing: the key (and the moved commit) are not on main
        assert git(repo, "rev-parse", "refs/heads/main") == main_before
        assert KEY not in git(repo, "ls-tree", "-r", "--name-only", "main").splitlines()
        assert client.tasks[task]["status"] == "review"
        # re-opened with the new head's diff and its risk scan: a private key is critical
        again = client.decisions[did]
        assert moved_tip[:12] in again["detail"]
        assert any(r["severity"] == "critical" and r.get("path") == KEY for r in again["risks"])
        assert again["options"][0] == "Request changes"  # the risky order
        new = (await client.request({"type": "diff.request", "decision": did}))["diff"]
        assert new["head"] == moved_tip and KEY in {f["path"] for f in new["files"]}

        # the acknowledged answer merges exactly the commit now shown
        await _answer(client, did, "Merge anyway (risk acknowledged)")
        await client.wait_for(lambda c: c.tasks[task]["status"] == "done", 30, f"{task} merged")
        subprocess.run(["git", "merge-base", "--is-ancestor", moved_tip, "refs/heads/main"], cwd=repo, check=True)
        assert KEY in git(repo, "ls-tree", "-r", "--name-only", "main").splitlines()
        # /diff <decision> after the merge still shows the merged files (not "no changes")
        after = (await client.request({"type": "diff.request", "decision": did}))["diff"]
        merged = set(git(repo, "diff", "--name-only", f"{after['base']}..{moved_tip}").splitlines())
        assert after["head"] == moved_tip and len(after["files"]) > 1
        assert {f["path"] for f in after["files"]} == merged and KEY in merged
    finally:
        await client.close()
        daemon.stop()


def test_a_commit_after_the_decision_opened_is_not_merged_by_its_answer(tmp_path: Path) -> None:
    run_async(_scenario(tmp_path))
