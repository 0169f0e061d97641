"""The browser view against a working daemon: answering a merge decision in the page moves the task,
and the page catches up after a daemon restart by itself (same document, no reload)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..sim._sim import SimClient, start_daemon
from .browser import STUB, card_status, chromium, in_thread, login_url, need_browser, open_page, wait_until


@pytest.fixture(autouse=True)
def browser_ok() -> None:
    need_browser()


def test_answering_a_merge_decision_in_the_page_moves_the_task(tmp_path: Path) -> None:
    daemon = start_daemon(tmp_path / "home", "--seed", "11")  # the scenario runs, and waits for the user at each decision
    try:
        with chromium(tmp_path) as context:
            context.add_init_script(STUB)
            page = open_page(context, login_url(daemon))
            page.click("#notify")  # opt in: a decision that opens from now on raises a notification
            page.wait_for_selector("#notify[aria-pressed=true]")
            merge = None
            while merge is None:  # answer what comes before the first merge (a permission) with its first option
                card = page.wait_for_selector("#decision-list .decision", timeout=60_000)
                assert card is not None
                if card.get_attribute("data-kind") == "merge":
                    merge = card
                else:
                    decision = card.get_attribute("data-decision")
                    card.query_selector(".options button[data-option='0']").click()  # type: ignore[union-attr]
                    page.wait_for_selector(f"#decision-list .decision[data-decision={decision}]", state="detached")
            task = merge.evaluate("el => el.querySelector('header').innerText.match(/\\bt\\d+\\b/)[0]")
            assert card_status(page, task) == "review"
            assert page.locator(f"#columns .task[data-task={task}].waiting").count() == 1
            merge.query_selector(".options button:text-is('Merge')").click()  # type: ignore[union-attr]
            wait_until(lambda: card_status(page, task) == "done", 60, f"{task} in the done column")
            assert page.locator(f"#columns .task[data-task={task}].waiting").count() == 0
            assert "(merged)" in page.inner_text("#feed-list")
            # the scenario goes on to its next decision: the page says so with a notification
            notes = wait_until(lambda: page.evaluate("window.__notes"), 60, "a notification")
            assert notes[0][0].endswith("needs you") and notes[0][1]
            assert page.errors == []
    finally:
        daemon.stop()


def test_the_page_catches_up_after_a_daemon_restart_without_a_reload(tmp_path: Path) -> None:
    home = tmp_path / "home"
    daemon = start_daemon(home, "--no-autostart", "--no-ambient")
    port = daemon.port
    try:
        with chromium(tmp_path) as context:
            page = open_page(context, login_url(daemon))
            page.evaluate("window.__sameDocument = true")
            before = int(page.get_attribute("body", "data-seq") or 0)
            daemon.stop()
            page.wait_for_selector("body[data-conn=reconnecting]")
            # the next start changes the world before the page is back: a goal submitted at start
            daemon = start_daemon(home, "--no-autostart", "--no-ambient", "--port", str(port),
                                  "--goal", "Planned while the page was away", reset=False)
            assert daemon.port == port
            page.wait_for_function("() => document.querySelector('#goal-list').innerText.includes('Planned while the page was away')",
                                   timeout=30_000)
            page.wait_for_selector("body[data-conn=live]")
            assert page.evaluate("window.__sameDocument") is True  # no reload: the same document caught up
            assert page.evaluate("window.foremanWeb.stats.connects") >= 2
            assert int(page.get_attribute("body", "data-seq") or 0) > before

            async def say() -> None:  # and it is live again: a message sent now shows up
                client = await SimClient(answer=None).connect(port)
                reply = await client.request({"type": "message.send", "to": "all", "text": "welcome back, page"})
                assert reply["type"] == "ack", reply
                await client.close()

            in_thread(say())
            page.wait_for_function("() => document.querySelector('#message-list').innerText.includes('welcome back, page')")
            assert page.errors == []
    finally:
        daemon.stop()
