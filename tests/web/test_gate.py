"""The browser view's door without a browser: login codes, sessions, Host and Origin, over a real daemon."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import websockets
from websockets.datastructures import Headers
from websockets.http11 import Request

from foreman.web.gate import SESSION_DAYS, WebGate, login_code

from ..sim._sim import ROOT, SimDaemon, start_daemon, token_for
from .browser import http_get, login_url, read_record, wait_until


def request(path: str = "/", **headers: str) -> Request:
    return Request(path, Headers({"Host": "127.0.0.1:7878", **headers}))


def test_a_login_code_is_good_once_and_only_with_the_daemons_token(tmp_path: Path) -> None:
    gate = WebGate("tok", tmp_path / "web.key", port=7878)
    code = login_code("tok")
    assert gate.redeem(code) and not gate.redeem(code)  # once
    assert not gate.redeem(login_code("another token"))
    assert not gate.redeem(login_code("tok", now=0))  # expired
    assert not gate.redeem("garbage") and not gate.redeem("a.b.c")
    assert not WebGate(None, tmp_path / "k2").redeem(login_code("tok"))  # --no-auth: there is nothing to log into


def test_a_session_survives_a_new_gate_on_the_same_key_and_expires(tmp_path: Path) -> None:
    now = [1_000_000.0]
    gate = WebGate("tok", tmp_path / "web.key", port=7878, clock=lambda: now[0])
    value = gate.new_session()
    assert stat.S_IMODE(os.stat(tmp_path / "web.key").st_mode) == 0o600
    cookie = request(Cookie=f"other=1; foreman_7878={value}")
    assert gate.session_ok(cookie)
    again = WebGate("a new token after a restart", tmp_path / "web.key", port=7878, clock=lambda: now[0])
    assert again.session_ok(cookie)  # the key is kept: a restart keeps the browser logged in
    assert not WebGate("tok", tmp_path / "other.key", port=7878).session_ok(cookie)
    assert not gate.session_ok(request(Cookie=f"foreman_7879={value}"))  # another port's Foreman
    assert not gate.session_ok(request(Cookie=f"foreman_7878={value[:-1]}x"))
    now[0] += SESSION_DAYS * 86400 + 1
    assert not gate.session_ok(cookie)


def test_host_and_origin_rules(tmp_path: Path) -> None:
    gate = WebGate("tok", tmp_path / "web.key", port=7878)
    assert gate.host_ok(request()) and not gate.host_ok(Request("/", Headers({"Host": "evil.example:7878"})))
    assert WebGate("tok", tmp_path / "web.key", lan=True).host_ok(Request("/", Headers({"Host": "192.168.1.9:7878"})))
    assert gate.same_origin(request(Origin="http://127.0.0.1:7878"))
    for origin in ("http://evil.example", "http://127.0.0.1:9999", "null", "https://127.0.0.1:7878"):
        assert not gate.same_origin(request(Origin=origin)), origin
    value = gate.new_session()
    assert gate.browser_socket_ok(request(Origin="http://127.0.0.1:7878", Cookie=f"foreman_7878={value}"))
    assert not gate.browser_socket_ok(request(Origin="http://127.0.0.1:7878"))
    assert not gate.browser_socket_ok(request(Origin="http://evil.example", Cookie=f"foreman_7878={value}"))


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimDaemon]:
    d = start_daemon(tmp_path_factory.mktemp("gate"), "--no-autostart", "--no-ambient")
    yield d
    d.stop()


def test_the_page_needs_a_login_every_asset_too(daemon: SimDaemon) -> None:
    base = f"http://127.0.0.1:{daemon.port}"
    for path in ("/", "/index.html", "/app.js", "/style.css", "/nothing-here"):
        status, body = http_get(base + path)
        assert status == 401 and "foreman web" in body, (path, status)
    assert http_get(base + "/login?code=made.up.code")[0] == 401
    assert http_get(base + "/login")[0] == 401


def test_a_login_sets_a_strict_httponly_cookie_and_host_and_origin_are_checked(daemon: SimDaemon) -> None:
    url = login_url(daemon)
    base = f"http://127.0.0.1:{daemon.port}"
    assert http_get(url, {"Host": "evil.example"})[0] == 401  # DNS rebinding: refused before the code is spent
    assert http_get(url, {"Origin": "http://evil.example"})[0] == 401
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        cookie = resp.headers["Set-Cookie"]
        assert resp.headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in resp.headers["Content-Security-Policy"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert http_get(url)[0] == 401  # one time
    pair = cookie.split(";", 1)[0]
    status, body = http_get(base + "/app.js", {"Cookie": pair})
    assert status == 200 and "WebSocket" in body
    assert http_get(base + "/app.js", {"Cookie": pair, "Host": "evil.example"})[0] == 401
    assert http_get(base + "/app.js", {"Cookie": pair, "Origin": "http://evil.example"})[0] == 401
    assert http_get(base + "/../pyproject.toml", {"Cookie": pair})[0] == 404
    asyncio.run(_sockets(daemon.port, pair))


async def _sockets(port: int, cookie: str) -> None:
    own = f"http://127.0.0.1:{port}"
    uri = f"ws://127.0.0.1:{port}/"
    # the page's own origin with its session: in, and hello needs no token
    async with websockets.connect(uri, origin=own, additional_headers={"Cookie": cookie}) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "test"}))
        assert json.loads(await ws.recv())["type"] == "snapshot"
    for origin, headers in ((own, {}), ("http://evil.example", {"Cookie": cookie}), ("http://127.0.0.1:1", {"Cookie": cookie})):
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(uri, origin=origin, additional_headers=headers):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 401, origin
    # a client without Origin and without a session still needs the token (unchanged)
    async with websockets.connect(uri) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "test"}))
        assert json.loads(await ws.recv())["code"] == "unauthorized"
    assert token_for(port)


def foreman(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m foreman ARGS`` as a user would (no AGENTCRAFT_* variables unless given)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_") and k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return subprocess.run([sys.executable, "-m", "foreman", *args], cwd=ROOT, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=60)


def test_foreman_web_opens_the_link_only_where_a_desktop_is(daemon: SimDaemon, tmp_path: Path) -> None:
    opener = tmp_path / "opener.sh"
    opened = tmp_path / "opened.txt"
    opener.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    opener.chmod(0o755)
    where = ("--home", str(daemon.home), "--profile", daemon.profile)
    headless = foreman("web", *where, env={"BROWSER": str(opener)})
    assert headless.returncode == 0 and "/login?code=" in headless.stdout
    assert not opened.exists()  # no DISPLAY: printed only
    desk = foreman("web", *where, env={"BROWSER": str(opener), "DISPLAY": ":0"})
    assert desk.returncode == 0
    wait_until(opened.exists, 10, "the browser opener")
    assert opened.read_text().strip() == desk.stdout.strip().splitlines()[-1]  # the link it printed
    assert foreman("web", *where, "--no-open", env={"BROWSER": str(opener), "DISPLAY": ":0"}).returncode == 0
    assert len(opened.read_text().splitlines()) == 1
    nobody = foreman("web", "--home", str(tmp_path / "empty"), "--no-open")
    assert nobody.returncode == 1 and "no Foreman runs" in nobody.stderr


def test_web_lan_listens_on_every_interface_still_needs_the_login_and_warns(tmp_path: Path) -> None:
    refused = foreman("start", "--backend", "sim", "--home", str(tmp_path / "h0"), "--port", "0", "--web-lan", "--no-auth")
    assert refused.returncode == 2 and "--web-lan" in refused.stderr and "--no-auth" in refused.stderr
    daemon = start_daemon(tmp_path / "home", "--no-autostart", "--no-ambient", "--web-lan")
    try:
        assert read_record(daemon).get("lan") is True
        listening = [c.laddr for c in psutil.Process(daemon.proc.pid).net_connections("tcp")
                     if c.status == psutil.CONN_LISTEN and c.laddr.port == daemon.port]
        assert listening and all(a.ip in ("0.0.0.0", "::") for a in listening), listening
        wait_until(lambda: "warning: --web-lan" in daemon.log.read_text(), 10, "the start's warning")
        base = f"http://127.0.0.1:{daemon.port}"
        status, body = http_get(base + "/", {"Host": f"192.168.1.9:{daemon.port}"})
        assert status == 401 and "foreman web" in body  # any Host, but the login is still required
        out = foreman("web", "--home", str(daemon.home), "--profile", daemon.profile, "--no-open")
        assert out.returncode == 0 and "warning: this Foreman listens beyond localhost" in out.stderr
        link = out.stdout.strip().splitlines()[1]
        import urllib.request

        phone = urllib.request.Request(link, headers={"Host": f"192.168.1.9:{daemon.port}"})
        with urllib.request.urlopen(phone, timeout=10) as resp:  # a phone's request, by its Host
            assert resp.status == 200 and "HttpOnly" in resp.headers["Set-Cookie"]
    finally:
        daemon.stop()
