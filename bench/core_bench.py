#!/usr/bin/env python3
"""Issue 2 (core) benchmarks: the daemon beside a bare ``websockets`` server, in one run.

Subcommands (default ``all``)::

    ack        intent-to-ack latency at 1,000 intents/s (daemon vs bare echo server)
    fanout     at 100 upserts/s to 10 and 100 readers, readers in a child process and in the
               driver's own process: ack and delivery p50/p99 of the daemon beside a bare
               ``websockets.broadcast`` relay sending the daemon's own frames (the same JSON
               for the readers to parse), and the ratios; ``relay-pad`` rows: the earlier
               baseline, frames padded to the same size with one long string (much cheaper
               to parse than a task's JSON)
    intent     the daemon's CPU time per ``task.prioritize`` by step (decode, core, task JSON, store
               commit, ack), in-process; ``--code DIR`` also runs it against another checkout
    message    cost of one ``message.send`` (core + store commit, Daemon.act in-process) with 9 KB
               messages while every agent's unread list is full (200); ``--code DIR`` runs it
               against another checkout (e.g. a worktree of an older commit), side by side
    snapshot   snapshot encode time and size with 10,000 entities (Daemon.snapshot_frame)
    coldstart  process start to accepting connections with 10,000 entities in the store; ``--code
               DIR`` also starts another checkout's daemon, ``--rounds N`` interleaved rounds of 5

Latencies use ``time.monotonic`` (CLOCK_MONOTONIC, shared by all processes on Linux). The
daemon runs as a real ``foreman start --backend sim --no-autostart`` child (its clients send
the token from ``foreman.json``); ``CORE_BENCH_PROFILE=FILE`` runs it under cProfile.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect  # noqa: E402
from websockets.asyncio.server import broadcast, serve  # noqa: E402

SEED_TASKS = 50
"""Tasks seeded into the store for the ack and fan-out runs (``task.prioritize`` targets)."""


# ----------------------------------------------------------------------------- helpers
def pct(values: list[float], p: float) -> float:
    """Return the ``p``-th percentile (0..100) of ``values`` in milliseconds (values in seconds)."""
    s = sorted(values)
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k] * 1000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed_store(home: Path, tasks: int) -> None:
    """Write ``tasks`` tasks (and the task counter) into the ``sim`` profile's store."""
    from foreman.core.world import Change
    from foreman.store import Store
    from protocol import Agent, Task

    store = Store(home / "sim")
    world, seq = store.open()
    have = len(world.tasks)
    team = [(Change("upsert", "agent", Agent(name=n, role="lead" if n == "marlow" else "worker", title=n.capitalize())), None)
            for n in ("marlow", "juniper", "kit", "wren", "rowan", "tove") if n not in world.agents]
    rows = [(Change("upsert", "task", Task(id=f"t{i}", title=f"bench task {i}", description="x" * 40, deps=[f"t{i - 1}"] if i > 1 else [],
                                           priority=i % 7, goal=None)), None) for i in range(have + 1, tasks + 1)]
    counters = dict(world.meta.get("counters", {}), task=max(tasks, have))
    rows.append((Change("meta", "meta", counters, key="counters"), None))
    rows.extend(team)
    store.commit(rows, seq)
    store.close()


class Daemon:
    """A ``foreman start`` child on a fixed port."""

    def __init__(self, home: Path, port: int, code: Path = ROOT) -> None:
        self.home, self.port, self.code = home, port, code
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> float:
        """Start; return seconds from spawn to the first accepted WebSocket handshake."""
        prof = os.environ.get("CORE_BENCH_PROFILE")  # a path: the daemon runs under cProfile, written at exit
        cmd = [sys.executable, *(["-m", "cProfile", "-o", prof] if prof else []), "-m", "foreman", "start", "--backend", "sim", "--no-autostart", "--no-ambient", "--home",
               str(self.home), "--port", str(self.port), "--sandbox", str(self.home / "sandbox"), "--repo-poll-ms", "600000",
               "--log-level", "WARNING"]
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, cwd=self.code, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(self.home / "bench-daemon.err", "ab"), env={**os.environ, "PYTHONPATH": str(self.code)})
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise SystemExit(f"daemon exited: {(self.home / 'bench-daemon.err').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    if s.recv(64).startswith(b"HTTP/1.1 101"):
                        return time.monotonic() - t0
            except OSError:
                time.sleep(0.002)
        raise SystemExit("daemon did not accept connections")

    def ready(self, timeout: float = 60.0) -> None:
        """Wait until start-up finished (the team and the repository are in place)."""
        run = self.home / "sim" / "foreman.json"
        err = self.home / "bench-daemon.err"
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if run.exists() and "connect with" in err.read_text(errors="replace"):
                return
            time.sleep(0.02)
        raise SystemExit("daemon did not finish starting")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)


