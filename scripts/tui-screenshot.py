"""Save a screenshot of ``foreman tui`` mid-scenario: docs/tui.svg (and docs/tui.png with rsvg-convert).

Starts a sim Foreman in a temporary home, drives the real app through Textual's Pilot (goal,
one answer) until a merge decision is open, and saves the screen. Run from the repository root:

    .venv/bin/python scripts/tui-screenshot.py
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from foreman.tui.app import ForemanApp
from foreman.tui.discovery import Locator
from tests.tui.real_daemon import start_daemon

GOAL = "Add tags to pocket-notes: tag notes, list and search by tag, export, and ship it"


async def shoot(locator: Locator, out: Path) -> None:
    app = ForemanApp(locator)
    async with app.run_test(size=(170, 44)) as pilot:

        async def until(predicate, timeout: float = 60.0) -> None:
            async with asyncio.timeout(timeout):
                while not predicate():
                    await pilot.pause(0.05)

        await until(lambda: app.mirror.synced)
        await pilot.press(*GOAL, "enter")
        await until(lambda: "d1" in app.mirror.decisions)
        await pilot.press(*"/answer d1 1", "enter")
        await until(lambda: any(d.kind == "merge" and d.status == "open" for d in app.mirror.decisions.values()))
        await pilot.press(*"@juniper please mention the counts in the help text", "enter")
        await pilot.pause(0.5)
        await pilot.press(*"/ans")  # shows the completion
        await pilot.pause(0.3)
        app.save_screenshot(filename=out.name, path=str(out.parent))


def main() -> int:
    docs = ROOT / "docs"
    docs.mkdir(exist_ok=True)
    svg = docs / "tui.svg"
    with tempfile.TemporaryDirectory() as tmp:
        daemon = start_daemon(Path(tmp), speed=3.0)
        try:
            asyncio.run(shoot(Locator(daemon.home, daemon.profile), svg))
        finally:
            daemon.stop()
    print(f"wrote {svg}")
    if shutil.which("rsvg-convert"):
        png = docs / "tui.png"
        subprocess.run(["rsvg-convert", "-o", str(png), str(svg)], check=True)
        print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
