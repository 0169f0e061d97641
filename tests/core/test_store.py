"""The durable store: round trip, schema version, log rotation and tails, bounded start-up."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

import foreman.store as store_mod
from foreman.core.core import Core
from foreman.core.world import RECENT_LOGS, RECENT_MESSAGES, Change
from foreman.store import KEEP_APPENDS, SCHEMA_VERSION, Store, StoreError
from protocol import LogLine, Message

from .worlds import T0, dump


def _busy_core() -> tuple[Core, list[Change]]:
    core = Core()
    changes: list[Change] = []
    core.add_agent("marlow", T0, role="lead")
    core.add_agent("kit", T0)
    goal = core.submit_goal("add tags", T0)
    for i in range(12):  # ids t1..t12: lexical order differs from creation order
        core.create_task(f"task {i}", T0, goal=goal.id)
    core.start_task("t1", "kit", T0)
    core.send_message("user", "all", "hello team", T0)
    core.log("kit", "reading notes.py", T0, kind="tool")
    d = core.open_decision("question", "tabs?", ["tabs", "spaces"], T0, asked_by="kit")
    core.answer_decision(d.id, 1, T0)
    changes, _ = core.take()
    return core, changes


def _rows(changes: list[Change]) -> list[tuple[Change, str | None]]:
    return [(c, None) for c in changes]


def _without_order(text: str) -> dict:
    data = json.loads(text)
    data.pop("order")
    data["logs"] = {k: v for k, v in data["logs"].items() if v}  # loading gives every agent a (maybe empty) log
    return data


def test_round_trip_restores_the_world_and_seq(tmp_path: Path) -> None:
    core, changes = _busy_core()
    s = Store(tmp_path)
    world, seq = s.open()
    assert seq == 0 and not world.agents
    s.commit(_rows(changes), 77)
    s.close()
    s2 = Store(tmp_path)
    loaded, seq = s2.open()
    s2.close()
    assert seq == 77
    assert _without_order(dump(loaded)) == _without_order(dump(core.world))
    assert s2.encoded[("task", "t1")] == core.world.tasks["t1"].model_dump_json(by_alias=True)


def test_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    s = Store(tmp_path)
    s.open()
    s.close()
    db = sqlite3.connect(tmp_path / "state.db")
    assert json.loads(db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]) == SCHEMA_VERSION
    db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (json.dumps(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(StoreError) as info:
        Store(tmp_path).open()
    assert f"schema version {SCHEMA_VERSION + 1}" in info.value.message and "--reset" in info.value.message


def _log_lines(store: Store, agent: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        line = LogLine(agent=agent, at=T0 + i, text=f"line {i:06d} " + "x" * 80)
        store.commit([(Change("append", "log", line), None)], i + 1)


def test_logs_rotate_keeping_one_old_file_and_tails_span_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_mod, "LOG_ROTATE_BYTES", 8 * 1024)
    s = Store(tmp_path)
    s.open()
    _log_lines(s, "kit", 500)
    logs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert logs == ["kit.1.jsonl", "kit.jsonl"]
    assert (tmp_path / "logs" / "kit.jsonl").stat().st_size < 8 * 1024
    assert (tmp_path / "logs" / "kit.1.jsonl").stat().st_size >= 8 * 1024
    current = (tmp_path / "logs" / "kit.jsonl").read_text().count("\n")
    tail = s.read_log_tail("kit", current + 20)  # spans the old file and the current one
    assert [ln.text[:11] for ln in tail] == [f"line {i:06d}" for i in range(500 - current - 20, 500)]
    _log_lines(s, "kit", 500, start=500)
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["kit.1.jsonl", "kit.jsonl"]
    s.close()


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    s = Store(tmp_path)
    s.open()
    _log_lines(s, "kit", 10)
    with open(tmp_path / "logs" / "kit.jsonl", "ab") as fh:
        fh.write(b'{"agent":"kit","at":1.0,"te')  # a crash mid-write
    assert [ln.text[:11] for ln in s.read_log_tail("kit", 3)] == [f"line {i:06d}" for i in (7, 8, 9)]
    s.close()


def _history(tmp_path: Path, messages: int, log_bytes: int) -> Path:
    """A store whose agents have ``messages`` messages and a log of about ``log_bytes``."""
    core = Core()
    core.add_agent("kit", T0)
    core.add_agent("wren", T0)
    changes, _ = core.take()
    s = Store(tmp_path)
    s.open()
    s.commit(_rows(changes), 1)
    rows = [(Change("append", "message", Message(id=i, sender="user", to="kit", text=f"m{i}", at=T0)), None)
            for i in range(1, messages + 1)]
    s.commit(rows, 2)
    line = (LogLine(agent="kit", at=T0, text="y" * 200).model_dump_json(by_alias=True) + "\n").encode()
    with open(tmp_path / "logs" / "kit.jsonl", "ab") as fh:
        fh.write(line * (log_bytes // len(line)))
    s.close()
    return tmp_path


def _open_time(path: Path) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        s = Store(path)
        world, _ = s.open()
        best = min(best, time.perf_counter() - t)
        s.close()
    assert len(world.logs["kit"]) == RECENT_LOGS
    return best


def test_start_up_reads_only_the_ends_of_history(tmp_path: Path) -> None:
    small = _history(tmp_path / "small", 600, 100_000)
    big = _history(tmp_path / "big", 40_000, 7_500_000)
    s = Store(big)
    world, _ = s.open()  # the first open prunes the appends to KEEP_APPENDS
    assert len(world.messages) == RECENT_MESSAGES and world.messages[-1].id == 40_000
    s.close()
    count = sqlite3.connect(big / "state.db").execute("SELECT COUNT(*) FROM appends").fetchone()[0]
    assert count == KEEP_APPENDS
    t_small, t_big = _open_time(small), _open_time(big)
    assert t_big < 3 * t_small + 0.05, (t_small, t_big)


def test_log_files_are_written_unbuffered(tmp_path: Path) -> None:
    """A log line is in the file as soon as commit returns (no buffer a SIGKILL could lose)."""
    s = Store(tmp_path)
    s.open()
    _log_lines(s, "wren", 1)
    assert os.path.getsize(tmp_path / "logs" / "wren.jsonl") > 0
    s.close()