def token_of(home: str | Path) -> str | None:
    """The daemon's client token, read from ``<home>/sim/foreman.json`` as the TUI reads it."""
    from foreman.tui.discovery import Locator

    return Locator(Path(home), "sim").token()


async def hello(ws: Any, token: str | None) -> None:
    await ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "bench", "token": token}))
    await ws.recv()


# ----------------------------------------------------------------------------- bare servers
async def _echo_server(port: int) -> None:
    async def handler(ws: Any) -> None:
        async for msg in ws:
            await ws.send(msg)

    async with serve(handler, "127.0.0.1", port, compression=None):
        await asyncio.Future()


async def _relay_server(port: int) -> None:
    """Bare fan-out: a ``relay`` frame goes to every reader (``websockets.broadcast``), then a small ack to its sender.

    This is the least a relay built on ``websockets`` can do per message; the daemon is measured
    against it.
    """
    readers: set[Any] = set()

    async def handler(ws: Any) -> None:
        try:
            async for msg in ws:
                if msg == "reader":
                    readers.add(ws)
                    continue
                broadcast(readers, msg)
                await ws.send('{"type":"ack"}')  # the sender waits for this before its next frame
        finally:
            readers.discard(ws)

    async with serve(handler, "127.0.0.1", port, compression=None):
        await asyncio.Future()


def spawn_self(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def wait_port(port: int, timeout: float = 10.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.01)
    raise SystemExit(f"nothing listens on {port}")


# ----------------------------------------------------------------------------- ack latency
async def paced_acks(port: int, rate: float, count: int, daemon: bool, token: str | None = None) -> list[float]:
    """Send ``count`` frames at ``rate``/s without waiting; return send-to-reply latencies (s)."""
    async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None) as ws:
        if daemon:
            await hello(ws, token)
        sent: dict[int, float] = {}
        lat: list[float] = []
        done = asyncio.Event()

        async def reader() -> None:
            async for raw in ws:
                now = time.monotonic()
                data = json.loads(raw)
                if data.get("type") in ("ack", "echo", "error"):
                    if data.get("type") == "error":
                        raise SystemExit(f"intent refused: {data}")
                    lat.append(now - sent[data["id"]])
                    if len(lat) == count:
                        done.set()
                        return

        task = asyncio.create_task(reader())
        t0 = time.monotonic()
        for i in range(count):
            delay = t0 + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            frame = ({"type": "task.prioritize", "task": f"t{i % SEED_TASKS + 1}", "priority": i, "id": i} if daemon
                     else {"type": "echo", "id": i, "task": f"t{i % SEED_TASKS + 1}", "priority": i})
            sent[i] = time.monotonic()
            await ws.send(json.dumps(frame))
        await asyncio.wait_for(done.wait(), 60)
        task.cancel()
        return lat


# ----------------------------------------------------------------------------- fan-out
async def _open_readers(port: int, n: int, daemon: bool, token: str | None) -> list[Any]:
    conns = [await connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None) for _ in range(n)]
    for ws in conns:
        if daemon:
            await hello(ws, token)
        else:
            await ws.send("reader")
    return conns


async def _read_all(conns: list[Any], count: int, daemon: bool) -> dict[str, list[float]]:
    """Read until each reader got ``count`` relayed frames; return ``{key: [receipt times]}``."""
    got: dict[str, list[float]] = {}

    async def read(ws: Any) -> None:
        seen = 0
        async for raw in ws:
            now = time.monotonic()
            data = json.loads(raw)
            if daemon and data.get("type") != "task.upsert":
                continue
            got.setdefault(str(data.get("seq") if daemon else data.get("id")), []).append(now)
            seen += 1
            if seen == count:
                return

    await asyncio.wait_for(asyncio.gather(*(read(ws) for ws in conns)), 180)
    for ws in conns:
        await ws.close()
    return got


