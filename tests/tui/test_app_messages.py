"""The full-screen client's small things (issue 38 item 4), through Pilot against the fake daemon:
a console tall enough to read, a diff that opens at its top, and acks said in words."""

import pytest
from textual.widgets import RichLog

from foreman.tui.app import ForemanApp
from foreman.tui.screens import TextScreen

from .test_app import cells, console, until

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("size,rows", [((160, 50), 12), ((100, 30), 6), ((80, 24), 5)])
async def test_the_console_grows_with_the_screen(daemon, size: tuple[int, int], rows: int) -> None:
    """It was 5 rows whatever the screen: `/help` and `/tasks` scrolled out of sight at once."""
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        assert app.query_one("#console", RichLog).content_region.height >= rows


async def test_a_diff_opens_at_its_top(daemon) -> None:
    """A diff longer than the screen opened scrolled to its end, past its file headers."""
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        await pilot.press(*"/diff kit-long", "enter")
        await until(pilot, lambda: isinstance(app.screen, TextScreen))
        log = app.screen.query_one(RichLog)
        await until(pilot, lambda: len(log.lines) > 300 and log.max_scroll_y > 0)
        await pilot.pause(0.2)
        assert log.scroll_y == 0, (log.scroll_y, log.max_scroll_y)
        await pilot.press("end")  # and it still scrolls
        await until(pilot, lambda: log.scroll_y == log.max_scroll_y)


async def test_acks_say_what_happened_in_words(daemon) -> None:
    """A message's ack read "ok: message to kit: hello -> 1": the bare id of the new message."""
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "kit" in cells(app, "agents"))
        await pilot.press(*"@kit hello there", "enter")
        await until(pilot, lambda: "ok: sent to kit: hello there" in console(app))
        await pilot.press(*"Add tags", "enter")
        await until(pilot, lambda: "ok: new goal g2: Add tags" in console(app))
        assert " -> " not in console(app)
