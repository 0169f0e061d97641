"""A private home (issue 37 item 5): under the daemon's home, folders are 0700 and files 0600 (the
state database and its -wal/-shm, logs, memory, the worktrees' parent folders, traces, sessions,
the run files), whatever the umask, and a home made before (or loosened by hand) is tightened at
start; the contents of repositories and worktrees keep git's modes, and a home that is the user's
own home folder is never walked."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from foreman import private, runtime
from foreman.core.core import Core
from foreman.logs import configure
from foreman.memory import Memory
from foreman.store import Store

from .live import Conn, LiveDaemon


@pytest.fixture(autouse=True)
def loose_umask():
    """The usual umask (022), so that anything not made private on purpose comes out 0644/0755."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def loose(home: Path) -> list[str]:
    """Every path under ``home`` (outside repositories and worktrees) whose mode lets others in."""
    bad = []
    for root, dirs, files in os.walk(home):
        here = Path(root)
        if ((here / ".git").exists() or here.parent.name == "trash") and here != home:
            dirs[:] = []  # a repository's, a worktree's or a retired worktree's own files keep git's modes
            bad += [f"{here} {mode(here):o}"] if mode(here) != 0o700 else []
            continue
        for name in dirs:
            if mode(here / name) != 0o700:
                bad.append(f"{here / name}/ {mode(here / name):o}")
        for name in files:
            if mode(here / name) & 0o077:
                bad.append(f"{here / name} {mode(here / name):o}")
    if mode(home) != 0o700:
        bad.append(f"{home}/ {mode(home):o}")
    return bad


def test_what_the_daemon_writes_is_private_whatever_the_umask(tmp_path: Path) -> None:
    home = tmp_path / "agentcraft"
    profile = home / "sim"
    runtime.claim_profile(home, "sim")
    try:
        runtime.record(home, "sim", {"port": 1, "token": "t"})
        configure("WARNING", profile / "foreman.log")
        store = Store(profile)
        store.open()
        core = Core()
        core.add_agent("kit", 1.0)
        core.log("kit", "hello", 1.0)
        changes, _ = core.take()
        store.commit([(change, None) for change in changes], seq=len(changes))  # the WAL, the agent's log
        memory = Memory(profile / "memory")
        memory.write("agents/kit/notes", "# notes")
        memory.write("shared/plan", "# plan")
        from foreman.backends.local.runner import SessionStore
        from foreman.private import append_private

        SessionStore(profile / "local" / "sessions").save("s1", [{"role": "user", "content": "x"}])
        append_private(profile / "traces" / "guided" / "s1.jsonl", "{}\n")
        for name in ("state.db", "state.db-wal", "state.db-shm"):
            assert mode(profile / name) == 0o600, name
        assert loose(home) == []
        store.close()
    finally:
        runtime.release(home, "sim")
        import logging

        logging.getLogger().handlers.clear()


def _loose_home(home: Path) -> dict[str, Path]:
    """A home made by an older Foreman: everything readable by others, plus things that are not its own."""
    os.umask(0o022)
    profile = home / "sim"
    paths = {
        "run": home / "foreman.json", "config": home / "config.json", "prun": profile / "foreman.json",
        "db": profile / "state.db", "wal": profile / "state.db-wal", "log": profile / "logs" / "kit.jsonl",
        "note": profile / "memory" / "shared" / "plan.md", "trace": profile / "traces" / "guided" / "a.jsonl",
        "session": profile / "local" / "sessions" / "s.json", "tool": profile / "bin" / "helper.sh",
    }
    for path in paths.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}" if path.suffix == ".json" else "x")
        path.chmod(0o644)
    paths["tool"].chmod(0o755)
    wt = profile / "worktrees" / "repo" / "kit-t1"
    (wt / "bin").mkdir(parents=True)
    (wt / ".git").write_text("gitdir: /somewhere\n")
    (wt / "bin" / "run.sh").write_text("#!/bin/sh\n")
    (wt / "bin" / "run.sh").chmod(0o755)
    (wt / "README.md").write_text("x")
    (profile / "trash" / "kit-t0" / "src").mkdir(parents=True)
    (profile / "trash" / "kit-t0" / "src" / "a.py").write_text("x")
    (home / "sandbox" / "sim-demo" / ".git").mkdir(parents=True)
    (home / "sandbox" / "sim-demo" / "notes.py").write_text("x")
    (home / "not-ours").mkdir()
    (home / "not-ours" / "f.txt").write_text("x")
    for root, dirs, _files in os.walk(home):
        for name in dirs:
            (Path(root) / name).chmod(0o755)
    home.chmod(0o755)
    return {**paths, "wt": wt}


