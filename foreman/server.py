"""The WebSocket edge: local clients only, bounded per-client backlogs, ack/error replies.

The server knows nothing of the core. It hands every decoded intent to a handler (the
daemon) and sends whatever text the daemon broadcasts. Guards:

* Only 127.0.0.1 is bound (every interface with ``--web-lan``). A request with an ``Origin``
  header (every browser sends one) or a ``Host`` other than ``127.0.0.1``, ``localhost`` or
  ``[::1]`` (DNS rebinding) is refused with HTTP 401 unless ``allow_browser_origins``, or unless it
  is the daemon's own browser view (:mod:`foreman.web.gate`): its own origin and a valid session
  cookie. A request that is not a WebSocket upgrade is the browser view's (the page, its assets,
  the one-time login) and is answered by the gate.
* Unless started without a token (``--no-auth``), a client must present the profile's token:
  in ``hello.token`` or as ``Authorization: Bearer <token>`` on the upgrade request (a wrong
  bearer token is refused with HTTP 401). Until it does, it reads nothing and changes nothing:
  any frame but a ``hello`` with the token (a malformed one too) gets an ``unauthorized`` error
  before its details are checked. Without a token, an intent before ``hello`` gets ``hello_first``.
* A malformed frame, unknown type, missing field or oversized frame gets an ``error`` reply
  with a stable code; the connection lives on.
* Frames go straight to each socket's write buffer, encoded once for all clients. A client
  that stops reading never delays the others: once its unsent backlog passes a bound, state
  frames skip it; when it drains, it gets a fresh snapshot and live frames again. A lagging
  client that keeps sending intents without reading is disconnected (close code 1013).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from http import HTTPStatus
from typing import Any, Awaitable, Callable

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.asyncio.server import broadcast as ws_broadcast
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

import protocol
from protocol import Hello

from .errors import ForemanError
from .web.gate import WebGate, is_upgrade

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 256 * 1024
"""Client frames larger than this get a ``too_large`` error (the connection lives on)."""
TRANSPORT_MAX_BYTES = 16 * 1024 * 1024
"""Frames larger than this are refused by the WebSocket layer itself (close code 1009)."""
BACKLOG_MAX_BYTES = 4 * 1024 * 1024
"""Unsent bytes a client's socket may hold (beyond its last catch-up) before it counts as lagging."""
BACKLOG_LOW_BYTES = 64 * 1024
"""A lagging client gets its fresh snapshot once its unsent bytes fall below this."""
HELD_MAX = 1_000
"""Replies held for a lagging client; past this it is disconnected (close code 1013)."""
UNAUTHORIZED = ("this Foreman needs its client token: send hello.token (or Authorization: Bearer) with the token "
                "read from <home>/<profile>/foreman.json")
ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})

IntentHandler = Callable[[Any], Awaitable[list[str]]]
"""Takes a decoded intent; returns the reply frames (ack/error/diff/memory) for its sender."""


def error_frame(code: str, message: str, request_id: Any = None) -> str:
    """Return the text of an ``error`` reply."""
    return protocol.encode(protocol.Error(id=request_id, code=code, message=message))


