"""Helpers of the browser view's tests: Debian's chromium driven by Playwright's Python API.

No browser is downloaded (never ``playwright install``): the tests use ``/usr/bin/chromium``
(``apt-get install -y chromium``) and are skipped, saying why, when it or the ``playwright``
package is missing. Each browser gets a fresh profile folder and a home of its own, and flags
that keep it off the network (this machine has none).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..sim._sim import ROOT, SimDaemon

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}

STUB = ("window.__notes = []; window.Notification = class { constructor(title, o) { window.__notes.push([title, o.body]); }"
        " static get permission() { return 'granted'; } static requestPermission() { return Promise.resolve('granted'); } };")
"""A stand-in for the browser's Notification (headless Chromium shows none): it records them."""


def need_browser() -> None:
    """Skip the calling test (or module) unless playwright and /usr/bin/chromium are both there."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the playwright package is missing: pip install -e '.[test]'")
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: apt-get install -y chromium (the tests never download a browser)")


@contextlib.contextmanager
def chromium(tmp: Path, viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A fresh headless Chromium (its own profile and home under ``tmp``); yields its context."""
    from playwright.sync_api import sync_playwright

    profile, home = tmp / "chromium-profile", tmp / "chromium-home"
    profile.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache")}
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=ARGS, headless=True, env=env,
            viewport=viewport or {"width": 1400, "height": 1000})
        try:
            yield context
        finally:
            context.close()


def login_url(daemon: SimDaemon) -> str:
    """The one-time link ``foreman web`` prints for ``daemon`` (the real command, run as a user would)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}
    out = subprocess.run([sys.executable, "-m", "foreman", "web", "--home", str(daemon.home), "--profile", daemon.profile,
                          "--no-open"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True)
    url = out.stdout.strip().splitlines()[-1]
    assert url.startswith(f"http://127.0.0.1:{daemon.port}/login?code="), out.stdout
    return url


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """GET ``url`` (no cookies); return the status and the body's text."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def open_page(context: Any, url: str) -> Any:
    """Open ``url`` in a new page and wait until the page's socket is live and it rendered."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(url)
    page.wait_for_selector("body[data-conn=live][data-seq]", timeout=20_000)
    return page


def card_status(page: Any, task: str) -> str | None:
    """The column (task state) the page shows task ``task`` in, or None."""
    return page.evaluate("id => { const c = document.querySelector(`#columns .task[data-task='${id}']`);"
                         " return c ? c.closest('.column').dataset.status : null; }", task)


def wait_until(pred: Any, timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll ``pred`` until it returns something truthy; return it (AssertionError on timeout)."""
    end = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def in_thread(coro: Any) -> Any:
    """Run a coroutine on its own loop in a worker thread (Playwright's sync API holds this thread's loop)."""
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def read_record(daemon: SimDaemon) -> dict[str, Any]:
    """The daemon's run record (``foreman.json``)."""
    return json.loads((daemon.home / daemon.profile / "foreman.json").read_text())
