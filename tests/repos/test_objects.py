"""Reads that depend on immutable objects alone are answered once (``foreman.repos._objects``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foreman.repos import _objects
from foreman.repos._git import GitProcess
from foreman.repos._objects import pure_git

from .conftest import commit_all, out, write


@pytest.fixture
def asked(git_calls: list[list[str]]) -> list[list[str]]:
    """Every git process started, by its arguments (a fresh cache for the test)."""
    return git_calls


async def test_a_merge_base_of_two_commit_ids_is_asked_once(repo: Path, asked: list[list[str]]) -> None:
    base = out(repo, "rev-parse", "main")
    write(repo / "a.txt", "a\n")
    tip = commit_all(repo, "a")
    first = await pure_git("merge-base", base, tip, ids=(base, tip), cwd=repo)
    again = await pure_git("merge-base", base, tip, ids=(base, tip), cwd=repo)
    assert first.ok and first.text == base and again == first
    assert len(asked) == 1


async def test_a_ref_an_abbreviated_id_or_a_failure_is_asked_every_time(repo: Path, asked: list[list[str]]) -> None:
    """A ref can move and a short id can become ambiguous: only full ids are kept; so is no failure."""
    base = out(repo, "rev-parse", "main")
    for _ in range(2):
        assert (await pure_git("ls-tree", "-r", "main", ids=("main",), cwd=repo)).ok
        assert (await pure_git("ls-tree", "-r", base[:12], ids=(base[:12],), cwd=repo)).ok
        assert not (await pure_git("ls-tree", "-r", "0" * 40, ids=("0" * 40,), cwd=repo)).ok
    assert len(asked) == 6
    write(repo / "b.txt", "b\n")
    tip = commit_all(repo, "b")
    listing = await pure_git("ls-tree", "-r", "--name-only", "main", ids=("main",), cwd=repo)
    assert "b.txt" in listing.text and tip == out(repo, "rev-parse", "main")  # (the ref's new answer)


async def test_the_kept_answers_are_bounded(repo: Path, asked: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_objects, "MAX_ENTRIES", 2)
    ids = [out(repo, "rev-parse", "main")]
    for n in range(2):
        write(repo / f"n{n}.txt", f"{n}\n")
        ids.append(commit_all(repo, f"n{n}"))
    for commit in ids:  # the first is dropped for the third
        await pure_git("ls-tree", commit, ids=(commit,), cwd=repo)
    await pure_git("ls-tree", ids[2], ids=(ids[2],), cwd=repo)
    await pure_git("ls-tree", ids[0], ids=(ids[0],), cwd=repo)
    assert [argv[1] for argv in asked] == [ids[0], ids[1], ids[2], ids[0]]
