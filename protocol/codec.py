"""Decode client frames and encode server messages (no I/O)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from .client import CLIENT_ADAPTER, ClientMessage
from .server import SERVER_ADAPTER, ServerMessage

CLIENT_TYPES = frozenset(
    t for m in CLIENT_ADAPTER.json_schema()["$defs"].values() if (t := m.get("properties", {}).get("type", {}).get("const"))
)
"""Every ``type`` tag a client may send."""


class DecodeError(Exception):
    """A client frame could not be decoded.

    Attributes:
        code: stable error code (``bad_json``, ``bad_request``, ``unknown_type``).
        request_id: the frame's ``id`` when it could be read, else None.
    """

    def __init__(self, code: str, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


BINARY_NOT_UTF8 = "binary frame is not JSON: the protocol is UTF-8 JSON in text frames"
"""The ``bad_json`` message for a binary frame whose bytes are not UTF-8."""


def decode_client(frame: str | bytes) -> ClientMessage:
    """Parse one client frame into an intent.

    Args:
        frame: the WebSocket frame's text (or bytes holding UTF-8 JSON). Bytes are decoded as
            strict UTF-8 first: ``json.loads`` would otherwise guess UTF-16 or UTF-32 from the
            first bytes (RFC 8259 section 8.1: JSON exchanged between systems is UTF-8); bytes
            that are not UTF-8 JSON are ``bad_json`` with :data:`BINARY_NOT_UTF8`.

    Returns:
        The validated intent model.

    Raises:
        DecodeError: the frame is not a JSON object, has no or an unknown ``type``, or a field
            is missing or has the wrong type. ``request_id`` holds the frame's ``id`` if any.
    """
    if not isinstance(frame, str):
        return _decode_binary(frame)
    try:
        data = json.loads(frame)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError("bad_json", f"frame is not valid JSON: {exc}") from None
    except RecursionError:
        raise DecodeError("bad_json", "frame is nested too deeply") from None
    if not isinstance(data, dict):
        raise DecodeError("bad_request", "frame must be a JSON object with a 'type' field")
    rid = data.get("id")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        rid = None
    kind = data.get("type")
    if not isinstance(kind, str):
        raise DecodeError("bad_request", "frame has no 'type' string field", rid)
    if kind not in CLIENT_TYPES:
        raise DecodeError("unknown_type", f"unknown message type {kind!r}", rid)
    try:
        return CLIENT_ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:])  # empty for a rule over the whole message
        msg = first["msg"].removeprefix("Value error, ")  # pydantic's prefix for a validator's ValueError
        raise DecodeError("bad_request", f"{kind}: {where}: {msg}" if where else f"{kind}: {msg}", rid) from None


def _decode_binary(frame: bytes) -> ClientMessage:
    """Decode a binary frame: strict UTF-8, then as text; a frame that is not UTF-8 JSON (bytes
    in another encoding, a BOM, no JSON) is ``bad_json`` with :data:`BINARY_NOT_UTF8`."""
    try:
        return decode_client(bytes(frame).decode("utf-8"))
    except UnicodeDecodeError:
        raise DecodeError("bad_json", BINARY_NOT_UTF8) from None
    except DecodeError as exc:
        if exc.code == "bad_json":
            raise DecodeError("bad_json", BINARY_NOT_UTF8) from None
        raise


def decode_server(frame: str | bytes) -> ServerMessage:
    """Parse one server frame (for clients). Raises pydantic's ``ValidationError`` or ``ValueError``."""
    return SERVER_ADAPTER.validate_json(frame)


def encode(message: BaseModel) -> str:
    """Encode a wire model as compact camelCase JSON text."""
    return message.model_dump_json(by_alias=True)
