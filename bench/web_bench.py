#!/usr/bin/env python3
"""Issue 40 (the browser view) benchmark: time to first render, and to apply 1,000 upserts, in a
real headless Chromium (Debian's chromium, driven by Playwright's Python API; nothing downloaded).

A sim daemon held at its busy showcase state (9 tasks, 6 agents, 2 open decisions) serves the page.

* **first render**: the page is loaded ``--runs`` times (logged in: the session cookie); each load's
  figure is the page's own ``performance.now()`` when its first render of the snapshot finished,
  i.e. milliseconds since the navigation started (the HTML, 6 ES modules and the CSS fetched over
  one-request connections, the WebSocket opened, ``hello``, the snapshot parsed and drawn).
* **1,000 upserts**: a protocol client (its own thread and loop) sends 1,000 ``task.prioritize``
  intents at once, pipelined, across the 9 tasks; each is one ``task.upsert`` broadcast. Figures:
  *end to end*, from the page receiving the first of those frames to its render of the last one (the
  daemon's handling of the intents included, as they arrive); *page CPU*, the time the page spent
  parsing, applying and rendering them (``stats.applyMs + stats.renderMs``); and how many renders
  the page needed (it coalesces frames into one render per animation frame).

Run from the repository root: ``.venv/bin/python bench/web_bench.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402

from tests.sim._sim import SimClient, start_daemon, token_for  # noqa: E402
from tests.web.browser import chromium, in_thread, login_url, open_page  # noqa: E402

UPSERTS = 1000


async def held(port: int) -> None:
    client = await SimClient(answer=None).connect(port)
    await client.wait_for(lambda c: any(f["text"] == "Showcase: holding the busy state" for f in c.feed), 60, "the hold")
    await client.close()


async def prioritize(port: int, n: int) -> tuple[int, float]:
    """Send ``n`` task.prioritize intents pipelined; return the last ack's seq and the seconds to all acks."""
    async with websockets.connect(f"ws://127.0.0.1:{port}", max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "web-bench", "token": token_for(port)}))
        json.loads(await ws.recv())  # the snapshot
        tasks = [f"t{i}" for i in range(1, 10)]
        t0 = time.perf_counter()
        for i in range(n):
            await ws.send(json.dumps({"type": "task.prioritize", "id": i, "task": tasks[i % 9], "priority": 10 + i}))
        acks, last = 0, 0
        while acks < n:
            msg = json.loads(await ws.recv())
            if msg["type"] in ("ack", "error"):
                acks += 1
                if msg["type"] == "error":
                    raise RuntimeError(msg)
                last = max(last, msg["seq"])
        return last, time.perf_counter() - t0


def first_renders(context: Any, port: int, runs: int) -> list[float]:
    page = context.new_page()
    out = []
    for _ in range(runs):
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function("() => window.foremanWeb && window.foremanWeb.stats.firstRenderAt !== null")
        out.append(page.evaluate("window.foremanWeb.stats.firstRenderAt"))
    page.close()
    return out


def upserts(page: Any, port: int) -> dict[str, float]:
    seq0 = int(page.get_attribute("body", "data-seq"))
    page.evaluate("(() => { const s = window.foremanWeb.stats; s.arrivals = []; s.renderLog = [];"
                  " s.applyMs = 0; s.renderMs = 0; s.renders = 0; })()")
    last, acked = in_thread(prioritize(port, UPSERTS))
    page.wait_for_function(f"() => Number(document.body.dataset.seq) >= {last}", timeout=120_000)
    stats = page.evaluate("window.foremanWeb.stats")
    first = min(at for seq, at in stats["arrivals"] if seq > seq0)
    done = min(at for seq, at in stats["renderLog"] if seq >= last)
    return {"frames": last - seq0, "end_to_end_ms": done - first, "page_cpu_ms": stats["applyMs"] + stats["renderMs"],
            "renders": stats["renders"], "acks_s": acked}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        daemon = start_daemon(Path(tmp) / "home", "--showcase")
        try:
            asyncio.run(held(daemon.port))
            with chromium(Path(tmp)) as context:
                page = open_page(context, login_url(daemon))
                firsts = first_renders(context, daemon.port, args.runs)
                rounds = [upserts(page, daemon.port) for _ in range(args.runs)]
        finally:
            daemon.stop()
    print(f"first render (ms from navigation start), {args.runs} loads: median {statistics.median(firsts):.0f}, "
          f"min {min(firsts):.0f}, max {max(firsts):.0f}")
    for key, unit in (("end_to_end_ms", "ms"), ("page_cpu_ms", "ms"), ("renders", ""), ("acks_s", "s")):
        values = [r[key] for r in rounds]
        print(f"{UPSERTS} upserts, {key}: median {statistics.median(values):.3g}{unit}, "
              f"min {min(values):.3g}{unit}, max {max(values):.3g}{unit}")
    print(f"(state frames per round: {rounds[0]['frames']}; load average {', '.join(f'{x:.1f}' for x in __import__('os').getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
