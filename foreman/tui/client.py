"""The client's connection to the daemon: hello, the receive loop, requests and reconnects.

It connects exactly like the Minecraft mod: a WebSocket to ``127.0.0.1`` with no ``Origin``
header, ``hello {protocol: 1, client, token}`` (the token from ``foreman.json``) and then the snapshot and state messages, which feed
the :class:`~foreman.tui.mirror.Mirror`. Intents go out with an ``id``; the reply carrying
that id (``ack``, ``error``, ``diff``, ``memory``) completes the request.

When the connection drops (the daemon restarts), it reconnects by itself with a growing delay
and says ``hello {since: <last seq>}`` so that the daemon sends only what was missed. A seq gap
or a seq that went backwards (a daemon that lost its counter) makes it resynchronise.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable

import websockets
from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection, connect

import protocol as p

from .discovery import DaemonNotFound
from .mirror import Mirror, Outcome

logger = logging.getLogger(__name__)

Reply = p.Ack | p.DiffResult | p.MemoryResult
Listener = Callable[[p.ServerMessage, Outcome], None]
"""Called after every message from the daemon, with what the mirror did with it."""
StateListener = Callable[[str], None]
"""Called with ``connecting``, ``connected`` or ``disconnected: <why>`` when that changes."""


class RequestError(Exception):
    """The daemon refused an intent (an ``error`` reply).

    Attributes:
        code: the wire error code (``not_found``, ``conflict``, ``bad_request`` ...).
        message: the daemon's explanation, for people.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class ConnectionLost(Exception):
    """The connection closed before the reply came; the intent may or may not have been applied."""


class Unauthorized(Exception):
    """The daemon refused this client's token (``unauthorized`` in reply to ``hello``).

    Retrying cannot help while the token on disk stays the same, so the connection stops.
    ``str(exc)`` is advice for people: where the token is read from and which flags to pass.
    """


