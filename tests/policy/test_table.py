"""The table-driven suite: every case in cases.py, worker and lead."""

from __future__ import annotations

import re

import pytest

from foreman.policy import classify_command

from .cases import CASES, LEAD_CASES, WT, X, fake_realpath
from .cases_containment import CONTAINMENT_CASES, KINDS


def _expected_keys(command: str, keys: list[str]) -> set[str]:
    return {f"Bash:exact:{command.strip()}" if k == X else k for k in keys}


def _check(command: str, outcome: str, keys: list[str], lead: bool) -> None:
    v = classify_command(command, worktree=WT, lead=lead, tmpdir="/tmp", realpath=fake_realpath)
    assert (v.outcome, set(v.keys)) == (outcome, _expected_keys(command, keys)), v.reason
    assert v.reason.endswith(".")
    if outcome == "ask":
        assert v.scope.startswith('"Always allow for this agent" covers:')
    else:
        assert v.keys == ()


def test_table_is_large_and_unique() -> None:
    commands = [c[0] for c in CASES]
    assert len(CASES) + len(LEAD_CASES) >= 400
    assert len(set(commands)) == len(commands), [c for c in commands if commands.count(c) > 1]


@pytest.mark.parametrize(("command", "outcome", "keys"), CASES, ids=[c[0][:60] for c in CASES])
def test_worker(command: str, outcome: str, keys: list[str]) -> None:
    _check(command, outcome, keys, lead=False)


@pytest.mark.parametrize(("command", "outcome", "keys"), LEAD_CASES, ids=[c[0][:60] for c in LEAD_CASES])
def test_lead(command: str, outcome: str, keys: list[str]) -> None:
    _check(command, outcome, keys, lead=True)


@pytest.mark.parametrize(("command", "outcome", "keys"), [c for c in CASES if c[1] == "ask"][:400],
                         ids=[c[0][:60] for c in CASES if c[1] == "ask"][:400])
def test_granting_the_keys_allows_exactly_that_command(command: str, outcome: str, keys: list[str]) -> None:
    first = classify_command(command, worktree=WT, tmpdir="/tmp", realpath=fake_realpath)
    again = classify_command(command, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, granted=first.keys)
    assert again.outcome == "allow"
    if len(first.keys) > 1:
        partial = classify_command(command, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, granted=first.keys[1:])
        assert partial.outcome == "ask" and partial.keys == first.keys[:1]


# ---- the kinds of issue 14 -------------------------------------------------------------------
#: A push spelled so a reader sees it: git and push close together, or git-push.
_VISIBLE_PUSH = re.compile(r"git(\W|\$\{?IFS\}?){1,12}push(?![\w.-])")


def test_every_kind_has_several_spellings_and_ordinary_commands_that_stay_allowed() -> None:
    for kind, cases in KINDS.items():
        outcomes = [c[1] for c in cases]
        assert len(cases) >= 20, kind
        assert outcomes.count("ask") >= 3, kind
        assert outcomes.count("allow") >= 3, kind  # the negatives: ordinary commands of that kind
        assert outcomes.count("deny") >= 1, kind


@pytest.mark.parametrize("command", [c[0] for c in CONTAINMENT_CASES if _VISIBLE_PUSH.search(c[0])],
                         ids=[c[0][:60] for c in CONTAINMENT_CASES if _VISIBLE_PUSH.search(c[0])])
def test_a_statically_visible_push_is_denied_not_asked(command: str) -> None:
    v = classify_command(command, worktree=WT, tmpdir="/tmp", realpath=fake_realpath)
    assert v.outcome == "deny", (command, v)


@pytest.mark.parametrize(("command", "outcome", "keys"), [c for c in CONTAINMENT_CASES if c[1] == "ask"],
                         ids=[c[0][:60] for c in CONTAINMENT_CASES if c[1] == "ask"])
def test_granting_the_keys_of_a_disguised_command_allows_it_and_nothing_less_does(command: str, outcome: str,
                                                                                  keys: list[str]) -> None:
    first = classify_command(command, worktree=WT, tmpdir="/tmp", realpath=fake_realpath)
    again = classify_command(command, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, granted=first.keys)
    assert again.outcome == "allow"
    for i in range(len(first.keys)):
        fewer = first.keys[:i] + first.keys[i + 1:]
        assert classify_command(command, worktree=WT, tmpdir="/tmp", realpath=fake_realpath,
                                granted=fewer).outcome == "ask"