async def _readers(port: int, n: int, count: int, daemon: bool, home: str = "") -> None:
    """Child process: ``n`` readers; prints ``{key: [recv times]}`` once each got ``count`` frames."""
    conns = await _open_readers(port, n, daemon, token_of(home) if daemon else None)
    print("ready", flush=True)
    print(json.dumps(await _read_all(conns, count, daemon)), flush=True)


FRAME_SIZES: list[int] = []
"""Sizes (bytes) of the state frames the daemon's driver saw; the padded relay sends frames of their median size."""
DAEMON_FRAMES: list[str] = []
"""The ``task.upsert`` frames of the last daemon run, in intent order: the relay sends the same JSON."""


async def fanout(port: int, n: int, rate: float, count: int, daemon: bool, home: str = "",
                 same_process: bool = False, padded: bool = False) -> tuple[list[float], list[float]]:
    """Drive ``count`` upserts at ``rate``/s to ``n`` readers.

    Args:
        same_process: the readers run on the driver's event loop (else in a child process).
        padded: (relay) send frames padded with one string to the daemon's median frame size
            instead of the daemon's own frames.

    Returns:
        ``(ack latencies, delivery latencies over all readers)`` in seconds: the driver's send
        to its ``ack`` (bare relay: its echo), and to each reader's receipt of the frame.
    """
    token = token_of(home) if daemon else None
    child, local = None, None
    if same_process:
        conns = await _open_readers(port, n, daemon, token)
        local = asyncio.create_task(_read_all(conns, count, daemon))
    else:
        child = spawn_self("_readers", str(port), str(n), str(count), "1" if daemon else "0", home)
        assert child.stdout is not None
        line = await asyncio.to_thread(child.stdout.readline)
        assert line.strip() == b"ready", line
    sent: dict[str, float] = {}
    acks: list[float] = []
    async with connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None) as ws:
        if daemon:
            await hello(ws, token)
        pad = "x" * max(0, int(statistics.median(FRAME_SIZES or [40])) - 40)
        frames = list(DAEMON_FRAMES)
        if daemon:
            DAEMON_FRAMES.clear()
        elif not padded and len(frames) < count:
            raise SystemExit("the relay replays the daemon's frames: run the daemon first")
        t0 = time.monotonic()
        for i in range(count):
            delay = t0 + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            t = time.monotonic()
            if daemon:
                await ws.send(json.dumps({"type": "task.prioritize", "task": f"t{i % SEED_TASKS + 1}", "priority": 1000 + i, "id": i}))
                while True:
                    raw = await ws.recv()
                    reply = json.loads(raw)
                    if reply.get("type") == "task.upsert":
                        FRAME_SIZES.append(len(raw))
                        DAEMON_FRAMES.append(raw)
                    if reply.get("type") == "ack":
                        acks.append(time.monotonic() - t)
                        sent[str(reply["seq"])] = t
                        break
            else:
                if padded:
                    await ws.send(json.dumps({"type": "relay", "id": i, "pad": pad}))
                else:  # the daemon's frame for this intent, keyed by i for the readers
                    await ws.send(frames[i].replace('"type":"task.upsert"', f'"type":"relay","id":{i}', 1))
                await ws.recv()
                acks.append(time.monotonic() - t)
                sent[str(i)] = t
    if local is not None:
        got = await local
    else:
        assert child is not None
        out, _ = await asyncio.to_thread(child.communicate)
        got = json.loads(out.decode().strip().splitlines()[-1])
    return acks, [r - sent[k] for k, times in got.items() if k in sent for r in times]


# ----------------------------------------------------------------------------- snapshot, cold start
def snapshot_bench(home: Path, entities: int) -> dict[str, float]:
    """Load a daemon with ``entities`` entities in-process; time ``snapshot_frame``."""
    from foreman.config import resolve
    from foreman.daemon import Daemon as RealDaemon

    seed_store(home, entities - 6)
    settings = resolve({"home": str(home), "backend": "sim"}, {})
    d = RealDaemon(settings)
    t = time.perf_counter()
    d.load()
    load = time.perf_counter() - t
    n = len(d.core.world.tasks) + len(d.core.world.agents)
    times = []
    for _ in range(50):
        t = time.perf_counter()
        frame = d.snapshot_frame()
        times.append(time.perf_counter() - t)
    d.store.close()
    return {"entities": n, "encode_p50_ms": pct(times, 50), "encode_p99_ms": pct(times, 99),
            "size_mb": len(frame.encode()) / 1e6, "load_s": load}


