"""Line mode: scripts, waits, auto-answers, the transcript and ``tui_main``'s exit codes."""

import asyncio
import io
import itertools
import threading
import time

import pytest

import protocol as p
from foreman.tui.client import Connection
from foreman.tui.main import tui_main
from foreman.tui.mirror import Mirror
from foreman.tui.script import LineRunner, ScriptFailed, read_script
from foreman.tui.transcript import Transcript

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
async def session(daemon):
    out = io.StringIO()
    ticks = itertools.count()
    transcript = Transcript([out], lambda: float(next(ticks)))
    conn = Connection(lambda: daemon.url, Mirror(), client_name="test", reconnect_interval=0.02)
    runner = LineRunner(conn, transcript, auto_answer=(), wait_timeout=2.0, cwd="/work")
    conn.listener = runner.on_message
    task = asyncio.create_task(conn.run())
    await conn.wait_ready(5)
    yield runner, out
    await conn.close()
    await task


def write(tmp_path, text: str):
    path = tmp_path / "demo.script"
    path.write_text(text)
    return path


def test_read_script_skips_comments_and_names_bad_lines(tmp_path):
    lines = read_script(write(tmp_path, "# a demo\n\nAdd tags\n/wait goal done\n"))
    assert lines == [("demo.script:3", "Add tags"), ("demo.script:4", "/wait goal done")]
    with pytest.raises(ScriptFailed) as info:
        read_script(write(tmp_path, "ok goal\n/wiat d3\n/answer 0\n"))
    assert str(info.value).splitlines() == [
        "demo.script:2: '/wiat d3': unknown command /wiat (did you mean /wait?); /help lists the commands",
        "demo.script:3: '/answer 0': options count from 1, not 0; usage: /answer [d3] [option] [text]",
    ]


async def test_script_sends_waits_answers_and_records(session, daemon):
    runner, out = session

    async def later():
        await asyncio.sleep(0.1)
        await daemon.open_decision(p.Decision(id="d2", kind="question", prompt="Emoji tags?", options=["Yes", "No"], asked_by="kit", task="t2"))
        await daemon.feed("kit asked", agent="kit")

    bg = asyncio.create_task(later())
    await runner.run_lines([
        ("s:1", "Add emoji tags"), ("s:2", "/wait d2"), ("s:3", "/answer d2 2 keep it simple"),
        ("s:4", "/answer"), ("s:5", "/tasks"), ("s:6", "/diff d1"), ("s:7", "/memory shared/plan"),
    ])
    await bg
    text = out.getvalue()
    assert "> Add emoji tags    (s:1)" in text and "ok: new goal g2: Add emoji tags" in text
    assert "DECISION d2 question from kit (t2): Emoji tags?" in text
    assert "1 Yes · 2 No" in text
    assert 'DECIDED d2 answered: 2 No (by user) "keep it simple"' in text
    assert "DECIDED d1 answered: 1 Merge (by user)" in text  # /answer took the oldest open one
    assert "feed [info] kit: kit asked" in text
    assert "t2 [doing] show tags (kit) after t1" in text
    assert "+print('tags')" in text and "# Plan" in text
    assert runner.goals == ["g2"]
    assert daemon.received[1] == p.DecisionAnswerIntent(id=daemon.received[1].id, decision="d2", option=1, text="keep it simple")


async def test_wait_timeout_names_the_line(session):
    runner, _ = session
    runner.wait_timeout = 0.2
    with pytest.raises(ScriptFailed, match=r"^demo.script:7: '/wait d9' did not happen within 0.2 s \(decisions so far: d1\)$"):
        await runner.run_lines([("demo.script:7", "/wait d9")])


async def test_refused_intent_and_bad_answer_fail_the_line(session, daemon):
    runner, out = session
    daemon.refuse["agent.pause"] = ("not_found", "no agent zed")
    with pytest.raises(ScriptFailed, match="s:2: '/pause @zed' was refused: not_found: no agent zed"):
        await runner.run_lines([("s:1", "/wait 0.01"), ("s:2", "/pause @zed")])
    with pytest.raises(ScriptFailed, match="s:3: '/answer d7': there is no decision d7"):
        await runner.run_lines([("s:3", "/answer d7")])
    # Not strict (a commands file): reported, and the next line still runs.
    await runner.run_lines([("c:1", "/answer d7"), ("c:2", "/status")], strict=False)
    assert "error: c:1: '/answer d7'" in out.getvalue() and "backend sim" in out.getvalue()


