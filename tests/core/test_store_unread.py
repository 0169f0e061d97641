"""Unread messages in the store: one row per message per agent, the same state after a restart,
a SIGKILL or an upgrade from the version-1 layout (one ``meta`` value holding every list)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from foreman.core.core import Core
from foreman.core.world import UNREAD_MAX, Change
from foreman.store import SCHEMA_VERSION, Store

from .worlds import T0, TEAM, team_core

ROOT = Path(__file__).resolve().parents[2]


def _step(core: Core, rng: random.Random, i: int) -> None:
    """One input of a mixed stream: mostly messages (to one agent, ``all`` or the user), some
    reads; kit, the busiest recipient, reads once only (input 50), so its list reaches the cap."""
    if i == 50 or rng.random() < 0.15:
        core.take_unread("kit" if i == 50 else rng.choice([a for a in TEAM if a != "kit"]))
    else:
        to = rng.choice([*TEAM, "all", "user", "kit", "kit", "kit", "kit"])
        sender = rng.choice(["user", *TEAM])
        if sender == to:
            sender = "user"
        core.send_message(sender, to, f"message {i} " + "x" * rng.randint(0, 300), T0 + i)


def _reference(seed: int, steps: int) -> dict:
    """The core's unread map after ``steps`` inputs of the stream ``seed``."""
    core, rng = team_core(), random.Random(seed)
    for i in range(steps):
        _step(core, rng, i)
    return core.world.meta.get("unread", {})


def _team_rows(core: Core) -> list:
    """The team's agents as store rows (team_core already took its changes)."""
    return [(Change("upsert", "agent", a), None) for a in core.world.agents.values()]


def _loaded_unread(path: Path) -> dict:
    s = Store(path)
    world, _ = s.open()
    s.close()
    return world.meta.get("unread", {})


def test_unread_is_the_same_after_a_restart_at_every_point(tmp_path: Path) -> None:
    """Commit after every input (including enough messages to kit to pass UNREAD_MAX); a second
    store opened on the same files while the first is still open (the writer never closed, as
    after a crash) loads exactly the core's unread lists."""
    core, rng = team_core(), random.Random(7)
    s = Store(tmp_path)
    s.open()
    s.commit(_team_rows(core), 0)
    for i in range(3 * UNREAD_MAX):
        _step(core, rng, i)
        s.commit([(c, None) for c in core.take()[0]], i + 1)
        if i % 23 == 0 or i > 3 * UNREAD_MAX - 10:
            assert _loaded_unread(tmp_path) == core.world.meta.get("unread", {}), f"after input {i}"
    kit = core.world.meta["unread"]["kit"]
    assert len(kit) == UNREAD_MAX, "the stream should have filled kit's list to the cap"
    db = sqlite3.connect(tmp_path / "state.db")
    rows = dict(db.execute("SELECT agent, COUNT(*) FROM unread GROUP BY agent").fetchall())
    db.close()
    assert rows == {a: len(v) for a, v in core.world.meta["unread"].items()}  # the dropped oldest are gone on disk too
    s.close()
    assert _loaded_unread(tmp_path) == core.world.meta["unread"]
    # what the readers of the list see is unchanged: take_unread after the restart gives the same messages
    s2 = Store(tmp_path)
    world, _ = s2.open()
    s2.close()
    assert [m.id for m in Core(world).take_unread("kit")] == [m["id"] for m in kit]


_CHILD = """
import random, sys
sys.path[:0] = [{root!r}]
from foreman.store import Store
from tests.core.test_store_unread import _step, _team_rows
from tests.core.worlds import team_core
core, rng = team_core(), random.Random({seed})
s = Store({path!r}); s.open()
s.commit(_team_rows(core), 0)
for i in range(100000):
    _step(core, rng, i)
    s.commit([(c, None) for c in core.take()[0]], i + 1)
    print(i + 1, flush=True)
"""


def test_unread_survives_sigkill_mid_stream(tmp_path: Path) -> None:
    """A writer process commits one input at a time and is SIGKILLed at a random point: the
    store then holds the unread lists of the last acknowledged input (or the one after it,
    committed but not yet printed), never a mix."""
    rng = random.Random(11)
    for round_ in range(3):
        path, seed = tmp_path / f"r{round_}", 100 + round_
        code = textwrap.dedent(_CHILD).format(root=str(ROOT), seed=seed, path=str(path))
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=ROOT)
        assert child.stdout is not None
        want, acked = rng.randint(20, 3 * UNREAD_MAX), 0
        while acked < want:
            line = child.stdout.readline()
            assert line, "the writer died on its own"
            acked = int(line)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        for line in child.stdout.read().split():
            acked = int(line)
        loaded = _loaded_unread(path)
        assert loaded in (_reference(seed, acked), _reference(seed, acked + 1)), f"round {round_} killed after {acked}"


def test_a_version_1_database_is_upgraded_and_reads_are_not_undone(tmp_path: Path) -> None:
    """A version-1 store (every agent's list in one meta value) opens with the same unread
    lists; after that, taking one agent's messages stays taken across a restart."""
    core = team_core()
    for i in range(5):
        core.send_message("user", "all" if i % 2 else "kit", f"m{i}", T0 + i)
    unread = core.world.meta["unread"]
    s = Store(tmp_path)
    s.open()
    s.commit(_team_rows(core), 0)
    s.close()
    db = sqlite3.connect(tmp_path / "state.db")  # the version-1 layout, as that Foreman wrote it
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('unread', ?)", (json.dumps(unread),))
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '1')")
    db.commit()
    db.close()

    s = Store(tmp_path)
    world, _ = s.open()
    assert world.meta["unread"] == unread
    upgraded = Core(world)
    assert [m.text for m in upgraded.take_unread("kit")] == ["m0", "m1", "m2", "m3", "m4"]
    s.commit([(c, None) for c in upgraded.take()[0]], 1)
    s.close()
    db = sqlite3.connect(tmp_path / "state.db")
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    db.close()
    assert "unread" not in meta and json.loads(meta["schema_version"]) == SCHEMA_VERSION
    after = _loaded_unread(tmp_path)
    assert "kit" not in after and after == {k: v for k, v in unread.items() if k != "kit"}
