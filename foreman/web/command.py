"""``foreman web``: print (and open, where a desktop is there) a one-time login link to the browser view."""

from __future__ import annotations

import contextlib
import socket
import sys
import webbrowser

from .. import runtime
from ..config import Settings, has_desktop
from .gate import LOGIN_TTL, login_path


def lan_address() -> str | None:
    """This machine's address on its network (the interface of its default route), or None.

    A UDP socket's ``connect`` sends nothing: it only picks the route."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))
        address = str(probe.getsockname()[0])
        return None if address.startswith("127.") or address == "0.0.0.0" else address
    return None


def web_main(settings: Settings, *, open_browser: bool = True) -> int:
    """Print a one-time login link for the running Foreman of ``settings``' home (and profile).

    Returns:
        0, 1 when no Foreman runs (or it runs with ``--no-auth``: then the page needs no login),
        2 when several run and none is named.
    """
    named = settings.sources.get("profile", "default") != "default"
    live = runtime.running(settings.home, settings.profile if named else None)
    if not live:
        where = f"profile {settings.profile!r} in {settings.home}" if named else str(settings.home)
        print(f"foreman web: no Foreman runs for {where}; start one with `foreman start`", file=sys.stderr)
        return 1
    if len(live) > 1:
        names = ", ".join(f"{r.get('profile')} (port {r.get('port')})" for r in live)
        print(f"foreman web: several Foremen run in {settings.home}: {names}; name one with --profile", file=sys.stderr)
        return 2
    record = live[0]
    port, token = record.get("port"), record.get("token")
    if not token:
        url = f"http://127.0.0.1:{port}/"
        print(f"{url}\n(this Foreman runs with --no-auth: the page needs no login, and any local process may steer it)")
    else:
        url = f"http://127.0.0.1:{port}{login_path(token)}"
        print(f"Open the Foreman in your browser (this link logs in once, within {LOGIN_TTL / 60:g} minutes):\n{url}")
    if record.get("lan"):
        address = lan_address()
        if token and address:
            print(f"On your network (a phone): http://{address}:{port}{login_path(token)}  (a second one-time link)")
        print("warning: this Foreman listens beyond localhost (--web-lan): anyone on your network can reach its "
              "port; the login is still required, and the traffic is not encrypted (plain http)", file=sys.stderr)
    if open_browser and has_desktop():
        with contextlib.suppress(webbrowser.Error):
            webbrowser.open(url)
    return 0
