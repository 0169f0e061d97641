"""Save screenshots of the browser view: docs/web.png (a desktop) and docs/web-phone.png (390 px wide).

Starts a sim Foreman in a temporary home held at its busy showcase state (the real script,
fast-forwarded: two decisions wait), logs a headless Chromium in with the link `foreman web` prints,
opens the merge decision's diff and saves the pages. Needs Debian's chromium and the test extra's
playwright (no browser is downloaded). Run from the repository root:

    .venv/bin/python scripts/web-screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.sim._sim import SimClient, start_daemon  # noqa: E402
from tests.web.browser import PHONE, chromium, login_url, open_page  # noqa: E402


async def held(port: int) -> None:
    client = await SimClient(answer=None).connect(port)
    await client.wait_for(lambda c: any(f["text"] == "Showcase: holding the busy state" for f in c.feed), 60, "the hold")
    await client.close()


def main() -> int:
    docs = ROOT / "docs"
    with tempfile.TemporaryDirectory() as tmp:
        daemon = start_daemon(Path(tmp) / "home", "--showcase")
        try:
            asyncio.run(held(daemon.port))
            with chromium(Path(tmp), viewport={"width": 1440, "height": 1000}) as context:
                page = open_page(context, login_url(daemon))
                # (attached, not visible: a dependency between two cards at the same height is a flat path,
                # which Playwright never counts as visible)
                page.wait_for_selector("#deps path", state="attached")
                page.locator(".decision[data-kind=merge]").get_by_role("button", name="Show diff").click()
                page.wait_for_selector(".decision[data-kind=merge] .diff .file")
                page.wait_for_timeout(300)
                page.screenshot(path=str(docs / "web.png"))
                phone = context.new_page()
                phone.set_viewport_size(PHONE)
                phone.goto(f"http://127.0.0.1:{daemon.port}/")
                phone.wait_for_selector(".decision[data-kind=question]")
                phone.wait_for_timeout(300)
                phone.screenshot(path=str(docs / "web-phone.png"))
        finally:
            daemon.stop()
    print(f"wrote {docs / 'web.png'} and {docs / 'web-phone.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
