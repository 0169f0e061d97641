"""Unit tests of the pure core: tasks, decisions, messages, agents; illegal inputs change nothing."""

from __future__ import annotations

import pytest

from foreman.core.core import Core
from foreman.core.rules import AGENT_STATIONS, DEFAULT_STATIONS, MERGE_OPTIONS, TASK_TRANSITIONS
from foreman.errors import Conflict, NotFound, StateError
from protocol.entities import DEFAULT_STATION

from .worlds import T0, dump, team_core


def refused(core: Core, fn, error: type[StateError] = StateError) -> StateError:
    """Assert ``fn(core)`` raises ``error`` and leaves the world and the pending changes untouched."""
    core.take()
    before = dump(core.world)
    with pytest.raises(error) as info:
        fn(core)
    assert dump(core.world) == before
    assert core.take() == ([], [])
    return info.value


def reviewed(core: Core, title: str, agent: str) -> str:
    t = core.create_task(title, T0, goal="g1")
    core.start_task(t.id, agent, T0)
    core.set_task_status(t.id, "review", T0)
    core.take()
    return t.id


def test_stations_follow_the_seed_world() -> None:
    assert DEFAULT_STATIONS == DEFAULT_STATION
    for state, station in DEFAULT_STATIONS.items():
        assert station in AGENT_STATIONS[state]
    assert AGENT_STATIONS["thinking"] == {"meeting", "desk"}


def test_task_transition_table_is_closed() -> None:
    for src, targets in TASK_TRANSITIONS.items():
        assert targets <= set(TASK_TRANSITIONS), src
    assert TASK_TRANSITIONS["done"] == frozenset()


def test_task_waits_for_deps_and_ready_order_is_priority_then_age() -> None:
    core = team_core()
    t1 = core.create_task("parse", T0, goal="g1")
    t2 = core.create_task("store", T0, goal="g1", deps=[t1.id])
    t3 = core.create_task("docs", T0, goal="g1", priority=5)
    assert [t.id for t in core.ready_tasks()] == [t3.id, t1.id]
    err = refused(core, lambda c: c.start_task(t2.id, "kit", T0), Conflict)
    assert t1.id in err.message
    core.cancel_task(t1.id, T0)  # a cancelled dependency is resolved (dropped)
    assert core.start_task(t2.id, "kit", T0).status == "doing"


def test_one_doing_task_per_agent() -> None:
    core = team_core()
    a, b = core.create_task("a", T0), core.create_task("b", T0)
    core.start_task(a.id, "kit", T0)
    refused(core, lambda c: c.start_task(b.id, "kit", T0), Conflict)
    refused(core, lambda c: c.start_task(a.id, "wren", T0), Conflict)


def test_request_changes_cannot_give_a_busy_agent_a_second_doing_task() -> None:
    """Regression: review -> doing used to ignore that the assignee had started other work."""
    core = team_core()
    t1 = reviewed(core, "first", "kit")
    t2 = core.create_task("second", T0)
    core.start_task(t2.id, "kit", T0)
    err = refused(core, lambda c: c.set_task_status(t1, "doing", T0), Conflict)
    assert "kit is working on" in err.message
    core.set_task_status(t2.id, "review", T0)
    assert core.set_task_status(t1, "doing", T0).status == "doing"


def test_only_an_answered_merge_of_the_task_completes_it() -> None:
    core = team_core()
    t1 = reviewed(core, "first", "kit")
    t2 = reviewed(core, "second", "wren")
    refused(core, lambda c: c.complete_task(t1, T0), Conflict)
    d1 = core.open_merge_decision(t1, T0, asked_by="marlow", worktree="kit-t1")
    d2 = core.open_merge_decision(t2, T0, asked_by="marlow", worktree="wren-t2")
    assert d1.options == list(MERGE_OPTIONS)
    refused(core, lambda c: c.complete_task(t1, T0, decision=d1.id), Conflict)  # still open
    core.answer_decision(d2.id, 0, T0)
    refused(core, lambda c: c.complete_task(t1, T0, decision=d2.id), Conflict)  # another task's merge
    core.answer_decision(d1.id, 1, T0)  # Request changes
    refused(core, lambda c: c.complete_task(t1, T0, decision=d1.id), Conflict)
    core.reopen_decision(d1.id, T0, reason="try again")
    core.answer_decision(d1.id, 0, T0)
    assert core.complete_task(t1, T0, decision=d1.id).status == "done"
    assert core.world.goals["g1"].progress == 50
    refused(core, lambda c: c.complete_task(t1, T0, decision=d1.id), Conflict)  # done is final


