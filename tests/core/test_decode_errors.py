"""A refused frame's error message names its type once and reads as advice (protocol/codec.py).

Found by a newcomer: ``diff.request`` with both ``worktree`` and ``decision`` was answered
"diff.request: diff.request: Value error, give exactly one of worktree or decision" (a model
validator's error has no field in its location, and pydantic prefixes ``Value error, ``).
"""

from __future__ import annotations

import json

import pytest

from protocol.codec import CLIENT_TYPES, DecodeError, decode_client


def refusal(frame: dict) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode_client(json.dumps(frame))
    return info.value


@pytest.mark.parametrize("kind", sorted(CLIENT_TYPES))
@pytest.mark.parametrize("extra", [{}, {"worktree": "a", "decision": "b"}, {"text": 5, "to": [], "option": "x"}])
def test_every_refusal_names_its_type_once_without_pydantic_prefixes(kind: str, extra: dict) -> None:
    frame = {"type": kind, "id": "r1", **extra}
    try:
        decode_client(json.dumps(frame))
    except DecodeError as exc:
        assert exc.request_id == "r1"
        assert exc.message.startswith(f"{kind}: "), exc.message
        assert f"{kind}: {kind}" not in exc.message, exc.message
        assert "Value error, " not in exc.message, exc.message
    # (a frame these fields make valid decodes: nothing to check)


def test_a_model_level_rule_reads_as_advice() -> None:
    exc = refusal({"type": "diff.request", "id": 7, "worktree": "w", "decision": "d"})
    assert exc.code == "bad_request"
    assert exc.message == "diff.request: give exactly one of worktree or decision"


def test_a_field_error_names_the_field() -> None:
    exc = refusal({"type": "decision.answer", "id": 7, "decision": "d1", "option": "first"})
    assert exc.message.startswith("decision.answer: option: "), exc.message
