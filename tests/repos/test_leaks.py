"""1,000 repository operations leave open file descriptors and child processes where they were."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import psutil
import pytest

from foreman.errors import MergeRefused
from foreman.repos.diffs import diff_commits
from foreman.repos.merge import merge_branch
from foreman.repos.registry import repo_status

from .conftest import commit_all, sh, write


def usage() -> tuple[int, list[int]]:
    gc.collect()
    me = psutil.Process()
    return me.num_fds(), sorted(c.pid for c in me.children(recursive=True))


async def _run_ops(repo: Path, count: int) -> None:
    sh(repo, "checkout", "-q", "-b", "work")
    write(repo / "feature.txt", "x\n")
    commit_all(repo, "work")
    sh(repo, "checkout", "-q", "main")
    write(repo / "README.md", "uncommitted\n")  # every merge below is refused (the error path must not leak)
    await repo_status(repo)  # warm up: the loop's child watcher and pipes exist from here on
    before = usage()

    async def op(i: int) -> None:
        kind = i % 4
        if kind == 0:
            assert (await repo_status(repo)).dirty
        elif kind == 1:
            assert (await diff_commits(repo, "main", "work")).files_changed == 1
        elif kind == 2:
            with pytest.raises(MergeRefused) as info:
                await merge_branch(repo, branch="work", base_branch="main", style="merge", message="m",
                                   sign=False, co_authors=[])
            assert info.value.reason == "dirty"
        else:
            status = await repo_status(repo, "work")
            assert status.checkout is None

    for start in range(0, count, 8):
        await asyncio.gather(*(op(i) for i in range(start, min(start + 8, count))))
    after = usage()
    assert after == before


@pytest.mark.slow
async def test_a_thousand_repository_operations_do_not_leak(repo: Path) -> None:
    await _run_ops(repo, 1000)