class Client:
    """One connected client: its socket and its lag state.

    Frames are written straight into the socket's write buffer (no queue, no writer task); the
    buffer's size is the backlog. A client whose backlog passes ``limit`` is *lagging*: state
    frames skip it, its replies are held, and once its backlog drains it gets a fresh snapshot,
    then the held replies, then live frames again.
    """

    def __init__(self, ws: ServerConnection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.ready = False
        """True once the client said hello and got its catch-up (it then receives broadcasts)."""
        self.authed = False
        """True once the client presented the token (always True without auth)."""
        self.batch = False
        """The client said ``capabilities: ["batch"]``: a transaction's frames go as one ``batch``."""
        self.lagging = False
        self.held: list[str] = []
        """Replies kept while lagging (sent after the fresh snapshot)."""
        self.limit = BACKLOG_MAX_BYTES
        self.dropped = False
        """True once the server closes this connection for lagging too far (it gets nothing more)."""
        self.recovery: asyncio.Task[None] | None = None

    def backlog(self) -> int:
        """Bytes written for this client that its socket has not taken yet."""
        transport = self.ws.transport
        return 0 if transport is None else transport.get_write_buffer_size()


class WebSocketServer:
    """Serve protocol v1 on 127.0.0.1.

    Args:
        on_hello: called with a :class:`protocol.Hello` and the client; returns the frames
            to send (a snapshot or the missed messages) and must not await in between, so no
            broadcast slips between the catch-up and ``ready``.
        on_intent: the daemon's intent handler.
        snapshot: returns a fresh snapshot frame (for lagging clients).
        allow_browser_origins: skip the Origin/Host guard (development only).
        token: the client token every client must present; None accepts any client (``--no-auth``).
        web: the browser view's gate (None: no page is served, and browsers are refused).
    """

    def __init__(
        self,
        *,
        on_hello: Callable[[Hello], list[str]],
        on_intent: IntentHandler,
        snapshot: Callable[[], str],
        allow_browser_origins: bool = False,
        token: str | None = None,
        web: WebGate | None = None,
    ) -> None:
        self.on_hello = on_hello
        self.on_intent = on_intent
        self.snapshot = snapshot
        self.allow_browser_origins = allow_browser_origins
        self.token = token
        self.web = web
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
        port = int(sock.getsockname()[1])
        if self.web is not None:
            self.web.port = port
        return port

    async def close(self) -> None:
        """Stop accepting, close every connection and wait for them to end."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def token_ok(self, presented: str | None) -> bool:
        """True when no token is required or ``presented`` is the token (constant-time compare)."""
        if self.token is None:
            return True
        return presented is not None and hmac.compare_digest(presented.encode(), self.token.encode())

    @staticmethod
    def _bearer(request: Request) -> str | None:
        value = request.headers.get("Authorization")
        if value is None:
            return None
        scheme, _, credentials = value.strip().partition(" ")
        return credentials.strip() if scheme.lower() == "bearer" else ""

    def _guard(self, connection: ServerConnection, request: Request) -> Response | None:
        if self.web is not None and not is_upgrade(request):
            return self.web.respond(request)  # the browser view: its page, its assets, its login
        bearer = self._bearer(request)
        if bearer is not None and self.token is not None and not self.token_ok(bearer):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "wrong token: read it from <home>/<profile>/foreman.json\n")
        if self.allow_browser_origins:
            return None
        if "Origin" in request.headers:
            if self.web is not None and self.web.browser_socket_ok(request):
                return None  # the daemon's own page, with its session cookie
            return connection.respond(HTTPStatus.UNAUTHORIZED, "browser origins are refused (log in with `foreman web`)\n")
        if self.web is not None and self.web.lan:
            return None if self.web.host_ok(request) else connection.respond(HTTPStatus.UNAUTHORIZED, "no Host\n")
        hosts = request.headers.get_all("Host")
        host = hosts[0].strip().lower() if len(hosts) == 1 else ""  # none or several Host headers: refused
        hostname = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
        if hostname not in ALLOWED_HOSTS:
            return connection.respond(HTTPStatus.UNAUTHORIZED, "only 127.0.0.1, localhost or [::1] may connect\n")
        return None

    def broadcast(self, frames: list[str]) -> None:
        """Write one transaction's state frames to every client that said hello and keeps up.

        Never waits. Each frame is UTF-8 encoded once and written to all sockets
        (``websockets.broadcast``); clients with the ``batch`` capability get one ``batch`` frame
        when there are several. A client whose backlog then passes its limit starts lagging
        (see :class:`Client`).
        """
        live = [c for c in self.clients if c.ready and not c.lagging]
        if not live or not frames:
            return
        if len(frames) > 1 and any(c.batch for c in live):
            ws_broadcast([c.ws for c in live if c.batch],
                         ('{"type":"batch","messages":[' + ",".join(frames) + "]}").encode(), text=True)
            plain = [c.ws for c in live if not c.batch]
        else:
            plain = [c.ws for c in live]
        if plain:
            for text in frames:
                ws_broadcast(plain, text.encode(), text=True)
        for client in live:
            transport = client.ws.transport
            if transport is not None and transport.get_write_buffer_size() > client.limit:
                self._check(client)

    def send(self, client: Client, frames: list[str]) -> None:
        """Write frames (replies, a catch-up) to one client, in order; held while it lags."""
        if not frames or client.dropped:
            return
        if client.lagging:
            client.held.extend(frames)
            if len(client.held) > HELD_MAX:
                self._drop(client, "too many replies held for a client that does not read")
            return
        for text in frames:
            ws_broadcast((client.ws,), text)
        self._check(client)

    def _check(self, client: Client) -> None:
        if client.lagging or client.backlog() <= client.limit:
            return
        client.lagging = True
        logger.warning("client %s lags (%d bytes unsent): state frames skip it until it reads; then a fresh snapshot",
                       client.name, client.backlog())
        client.recovery = asyncio.create_task(self._recover(client), name=f"ws-recover {client.name}")

    async def _recover(self, client: Client) -> None:
        transport = client.ws.transport
        while client.backlog() > BACKLOG_LOW_BYTES:
            if transport.is_closing():
                return
            await asyncio.sleep(0.05)
        snapshot = self.snapshot()
        held, client.held = client.held, []
        client.lagging = False
        client.limit = BACKLOG_MAX_BYTES + len(snapshot)
        logger.info("client %s caught up: fresh snapshot at its socket", client.name)
        self.send(client, [snapshot, *held])

    def _authenticate(self, client: Client, frame: str | bytes) -> bool:
        """The pre-hello rule: a connection that has not authenticated may only send a ``hello``
        with the token. Anything else (a malformed frame, any intent, a hello without the right
        token) is refused before its details are checked, so it learns nothing but ``unauthorized``.
        """
        if len(frame) > MAX_FRAME_BYTES:
            return False
        try:
            intent = protocol.decode_client(frame)
        except protocol.DecodeError:
            return False
        if not isinstance(intent, Hello):
            return False
        if not self.token_ok(intent.token):
            logger.warning("client %s@%s refused: no valid token", intent.client, client.ws.remote_address)
            return False
        client.authed = True
        return True

    def _drop(self, client: Client, why: str) -> None:
        logger.warning("client %s dropped: %s", client.name, why)
        client.ready, client.dropped = False, True
        client.held.clear()
        client.recovery = asyncio.create_task(client.ws.close(1013, why[:100]), name=f"ws-drop {client.name}")

    async def _handle(self, ws: ServerConnection) -> None:
        client = Client(ws, f"{ws.remote_address}")
        client.authed = self.token is None or (ws.request is not None and self.token_ok(self._bearer(ws.request))) or (
            self.web is not None and self.web.session_ok(ws.request))
        self.clients.add(client)
        try:
            async for frame in ws:
                self.send(client, await self._frame(client, frame))
        except ConnectionClosed:
            pass
        finally:
            self.clients.discard(client)
            if client.recovery is not None and not client.recovery.done():
                client.recovery.cancel()

    async def _frame(self, client: Client, frame: str | bytes) -> list[str]:
        if not client.authed and not self._authenticate(client, frame):
            return [error_frame("unauthorized", UNAUTHORIZED, _request_id(frame))]
        if len(frame) > MAX_FRAME_BYTES:
            return [error_frame("too_large", f"frame of {len(frame)} bytes is over the {MAX_FRAME_BYTES}-byte limit")]
        try:
            intent = protocol.decode_client(frame)
        except protocol.DecodeError as exc:
            if isinstance(frame, bytes) and exc.code == "bad_json":  # json.loads' own text names a UTF-16/32 guess
                return [error_frame("bad_json", "binary frame is not JSON: the protocol is UTF-8 JSON in text frames")]
            return [error_frame(exc.code, exc.message, exc.request_id)]
        if isinstance(intent, Hello):
            if intent.protocol != protocol.PROTOCOL_VERSION:
                return [error_frame("protocol", f"this Foreman speaks protocol {protocol.PROTOCOL_VERSION}, not {intent.protocol}", intent.id)]
            client.name = f"{intent.client}@{client.ws.remote_address}"
            client.batch = "batch" in (intent.capabilities or ())
            frames = self.on_hello(intent)
            client.limit = BACKLOG_MAX_BYTES + sum(map(len, frames))
            self.send(client, frames)
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



def _request_id(frame: str | bytes) -> str | int | None:
    """The ``id`` of a frame when it is a JSON object with a string or integer ``id``, else None."""
    if len(frame) > MAX_FRAME_BYTES:
        return None
    try:
        data = json.loads(frame)
    except (ValueError, TypeError):
        return None
    rid = data.get("id") if isinstance(data, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
