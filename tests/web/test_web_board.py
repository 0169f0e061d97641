"""The browser view in a real headless Chromium, on a sim daemon held at its busy showcase state:
the one-time link logs in, no login is 401, the board shows the sim's tasks and agents, upserts land
in place, and the inbox works at a phone's width."""

from __future__ import annotations

import asyncio
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..sim._sim import SimClient, SimDaemon, start_daemon
from .browser import PHONE, card_status, chromium, login_url, need_browser, open_page, wait_until

pytestmark = pytest.mark.usefixtures("browser_ok")


@pytest.fixture(scope="module")
def browser_ok() -> None:
    need_browser()


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SimDaemon, SimClient]]:
    """A sim daemon at the busy showcase hold, and a protocol client's mirror of it."""
    need_browser()
    daemon = start_daemon(tmp_path_factory.mktemp("web-board"), "--showcase")
    client = SimClient(answer=None)

    async def hold() -> None:
        await client.connect(daemon.port)
        await client.wait_for(lambda c: any(f["text"] == "Showcase: holding the busy state" for f in c.feed), 60, "the hold")
        await client.close()

    try:
        asyncio.run(hold())
        yield daemon, client
    finally:
        daemon.stop()


def test_the_one_time_link_logs_in_once_and_without_it_the_page_is_401(held: tuple[SimDaemon, SimClient],
                                                                         tmp_path: Path) -> None:
    daemon, _ = held
    url = login_url(daemon)
    with chromium(tmp_path) as context:
        page = context.new_page()
        assert page.goto(f"http://127.0.0.1:{daemon.port}/").status == 401
        assert "foreman web" in page.content()
        page = open_page(context, url)
        assert page.url == f"http://127.0.0.1:{daemon.port}/"  # the code does not stay in the address bar
        (cookie,) = [c for c in context.cookies() if c["name"] == f"foreman_{daemon.port}"]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert page.evaluate("document.cookie") == ""  # the page's scripts never see it
        assert page.errors == []
        context.clear_cookies()
        again = context.new_page()
        assert again.goto(url).status == 401  # the link was spent
        assert again.goto(f"http://127.0.0.1:{daemon.port}/").status == 401


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_page_of_another_origin_cannot_use_the_session(held: tuple[SimDaemon, SimClient], tmp_path: Path) -> None:
    daemon, _ = held
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>another program on this machine</title>")
    # another port of 127.0.0.1: the same site, so the browser sends the cookie there, but another origin
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with chromium(tmp_path) as context:
            open_page(context, login_url(daemon))  # this browser is logged in
            other = context.new_page()
            other.goto(f"http://127.0.0.1:{server.server_address[1]}/")
            socket = other.evaluate("""port => new Promise(done => { const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
                ws.onopen = () => done("open"); ws.onerror = () => done("refused"); })""", daemon.port)
            assert socket == "refused"
            read = other.evaluate("port => fetch(`http://127.0.0.1:${port}/store.js`, {credentials: 'include'})"
                                  ".then(r => r.status, () => 'blocked')", daemon.port)
            assert read == "blocked"
    finally:
        server.shutdown()
        server.server_close()


def test_the_board_shows_the_sims_tasks_agents_and_goal(held: tuple[SimDaemon, SimClient], tmp_path: Path) -> None:
    daemon, client = held
    with chromium(tmp_path) as context:
        page = open_page(context, login_url(daemon))
        page.wait_for_selector("#columns .task[data-task=t9]")
        shown = {t: card_status(page, t) for t in client.tasks}
        assert shown == {t: v["status"] for t, v in client.tasks.items()}
        assert len(shown) == 9 and shown["t1"] == "done" and shown["t5"] == "review"
        deps = page.eval_on_selector_all("#deps path", "ps => ps.map(p => p.dataset.dep)")
        assert set(deps) == {f"{d}->{t}" for t, v in client.tasks.items() for d in v["deps"]} and deps
        agents = page.eval_on_selector_all("#agent-list .agent", "els => els.map(e => [e.dataset.agent, e.dataset.state])")
        assert dict(agents) == {n: a["state"] for n, a in client.agents.items() if a["active"]}
        assert agents[0][0] == "marlow"
        assert "waiting for your answer" in page.inner_text("#agent-list .agent[data-agent=juniper]")
        assert "$" in page.inner_text("#agent-list .agent[data-agent=kit] .usage")
        goal = page.inner_text("#goal-list")
        assert "Add tags to pocket-notes" in goal and "11%" in goal and "1/9 tasks done" in goal
        inbox = page.eval_on_selector_all("#decision-list .decision", "els => els.map(e => [e.dataset.kind, e.dataset.decision])")
        assert [k for k, _ in inbox] == ["merge", "question"]
        merge = page.locator("#decision-list .decision[data-kind=merge]")
        assert "CI passed" in merge.inner_text() and [b.inner_text() for b in merge.locator(".options button").all()] == [
            "Merge", "Request changes", "Reject"]
        merge.get_by_role("button", name="Show diff").click()
        page.wait_for_selector(".decision[data-kind=merge] .diff .file")
        assert page.locator(".decision[data-kind=merge] .diff .add").count() > 0
        assert page.errors == []


