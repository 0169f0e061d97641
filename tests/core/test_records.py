"""The flow's typed records: the core's rules for them, the store's table, and the conversion of
an older home's untyped meta keys (store schema 2 -> 3)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from foreman.core.core import Core
from foreman.core.records import (
    OLD_META_KEYS, RECORD_MODELS, CiRun, HandOff, MergeRecord, QueuedTurn, Session, TaskFlow, TurnMarker, TurnProcess,
    Worktree, from_meta,
)
from foreman.core.rules import SESSION_TRANSITIONS, WORKTREE_TRANSITIONS
from foreman.errors import Conflict, NotFound
from foreman.store import SCHEMA_VERSION, Store

from .worlds import T0


def wt(state: str = "active", **kw: object) -> Worktree:
    fields = {"id": "kit-t1", "repo": "proj", "path": "/w/kit-t1", "branch": "agentcraft/kit/t1-x", "agent": "kit",
              "task": "t1", "base": "main", "state": state, **kw}
    return Worktree.model_validate(fields)


def test_every_record_kind_is_registered_once_and_frozen() -> None:
    assert set(RECORD_MODELS) == {"session", "worktree", "handoff", "merge", "taskflow", "queued", "process", "marker",
                                  "ci", "mergeq"}
    rec = wt()
    with pytest.raises(ValueError):
        rec.path = "/elsewhere"  # type: ignore[misc]
    with pytest.raises(ValueError):
        Worktree.model_validate({**rec.model_dump(), "colour": "red"})  # unknown fields are refused


def test_put_records_a_change_applies_it_and_an_equal_record_writes_nothing() -> None:
    core = Core()
    core.put_record(wt())
    changes, effects = core.take()
    assert [(c.op, c.kind, c.key) for c in changes] == [("record", "worktree", "kit-t1")] and effects == []
    assert core.record(Worktree, "kit-t1") == wt()
    core.put_record(wt())
    assert core.take() == ([], [])
    core.drop_record(Worktree, "kit-t1")
    assert core.record(Worktree, "kit-t1") is None
    assert [(c.op, c.value) for c in core.take()[0]] == [("record", None)]
    core.drop_record(Worktree, "kit-t1")  # nothing to drop: no change
    assert core.take() == ([], [])


@pytest.mark.parametrize(("table", "model"), [(SESSION_TRANSITIONS, "session"), (WORKTREE_TRANSITIONS, "worktree")])
def test_state_changes_follow_their_tables(table: dict[str, frozenset[str]], model: str) -> None:
    for was, allowed in table.items():
        for to in table:
            core = Core()
            if model == "session":
                core.update_session("kit:t1", agent="kit", job="work", state=was)
                change = lambda: core.update_session("kit:t1", state=to)  # noqa: E731
            else:
                core.put_record(wt(was))
                change = lambda: core.update_worktree("kit-t1", state=to)  # noqa: E731
            core.take()
            if to in allowed or to == was:
                change()
            else:
                with pytest.raises(Conflict):
                    change()
                assert core.take() == ([], [])  # refused: nothing changed


def test_update_session_merges_fields_and_a_new_session_needs_its_agent_and_job() -> None:
    core = Core()
    with pytest.raises(ValueError):
        core.update_session("kit:t1", state="running")
    core.update_session("kit:t1", agent="kit", job="work", task="t1")
    core.update_session("kit:t1", session_id="abc")
    assert core.record(Session, "kit:t1") == Session(id="kit:t1", agent="kit", job="work", task="t1", session_id="abc")
    with pytest.raises(NotFound):
        core.update_worktree("nobody-t9", state="retiring")


def test_taskflow_counters_start_unset() -> None:
    core = Core()
    assert core.taskflow("t1") == TaskFlow(id="t1")
    core.update_taskflow("t1", nudged=True)
    core.update_taskflow("t1", node_losses=2)
    assert core.taskflow("t1") == TaskFlow(id="t1", nudged=True, node_losses=2)


def test_records_survive_the_store_and_deletions_too(tmp_path: Path) -> None:
    core = Core()
    core.add_agent("kit", T0)
    made = [wt(), Session(id="kit:t1", agent="kit", job="work", task="t1", session_id="s1"),
            HandOff(id="t1", from_agent="wren", branch="agentcraft/wren/t1-x", pending=True),
            MergeRecord(id="d1", task="t1", commit="a" * 40, base="b" * 40, branch="agentcraft/kit/t1-x"),
            TaskFlow(id="t1", ci_retried=True), QueuedTurn(id="kit:0", agent="kit", order=0, job="followup",
                                                           key="kit:t1", prompt="go on", task="t1"),
            TurnProcess(id="kit:1:42", turn="kit:1", agent="kit", pid=42, create_time=T0),
            TurnMarker(id="kit:1", agent="kit", marker="m"), CiRun(id="t1", agent="kit", started_at=T0)]
    for rec in made:
        core.put_record(rec)
    core.drop_record(TurnMarker, "kit:1")
    store = Store(tmp_path)
    store.open()
    store.commit([(c, None) for c in core.take()[0]], 1)
    store.close()
    world, _ = Store(tmp_path).open()
    loaded = [r for table in world.records.values() for r in table.values()]
    assert sorted(loaded, key=lambda r: (r.kind, r.id)) == sorted(made[:-2] + made[-1:], key=lambda r: (r.kind, r.id))


OLD_META = {
    "sessions": {"kit:t1": {"agent": "kit", "job": "work", "task": "t1", "goal": None, "state": "running",
                            "question": "d2", "session": "abc"},
                 "marlow:g1": {"agent": "marlow", "job": "plan", "task": None, "goal": "g1", "state": "done"}},
    "worktrees": {"kit-t1": {"repo": "proj", "path": "/w/kit-t1", "branch": "agentcraft/kit/t1-x", "agent": "kit",
                             "task": "t1", "base": "main"},
                  "wren-t1": {"repo": "proj", "path": "/w/wren-t1", "branch": "agentcraft/wren/t1-x", "agent": "wren",
                              "task": "t1"}},
    "removals": {"wren-t1": T0},
    "handoffs": {"t1": {"from": "wren", "branch": "agentcraft/wren/t1-x", "pending": True}},
    "merge_commits": {"d3": {"commit": "c" * 40, "base": "b" * 40, "branch": "agentcraft/kit/t1-x"}},
    "nudged": {"t1": True}, "ci_retried": {"t2": True}, "node_losses": {"t1": 2},
    "queued": {"kit": [["followup", "kit:t1", "CI failed", "t1", None, None, None]]},
    "procs": {"kit:3": [["kit", 4242, T0]]}, "markers": {"kit:3": ["kit", "scope:kit:3:abcd"]},
    "turns": {"kit": 3, "marlow": 1},
}
"""The flow's meta keys as a Foreman with store schema 2 wrote them (every kind, one or two of each)."""