class Connection:
    """A self-healing connection to the daemon that keeps a mirror up to date.

    Args:
        locate: returns the URL to connect to; called before every attempt. It may raise
            :class:`~foreman.tui.discovery.DaemonNotFound` (retried like a refused connection).
        mirror: the mirror to feed.
        client_name: sent in ``hello`` (``foreman-tui/0.1.0``).
        listener: called after every message (see :data:`Listener`).
        on_state: called when the connection state changes (see :data:`StateListener`).
        reconnect_interval: the first delay before reconnecting, in seconds; doubles per failure.
        max_reconnect_interval: the largest delay, in seconds.
        open_timeout: how long one connection attempt may take, in seconds.
        token: returns the daemon's client token (sent in ``hello``), called before every
            attempt; default: ``locate.token`` when ``locate`` has one (a
            :class:`~foreman.tui.discovery.Locator` reads it from ``foreman.json``), else none.
    """

    def __init__(
        self,
        locate: Callable[[], str],
        mirror: Mirror,
        *,
        client_name: str,
        listener: Listener | None = None,
        on_state: StateListener | None = None,
        reconnect_interval: float = 0.2,
        max_reconnect_interval: float = 5.0,
        open_timeout: float = 5.0,
        token: Callable[[], str | None] | None = None,
    ) -> None:
        self.locate = locate
        self.token = token or getattr(locate, "token", None)
        self.mirror = mirror
        self.client_name = client_name
        self.listener = listener
        self.on_state = on_state
        self.reconnect_interval = reconnect_interval
        self.max_reconnect_interval = max_reconnect_interval
        self.open_timeout = open_timeout
        self.url: str | None = None
        self.last_error: str | None = None
        self.connections = 0
        """How many times a connection was opened (1 after the first)."""
        self._ws: ClientConnection | None = None
        self._ready = asyncio.Event()
        self._closing = False
        self._pending: dict[str, asyncio.Future[Reply]] = {}
        self._ids = itertools.count(1)
        self._resync_full = False
        self._changed = asyncio.Event()
        self._sent_token: str | None = None
        self.refused: str | None = None
        """Advice set when the daemon refused the token; :meth:`run` has then stopped."""
        self._refused = asyncio.Event()

    @property
    def ready(self) -> bool:
        """True while connected with a synced mirror: requests can be sent."""
        return self._ready.is_set()

    async def run(self) -> None:
        """Connect and keep connected until :meth:`close`; returns then.

        Never raises for connection problems: they are logged, kept in ``last_error`` and
        retried with backoff.
        """
        delay = self.reconnect_interval
        while not self._closing:
            self._set_state("connecting")
            try:
                await self._session()
                delay = self.reconnect_interval
            except (OSError, TimeoutError, websockets.InvalidHandshake, websockets.ConnectionClosed, DaemonNotFound) as exc:
                self.last_error = _describe(exc)
                logger.info("connection to %s failed: %s", self.url, self.last_error)
            finally:
                self._ready.clear()
                self._ws = None
                self._fail_pending(ConnectionLost(f"connection to the Foreman closed ({self.last_error or 'closed'})"))
            if self._closing:
                break
            self._set_state(f"disconnected: {self.last_error or 'closed'}")
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_reconnect_interval)
        self._set_state("closed")

    async def _session(self) -> None:
        self.url = self.locate()
        async with connect(
            self.url, max_size=None, compression=None, open_timeout=self.open_timeout, user_agent_header=None
        ) as ws:
            self._ws = ws
            self.connections += 1
            since = None if self._resync_full or not self.mirror.synced else self.mirror.seq
            self._resync_full = False
            token = self._sent_token = self.token() if self.token is not None else None
            await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, client=self.client_name, since=since, token=token)))
            if since is not None:
                self._mark_ready()
            self.last_error = None
            async for frame in ws:
                if not self._receive(frame):
                    await ws.close()
                    break
            self.last_error = self.last_error or "the Foreman closed the connection"

    def _mark_ready(self) -> None:
        if not self._ready.is_set():
            self._ready.set()
            self._set_state("connected")

    def _receive(self, frame: str | bytes) -> bool:
        """Handle one frame; return False to drop the connection and resynchronise."""
        try:
            msg = p.decode_server(frame)
        except (ValidationError, ValueError) as exc:
            logger.warning("ignoring a frame this client cannot read: %s", str(exc).splitlines()[0])
            return True
        if isinstance(msg, p.Error) and msg.code == "unauthorized":
            self.last_error = f"refused: {msg.message}"
            logger.warning(self.last_error)
            self._ready.clear()
            fresh = self.token() if self.token is not None else None
            if fresh is None or fresh == self._sent_token:
                # the same (or no) token again would be refused again: stop, with advice
                self.refused = self._refusal_advice()
                self._closing = True
                self._refused.set()
            # else the token on disk changed (a restarted daemon wrote a new one): retry with it
            return False
        outcome = self.mirror.apply(msg)
        seq = msg.seq if isinstance(msg, p.StateMessage) else None  # (a gap or a stale seq: a state message)
        if outcome is Outcome.REPLY:
            self._complete(msg)
        elif outcome is Outcome.GAP:
            self.last_error = f"missed state messages (at seq {self.mirror.seq}, got {seq}); resuming"
            logger.warning(self.last_error)
            return False
        elif outcome is Outcome.STALE:
            # v1 never repeats a seq after ``since``: the daemon's counter went back (a fresh
            # state), so only a full snapshot is right.
            self.last_error = f"the Foreman's seq went back ({seq} <= {self.mirror.seq}); reloading"
            logger.warning(self.last_error)
            self._resync_full = True
            return False
        elif msg.type == "snapshot":
            self._mark_ready()
        if outcome is Outcome.APPLIED:
            self._pulse()
        if self.listener is not None:
            try:
                self.listener(msg, outcome)
            except Exception:  # a broken view must not break the connection
                logger.exception("listener failed on %s", msg.type)
        return True

    def _complete(self, msg: p.ServerMessage) -> None:
        rid = getattr(msg, "id", None)
        future = self._pending.pop(str(rid), None) if rid is not None else None
        if future is None:
            if msg.type == "error":
                logger.warning("the Foreman reports: %s: %s", msg.code, msg.message)
            return
        if future.done():
            return
        if isinstance(msg, p.Error):
            future.set_exception(RequestError(msg.code, msg.message))
        elif isinstance(msg, (p.Ack, p.DiffResult, p.MemoryResult)):  # the other replies with an id
            future.set_result(msg)

    def _fail_pending(self, exc: Exception) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved: a waiter that gave up must not log it

    def _pulse(self) -> None:
        """Wake every :meth:`wait_for` to check its predicate again."""
        self._changed.set()
        self._changed = asyncio.Event()

    def _set_state(self, state: str) -> None:
        self._pulse()
        if self.on_state is not None:
            try:
                self.on_state(state)
            except Exception:
                logger.exception("state listener failed")

    async def wait_ready(self, timeout: float) -> None:
        """Wait until connected with a synced mirror.

        Raises:
            TimeoutError: not ready within ``timeout`` seconds (``last_error`` says why).
            Unauthorized: the daemon refused the token (at once, not after ``timeout``).
        """
        async with asyncio.timeout(timeout):
            ready = asyncio.ensure_future(self._ready.wait())
            refused = asyncio.ensure_future(self._refused.wait())
            try:
                await asyncio.wait((ready, refused), return_when=asyncio.FIRST_COMPLETED)
            finally:
                ready.cancel()
                refused.cancel()
        if self.refused is not None and not self._ready.is_set():
            raise Unauthorized(self.refused)

    def _refusal_advice(self) -> str:
        where = self.url or "its address"
        advise = getattr(self.locate, "refusal_advice", None)
        if callable(advise):
            return advise(where)
        return (f"the Foreman at {where} refused this client's token; "
                "pass the token of that Foreman (see its foreman.json)")

    async def request(self, intent: p.Intent, timeout: float = 30.0) -> Reply:
        """Send an intent with a fresh id and wait for its reply.

        Args:
            intent: any client intent except ``hello``; its ``id`` is replaced.
            timeout: seconds to wait for the connection and then for the reply.

        Returns:
            The ``ack``, ``diff`` or ``memory`` reply. After an ``ack``, the mirror has applied
            (or will apply next) every state message up to ``ack.seq``.

        Raises:
            RequestError: the daemon refused the intent.
            ConnectionLost: the connection closed before the reply.
            TimeoutError: no connection or no reply within ``timeout``.
        """
        async with asyncio.timeout(timeout):
            await self._ready.wait()
            ws = self._ws
            if ws is None:
                raise ConnectionLost("not connected to the Foreman")
            rid = f"tui-{next(self._ids)}"
            future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
            self._pending[rid] = future
            try:
                await ws.send(p.encode(intent.model_copy(update={"id": rid})))
            except websockets.ConnectionClosed as exc:
                self._pending.pop(rid, None)
                raise ConnectionLost(f"connection to the Foreman closed: {_describe(exc)}") from None
            try:
                return await future
            finally:
                self._pending.pop(rid, None)

    async def wait_for(self, predicate: Callable[[Mirror], bool], timeout: float | None) -> None:
        """Wait until ``predicate(mirror)`` holds; checked now, after every change of the mirror
        and of the connection state.

        Raises:
            TimeoutError: it did not hold within ``timeout`` seconds (None: no limit).
        """
        async with asyncio.timeout(timeout):
            while not predicate(self.mirror):
                await self._changed.wait()

    async def wait_seq(self, seq: int, timeout: float) -> None:
        """Wait until the mirror has applied state up to ``seq`` (an ``ack.seq``).

        Raises:
            TimeoutError: not reached within ``timeout`` seconds.
        """
        await self.wait_for(lambda m: m.seq is not None and m.seq >= seq, timeout)

    async def close(self) -> None:
        """Stop reconnecting and close the connection; :meth:`run` returns."""
        self._closing = True
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()
        self._ready.clear()
        self._fail_pending(ConnectionLost("the client closed the connection"))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError) or (isinstance(exc, OSError) and exc.errno == 111):
        return "connection refused (is the Foreman running?)"
    if isinstance(exc, websockets.InvalidStatus):
        return f"the Foreman refused the connection (HTTP {exc.response.status_code})"
    if isinstance(exc, TimeoutError):
        return "timed out connecting"
    text = str(exc) or type(exc).__name__
    return text
