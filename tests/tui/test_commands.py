"""The command line: every command, its mistyped forms, and resolution against the mirror."""

import pytest

import protocol as p
from foreman.tui import commands as c
from foreman.tui.completion import complete
from foreman.tui.mirror import Mirror
from tests.tui.fake_daemon import world


@pytest.fixture
def mirror() -> Mirror:
    m = Mirror()
    m.apply(world())
    return m


def sent(line: str, mirror: Mirror, cwd: str | None = None) -> p.Intent:
    action = c.interpret(line, mirror, cwd)
    assert isinstance(action, c.Send), action
    return action.intent


@pytest.mark.parametrize(
    ("line", "intent"),
    [
        ("Add OAuth to life-tracker", p.GoalSubmit(text="Add OAuth to life-tracker")),
        ("  spaced goal  ", p.GoalSubmit(text="spaced goal")),
        ("@kit please cover emoji tags", p.MessageSend(to="kit", text="please cover emoji tags")),
        ("@Kit  hi", p.MessageSend(to="kit", text="hi")),
        ("@all stand-up", p.MessageSend(to="all", text="stand-up")),
        ("/diff kit-t2", p.DiffRequest(worktree="kit-t2")),
        ("/diff d3", p.DiffRequest(decision="d3")),
        ("/diff", p.DiffRequest(decision="d1")),
        ("/diff @kit", p.DiffRequest(worktree="kit-t2")),
        ("/pause @kit", p.AgentPause(agent="kit")),
        ("/resume kit", p.AgentResume(agent="kit")),
        ("/stop @wren", p.AgentStop(agent="wren")),
        ("/spawn @tove", p.AgentSpawn(agent="tove")),
        ("/spawn @tove t3", p.AgentSpawn(agent="tove", task="t3")),
        ("/task t3 cancel", p.TaskCancel(task="t3")),
        ("/task t3 retry", p.TaskRetry(task="t3")),
        ("/task t3 prioritize", p.TaskPrioritize(task="t3")),
        ("/task T3 prioritize 5", p.TaskPrioritize(task="t3", priority=5)),
        ("/task t3 reassign @wren", p.TaskReassign(task="t3", agent="wren")),
        ("/memory", p.MemoryRead()),
        ("/memory shared/plan", p.MemoryRead(note="shared/plan")),
        ("/repo add /abs/repo", p.RepoAdd(path="/abs/repo")),
        ('/repo add "/with space/repo"', p.RepoAdd(path="/with space/repo")),
        ("/ANSWER", p.DecisionAnswerIntent(decision="d1", option=0)),
        ("/answer d1", p.DecisionAnswerIntent(decision="d1", option=0)),
        ("/answer d1 2 more tests please", p.DecisionAnswerIntent(decision="d1", option=1, text="more tests please")),
        ("/answer 3", p.DecisionAnswerIntent(decision="d1", option=2)),
        ("/answer d1 reject", p.DecisionAnswerIntent(decision="d1", option=2)),
        ("/answer request changes", p.DecisionAnswerIntent(decision="d1", option=1)),
    ],
)
def test_lines_become_intents(line, intent, mirror):
    assert sent(line, mirror) == intent


def test_relative_repo_path_is_made_absolute(mirror):
    assert sent("/repo add ../x", mirror, cwd="/home/u/work") == p.RepoAdd(path="/home/u/x")
    assert sent("/repo add rel", mirror) == p.RepoAdd(path="rel")


@pytest.mark.parametrize(
    ("line", "view"),
    [("/status", "status"), ("/tasks", "tasks"), ("/agents", "agents"), ("/decisions", "decisions"), ("/feed", "feed")],
)
def test_views(line, view, mirror):
    assert c.interpret(line, mirror) == c.Show(view)


@pytest.mark.parametrize(
    ("line", "wait"),
    [
        ("/wait 2", c.Wait("seconds", seconds=2.0)),
        ("/wait 0.5", c.Wait("seconds", seconds=0.5)),
        ("/wait d3", c.Wait("decision", target="d3")),
        ("/wait decision", c.Wait("decision")),
        ("/wait goal done", c.Wait("goal")),
        ("/wait goal g2 done", c.Wait("goal", target="g2")),
        ("/wait t3 review", c.Wait("task", target="t3", status="review")),
    ],
)
def test_waits(line, wait, mirror):
    assert c.interpret(line, mirror) == wait


def test_local_actions(mirror):
    assert c.interpret("", mirror) == c.Empty()
    assert c.interpret("/help", mirror) == c.Help()
    assert c.interpret("/quit", mirror) == c.Quit()
    assert any(line.startswith("/answer") for line in c.help_lines())


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("/frobnicate", "unknown command /frobnicate"),
        ("/ans", "did you mean /answer"),
        ("/", "unknown command"),
        ("@kit", "nothing to say to kit"),
        ("@ hello", "not an agent name"),
        ("@K!t hi", "not an agent name"),
        ("/answer 0", "options count from 1"),
        ("/answer d1 4", "d1 has 3 options: 1 Merge, 2 Request changes, 3 Reject"),
        ("/answer d1 more tests please", "give the option's number first"),
        ("/answer d9", "there is no decision d9; open: d1"),
        ("/diff a b", "usage: /diff"),
        ("/diff wren", "wren has no worktree now"),
        ("/repo add", "usage: /repo add"),
        ("/repo remove x", "usage: /repo add"),
        ("/pause", "usage: /pause @kit"),
        ("/pause @kit @wren", "usage: /pause @kit"),
        ("/spawn", "usage: /spawn"),
        ("/task t3", "usage: /task"),
        ("/task t3 explode", "usage: /task"),
        ("/task t3 prioritize high", "priority must be a whole number"),
        ("/task t3 reassign", "usage: /task"),
        ("/task t3 cancel now", "usage: /task"),
        ("/tasks all", "/tasks takes no arguments"),
        ("/quit now", "/quit takes no arguments"),
        ("/memory a b", "usage: /memory"),
        ("/wait", "usage: /wait"),
        ("/wait forever", "usage: /wait"),
        ("/wait goal x done", "is not a goal id"),
        ("/wait t3 finished", "usage: /wait"),
    ],
)
def test_mistyped_lines_explain_in_one_line(line, says, mirror):
    action = c.interpret(line, mirror)
    assert isinstance(action, c.Invalid), action
    assert says in action.message
    assert "\n" not in action.message