def test_an_existing_home_is_tightened_and_what_is_not_its_own_is_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "agentcraft"
    p = _loose_home(home)
    changed = private.tighten_home(home)
    assert p["db"] in changed and home in changed
    assert loose(home / "sim") == [] and mode(home) == 0o700
    assert mode(p["run"]) == mode(p["config"]) == mode(p["wal"]) == mode(p["trace"]) == 0o600
    assert mode(p["tool"]) == 0o700  # an executable of the Foreman's own stays executable, for its owner only
    assert mode(home / "sim" / "worktrees") == mode(home / "sim" / "worktrees" / "repo") == mode(p["wt"]) == 0o700
    assert mode(p["wt"] / "bin" / "run.sh") == 0o755 and mode(p["wt"] / "README.md") == 0o644  # git's modes
    assert mode(home / "sim" / "trash" / "kit-t0") == 0o700
    assert mode(home / "sim" / "trash" / "kit-t0" / "src" / "a.py") == 0o644  # a retired worktree, moved whole
    assert mode(home / "sandbox") == 0o700 and mode(home / "sandbox" / "sim-demo" / "notes.py") == 0o644
    assert mode(home / "not-ours") == 0o755 and mode(home / "not-ours" / "f.txt") == 0o644
    assert private.tighten_home(home) == []  # nothing left to do


def test_a_home_that_is_the_users_home_folder_is_never_walked(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "sim" / "logs").mkdir(parents=True)
    (tmp_path / "sim" / "logs" / "a.jsonl").write_text("x")
    tmp_path.chmod(0o755)
    assert private.tighten_home(tmp_path) == []
    assert mode(tmp_path) == 0o755 and mode(tmp_path / "sim" / "logs" / "a.jsonl") == 0o644


def test_a_daemon_start_tightens_an_old_home_and_writes_only_private_files(tmp_path: Path) -> None:
    home = tmp_path / "agentcraft"
    p = _loose_home(home)
    for key in ("db", "wal", "prun"):
        p[key].unlink()  # (a real database is made by the daemon)
    import shutil

    shutil.rmtree(home / "sandbox" / "sim-demo")  # (the sim makes its own demo repository there)
    daemon = LiveDaemon(home)
    daemon.start()
    try:
        async def talk() -> None:
            c = await Conn.open(daemon.port, token=daemon.token)
            try:
                await c.hello()
                reply, _ = await c.request({"type": "goal.submit", "text": "Add tags"})
                assert reply["type"] == "ack", reply
                reply, _ = await c.request({"type": "message.send", "to": "kit", "text": "hello"})
                assert reply["type"] == "ack", reply
            finally:
                await c.close()

        asyncio.run(talk())
        for name in ("state.db", "state.db-wal", "state.db-shm", "foreman.json", "foreman.log", "foreman.lock"):
            assert mode(home / "sim" / name) == 0o600, name
        assert loose(home / "sim") == [] and mode(home) == 0o700 and mode(home / "foreman.json") == 0o600
    finally:
        assert daemon.stop() == 0, daemon.stderr()
    assert loose(home / "sim") == []


def test_a_fresh_home_is_private_from_the_first_start(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "agentcraft"
    home.mkdir(parents=True)  # (the test's daemon-1.err goes there; the Foreman's own files come at start)
    daemon = LiveDaemon(home)
    daemon.start()
    try:
        assert (home / "sandbox" / "sim-demo" / ".git").exists()
        assert loose(home / "sim") == [] and mode(home) == mode(home / "sandbox") == 0o700
        assert mode(home / "foreman.json") == 0o600
    finally:
        assert daemon.stop() == 0, daemon.stderr()
    assert mode(tmp_path / "fresh") == 0o755  # the folder holding the home is not the Foreman's
