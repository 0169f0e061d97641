"""The browser view's door: one-time login links, the session cookie, and the HTTP answers.

The daemon serves the page on its WebSocket port (``websockets``' ``process_request``: a request
that is not a WebSocket upgrade gets an HTTP answer here). The rules:

* **Login**: ``foreman web`` makes a one-time link from the profile's client token (it can read
  ``foreman.json``): ``/login?code=<nonce>.<expiry>.<mac>``, the MAC an HMAC of the nonce and
  expiry keyed by the token. The daemon checks the MAC with its own token, the expiry
  (:data:`LOGIN_TTL` seconds) and that the nonce was never used, then sets the session cookie and
  sends the browser on to ``/``. A link is good once, and never after the daemon restarts
  (the token is new at every start).
* **Session**: the cookie ``foreman_<port>`` is ``<issued>.<random>.<mac>``, the MAC keyed by a
  secret kept in ``<home>/<profile>/web.key`` (0600), so a session outlives a daemon restart and
  the page reconnects by itself. ``HttpOnly``, ``SameSite=Strict``, ``Path=/``, for
  :data:`SESSION_DAYS` days. Cookies are not scoped by port: the name carries the port so two
  Foremen do not overwrite each other's.
* **Every request** (page, asset, WebSocket upgrade) is checked for its ``Host`` (127.0.0.1,
  localhost or [::1]; any host with ``--web-lan``, where the session is what protects) and, when it
  carries an ``Origin``, for that origin being the page's own (``http://<Host>``). Without a valid
  session every page and asset is refused with 401; a browser's WebSocket needs the session and its
  own origin (a cross-site page can neither open the socket nor, SameSite=Strict, send the cookie).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import time
from http import HTTPStatus
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

logger = logging.getLogger(__name__)

LOGIN_TTL = 600.0
"""Seconds a one-time login link stays good."""
SESSION_DAYS = 30
"""Days a browser session (its cookie) lasts."""
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
STATIC = Path(__file__).resolve().parent / "static"
"""The page's files, shipped in the package (plain ES modules and CSS: no build step)."""
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
         ".json": "application/json"}
NEED_LOGIN = ("this Foreman's browser view needs a login: run `foreman web` (same --home/--profile) and open the "
              "one-time link it prints\n")


def login_code(token: str, *, now: float | None = None, ttl: float = LOGIN_TTL) -> str:
    """Return a one-time login code for the daemon whose client token is ``token``."""
    nonce = secrets.token_urlsafe(16)
    expiry = int((time.time() if now is None else now) + ttl)
    return f"{nonce}.{expiry}.{_mac(token.encode(), f'{nonce}.{expiry}')}"


def login_path(token: str) -> str:
    """The path and query of a one-time login link (``/login?code=...``)."""
    return f"/login?code={login_code(token)}"


