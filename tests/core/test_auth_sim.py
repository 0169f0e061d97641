"""The client token stays out of every place an agent can see, over a full sim run (issue 14 item 12).

The sim runs real git and real test runs in the agents' worktrees with the git safety
environment; while it runs, every child process of the daemon is sampled and its environment
read. After the run, the frames a client received (feed, messages, agent logs, snapshots), the
daemon's own log and every file under the profile and the sandbox except ``foreman.json`` are
searched for the token.
"""

from __future__ import annotations

import threading
from pathlib import Path

import psutil
import pytest

from tests.sim._sim import SimClient, start_daemon, token_for


def _sample_children(pid: int, stop: threading.Event, seen: dict[int, dict[str, str]]) -> None:
    """Read the environment of every descendant of ``pid`` until ``stop`` (every few ms)."""
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    while not stop.is_set():
        try:
            children = root.children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for child in children:
            if child.pid in seen:
                continue
            try:
                seen[child.pid] = {"cmdline": " ".join(child.cmdline()), **child.environ()}
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                pass
        stop.wait(0.005)


@pytest.mark.slow  # end to end: a full sim run; slow suite since issue 38
async def test_the_token_is_absent_from_every_agent_visible_place_in_a_full_sim_run(tmp_path: Path) -> None:
    daemon = start_daemon(tmp_path, "--auto-answer", "merge,permission,question", speed=1000.0)
    token = token_for(daemon.port)
    assert token and len(token) >= 32
    seen: dict[int, dict[str, str]] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_children, args=(daemon.proc.pid, stop, seen), daemon=True)
    sampler.start()
    client = SimClient(answer=None)
    try:
        await client.connect(daemon.port, since=0)
        await client.wait_for(lambda c: c.finished, 120, "the scenario's end")
        snapshot = SimClient(answer=None)
        await snapshot.connect(daemon.port)  # a fresh snapshot: feed, messages and agent logs
        await snapshot.close()
    finally:
        stop.set()
        sampler.join(5)
        await client.close()
        daemon.stop()

    # the environments of the processes the sim ran (git, the demo test suite)
    assert any("git" in env["cmdline"] for env in seen.values()), "no child process was sampled"
    assert any("GIT_CEILING_DIRECTORIES" in env for env in seen.values()), "no agent-side process was sampled"
    leaks = [env["cmdline"] for env in seen.values() if any(token in v for v in env.values())]
    assert leaks == []
    assert not any(token in v for v in psutil.Process().environ().values())
    # everything a client was sent: feed items, messages, agent log lines, snapshots
    import json

    assert token not in json.dumps(client.messages) and token not in json.dumps(snapshot.snapshot)
    assert client.feed and snapshot.snapshot.get("logs")
    # the daemon's log, and every file the run wrote (state, agent logs, traces, memory, worktrees)
    assert token not in daemon.log.read_text(errors="replace")
    files = [p for root in (tmp_path / daemon.profile, daemon.sandbox) for p in root.rglob("*")
             if p.is_file() and p.name != "foreman.json"]
    assert any(p.suffix == ".jsonl" for p in files) and any(p.name == "state.db" for p in files)
    assert [p for p in files if token.encode() in p.read_bytes()] == []
