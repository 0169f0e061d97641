"""Chaos: random steering, SIGKILLs and restarts of a daemon running the conductor (seeded).

Phase 1 runs the daemon as a child process (``chaos_child``) so SIGKILL is real; phase 2
restarts it in-process on the same home to settle the run and inspect its waiters.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from websockets.asyncio.client import connect

from foreman.core.records import Session, TurnProcess, Worktree
from foreman.tui.discovery import Locator

from .chaos_child import chaos_flags
from .chaos_scripts import TITLES, install
from .harness import Rig, git, make_repo, wait_for

ROOT = Path(__file__).resolve().parents[2]
WORKERS = ("juniper", "kit", "wren", "rowan", "tove")
SEED = int(os.environ.get("CHAOS_SEED", "20240607"))
EVENTS = 40


class Child:
    """The chaos daemon as a child process."""

    def __init__(self, home: Path, repo: Path) -> None:
        self.home, self.repo = home, repo
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> int:
        self.starts += 1
        err = open(self.home.parent / f"child-{self.starts}.err", "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.steering.chaos_child", str(self.home), str(self.repo)],
                                     cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL,
                                     stdout=err, stderr=subprocess.STDOUT)
        err.close()
        run_file = self.home / "sim" / "foreman.json"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError((self.home.parent / f"child-{self.starts}.err").read_text()[-3000:])
            try:
                info = json.loads(run_file.read_text())
                if info.get("pid") == self.proc.pid:
                    return int(info["port"])
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        raise RuntimeError("the chaos daemon did not start")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def term(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(30)


class View:
    """A protocol client that mirrors agents, tasks and decisions from the daemon's frames."""

    _ids = itertools.count(1)

    def __init__(self) -> None:
        self.ws: Any = None
        self.reader: asyncio.Task[None] | None = None
        self.replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.state: dict[str, dict[str, dict[str, Any]]] = {}

    async def open(self, port: int, token: str | None) -> None:
        self.ws = await connect(f"ws://127.0.0.1:{port}", compression=None, max_size=None)
        await self.ws.send(json.dumps({"type": "hello", "protocol": 1, "client": "chaos", "token": token}))
        self.reader = asyncio.create_task(self._read())
        await wait_for(lambda: self.state, what="the snapshot")

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "snapshot":
                    self.state = {k: {e.get("id") or e["name"]: e for e in msg[k + "s"]} for k in ("agent", "task", "decision")}
                elif kind in ("agent.upsert", "task.upsert", "decision.upsert") and self.state:
                    k = kind.split(".")[0]
                    e = msg[k]
                    self.state[k][e.get("id") or e["name"]] = e
                elif msg.get("id") in self.replies:
                    self.replies.pop(msg["id"]).set_result(msg)
        except Exception:  # the daemon was killed: the connection just ends
            pass

    async def send(self, intent: dict[str, Any]) -> dict[str, Any] | None:
        rid = f"c{next(self._ids)}"
        fut = asyncio.get_running_loop().create_future()
        self.replies[rid] = fut
        try:
            await self.ws.send(json.dumps({**intent, "id": rid}))
            return await asyncio.wait_for(fut, 10)
        except Exception:
            return None

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await asyncio.gather(self.reader, return_exceptions=True)
        self.state = {}


def steering_event(rnd: random.Random, view: View) -> dict[str, Any] | None:
    """A random intent from what the client sees."""
    tasks = list(view.state.get("task", {}).values())
    open_ds = [d for d in view.state.get("decision", {}).values() if d["status"] == "open"]
    worker = rnd.choice(WORKERS[:4])
    kind = rnd.choices(["pause", "resume", "stop", "spawn", "cancel", "retry", "prioritize", "reassign", "message", "answer"],
                       weights=[3, 3, 2, 3, 1, 2, 1, 3, 2, 4])[0]
    live = [t for t in tasks if t["status"] not in ("done", "cancelled")]
    if kind == "pause":
        return {"type": "agent.pause", "agent": worker}
    if kind == "resume":
        return {"type": "agent.resume", "agent": worker}
    if kind == "stop":
        return {"type": "agent.stop", "agent": worker}
    if kind == "spawn":
        todo = [t["id"] for t in tasks if t["status"] == "todo"]
        return {"type": "agent.spawn", "agent": worker, **({"task": rnd.choice(todo)} if todo and rnd.random() < 0.5 else {})}
    if kind == "cancel" and live:
        return {"type": "task.cancel", "task": rnd.choice(live)["id"]}
    if kind == "retry":
        stuck = [t["id"] for t in tasks if t["status"] in ("blocked", "cancelled")]
        return {"type": "task.retry", "task": rnd.choice(stuck)} if stuck else None
    if kind == "prioritize" and live:
        return {"type": "task.prioritize", "task": rnd.choice(live)["id"]}
    if kind == "reassign" and live:
        return {"type": "task.reassign", "task": rnd.choice(live)["id"], "agent": worker}
    if kind == "message":
        return {"type": "message.send", "to": worker, "text": f"note {rnd.randrange(1000)}"}
    if kind == "answer" and open_ds:
        d = rnd.choice(open_ds)
        return {"type": "decision.answer", "decision": d["id"], "option": 0 if d["kind"] == "merge" else rnd.randrange(len(d["options"]))}
    return None


