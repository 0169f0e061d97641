"""Every corpus reply decodes to exactly its expected actions, repairs and reason."""

from __future__ import annotations

from collections import Counter

import pytest

from foreman.backends.local.registry import parse_action
from foreman.backends.local.result import DROPS, REASONS, REPAIRS
from foreman.backends.local.textcodec import decode

from ._corpus import load_cases

CASES = load_cases()


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 100


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_corpus_reply_decodes_as_expected(case) -> None:
    result = decode(case.text, case.finish_reason, role=case.role)
    expected_actions = [parse_action(action).to_dict() for action in case.expected["actions"]]
    assert [action.to_dict() for action in result.actions] == expected_actions
    assert result.reason == case.expected["reason"]
    assert dict(result.repair_counts()) == case.expected["repairs"]
    assert Counter(result.dropped) == Counter(case.expected["dropped"])
    assert set(result.repairs) <= set(REPAIRS)
    assert set(result.dropped) <= set(DROPS)
    assert result.reason is None or result.reason in REASONS


def test_corpus_covers_every_tolerated_form() -> None:
    """The corpus exercises every repair id, drop id and reason the text decoder can produce."""
    repairs: set[str] = set()
    drops: set[str] = set()
    reasons: set[str] = set()
    for case in CASES:
        repairs |= set(case.expected["repairs"])
        drops |= set(case.expected["dropped"])
        if case.expected["reason"]:
            reasons.add(case.expected["reason"])
    native_only = {"tool_call_in_content"}
    assert set(REPAIRS) - native_only - repairs == set()
    assert set(DROPS) - drops == set()
    assert set(REASONS) - reasons == set()
