"""The WebSocket edge: local clients only, bounded per-client queues, ack/error replies.

The server knows nothing of the core. It hands every decoded intent to a handler (the
daemon) and sends whatever text the daemon broadcasts. Guards:

* Only 127.0.0.1 is bound. A request with an ``Origin`` header (every browser sends one) or a
  ``Host`` other than ``127.0.0.1``, ``localhost`` or ``[::1]`` (DNS rebinding) is refused
  with HTTP 401 unless ``allow_browser_origins``.
* A malformed frame, unknown type, missing field or oversized frame gets an ``error`` reply
  with a stable code; the connection lives on.
* Each client has a bounded queue: a client that stops reading never delays the others; when
  its queue overflows, its backlog is dropped and it gets a fresh snapshot once it reads again.
"""

from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus
from typing import Any, Awaitable, Callable

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import protocol
from protocol import Hello

from .errors import ForemanError

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 256 * 1024
"""Client frames larger than this get a ``too_large`` error (the connection lives on)."""
TRANSPORT_MAX_BYTES = 16 * 1024 * 1024
"""Frames larger than this are refused by the WebSocket layer itself (close code 1009)."""
QUEUE_MAX = 2_000
"""Messages queued per client before it counts as lagging."""
ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})

IntentHandler = Callable[[Any], Awaitable[list[str]]]
"""Takes a decoded intent; returns the reply frames (ack/error/diff/memory) for its sender."""


def error_frame(code: str, message: str, request_id: Any = None) -> str:
    """Return the text of an ``error`` reply."""
    return protocol.encode(protocol.Error(id=request_id, code=code, message=message))


class Client:
    """One connected client: its socket, its bounded outgoing queue and its writer task."""

    def __init__(self, ws: ServerConnection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.queue: asyncio.Queue[str] = asyncio.Queue(maxsize=QUEUE_MAX)
        self.ready = False
        """True once the client said hello and got its snapshot (it then receives broadcasts)."""
        self.lagging = False

    def push(self, text: str) -> None:
        """Queue a frame without waiting; on overflow drop the backlog and mark the client lagging."""
        if self.lagging:
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.lagging = True
            while not self.queue.empty():
                self.queue.get_nowait()
            logger.warning("client %s lags: backlog dropped, it will get a fresh snapshot", self.name)


class WebSocketServer:
    """Serve protocol v1 on 127.0.0.1.

    Args:
        on_hello: called with a :class:`protocol.Hello` and the client; returns the frames
            to send (a snapshot or the missed messages) and must not await in between, so no
            broadcast slips between the catch-up and ``ready``.
        on_intent: the daemon's intent handler.
        snapshot: returns a fresh snapshot frame (for lagging clients).
        allow_browser_origins: skip the Origin/Host guard (development only).
    """

    def __init__(
        self,
        *,
        on_hello: Callable[[Hello], list[str]],
        on_intent: IntentHandler,
        snapshot: Callable[[], str],
        allow_browser_origins: bool = False,
    ) -> None:
        self.on_hello = on_hello
        self.on_intent = on_intent
        self.snapshot = snapshot
        self.allow_browser_origins = allow_browser_origins
        self.clients: set[Client] = set()
        self._server: Server | None = None

    async def start(self, port: int, host: str = "127.0.0.1") -> int:
        """Start listening; return the bound port (useful with ``port=0``).

        Raises:
            OSError: the port is taken (errno EADDRINUSE).
        """
        self._server = await serve(
            self._handle,
            host,
            port,
            process_request=self._guard,
            compression=None,
            max_size=TRANSPORT_MAX_BYTES,
            max_queue=64,
            ping_interval=20,
            ping_timeout=60,
        )
        sock = next(iter(self._server.sockets))
        return int(sock.getsockname()[1])

    async def close(self) -> None:
        """Stop accepting, close every connection and wait for them to end."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def _guard(self, connection: ServerConnection, request: Request) -> Response | None:
        if self.allow_browser_origins:
            return None
        if "Origin" in request.headers:
            return connection.respond(HTTPStatus.UNAUTHORIZED, "browser origins are refused (start with --allow-browser-origins)\n")
        hosts = request.headers.get_all("Host")
        host = hosts[0].strip().lower() if len(hosts) == 1 else ""  # none or several Host headers: refused
        hostname = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
        if hostname not in ALLOWED_HOSTS:
            return connection.respond(HTTPStatus.UNAUTHORIZED, "only 127.0.0.1, localhost or [::1] may connect\n")
        return None

    def broadcast(self, frames: list[str]) -> None:
        """Queue state frames for every client that said hello (never waits)."""
        for client in self.clients:
            if client.ready:
                for text in frames:
                    client.push(text)

    async def _writer(self, client: Client) -> None:
        ws = client.ws
        try:
            while True:
                text = await client.queue.get()
                await ws.send(text)
                if client.lagging and client.queue.empty():
                    client.lagging = False
                    client.queue.put_nowait(self.snapshot())
        except ConnectionClosed:
            pass

    async def _handle(self, ws: ServerConnection) -> None:
        client = Client(ws, f"{ws.remote_address}")
        self.clients.add(client)
        writer = asyncio.create_task(self._writer(client), name=f"ws-writer {client.name}")
        try:
            async for frame in ws:
                for reply in await self._frame(client, frame):
                    client.push(reply)
        except ConnectionClosed:
            pass
        finally:
            self.clients.discard(client)
            writer.cancel()
            try:
                await writer
            except asyncio.CancelledError:
                pass

    async def _frame(self, client: Client, frame: str | bytes) -> list[str]:
        if len(frame) > MAX_FRAME_BYTES:
            return [error_frame("too_large", f"frame of {len(frame)} bytes is over the {MAX_FRAME_BYTES}-byte limit")]
        try:
            intent = protocol.decode_client(frame)
        except protocol.DecodeError as exc:
            return [error_frame(exc.code, exc.message, exc.request_id)]
        if isinstance(intent, Hello):
            if intent.protocol != protocol.PROTOCOL_VERSION:
                return [error_frame("protocol", f"this Foreman speaks protocol {protocol.PROTOCOL_VERSION}, not {intent.protocol}", intent.id)]
            client.name = f"{intent.client}@{client.ws.remote_address}"
            frames = self.on_hello(intent)
            for text in frames:
                client.push(text)
            client.ready = True
            return []
        if not client.ready:
            return [error_frame("hello_first", "send hello before any other message", intent.id)]
        try:
            return await self.on_intent(intent)
        except ForemanError as exc:
            return [error_frame(exc.code, exc.message, intent.id)]
        except Exception:  # the daemon never crashes on client input
            logger.exception("intent %s failed", getattr(intent, "type", "?"))
            return [error_frame("internal", "the Foreman failed to handle this message; see its log", intent.id)]