async def test_wait_goal_done_and_cancelled(session, daemon):
    runner, out = session
    await runner.run_lines([("s:1", "second goal")])

    async def finish(status):
        await asyncio.sleep(0.05)
        await daemon.push(p.GoalUpsert(seq=0, goal=daemon.mirror.goals["g2"].model_copy(update={"status": status, "progress": 100})))

    bg = asyncio.create_task(finish("done"))
    await runner.run_lines([("s:2", "/wait goal done")])
    await bg
    assert "goal g2 done 100%: second goal" in out.getvalue()
    await daemon.push(p.GoalUpsert(seq=0, goal=daemon.mirror.goals["g1"].model_copy(update={"status": "cancelled"})))
    with pytest.raises(ScriptFailed, match="goal g1 was cancelled"):
        await runner.run_lines([("s:3", "/wait goal g1 done")])


async def test_auto_answer_answers_open_and_new_decisions_of_those_kinds(daemon):
    out = io.StringIO()
    transcript = Transcript([out], time.monotonic)
    conn = Connection(lambda: daemon.url, Mirror(), client_name="test")
    runner = LineRunner(conn, transcript, auto_answer={"merge", "permission"}, wait_timeout=2.0)
    conn.listener = runner.on_message
    task = asyncio.create_task(conn.run())
    try:
        await conn.wait_ready(5)
        await conn.wait_for(lambda m: m.decisions["d1"].status == "answered", 5)
        await daemon.open_decision(p.Decision(id="d2", kind="question", prompt="Q?", options=["A", "B"], asked_by="kit"))
        await daemon.open_decision(p.Decision(id="d3", kind="permission", prompt="npm install?", options=["Allow", "Deny"], asked_by="kit"))
        await conn.wait_for(lambda m: "d3" in m.decisions and m.decisions["d3"].status == "answered", 5)
        assert conn.mirror.decisions["d2"].status == "open"
        text = out.getvalue()
        assert "auto-answer d1 (merge): 1 Merge" in text and "auto-answer d3 (permission): 1 Allow" in text
        assert "DECIDED d3 answered: 1 Allow" in text
        assert [i.decision for i in daemon.received] == ["d1", "d3"]
    finally:
        await conn.close()
        await task


async def test_commands_file_is_tailed(tmp_path, session, daemon):
    runner, out = session
    path = tmp_path / "cmds"
    tail = asyncio.create_task(runner.tail(path, poll_interval=0.02))
    await asyncio.sleep(0.05)
    path.write_text("@kit hello\n/bogus\n")
    async with asyncio.timeout(5):
        while not daemon.received:
            await asyncio.sleep(0.02)
    with path.open("a") as f:
        f.write("/quit\n")
    from foreman.tui.script import Quit
    with pytest.raises(Quit):
        await asyncio.wait_for(tail, 5)
    assert daemon.received[0].to == "kit"
    assert "error: cmds:2: '/bogus'" in out.getvalue()


def run_main(argv, timeout=20):
    """Run tui_main in a thread (it runs its own event loop)."""
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("rc", tui_main(argv)))
    thread.start()
    return thread, result


async def test_tui_main_replays_a_script_to_the_end(tmp_path, daemon, capsys):
    script = write(tmp_path, "# demo\nAdd tags\n/wait goal done\n")
    transcript = tmp_path / "out.txt"
    thread, result = run_main(["--port", str(daemon.port), "--script", str(script), "--transcript", str(transcript),
                               "--auto-answer", "merge", "--timeout", "5"])
    while "g2" not in daemon.mirror.goals:
        await asyncio.sleep(0.02)
    await daemon.push(p.GoalUpsert(seq=0, goal=daemon.mirror.goals["g2"].model_copy(update={"status": "done", "progress": 100})))
    await asyncio.to_thread(thread.join, 10)
    assert result["rc"] == 0
    text = transcript.read_text()
    assert "auto-answer d1 (merge): 1 Merge" in text and "DECIDED d1 answered: 1 Merge" in text
    assert "goal g2 done 100%: Add tags" in text
    assert text.splitlines()[-1].endswith("end: 1 intents sent, 1 decisions opened, 1 answered")


async def test_tui_main_exit_codes(tmp_path, daemon):
    bad = write(tmp_path, "/wait nothing\n")
    assert await asyncio.to_thread(tui_main, ["--port", str(daemon.port), "--script", str(bad)]) == 1
    waits = write(tmp_path, "/wait d5\n")
    rc = await asyncio.to_thread(tui_main, ["--port", str(daemon.port), "--script", str(waits), "--timeout", "0.3"])
    assert rc == 1
    assert await asyncio.to_thread(tui_main, ["--port", "1", "--script", str(waits), "--timeout", "0.3"]) == 3
    assert await asyncio.to_thread(tui_main, ["--auto-answer", "everything", "--line"]) == 2
    assert await asyncio.to_thread(tui_main, ["--bogus"]) == 2