def _mac(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()[:43]


def host_of(request: Request) -> str | None:
    """The request's single ``Host`` header, lower-cased (None when there are none or several)."""
    hosts = request.headers.get_all("Host")
    return hosts[0].strip().lower() if len(hosts) == 1 else None


def hostname(host: str) -> str:
    """``127.0.0.1:7878`` -> ``127.0.0.1``; ``[::1]:7878`` -> ``[::1]``."""
    return host.split("]")[0] + "]" if host.startswith("[") else host.rsplit(":", 1)[0]


def is_upgrade(request: Request) -> bool:
    """True when the request asks for a WebSocket (else it is a plain HTTP GET for the page)."""
    return any("websocket" in v.lower() for v in request.headers.get_all("Upgrade"))


class WebGate:
    """Login codes, sessions and the page's HTTP answers for one daemon.

    Args:
        token: the daemon's client token (None: ``--no-auth``, no login needed).
        key_file: where the session key lives (``<home>/<profile>/web.key``), made 0600 on first use.
        port: the daemon's port (it names the cookie); set once the server is bound.
        lan: ``--web-lan``: any ``Host`` is accepted (the session still required).
        clock: Unix time in seconds.
    """

    def __init__(self, token: str | None, key_file: Path, *, port: int = 0, lan: bool = False,
                 clock: Callable[[], float] = time.time) -> None:
        self.token = token
        self.key_file = key_file
        self.port = port
        self.lan = lan
        self.clock = clock
        self._key: bytes | None = None
        self._used: dict[str, float] = {}
        """Login nonces already exchanged, with their expiry (forgotten once expired)."""

    # ------------------------------------------------------------------ sessions
    @property
    def cookie_name(self) -> str:
        """``foreman_<port>``: cookies are shared by every port of a host, so the name holds it."""
        return f"foreman_{self.port}"

    def key(self) -> bytes:
        """The session key: read from :attr:`key_file`, or made (32 random bytes, mode 0600)."""
        if self._key is None:
            try:
                data = self.key_file.read_bytes().strip()
            except FileNotFoundError:
                data = b""
            if len(data) < 32:
                data = secrets.token_hex(32).encode()
                fd = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    os.fchmod(fh.fileno(), 0o600)
                    fh.write(data + b"\n")
            self._key = data
        return self._key

    def new_session(self) -> str:
        """A fresh session cookie value."""
        body = f"{int(self.clock())}.{secrets.token_urlsafe(18)}"
        return f"{body}.{_mac(self.key(), body)}"

    def session_ok(self, request: Request | None) -> bool:
        """True when the request carries a valid, unexpired session cookie for this daemon."""
        if request is None:
            return False
        value = self._cookie(request)
        if value is None or value.count(".") != 2:
            return False
        body, _, mac = value.rpartition(".")
        issued = body.split(".", 1)[0]
        if not issued.isdigit() or self.clock() - int(issued) > SESSION_DAYS * 86400:
            return False
        return hmac.compare_digest(mac.encode(), _mac(self.key(), body).encode())

    def _cookie(self, request: Request) -> str | None:
        for header in request.headers.get_all("Cookie"):
            for part in header.split(";"):
                name, _, value = part.strip().partition("=")
                if name == self.cookie_name:
                    return value.strip()
        return None

    def redeem(self, code: str) -> bool:
        """Check a one-time login code and spend it; True when it was good."""
        if self.token is None or code.count(".") != 2:
            return False
        nonce, expiry, mac = code.split(".")
        now = self.clock()
        self._used = {n: e for n, e in self._used.items() if e >= now}
        if not expiry.isdigit() or int(expiry) < now or nonce in self._used:
            return False
        if not hmac.compare_digest(mac.encode(), _mac(self.token.encode(), f"{nonce}.{expiry}").encode()):
            return False
        self._used[nonce] = float(expiry)
        return True

    # ------------------------------------------------------------------ the checks
    def host_ok(self, request: Request) -> bool:
        """The ``Host`` is a local name (or anything but absent, with ``--web-lan``)."""
        host = host_of(request)
        if host is None:
            return False
        return self.lan or hostname(host) in LOCAL_HOSTS

    def same_origin(self, request: Request) -> bool:
        """The request's ``Origin`` is the page's own, ``http://<Host>``."""
        origin = request.headers.get("Origin")
        host = host_of(request)
        return origin is not None and host is not None and origin.strip().lower() == f"http://{host}"

    def browser_socket_ok(self, request: Request) -> bool:
        """A browser's WebSocket upgrade may proceed: its own origin, and a session (or ``--no-auth``)."""
        return self.host_ok(request) and self.same_origin(request) and (self.token is None or self.session_ok(request))

    # ------------------------------------------------------------------ HTTP
    def respond(self, request: Request) -> Response:
        """The HTTP answer to a request that is not a WebSocket upgrade."""
        if not self.host_ok(request):
            return _text(HTTPStatus.UNAUTHORIZED, "only 127.0.0.1, localhost or [::1] may connect (or start with --web-lan)\n")
        if "Origin" in request.headers and not self.same_origin(request):
            return _text(HTTPStatus.UNAUTHORIZED, "cross-origin requests are refused\n")
        url = urlsplit(request.path)
        if url.path == "/login":
            code = (parse_qs(url.query).get("code") or [""])[0]
            if not self.redeem(code):
                logger.warning("a browser login with a wrong, used or expired code was refused")
                return _text(HTTPStatus.UNAUTHORIZED, "this login link is wrong, used or expired: run `foreman web` "
                                                      "for a new one\n")
            logger.info("a browser logged in")
            headers = _headers(request, "text/html; charset=utf-8")
            headers["Set-Cookie"] = (f"{self.cookie_name}={self.new_session()}; Path=/; HttpOnly; SameSite=Strict; "
                                     f"Max-Age={SESSION_DAYS * 86400}")
            # a page that moves on from here (not a 303): the next request is made from this origin,
            # so the SameSite=Strict cookie goes with it even when the link was opened from another site
            body = b'<!doctype html><meta http-equiv="refresh" content="0;url=/"><title>Foreman</title><a href="/">open</a>'
            return Response(200, "OK", headers, body)
        if self.token is not None and not self.session_ok(request):
            return _text(HTTPStatus.UNAUTHORIZED, NEED_LOGIN)
        name = "index.html" if url.path in ("/", "/index.html") else url.path.lstrip("/")
        path = (STATIC / name).resolve()
        if STATIC not in path.parents or not path.is_file() or path.suffix not in TYPES:
            return _text(HTTPStatus.NOT_FOUND, "not found\n")
        return Response(200, "OK", _headers(request, TYPES[path.suffix]), path.read_bytes())


def _headers(request: Request, content_type: str) -> Headers:
    host = host_of(request) or "127.0.0.1"
    return Headers([
        ("Content-Type", content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", f"default-src 'self'; connect-src 'self' ws://{host}; img-src 'self' data:; "
                                    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
    ])


def _text(status: HTTPStatus, text: str) -> Response:
    headers = Headers([("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"),
                       ("X-Content-Type-Options", "nosniff")])
    return Response(status.value, status.phrase, headers, text.encode())