def test_old_meta_keys_become_records() -> None:
    records, turns = from_meta(OLD_META)
    by = {(r.kind, r.id): r for r in records}
    assert by["session", "kit:t1"] == Session(id="kit:t1", agent="kit", job="work", task="t1", state="running",
                                              session_id="abc", question="d2")
    assert by["session", "marlow:g1"].goal == "g1" and by["session", "marlow:g1"].state == "done"
    assert by["worktree", "kit-t1"].state == "active" and by["worktree", "kit-t1"].retired_at is None
    assert (by["worktree", "wren-t1"].state, by["worktree", "wren-t1"].retired_at) == ("retiring", T0)
    assert by["worktree", "wren-t1"].base == "main"  # (an older record without a base)
    assert by["handoff", "t1"] == HandOff(id="t1", from_agent="wren", branch="agentcraft/wren/t1-x", pending=True)
    assert by["merge", "d3"].commit == "c" * 40
    assert by["taskflow", "t1"] == TaskFlow(id="t1", nudged=True, node_losses=2)
    assert by["taskflow", "t2"] == TaskFlow(id="t2", ci_retried=True)
    assert by["queued", "kit:0"].prompt == "CI failed" and by["queued", "kit:0"].task == "t1"
    assert by["process", "kit:3:4242"] == TurnProcess(id="kit:3:4242", turn="kit:3", agent="kit", pid=4242,
                                                       create_time=T0)
    assert by["marker", "kit:3"].marker == "scope:kit:3:abcd"
    assert turns == {"kit": 3, "marlow": 1}
    assert len(records) == len(by) == 11


def test_a_schema_2_database_is_upgraded_to_records_in_one_step(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.open()
    store.close()
    db = sqlite3.connect(tmp_path / "state.db")
    db.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    db.execute("DROP TABLE records")
    for key, value in {**OLD_META, "counters": {"task": 2}, "grants": {"kit": ["Bash:x"]}}.items():
        db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(value)))
    db.commit()
    db.close()
    world, _ = Store(tmp_path).open()
    assert not set(OLD_META_KEYS) & set(world.meta)
    assert world.meta["grants"] == {"kit": ["Bash:x"]}  # what is not the flow's stays
    assert world.meta["counters"] == {"task": 2, "turn:kit": 3, "turn:marlow": 1}
    assert Core(world).record(Session, "kit:t1").session_id == "abc"  # type: ignore[union-attr]
    assert len([r for t in world.records.values() for r in t]) == 11
    db = sqlite3.connect(tmp_path / "state.db")
    assert json.loads(db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]) == SCHEMA_VERSION
    db.close()
    assert Core(world).next_number("turn:kit") == 4  # turn ids are never reused


def test_a_bad_old_value_fails_the_upgrade_naming_the_database_and_changes_nothing(tmp_path: Path) -> None:
    from foreman.store import StoreError

    store = Store(tmp_path)
    store.open()
    store.close()
    db = sqlite3.connect(tmp_path / "state.db")
    db.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    db.execute("INSERT INTO meta (key, value) VALUES ('sessions', ?)", (json.dumps({"kit:t1": {"job": "work"}}),))
    db.commit()
    db.close()
    with pytest.raises(StoreError) as info:
        Store(tmp_path).open()
    assert "state.db" in info.value.message and "schema version 2" in info.value.message
    db = sqlite3.connect(tmp_path / "state.db")
    assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "2"
    assert db.execute("SELECT count(*) FROM meta WHERE key='sessions'").fetchone()[0] == 1
    db.close()