def test_answer_needs_an_open_decision(mirror):
    d1 = mirror.decisions["d1"]
    mirror.apply(p.DecisionUpsert(seq=1, decision=d1.model_copy(update={"status": "answered"})))
    assert c.interpret("/answer", mirror) == c.Invalid("no decision is open")
    assert "d1 is already answered" in c.interpret("/answer d1", mirror).message
    assert isinstance(c.interpret("/diff", mirror), c.Invalid)


@pytest.mark.parametrize("typed", ["dx", "DX", "d1x", "d-3", "dx 2", "dx 2 ok"])
def test_answer_to_a_word_meant_as_an_id_names_it_and_the_open_decisions(typed, mirror):
    """Found by a newcomer: ``/answer dx`` (no open decision has that id) said ``no decision is
    open``, or took ``dx`` for an option label of the oldest decision; it must say that ``dx`` is
    not an open decision and list the open ones (or say none is open)."""
    d1 = mirror.decisions["d1"]
    mirror.apply(p.DecisionUpsert(seq=1, decision=d1.model_copy(update={"id": "d2", "created_at": d1.created_at + 1})))
    word = typed.split()[0]
    assert c.interpret(f"/answer {typed}", mirror) == c.Invalid(f"{word} is not an open decision; open: d1, d2")
    for seq, d in ((2, "d1"), (3, "d2")):
        decision = mirror.decisions[d].model_copy(update={"status": "answered"})
        mirror.apply(p.DecisionUpsert(seq=seq, decision=decision))
    assert not mirror.open_decisions()
    assert c.interpret(f"/answer {typed}", mirror) == c.Invalid(f"{word} is not an open decision; none is open")


def test_answer_by_label_still_answers_and_an_unknown_label_still_lists_the_options(mirror):
    """Words that do not look like a decision id stay option labels (``/answer reject``)."""
    assert sent("/answer reject", mirror) == p.DecisionAnswerIntent(decision="d1", option=2)
    assert "give the option's number first" in c.interpret("/answer defer", mirror).message


@pytest.mark.parametrize("typed", ["/stop @marlow", "/stop Marlow"])
def test_stopping_the_lead_warns_that_goals_wait_and_says_how_to_start_it_again(typed, mirror):
    """Found by a newcomer: ``/stop @marlow`` took the lead off shift without a word that new
    goals then wait; the feedback line (``ok: <summary>``) must say so and name ``/spawn @marlow``."""
    action = c.interpret(typed, mirror)
    assert isinstance(action, c.Send) and action.intent == p.AgentStop(agent="marlow")
    assert action.summary.startswith("stop marlow")
    assert "new goals will not be planned (nor reviews run) until" in action.summary
    assert "/spawn @marlow" in action.summary
    assert "\n" not in action.summary


@pytest.mark.parametrize("typed", ["/pause @marlow", "/pause Marlow"])
def test_pausing_the_lead_warns_that_goals_and_reviews_wait_and_says_how_to_resume_it(typed, mirror):
    action = c.interpret(typed, mirror)
    assert isinstance(action, c.Send) and action.intent == p.AgentPause(agent="marlow")
    assert action.summary.startswith("pause marlow")
    assert "new goals will not be planned (nor reviews run)" in action.summary
    assert "/resume @marlow" in action.summary and "\n" not in action.summary


def test_pausing_a_worker_has_no_warning(mirror):
    assert c.interpret("/pause @wren", mirror).summary == "pause wren"


def test_stopping_a_worker_has_no_warning(mirror):
    assert c.interpret("/stop @wren", mirror).summary == "stop wren"
    assert c.interpret("/stop @nobody", mirror).summary == "stop nobody"  # the daemon refuses it


def test_answer_summary_counts_from_one(mirror):
    action = c.interpret("/answer d1 2 ok", mirror)
    assert action.summary == 'answer d1: 2 Request changes "ok"'


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("/an", "/answer"),
        ("/answer ", "/answer d1"),
        ("@k", "@kit"),
        ("@W", "@Wren"),
        ("@a", "@all"),
        ("/pause ", "/pause @marlow"),
        ("/task t", "/task t2"),
        ("/task t2 re", "/task t2 retry"),
        ("/spawn @wren t", "/spawn @wren t2"),
        ("/diff ", "/diff d1"),
        ("/diff k", "/diff kit-t1"),
        ("/wait g", "/wait goal"),
        ("/repo a", "/repo add"),
        ("hello", None),
        ("hello @k", "hello @kit"),
        ("/tasks ", None),
        ("/answer d1", None),
        ("", None),
    ],
)
def test_completion(typed, suggested, mirror):
    assert complete(typed, mirror) == suggested