def check_decisions(rig: Rig) -> None:
    """Every open decision belongs to someone who carries its answer out: a merge decision to its
    task in review (the flow carries the answer out as an input), a question or permission to a
    live turn waiting for it."""
    conductor = rig.d.backend
    for d in rig.world.decisions.values():
        if d.status != "open":
            continue
        if d.kind == "merge":
            assert d.task is not None and rig.world.tasks[d.task].status == "review", f"merge {d.id}: its task moved on"
            continue
        asker = rig.world.agents[d.asked_by]
        assert asker.active and not asker.paused, f"{d.id} asked by {d.asked_by}, who is not working"
        run = conductor.running.get(d.asked_by)
        assert run is not None and (d.task is None or run.task_id == d.task), f"{d.id}: its turn is gone"
        assert any(not f.done() for f in rig.d._waiters.get(d.id, [])), f"{d.id}: nobody waits for it"


def procs_under(path: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cwd", "cmdline"]):
        cwd = p.info.get("cwd") or ""
        if cwd == str(path) or cwd.startswith(str(path) + os.sep):
            found.append(p)
    return found


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_chaos_steering_and_crashes_lose_nothing(tmp_path: Path) -> None:
    rnd = random.Random(SEED)
    repo = make_repo(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    child = Child(home, repo)
    view = View()
    log: list[str] = []
    try:
        await view.open(child.start(), Locator(child.home, "sim").token())
        await view.send({"type": "goal.submit", "text": "chaos"})
        for i in range(EVENTS):
            await asyncio.sleep(rnd.uniform(0.05, 0.9))
            if rnd.random() < 0.2:
                how = rnd.choice(["kill", "kill", "term"])
                log.append(f"{i}: {how}")
                await view.close()
                await asyncio.to_thread(child.kill if how == "kill" else child.term)
                await view.open(await asyncio.to_thread(child.start), Locator(child.home, "sim").token())
                continue
            intent = steering_event(rnd, view)
            if intent is not None:
                reply = await view.send(intent)
                log.append(f"{i}: {intent} -> {reply and reply['type']}")
        await view.close()
        await asyncio.to_thread(child.kill)
    finally:
        await view.close()
        child.kill()
    assert sum("kill" in line or "term" in line for line in log) >= 3, log

    # phase 2: the same home in-process; settle and check
    rig = Rig(tmp_path, repo=repo, **{k: v for k, v in chaos_flags(home, repo).items() if k not in ("home", "repo")})
    install(rig.puppet)
    try:
        client = await rig.start()
        check_decisions(rig)
        for name in WORKERS[:3]:
            a = rig.world.agents[name]
            if not a.active or a.paused:
                await client.ok({"type": "agent.resume", "agent": name})
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 90
        while True:
            check_decisions(rig)
            tasks = [t for t in rig.world.tasks.values() if t.title in TITLES]
            if len(tasks) == len(TITLES) and all(t.status in ("done", "cancelled") for t in tasks):
                break
            assert loop.time() < deadline, f"not settled: {[(t.id, t.status, t.assignee) for t in tasks]}\n" + "\n".join(log)
            for d in list(rig.world.decisions.values()):
                if d.status == "open":
                    await client.send({"type": "decision.answer", "decision": d.id, "option": 0})
            for t in tasks:
                if t.status == "blocked":
                    await client.send({"type": "task.retry", "task": t.id})
                if t.status == "todo" and t.assignee and not rig.world.agents[t.assignee].active:
                    await client.send({"type": "task.reassign", "task": t.id, "agent": "juniper"})
            await asyncio.sleep(0.2)
        await wait_for(lambda: not rig.d.backend.running and not rig.d.backend.cleaning and not any(
            t.get_name().startswith(("commit ", "handoff ", "ci ")) for t in rig.d._tasks), 20, "quiet")
        check_decisions(rig)

        titles = [t.title for t in rig.world.tasks.values()]
        assert sorted(titles) == sorted(TITLES), f"tasks lost or duplicated: {titles}"
        main_files = git(repo, "ls-tree", "--name-only", "main").split()
        for t in rig.world.tasks.values():
            if t.status == "done":
                assert f"{t.id}.txt" in main_files, f"{t.id} is done but its work is not on main"
        for wt_id, info in rig.d.core.records(Worktree).items():
            path = Path(info.path)
            if path.exists():
                assert git(path, "status", "--porcelain") == "", (f"{wt_id} holds uncommitted work; task: {rig.world.tasks[info.task]!r}", rig.d.core.records(Session))
        assert not rig.d.core.records(TurnProcess), rig.d.core.records(TurnProcess)
    finally:
        await rig.stop()
    left = procs_under(tmp_path)
    assert left == [], [(p.pid, p.info.get("cmdline")) for p in left]
