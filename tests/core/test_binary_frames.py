"""A binary frame must hold UTF-8 JSON: other encodings are refused, not guessed.

The protocol is UTF-8 JSON in text frames. Python's ``json.loads`` guesses UTF-16 and UTF-32 from
the first bytes of a ``bytes`` value, so without a strict UTF-8 decode a binary frame holding a
valid intent in UTF-16 or UTF-32 would be acted on. Checked on :func:`protocol.decode_client`
and through the real daemon over a real socket (the connection lives on after the error).
"""

from __future__ import annotations

import json

import pytest

import protocol

from .live import Conn, LiveDaemon

INTENT = {"type": "memory.read", "id": "r1"}
TEXT = json.dumps(INTENT)
NOT_UTF8 = ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]
MESSAGE = "binary frame is not JSON: the protocol is UTF-8 JSON in text frames"


@pytest.mark.parametrize("encoding", NOT_UTF8)
def test_a_valid_intent_in_another_encoding_is_bad_json(encoding: str) -> None:
    with pytest.raises(protocol.DecodeError) as info:
        protocol.decode_client(TEXT.encode(encoding))
    assert info.value.code == "bad_json" and info.value.message == MESSAGE


def test_utf8_bytes_decode_as_the_text_does_and_a_bom_or_bad_byte_is_refused() -> None:
    assert protocol.decode_client(TEXT.encode()) == protocol.decode_client(TEXT)
    ascii_escaped = json.dumps({"type": "message.send", "to": "kit", "text": "café ✓"}, ensure_ascii=False)
    assert protocol.decode_client(ascii_escaped.encode()).text == "café ✓"
    for frame in (TEXT.encode("utf-8-sig"), b'{"type": "memory.read", "x": "\xff"}'):
        with pytest.raises(protocol.DecodeError) as info:
            protocol.decode_client(frame)
        assert info.value.code == "bad_json", frame


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    d = LiveDaemon(tmp_path_factory.mktemp("binary"))
    d.start()
    yield d
    assert d.stop() == 0, d.stderr()


async def test_the_daemon_refuses_intents_in_utf16_or_utf32_and_the_connection_lives(daemon: LiveDaemon) -> None:
    c = await Conn.open(daemon.port, token=daemon.token)
    try:
        await c.hello()
        for encoding in NOT_UTF8:
            await c.ws.send(TEXT.encode(encoding))  # bytes: a binary WebSocket frame
            reply = await c.recv()
            assert reply["type"] == "error" and reply["code"] == "bad_json", (encoding, reply)
            assert reply["message"] == MESSAGE, reply
        await c.ws.send(TEXT.encode())  # UTF-8 JSON in a binary frame is the protocol's JSON
        reply = await c.recv()
        assert reply["type"] == "memory" and reply["id"] == "r1", reply
        reply, _ = await c.request({"type": "memory.read"})
        assert reply["type"] == "memory"
    finally:
        await c.close()


async def test_a_hello_in_utf16_does_not_authenticate(daemon: LiveDaemon) -> None:
    c = await Conn.open(daemon.port)
    try:
        hello = {"type": "hello", "protocol": protocol.PROTOCOL_VERSION, "client": "u16", "token": daemon.token}
        await c.ws.send(json.dumps(hello).encode("utf-16"))
        reply = await c.recv()
        assert reply["type"] == "error" and reply["code"] == "unauthorized", reply
    finally:
        await c.close()
