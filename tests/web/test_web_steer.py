"""Steering, goals, messages and the feed from the browser view (headless Chromium), on a sim
daemon held at its busy showcase state: each button sends the same protocol intent the terminal
client sends, and the page shows the daemon's answer in place."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ..sim._sim import SimClient, start_daemon
from .browser import STUB, card_status, chromium, in_thread, login_url, need_browser, open_page, wait_until


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One logged-in page on a held showcase daemon (the tests below run in order on it)."""
    need_browser()
    tmp = tmp_path_factory.mktemp("web-steer")
    daemon = start_daemon(tmp / "home", "--showcase")
    try:
        async def hold() -> None:
            client = await SimClient(answer=None).connect(daemon.port)
            await client.wait_for(lambda c: any(f["text"] == "Showcase: holding the busy state" for f in c.feed), 60, "hold")
            await client.close()

        in_thread(hold())
        with chromium(tmp) as context:
            p = open_page(context, login_url(daemon))
            p.daemon = daemon
            yield p
            assert p.errors == []
    finally:
        daemon.stop()


def agent_state(page: Any, name: str) -> str | None:
    return page.get_attribute(f"#agent-list .agent[data-agent={name}]", "data-state")


def agent_button(page: Any, name: str, label: str) -> None:
    page.locator(f"#agent-list .agent[data-agent={name}]").get_by_role("button", name=label, exact=True).click()


def task_action(page: Any, task: str, label: str, fill: dict[str, str] | None = None, refused: bool = False) -> None:
    page.click(f"#columns .task[data-task={task}]")
    for selector, value in (fill or {}).items():
        if selector.startswith("select"):
            page.select_option(f"#task-dialog {selector}", value)
        else:
            page.fill(f"#task-dialog {selector}", value)
    page.locator("#task-dialog").get_by_role("button", name=label, exact=True).click()
    if refused:  # the dialog stays open, the refusal is shown
        page.wait_for_selector("#toast:not([hidden])")
        page.locator("#task-dialog").get_by_role("button", name="Close", exact=True).click()
    page.wait_for_selector("#task-dialog", state="hidden")


def test_pause_resume_stop_and_spawn_an_agent(page: Any) -> None:
    agent_button(page, "juniper", "Pause")
    wait_until(lambda: agent_state(page, "juniper") == "paused", what="juniper paused")
    agent_button(page, "juniper", "Resume")
    wait_until(lambda: agent_state(page, "juniper") not in ("paused", None), what="juniper resumed")
    agent_button(page, "wren", "Stop")
    wait_until(lambda: agent_state(page, "wren") == "off shift", what="wren off shift")
    assert page.locator("#message-form select option[value=wren]").count() == 0  # no messages to an agent off shift
    agent_button(page, "wren", "Spawn")
    wait_until(lambda: agent_state(page, "wren") not in ("off shift", None), what="wren back")


def test_cancel_retry_and_reassign_a_task(page: Any) -> None:
    task_action(page, "t8", "Cancel task")
    wait_until(lambda: card_status(page, "t8") == "cancelled", what="t8 cancelled")
    task_action(page, "t8", "Retry")
    wait_until(lambda: card_status(page, "t8") == "todo", what="t8 back on the board")
    task_action(page, "t9", "Reassign", {"select[name=agent]": "rowan"})
    wait_until(lambda: "@rowan" in page.inner_text("#columns .task[data-task=t9]"), what="t9 reassigned")


def test_a_refused_intent_says_why(page: Any) -> None:
    task_action(page, "t1", "Cancel task", refused=True)  # t1 is done: the daemon refuses, nothing changes
    assert "t1" in page.inner_text("#toast")
    assert card_status(page, "t1") == "done"


def test_goals_messages_and_the_feed(page: Any) -> None:
    page.fill("#goal-form input[name=text]", "Add a dark theme to pocket-notes")
    page.click("#goal-form button")
    page.wait_for_function("() => document.querySelector('#goal-list').innerText.includes('Add a dark theme')")
    page.fill("#message-form input[name=text]", "@kit what is left on t3?")
    page.click("#message-form button")
    page.wait_for_function("() => document.querySelector('#message-list').innerText.includes('user → kit what is left on t3?')")
    page.select_option("#message-form select", "all")
    page.fill("#message-form input[name=text]", "thanks, everyone")
    page.click("#message-form button")
    page.wait_for_function("() => document.querySelector('#message-list').innerText.includes('user → all thanks, everyone')")
    page.fill("#message-form input[name=text]", "see \u202egnp.exe")  # a right-to-left override is shown, not obeyed
    page.click("#message-form button")
    page.wait_for_function("() => document.querySelector('#message-list').innerText.includes('see <U+202E>gnp.exe')")
    feed = page.inner_text("#feed-list")
    assert "Showcase: holding the busy state" in feed and "t1 done (merged)" in feed
    assert page.input_value("#message-form input[name=text]") == ""


def test_notifications_are_opt_in_and_not_for_what_was_already_open(page: Any) -> None:
    assert page.evaluate("localStorage.getItem('foreman.notify')") is None  # off unless asked for
    other = page.context.new_page()
    other.add_init_script(STUB)
    other.goto(f"http://127.0.0.1:{page.daemon.port}/")
    other.wait_for_selector("body[data-conn=live][data-seq]")
    other.click("#notify")
    other.wait_for_function("() => document.querySelector('#notify').innerText === 'Notifications on'")
    assert other.evaluate("localStorage.getItem('foreman.notify')") == "on"
    other.reload()
    other.wait_for_selector("body[data-conn=live][data-seq]")
    assert other.inner_text("#notify") == "Notifications on"
    assert other.evaluate("window.__notes") == []  # the two decisions open at load are not news
    other.click("#notify")
    assert other.evaluate("localStorage.getItem('foreman.notify')") == "off"
    other.close()

