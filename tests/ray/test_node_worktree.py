"""A node's worktree left broken between two turns of its actor (no ``.git``, a corrupt index)
is rebuilt from the bundles the node has, the log says so, and the turn proceeds.

The node side (:class:`~foreman.executors.node.NodeWorker`) holds no Ray: it runs here as a
plain object, with real git on both sides and real bundles between them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.turns import TurnResult
from foreman.executors import bundles
from foreman.executors.node import NodeWorker

from ..rig import git, make_repo


class Lister:
    """A runner that records the files its turn sees and ends ok."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    async def preflight(self) -> None:
        return None

    async def run_turn(self, req: Any, tools: Any) -> TurnResult:
        self.seen.append(sorted(p.name for p in req.cwd.iterdir() if p.name != ".git"))
        return TurnResult(ok=True)


def spec(n: int) -> dict[str, Any]:
    return {"turn_id": f"turn-{n}", "agent": "kit", "job": "work", "prompt": "go", "system": "", "task": "t1",
            "max_turns": 5, "branch": "kit-t1"}


async def shipment(repo: Path, have: set[str]) -> dict[str, Any]:
    """What the daemon sends: the task's branch and base, without what the node has."""
    tip = git(repo, "rev-parse", "kit-t1").strip()
    base = git(repo, "rev-parse", "main").strip()
    data, refs = await bundles.make_bundle(repo, ["refs/heads/kit-t1", "refs/heads/main"], have)
    have.update((tip, base))
    return dataclasses.asdict(bundles.Shipment(tip=tip, bundle=data, base=base, refs=refs))


def no_git_link(wt: Path) -> None:
    (wt / ".git").unlink()


def corrupt_index(wt: Path) -> None:
    index = Path(git(wt, "rev-parse", "--path-format=absolute", "--git-path", "index").strip())
    index.write_bytes(b"DIRC not an index at all")


async def first_turn(tmp_path: Path) -> tuple[Path, set[str], "Lister", NodeWorker]:
    """A repository with the task's branch, and a node that ran the task's first turn on it."""
    repo = make_repo(tmp_path, files={"a.txt": "a\n"})
    git(repo, "branch", "kit-t1")
    have: set[str] = set()
    runner = Lister()
    node = NodeWorker("kit", runner, heartbeat=0.2, root=str(tmp_path / "node"))
    first = [ev async for ev in node.run_turn(spec(1), await shipment(repo, have))]
    assert first[-1]["kind"] == "result" and first[-1]["result"]["ok"], first[-1]
    return repo, have, runner, node


def commit_b_on_the_branch(repo: Path) -> None:
    """The daemon's side moves on: a commit adding ``b.txt`` on ``kit-t1`` (main checked out again)."""
    git(repo, "checkout", "-q", "kit-t1")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "b")
    git(repo, "checkout", "-q", "main")


@pytest.mark.parametrize("breakage", [no_git_link, corrupt_index])
async def test_a_broken_node_worktree_is_rebuilt_for_the_next_turn(tmp_path: Path, breakage: Any) -> None:
    repo, have, runner, node = await first_turn(tmp_path)
    wt = tmp_path / "node" / "wt" / "t1"
    breakage(wt)
    commit_b_on_the_branch(repo)  # the daemon's side moved on meanwhile (an incremental bundle)
    second = [ev async for ev in node.run_turn(spec(2), await shipment(repo, have))]
    assert second[-1]["kind"] == "result" and second[-1]["result"]["ok"], second[-1]
    logs = [ev["text"] for ev in second if ev["kind"] == "log"]
    assert any("rebuilt" in t and "worktree" in t for t in logs), logs
    assert runner.seen[-1] == ["a.txt", "b.txt"]
    assert git(wt, "status", "--porcelain") == "" and git(wt, "rev-parse", "HEAD").strip() == second[-1]["ship"]["tip"]


async def test_a_node_whose_repository_is_gone_asks_for_the_whole_history_and_proceeds(tmp_path: Path) -> None:
    import shutil

    repo, have, runner, node = await first_turn(tmp_path)
    shutil.rmtree(tmp_path / "node" / "repo.git")  # (the node's temporary folder was cleaned)
    commit_b_on_the_branch(repo)
    second = [ev async for ev in node.run_turn(spec(2), await shipment(repo, have))]  # an increment only
    assert [ev["kind"] for ev in second] == ["hello", "full"] and "lacks" in second[-1]["why"]
    assert len(runner.seen) == 1  # the runner did not start on a worktree it could not build
    have.clear()  # what the daemon does on "full"
    third = [ev async for ev in node.run_turn(spec(3), await shipment(repo, have))]
    assert third[-1]["kind"] == "result" and third[-1]["result"]["ok"], third[-1]
    assert any("rebuilt" in ev["text"] for ev in third if ev["kind"] == "log")
    assert runner.seen[-1] == ["a.txt", "b.txt"]
