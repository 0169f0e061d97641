"""Protocol fuzzing against the live daemon: thousands of bad frames, each answered with ``error``.

Every frame is one the daemon must refuse: random bytes, random text, random JSON, intents
with missing or mistyped fields, unknown types, oversized frames, and well-formed intents
naming entities that do not exist. After each batch the daemon is alive, the connection is
still open, and the state (a fresh snapshot without ``status``) and ``seq`` are unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, assume, given, settings
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

import protocol
from protocol.codec import CLIENT_TYPES

from .live import LiveDaemon, state_view

FUZZ = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])


class Session:
    """A sync client that said hello and keeps one connection across examples.

    Keepalive pings are off: the client's ping thread draws its payload from the global
    ``random``, which Hypothesis reports as a strategy using ``random`` when it lands mid-draw.
    """

    def __init__(self, port: int, token: str | None) -> None:
        self.port = port
        self.token = token
        self.ws = self._open()
        self.sent = 0

    def _open(self) -> ClientConnection:
        ws = connect(f"ws://127.0.0.1:{self.port}", compression=None, max_size=None, ping_interval=None)
        ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "fuzz", "token": self.token}))
        assert json.loads(ws.recv(timeout=10))["type"] == "snapshot"
        return ws

    def snapshot(self) -> dict[str, Any]:
        ws = connect(f"ws://127.0.0.1:{self.port}", compression=None, max_size=None, ping_interval=None)
        try:
            ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "fuzz-probe", "token": self.token}))
            return json.loads(ws.recv(timeout=10))
        finally:
            ws.close()

    def refused(self, frame: str | bytes) -> dict[str, Any]:
        """Send one frame; return its reply, asserting it is an ``error`` (and nothing else came)."""
        self.ws.send(frame)
        self.sent += 1
        reply = json.loads(self.ws.recv(timeout=10))
        assert reply["type"] == "error", (repr(frame)[:200], reply)
        assert isinstance(reply["code"], str) and reply["message"]
        return reply


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory):
    d = LiveDaemon(tmp_path_factory.mktemp("fuzz"))
    d.start()
    try:
        s = Session(d.port, d.token)
        before = s.snapshot()
        yield s
        after = s.snapshot()
        s.ws.close()
        assert s.sent >= 3000, s.sent
        assert d.alive(), d.stderr()
        assert after["seq"] == before["seq"], "a refused frame changed the state"
        assert state_view(after) == state_view(before)
    finally:  # (a failed check above must not leave the daemon running)
        code = d.stop()
    assert code == 0, d.stderr()


def _not_an_intent(frame: str | bytes) -> bool:
    try:
        protocol.decode_client(frame)
    except protocol.DecodeError:
        return True
    return False


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["id", "type", "protocol", "client", "since", "text", "repo", "decision", "option", "to", "agent", "task",
          "priority", "path", "worktree", "note"]
GHOSTS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12).map(lambda s: "zz-" + s)


@st.composite
def mistyped_intent(draw: st.DrawFn) -> str:
    """A known type whose fields are missing or of random JSON types."""
    kind = draw(st.sampled_from(sorted(CLIENT_TYPES)))
    fields = draw(st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=5))
    return json.dumps({**fields, "type": kind})


@st.composite
def ghost_intent(draw: st.DrawFn) -> str:
    """A well-formed intent that names an agent, task, decision, repo or note that does not exist."""
    ghost, rid = draw(GHOSTS), draw(st.integers(0, 10**6))
    intent = draw(st.sampled_from([
        {"type": "message.send", "to": ghost, "text": "hello"},
        {"type": "agent.pause", "agent": ghost},
        {"type": "agent.resume", "agent": ghost},
        {"type": "agent.stop", "agent": ghost},
        {"type": "agent.spawn", "agent": ghost},
        {"type": "task.cancel", "task": ghost},
        {"type": "task.retry", "task": ghost},
        {"type": "task.prioritize", "task": ghost, "priority": 3},
        {"type": "task.reassign", "task": ghost, "agent": "kit"},
        {"type": "decision.answer", "decision": ghost, "option": 0},
        {"type": "goal.submit", "text": "a goal", "repo": ghost},
        {"type": "diff.request", "worktree": ghost},
        {"type": "diff.request", "decision": ghost},
        {"type": "memory.read", "note": "shared/" + ghost},
        {"type": "agent.resume", "agent": "kit"},  # kit is on shift: conflict
    ]))
    return json.dumps({**intent, "id": rid})


@given(frame=st.binary(max_size=200))
@FUZZ
def test_random_bytes(session: Session, frame: bytes) -> None:
    assume(_not_an_intent(frame))
    session.refused(frame)


@given(frame=st.text(max_size=200) | JSON.map(json.dumps))
@FUZZ
def test_random_text_and_json(session: Session, frame: str) -> None:
    assume(_not_an_intent(frame))
    session.refused(frame)


@given(frame=mistyped_intent() | st.builds(lambda t, rest: json.dumps({**rest, "type": t}),
                                           st.text(max_size=30).filter(lambda t: t not in CLIENT_TYPES),
                                           st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=3)))
@FUZZ
def test_wrong_types_and_unknown_types(session: Session, frame: str) -> None:
    assume(_not_an_intent(frame))
    reply = session.refused(frame)
    assert reply["code"] in ("bad_request", "unknown_type", "bad_json")


@given(frame=ghost_intent())
@settings(FUZZ, max_examples=500)
def test_intents_naming_what_does_not_exist(session: Session, frame: str) -> None:
    reply = session.refused(frame)
    assert reply["id"] == json.loads(frame)["id"]
    assert reply["code"] in ("not_found", "conflict")


@given(size=st.integers(256 * 1024 + 1, 1024 * 1024), binary=st.booleans())
@settings(FUZZ, max_examples=25)
def test_oversized_frames(session: Session, size: int, binary: bool) -> None:
    frame = '{"type":"message.send","to":"kit","text":"' + "x" * size + '"}'
    reply = session.refused(frame.encode() if binary else frame)
    assert reply["code"] == "too_large"


def test_a_frame_over_the_transport_limit_closes_only_that_connection(session: Session) -> None:
    ws = connect(f"ws://127.0.0.1:{session.port}", compression=None, max_size=None)
    ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "huge", "token": session.token}))
    ws.recv(timeout=10)
    with pytest.raises(ConnectionClosed) as info:
        ws.send("x" * (17 * 1024 * 1024))
        while True:
            ws.recv(timeout=10)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009
    session.refused("still here?")  # the others are unaffected