def intent_bench(home: Path, count: int) -> dict[str, list[float]]:
    """In-process: the daemon's own CPU time per ``task.prioritize``, by step (decode, core, the
    task's JSON, the store commit, the ack), after 400 warm-up intents (histories filled)."""
    import protocol
    from foreman.config import resolve
    from foreman.daemon import Daemon as RealDaemon

    seed_store(home, SEED_TASKS)
    d = RealDaemon(resolve({"home": str(home), "backend": "sim"}, {}))
    d.load()
    for i in range(400):
        d.act(lambda c, now: c.prioritize_task(f"t{i % SEED_TASKS + 1}", now, priority=i))
    steps: dict[str, list[float]] = {k: [] for k in ("decode", "core", "task JSON", "store commit", "ack")}
    clock = time.thread_time
    for i in range(count):
        frame = json.dumps({"type": "task.prioritize", "task": f"t{i % SEED_TASKS + 1}", "priority": 1000 + i, "id": i})
        t0 = clock()
        intent = protocol.decode_client(frame)
        t1 = clock()
        d.core.prioritize_task(intent.task, time.time(), priority=intent.priority)
        t2 = clock()
        change = d.core.take()[0][0]
        text = change.value.model_dump_json(by_alias=True)
        t3 = clock()
        d.store.commit([(change, text)], i)
        t4 = clock()
        protocol.encode(protocol.Ack(id=intent.id, seq=i, result=None))
        t5 = clock()
        for k, a, b in (("decode", t0, t1), ("core", t1, t2), ("task JSON", t2, t3), ("store commit", t3, t4), ("ack", t4, t5)):
            steps[k].append(b - a)
        if i % 500 == 0:
            d.store.checkpoint()
    d.store.close()
    return steps


def message_bench(home: Path, count: int, size: int = 9_000) -> dict[str, float]:
    """In-process: ``count`` messages of ``size`` characters through ``Daemon.act`` (core and
    store commit), alternating one agent and ``all``, after every worker's unread list is full."""
    from foreman.config import resolve
    from foreman.daemon import Daemon as RealDaemon

    seed_store(home, SEED_TASKS)
    d = RealDaemon(resolve({"home": str(home), "backend": "sim"}, {}))
    d.load()
    text = "m" * size
    for i in range(200):  # fill every agent's unread list to its cap (200)
        d.act(lambda c, now: c.send_message("user", "all", f"{i} {text}", now))
    times: dict[str, list[float]] = {"kit": [], "all": []}
    for i in range(count):
        to = "kit" if i % 2 else "all"
        t = time.perf_counter()
        d.act(lambda c, now: c.send_message("user", to, f"{i} {text}", now))
        times[to].append(time.perf_counter() - t)
    d.store.close()
    return {f"{to}_{p}": pct(v, p) for to, v in times.items() for p in (50, 99)}


def coldstart(base: Path, entities: int, rounds: int, other: Path | None) -> list[str]:
    """Spawn to the first accepted handshake on a store of ``entities`` entities: ``rounds`` rounds
    of 5 starts of this checkout's daemon and, with ``other``, of that checkout's, interleaved (one
    round of each in turn). Each checkout seeds its own store (after a first start that made the
    demo repository, like any second start)."""
    codes = [("this code", ROOT), *((("--code " + str(other), other.resolve()),) if other else ())]
    homes = []
    for i, (_, code) in enumerate(codes):
        home = base / f"cold-{i}"
        home.mkdir()
        d = Daemon(home, free_port(), code)
        d.start()
        d.ready()
        d.stop()
        subprocess.run([sys.executable, __file__, "_seed", str(home), str(entities - 6)], cwd=code,
                       env={**os.environ, "PYTHONPATH": str(code)}, check=True)
        homes.append(home)
    times: list[list[list[float]]] = [[] for _ in codes]
    load = os.getloadavg()[0]
    for _ in range(rounds):
        for i, (_, code) in enumerate(codes):
            starts = []
            for _ in range(5):
                d = Daemon(homes[i], free_port(), code)
                starts.append(d.start())
                d.ready()
                d.stop()
            times[i].append(starts)
    out = []
    for (label, code), runs in zip(codes, times, strict=True):
        every = [t for r in runs for t in r]
        cached = "cached bytecode" if (code / "foreman" / "__pycache__").is_dir() else "no cached bytecode"
        out.append(f"cold start to accepting connections with {entities} entities ({label}, {cached}): median "
                   f"{statistics.median(every) * 1000:.0f} ms, min {min(every) * 1000:.0f} ms, max {max(every) * 1000:.0f} ms"
                   f"; round medians {', '.join(f'{statistics.median(r) * 1000:.0f}' for r in runs)} ms   (target < 500 ms)")
    out.append(f"load average (1 min) before {load:.2f}, after {os.getloadavg()[0]:.2f}"
               f"{'; PYTHONDONTWRITEBYTECODE is set' if os.environ.get('PYTHONDONTWRITEBYTECODE') else ''}")
    return out


