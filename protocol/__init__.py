"""Protocol v1: the wire models shared by the Foreman daemon and its clients.

This package imports nothing of ``foreman``; a client (the TUI, a script) needs only this.
"""

from .base import PROTOCOL_VERSION, WireModel
from .client import *  # noqa: F403
from .client import CLIENT_ADAPTER, ClientMessage
from .codec import DecodeError, decode_client, decode_server, encode
from .diff import Diff, DiffFile, DiffHunk, DiffLine
from .entities import *  # noqa: F403
from .risk import Risk, RiskKind, RiskSeverity, Usage
from .server import *  # noqa: F403
from .server import SERVER_ADAPTER, ServerMessage

__all__ = [
    "PROTOCOL_VERSION", "WireModel", "ClientMessage", "ServerMessage", "CLIENT_ADAPTER", "SERVER_ADAPTER",
    "DecodeError", "decode_client", "decode_server", "encode", "Diff", "DiffFile", "DiffHunk", "DiffLine",
    "Risk", "RiskKind", "RiskSeverity", "Usage",
]
