"""The client-side mirror: snapshot, upserts, appends, seq rules, and the text views."""

import protocol as p
from foreman.tui import views
from foreman.tui.mirror import LOG_LIMIT, Mirror, Outcome
from tests.tui.fake_daemon import world


def synced() -> Mirror:
    m = Mirror()
    assert m.apply(world().model_copy(update={"seq": 10})) is Outcome.APPLIED
    return m


def test_before_a_snapshot_state_messages_are_a_gap():
    m = Mirror()
    assert not m.synced
    assert m.apply(p.FeedAppend(seq=1, item=p.FeedItem(id=1, text="x"))) is Outcome.GAP
    assert list(m.feed) == []


def test_snapshot_loads_everything():
    m = synced()
    assert m.seq == 10 and m.synced
    assert list(m.agents) == ["marlow", "kit", "wren"]
    assert m.tasks["t2"].deps == ["t1"]
    assert m.status.backend == "sim"


def test_upsert_replaces_by_id_and_advances_seq():
    m = synced()
    kit = m.agents["kit"].model_copy(update={"state": "testing", "station": "testbench"})
    assert m.apply(p.AgentUpsert(seq=11, agent=kit)) is Outcome.APPLIED
    assert m.agents["kit"].state == "testing" and m.seq == 11
    assert list(m.agents) == ["marlow", "kit", "wren"]  # order kept
    task = p.Task(id="t9", title="new")
    assert m.apply(p.TaskUpsert(seq=12, task=task)) is Outcome.APPLIED
    assert list(m.tasks)[-1] == "t9"


def test_stale_and_gap_are_not_applied():
    m = synced()
    kit = m.agents["kit"].model_copy(update={"state": "error"})
    assert m.apply(p.AgentUpsert(seq=10, agent=kit)) is Outcome.STALE
    assert m.apply(p.AgentUpsert(seq=12, agent=kit)) is Outcome.GAP
    assert m.agents["kit"].state == "editing" and m.seq == 10


def test_replies_leave_the_mirror_alone():
    m = synced()
    assert m.apply(p.Ack(id="x", seq=99)) is Outcome.REPLY
    assert m.apply(p.Error(code="conflict", message="no")) is Outcome.REPLY
    assert m.seq == 10


def test_a_later_snapshot_replaces_even_with_a_lower_seq():
    m = synced()
    snap = p.Snapshot(seq=3, status=m.status)
    assert m.apply(snap) is Outcome.APPLIED
    assert m.seq == 3 and m.agents == {} and m.tasks == {}


def test_appends_and_logs_are_bounded():
    m = synced()
    seq = m.seq
    for i in range(LOG_LIMIT + 5):
        seq += 1
        assert m.apply(p.LogAppend(seq=seq, line=p.LogLine(agent="kit", text=f"l{i}"))) is Outcome.APPLIED
    assert len(m.logs["kit"]) == LOG_LIMIT
    assert m.logs["kit"][-1].text == f"l{LOG_LIMIT + 4}"
    m.apply(p.MessageAppend(seq=seq + 1, message=p.Message(id=5, sender="user", to="kit", text="hey")))
    assert m.messages[-1].text == "hey"


def test_status_message_replaces_the_banner():
    m = synced()
    m.apply(p.StatusMessage(seq=11, backend="claude", auth="api-key", version="2", user_name="bo"))
    assert m.status == p.Status(backend="claude", auth="api-key", version="2", user_name="bo")


def test_open_decisions_oldest_first_and_latest_goal():
    m = synced()
    d = m.decisions["d1"]
    newer = d.model_copy(update={"id": "d2", "created_at": d.created_at + 5})
    older = d.model_copy(update={"id": "d10", "created_at": d.created_at - 5})
    m.apply(p.DecisionUpsert(seq=11, decision=newer))
    m.apply(p.DecisionUpsert(seq=12, decision=older))
    assert [x.id for x in m.open_decisions()] == ["d10", "d1", "d2"]
    m.apply(p.DecisionUpsert(seq=13, decision=older.model_copy(update={"status": "answered"})))
    assert m.oldest_open_decision().id == "d1"
    g2 = p.Goal(id="g2", text="later", created_at=m.goals["g1"].created_at + 1)
    m.apply(p.GoalUpsert(seq=14, goal=g2))
    assert m.latest_goal().id == "g2"
    assert m.worktrees() == ["kit-t1", "kit-t2"]


def test_tasks_view_groups_by_status_with_deps_and_assignee():
    m = synced()
    lines = views.tasks_view(m)
    assert lines == [
        "doing (1):", "  t2 [doing] show tags (kit) after t1",
        "todo (1):", "  t3 [todo] docs after t2",
        "done (1):", "  t1 [done] parse tags (kit)",
    ]


def test_agents_decisions_status_feed_views():
    m = synced()
    agents = views.agents_view(m)
    assert agents[1].split()[:4] == ["kit", "worker", "editing@desk", "t2"] and "editing notes.py" in agents[1]
    stopped = m.agents["wren"].model_copy(update={"active": False})
    m.apply(p.AgentUpsert(seq=11, agent=stopped))
    assert "(off shift)" in views.agents_view(m)[2]
    dec = views.decisions_view(m)
    assert dec[0] == "d1 merge from marlow (t1, kit-t1): Merge kit-t1?"
    assert dec[-1].strip() == "1 Merge · 2 Request changes · 3 Reject"
    status = views.status_view(m)
    assert "backend sim" in status[0] and "goal g1 [active 50%] add tags" in status
    assert "tasks: 1 doing, 1 todo, 1 done" in status and "open decisions: d1" in status
    assert views.feed_view(m)[0].endswith("[goal] goal g1 submitted")
    assert views.status_view(Mirror()) == ["not connected yet (no snapshot)"]


def test_answer_text_and_diff_lines():
    d = world().decisions[0]
    answered = d.model_copy(update={"status": "answered", "answer": p.DecisionAnswer(option=1, label="Request changes", text="more tests")})
    assert views.answer_text(answered) == 'd1 answered: 2 Request changes (by user) "more tests"'
    assert views.answer_text(d.model_copy(update={"status": "cancelled"})) == "d1 cancelled"
    from tests.tui.fake_daemon import diff_of
    lines = views.diff_lines("kit-t2", diff_of("kit-t2"))
    assert lines[0].startswith("# kit-t2: pocket aaaaaaaa..bbbbbbbb — 1 files, +1 -1")
    assert lines[1:] == ["# notes.py (modified, +1 -1)", "@@ -1,2 +1,3 @@ def main():", " def main():", "-    pass", "+print('tags')"]


def test_the_idle_banner_counts_workers_on_shift_and_names_the_lead_apart():
    from foreman.tui.views import idle_banner

    team = [p.Agent(name="marlow", role="lead", state="thinking"), p.Agent(name="kit", state="editing"),
            p.Agent(name="wren", state="idle"), p.Agent(name="rowan", state="testing", paused=True),
            p.Agent(name="tove", state="editing", active=False)]
    assert idle_banner(team) == "nothing needs you · 1 of 3 workers working · the lead is busy"
    assert idle_banner([p.Agent(name="marlow", role="lead"), p.Agent(name="kit")]) == \
        "nothing needs you · 0 of 1 worker working"
