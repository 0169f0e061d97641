"""Determinism: the same seed and answers give the same protocol messages and the same tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._sim import normalise, run_to_end, tree_hash
from .conftest import SEED, Run, contrary, run_async


def again(tmp: Path, *extra: str, answer=None) -> Run:  # type: ignore[no-untyped-def]
    kwargs = {} if answer is None else {"answer": answer}
    daemon, client = run_async(run_to_end(tmp, *extra, **kwargs))
    return Run(daemon, client, tree_hash(daemon.repo))


def first_difference(a: list, b: list) -> str:  # type: ignore[type-arg]
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"message {i}:\n{json.dumps(x)}\n{json.dumps(y)}"
    return f"lengths {len(a)} != {len(b)}"


def same_messages(a: Run, b: Run) -> tuple[list, list]:  # type: ignore[type-arg]
    return normalise(a.client.messages, a.daemon.home), normalise(b.client.messages, b.daemon.home)


@pytest.mark.slow  # end to end: a second whole scenario run; slow suite since issue 38
def test_same_seed_and_answers_give_the_same_messages_and_tree(first_run: Run, tmp_path: Path) -> None:
    second = again(tmp_path, "--seed", SEED)
    a, b = same_messages(first_run, second)
    assert len(a) > 250
    assert a == b, first_difference(a, b)
    assert second.tree == first_run.tree
    # what normalising kept is the run's content: ids, text, states, the seed's chatter
    assert {m["type"] for m in a} >= {"agent.upsert", "task.upsert", "decision.upsert", "goal.upsert", "repo.upsert",
                                      "feed.append", "message.append", "log.append", "foreman.status"}
    assert [m["seq"] for m in a] == list(range(1, len(a) + 1))


@pytest.mark.slow  # end to end: a second whole scenario run; slow suite since issue 38
def test_same_contrary_answers_give_the_same_messages_and_tree(contrary_run: Run, first_run: Run, tmp_path: Path) -> None:
    second = again(tmp_path, "--seed", SEED, answer=contrary)
    a, b = same_messages(contrary_run, second)
    assert a == b, first_difference(a, b)
    assert second.tree == contrary_run.tree != first_run.tree
    assert a != normalise(first_run.client.messages, first_run.daemon.home)


def ambient(run: Run) -> list[str]:
    return [m["line"]["text"] for m in run.client.messages if m["type"] == "log.append" and m["line"]["kind"] == "ambient"]


@pytest.mark.slow  # end to end: a second whole scenario run; slow suite since issue 38
def test_the_seed_only_changes_the_ambient_chatter(first_run: Run, tmp_path: Path) -> None:
    other = again(tmp_path, "--seed", str(int(SEED) + 1))
    assert other.tree == first_run.tree
    assert ambient(other) and ambient(other) != ambient(first_run)
    strip = [m for m in normalise(first_run.client.messages, first_run.daemon.home) if m["type"] != "log.append"]
    strip2 = [m for m in normalise(other.client.messages, other.daemon.home) if m["type"] != "log.append"]
    for m in strip + strip2:
        m.pop("seq")
    assert strip == strip2