def main() -> int:
    """Run the chosen benchmarks and print a table."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="?", default="all", choices=["all", "ack", "fanout", "intent", "message", "snapshot", "coldstart"])
    p.add_argument("--code", type=Path, help="intent, message, coldstart: also run against the Foreman in this checkout, side by side")
    p.add_argument("--message-count", type=int, default=200)
    p.add_argument("--ack-count", type=int, default=5000)
    p.add_argument("--fanout-count", type=int, default=500)
    p.add_argument("--placement", action="append", choices=["10-other", "100-other", "10-same", "100-same"],
                   help="fanout: run only these placements (repeatable; default all four)")
    p.add_argument("--entities", type=int, default=10_000)
    p.add_argument("--rounds", type=int, default=1, help="coldstart: rounds of 5 starts (per checkout, interleaved)")
    args = p.parse_args()
    base = Path(tempfile.mkdtemp(prefix="foreman-bench-"))
    results: list[str] = []
    try:
        if args.what in ("all", "ack", "fanout"):
            home = base / "live"
            home.mkdir()
            d = Daemon(home, free_port())
            d.start()
            d.ready()
            d.stop()
            seed_store(home, SEED_TASKS)
            d.start()
            d.ready()
            echo_port = free_port()
            echo = spawn_self("_echo", str(echo_port))
            relay_port = free_port()
            relay = spawn_self("_relay", str(relay_port))
            wait_port(echo_port), wait_port(relay_port)
            try:
                if args.what in ("all", "ack"):
                    bare = asyncio.run(paced_acks(echo_port, 1000, args.ack_count, daemon=False))
                    lat = asyncio.run(paced_acks(d.port, 1000, args.ack_count, daemon=True, token=token_of(home)))
                    results.append(f"ack latency @1000/s  n={len(lat)}  daemon p50 {pct(lat, 50):.2f} ms  p99 {pct(lat, 99):.2f} ms"
                                   f"   | bare echo p50 {pct(bare, 50):.2f} ms  p99 {pct(bare, 99):.2f} ms   (target p99 <= 5 ms)")
                if args.what in ("all", "fanout"):
                    results.append("fan-out @100/s, ack = driver send to its ack, delivery = driver send to each reader's receipt (ms)")
                    results.append(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
                    results.append(f"{'readers':<22}{'':10}{'ack p50':>9}{'ack p99':>9}{'dlv p50':>9}{'dlv p99':>9}"
                                   f"{'ack p99 x':>11}{'dlv p99 x':>11}{'x pad':>11}")
                    for same in (False, True):
                        for n, target in ((10, 10), (100, 20)):
                            if args.placement and f"{n}-{'same' if same else 'other'}" not in args.placement:
                                continue
                            where = f"{n} {'same process' if same else 'other process'}"
                            d_ack, d_dlv = asyncio.run(fanout(d.port, n, 100, args.fanout_count, True, str(home), same_process=same))
                            b_ack, b_dlv = asyncio.run(fanout(relay_port, n, 100, args.fanout_count, False, same_process=same))
                            p_ack, p_dlv = asyncio.run(fanout(relay_port, n, 100, args.fanout_count, False, same_process=same,
                                                              padded=True))
                            for name, ack, dlv in (("relay", b_ack, b_dlv), ("relay-pad", p_ack, p_dlv), ("daemon", d_ack, d_dlv)):
                                ratio = (f"{pct(ack, 99) / pct(b_ack, 99):>10.1f}x{pct(dlv, 99) / pct(b_dlv, 99):>10.1f}x"
                                         f"{pct(dlv, 99) / pct(p_dlv, 99):>10.1f}x" if name == "daemon" else "")
                                results.append(f"{where:<22}{name:<10}{pct(ack, 50):>9.2f}{pct(ack, 99):>9.2f}{pct(dlv, 50):>9.2f}"
                                               f"{pct(dlv, 99):>9.2f}{ratio}")
                    results.append(f"relay: the daemon's own task.upsert frames; relay-pad: one string padded to their median "
                                   f"({statistics.median(FRAME_SIZES):.0f} bytes); x pad: delivery p99 against relay-pad")
                    if DAEMON_FRAMES:  # what each reader pays per frame: the reason the two relays differ
                        mid = sorted(DAEMON_FRAMES, key=len)[len(DAEMON_FRAMES) // 2]
                        padf = json.dumps({"type": "relay", "id": 1, "pad": "x" * max(0, len(mid) - 40)})
                        cost = [min(timeit.repeat(lambda f=f: json.loads(f), number=200, repeat=5)) / 200 * 1e6 for f in (mid, padf)]
                        results.append(f"a reader's json.loads per frame: daemon's median frame {cost[0]:.1f} us, padded frame "
                                       f"{cost[1]:.1f} us ({len(mid)} bytes each); x 100 readers in one process per intent")
                    results.append(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
                    results.append("targets: ack p99 <= 3x and delivery p99 <= 2x the bare relay; delivery p99 <= 10 ms (10), <= 20 ms (100)")
            finally:
                echo.kill(), relay.kill()
                d.stop()
        if args.what in ("all", "intent"):
            for label, code in (("this code", ROOT), *((("--code " + str(args.code), args.code.resolve()),) if args.code else ())):
                out = subprocess.run([sys.executable, __file__, "_intent", str(base / f"intent-{len(results)}"), "3000"], cwd=code,
                                     env={**os.environ, "PYTHONPATH": str(code)}, check=True, capture_output=True, text=True)
                steps = json.loads(out.stdout.strip().splitlines()[-1])
                results.append(f"per-intent CPU (task.prioritize, in-process, {label}): " + ", ".join(
                    f"{k} {statistics.median(v) * 1e6:.0f}" for k, v in steps.items())
                    + f"; sum of medians {sum(statistics.median(v) for v in steps.values()) * 1e6:.0f} us")
        if args.what in ("all", "message"):
            for label, code in (("this code", ROOT), *((("--code " + str(args.code), args.code.resolve()),) if args.code else ())):
                home = base / f"msg-{len(results)}"
                out = subprocess.run([sys.executable, __file__, "_message", str(home), str(args.message_count)], cwd=code,
                                     env={**os.environ, "PYTHONPATH": str(code)}, check=True, capture_output=True, text=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                results.append(f"message.send of 9 KB, unread lists full ({label}): to one agent p50 {r['kit_50']:.2f} ms "
                               f"p99 {r['kit_99']:.2f} ms; to all p50 {r['all_50']:.2f} ms p99 {r['all_99']:.2f} ms")
        if args.what in ("all", "snapshot"):
            home = base / "snap"
            r = snapshot_bench(home, args.entities)
            results.append(f"snapshot with {r['entities']} entities: encode p50 {r['encode_p50_ms']:.2f} ms  p99 {r['encode_p99_ms']:.2f} ms, "
                           f"{r['size_mb']:.2f} MB (store load {r['load_s'] * 1000:.0f} ms)   (target <= 5 ms)")
        if args.what in ("all", "coldstart"):
            results.extend(coldstart(base, args.entities, args.rounds, args.code))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"Foreman core bench  (python {sys.version.split()[0]}, {os.cpu_count()} cores)")
    for line in results:
        print(line)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_echo":
        asyncio.run(_echo_server(int(sys.argv[2])))
    elif len(sys.argv) > 1 and sys.argv[1] == "_relay":
        asyncio.run(_relay_server(int(sys.argv[2])))
    elif len(sys.argv) > 1 and sys.argv[1] == "_intent":  # run with cwd and PYTHONPATH at the checkout to measure
        sys.path.insert(0, os.getcwd())
        print(json.dumps(intent_bench(Path(sys.argv[2]), int(sys.argv[3]))))
    elif len(sys.argv) > 1 and sys.argv[1] == "_message":  # run with cwd and PYTHONPATH at the checkout to measure
        sys.path.insert(0, os.getcwd())
        print(json.dumps(message_bench(Path(sys.argv[2]), int(sys.argv[3]))))
    elif len(sys.argv) > 1 and sys.argv[1] == "_seed":  # run with cwd and PYTHONPATH at the checkout to seed
        sys.path.insert(0, os.getcwd())
        seed_store(Path(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "_readers":
        asyncio.run(_readers(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6]))
    else:
        sys.exit(main())