def test_upserts_land_in_place_without_a_reload(held: tuple[SimDaemon, SimClient], tmp_path: Path) -> None:
    daemon, _ = held
    with chromium(tmp_path) as context:
        page = open_page(context, login_url(daemon))
        page.evaluate("window.__sameDocument = true")
        card = page.locator("#columns .task[data-task=t6]")
        assert "p" not in card.locator(".task-meta").inner_text().split("·")[-1]
        page.locator("#message-form select").select_option("kit")
        page.fill("#message-form input[name=text]", "please keep the tags lowercase")
        page.click("#message-form button")
        page.wait_for_function("() => document.querySelector('#message-list').innerText.includes('keep the tags lowercase')")
        # steering through the page: t6 to the top
        card.click()
        page.fill("#task-dialog input[name=priority]", "9")
        page.get_by_role("button", name="Prioritize").click()
        page.wait_for_function("() => document.querySelector(\"#columns .task[data-task=t6]\").innerText.includes('p9')")
        first = page.eval_on_selector("#columns .column[data-status=todo] .cards", "c => c.firstElementChild.dataset.task")
        assert first == "t6"
        assert page.evaluate("window.__sameDocument") is True
        assert page.evaluate("window.foremanWeb.stats.connects") == 1
        assert page.errors == []


def test_the_inbox_and_its_answers_work_at_a_phones_width(held: tuple[SimDaemon, SimClient], tmp_path: Path) -> None:
    daemon, _ = held
    with chromium(tmp_path, viewport=PHONE) as context:
        page = open_page(context, login_url(daemon))
        page.wait_for_selector("#decision-list .decision[data-kind=question]")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no sideways scrolling
        inbox = page.locator("#inbox").bounding_box()
        board = page.locator("#board").bounding_box()
        assert inbox is not None and board is not None and inbox["y"] < board["y"]  # the inbox comes first
        assert page.locator("#tabs").is_visible() and page.inner_text("#inbox-count") == "2"
        question = page.locator("#decision-list .decision[data-kind=question]")
        buttons = question.locator(".options button").all()
        for b in buttons:
            box: Any = b.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] and box["height"] >= 40
        assert question.locator(".prompt").bounding_box()["width"] <= PHONE["width"]  # type: ignore[index]
        merge = page.locator("#decision-list .decision[data-kind=merge]")
        merge.get_by_role("button", name="Show diff").click()  # the diff scrolls inside its card, not the page
        page.wait_for_selector(".decision[data-kind=merge] .diff .file")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        box = merge.locator(".diff").bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"]
        decision = question.get_attribute("data-decision")
        page.fill(f".decision[data-decision={decision}] textarea", "counts, please")
        buttons[0].click()
        wait_until(lambda: page.locator(f"#decision-list .decision[data-decision={decision}]").count() == 0, what="the answer")
        assert page.inner_text("#inbox-count") == "1"
        assert page.errors == []


def test_a_long_goal_without_spaces_keeps_the_phone_page_its_width(held: tuple[SimDaemon, SimClient],
                                                                    tmp_path: Path) -> None:
    """Found by a newcomer: a 400-character word in a goal made the phone page 4,378 px wide, and
    the message form's Send button could no longer be clicked (the goal form lay over it)."""
    daemon, _ = held
    with chromium(tmp_path, viewport=PHONE) as context:
        page = open_page(context, login_url(daemon))
        page.fill("#goal-form input[name=text]", "A" * 400 + " <img src=x onerror=alert(1)> " + "word " * 60)
        page.click("#goal-form button")
        page.wait_for_function("() => document.querySelector('#goal-list').innerText.includes('AAAAAAAAAA')")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.fill("#message-form input[name=text]", "hello")
        page.click("#message-form button", timeout=5000)
        assert page.errors == []