def test_answering_wakes_exactly_the_waiter_and_withdrawing_cancels() -> None:
    core = team_core()
    d = core.open_decision("question", "tabs or spaces?", ["tabs", "spaces"], T0, asked_by="kit")
    _, effects = core.take()
    assert [(e.kind, e.ref) for e in effects] == [("notify", d.id)]
    core.answer_decision(d.id, 1, T0, text="always spaces")
    _, effects = core.take()
    assert [(e.kind, e.ref) for e in effects] == [("wake", d.id)]
    assert core.world.decisions[d.id].answer.label == "spaces"
    refused(core, lambda c: c.answer_decision(d.id, 0, T0), Conflict)
    q = core.open_decision("question", "again?", ["yes"], T0, asked_by="wren")
    refused(core, lambda c: c.answer_decision(q.id, 1, T0), StateError)
    core.take()
    core.pause_agent("wren", T0)  # pausing withdraws its open questions
    _, effects = core.take()
    assert core.world.decisions[q.id].status == "cancelled"
    assert ("wake", q.id) in [(e.kind, e.ref) for e in effects]


def test_messages_to_all_are_unread_for_everyone_else() -> None:
    core = team_core()
    core.send_message("kit", "all", "stand-up", T0)
    core.send_message("user", "wren", "hi wren", T0)
    assert core.peek_unread("kit") == 0
    assert core.peek_unread("marlow") == 1 and core.peek_unread("rowan") == 1
    assert [m.text for m in core.take_unread("wren")] == ["stand-up", "hi wren"]
    assert core.peek_unread("wren") == 0
    refused(core, lambda c: c.send_message("user", "ghost", "hello?", T0), NotFound)
    refused(core, lambda c: c.send_message("user", "kit", "   ", T0), StateError)
    core.stop_agent("rowan", T0)
    refused(core, lambda c: c.send_message("rowan", "kit", "psst", T0), Conflict)


def test_stop_puts_doing_work_back_and_spawn_brings_the_agent_back() -> None:
    core = team_core()
    t = core.create_task("a", T0, goal="g1")
    core.start_task(t.id, "kit", T0)
    core.take()
    core.stop_agent("kit", T0)
    _, effects = core.take()
    task, kit = core.world.tasks[t.id], core.world.agents["kit"]
    assert task.status == "todo" and task.assignee is None
    assert not kit.active and kit.task is None
    assert {("abort", "kit"), ("handoff", t.id)} <= {(e.kind, e.ref) for e in effects}
    refused(core, lambda c: c.pause_agent("kit", T0), Conflict)
    refused(core, lambda c: c.start_task(t.id, "kit", T0), Conflict)
    core.spawn_agent("kit", T0, task=t.id)
    assert core.world.tasks[t.id].assignee == "kit" and core.world.agents["kit"].active


def test_stations_are_checked() -> None:
    core = team_core()
    assert core.set_activity("kit", "thinking", T0, station="meeting").station == "meeting"
    assert core.set_activity("kit", "testing", T0).station == "testbench"
    refused(core, lambda c: c.set_activity("kit", "testing", T0, station="lounge"))
    refused(core, lambda c: c.set_activity("kit", "dancing", T0))
    refused(core, lambda c: c.set_activity("ghost", "idle", T0), NotFound)


def test_goal_progress_and_status_follow_tasks() -> None:
    core = team_core()
    a = core.create_task("a", T0, goal="g1")
    b = core.create_task("b", T0, goal="g1")
    core.start_task(a.id, "kit", T0)
    assert core.world.goals["g1"].status == "active"
    core.set_task_status(a.id, "review", T0)
    core.complete_task(a.id, T0, no_changes=True)
    assert core.world.goals["g1"].progress == 50
    core.cancel_task(b.id, T0)
    assert core.world.goals["g1"].status == "done" and core.world.goals["g1"].progress == 100


@pytest.mark.parametrize("fn,error", [
    (lambda c: c.create_task("", T0), StateError),
    (lambda c: c.create_task("x", T0, deps=["t9"]), NotFound),
    (lambda c: c.create_task("x", T0, goal="g9"), NotFound),
    (lambda c: c.submit_goal("   ", T0), StateError),
    (lambda c: c.add_agent("Bad Name", T0), StateError),
    (lambda c: c.add_agent("boss", T0, role="lead"), Conflict),
    (lambda c: c.open_decision("vote", "?", ["a"], T0, asked_by="kit"), StateError),
    (lambda c: c.open_decision("question", "?", [], T0, asked_by="kit"), StateError),
    (lambda c: c.cancel_decision("d9", T0), NotFound),
    (lambda c: c.resume_agent("kit", T0), Conflict),
    (lambda c: c.set_goal_status("g1", "weird", T0), Conflict),
    (lambda c: c.take_unread("ghost"), NotFound),
])
def test_illegal_inputs_raise_and_change_nothing(fn, error) -> None:
    refused(team_core(), fn, error)
