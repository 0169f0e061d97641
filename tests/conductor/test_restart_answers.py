"""The user's answer to a question an interrupted turn asked reaches the agent's next session
whatever happened in between: answered while the restarted daemon was still starting (its server
answers before the reconciliation resumes the session), and when the session could not be
resumed and a fresh one starts. The first daemon is a real process, SIGKILLed while the question
is open; real git, a real WebSocket client answering."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.turns import TurnRequest, TurnResult
from foreman.config import resolve
from foreman.tui.discovery import Locator

from ..rig import Client, conductor_daemon, make_repo, wait_for
from .question_child import QUESTION, question_flags
from .scripted import ScriptedRunner, done

ROOT = Path(__file__).resolve().parents[2]
LOST = "could not resume session kit-session: No conversation found with session ID: kit-session"

pytestmark = pytest.mark.timeout(120)


async def crash_while_asking(tmp_path: Path) -> Any:
    """Run the child daemon until Kit's question is open, SIGKILL it; return the settings."""
    repo = make_repo(tmp_path)
    settings = resolve(question_flags(tmp_path / "home", repo), env={})
    child = subprocess.Popen([sys.executable, "-m", "tests.conductor.question_child", str(settings.home), str(repo)],
                             cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    locator = Locator(settings.home, settings.profile)
    try:
        record = await wait_for(lambda: locator.read_record() or child.poll() is not None, 60, "the child's daemon")
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        client = await Client.connect(record["port"], record.get("token"))
        try:
            await wait_for(lambda: client.open_decisions("question", askedBy="kit"), 60, "kit's question")
        finally:
            await client.close()
    finally:
        child.send_signal(signal.SIGKILL)  # a crash: no clean-up of any kind
        child.wait(10)
    return settings


class Runner(ScriptedRunner):
    """Kit's turns after the restart: the first resumed one ends as ``first`` says, the next one
    (a fresh session) ends well."""

    def __init__(self, first: TurnResult) -> None:
        super().__init__(lambda req: self.turn)
        self.first = first

    async def turn(self, req: TurnRequest, tools: Any) -> TurnResult:
        return self.first if len(self.requests) == 1 else done("fresh")


async def restart(settings: Any, runner: Runner, *, answer_early: bool = False) -> Any:
    """Start the daemon again on the crashed one's home. With ``answer_early`` a real client
    answers Kit's question while the daemon registers its repositories: it serves from then on,
    and the reconciliation that resumes the sessions comes after."""
    daemon = conductor_daemon(settings, runner, name="scripted")
    if answer_early:
        add_repo = daemon.add_repo

        async def answering_first(path: str) -> Any:
            client = await Client.connect(daemon.port, Locator(settings.home, settings.profile).token())
            try:
                await client.answer(client.open_decisions("question", askedBy="kit")[0], 1)  # Farewell
            finally:
                await client.close()
            return await add_repo(path)

        daemon.add_repo = answering_first
    await daemon.start()
    return daemon


async def test_an_answer_given_while_the_daemon_starts_reaches_the_resumed_session(tmp_path: Path) -> None:
    settings = await crash_while_asking(tmp_path)
    runner = Runner(done("kit-session"))
    daemon = await restart(settings, runner, answer_early=True)
    try:
        question = next(d for d in daemon.core.world.decisions.values() if d.kind == "question")
        assert question.status == "answered" and question.answer is not None and question.answer.label == "Farewell"
        await wait_for(lambda: runner.requests, 30, "kit's resumed turn")
        resumed = runner.requests[0]
        assert resumed.agent == "kit" and resumed.job == "work" and resumed.session_id == "kit-session"
        assert f'"{QUESTION}"' in resumed.prompt and "The user answered: Farewell" in resumed.prompt, resumed.prompt
    finally:
        await daemon.stop()


async def test_a_fresh_session_after_a_lost_one_gets_its_task_and_the_answer(tmp_path: Path) -> None:
    settings = await crash_while_asking(tmp_path)
    runner = Runner(TurnResult(ok=False, session_id="kit-session", error=LOST))
    daemon = await restart(settings, runner)
    try:
        world = daemon.core.world
        question = next(d for d in world.decisions.values() if d.kind == "question" and d.asked_by == "kit")
        assert question.status == "open"  # the resumed turn waits for it
        daemon.act(lambda c, now: c.answer_decision(question.id, 1, now))
        lost = await wait_for(lambda: next((d for d in world.decisions.values() if d.status == "open"
                                             and d.asked_by == "foreman"), None), 30, "the lost session's question")
        assert "could not be resumed" in lost.prompt
        daemon.act(lambda c, now: c.answer_decision(lost.id, 0, now))  # Start a fresh session
        await wait_for(lambda: len(runner.requests) >= 2, 30, "the fresh session")
        fresh = runner.requests[1]
        assert fresh.session_id is None and fresh.job == "work"
        assert "Your task t1: Add farewell" in fresh.prompt, fresh.prompt  # its job again
        assert f'"{QUESTION}"' in fresh.prompt and "The user answered: Farewell" in fresh.prompt, fresh.prompt
    finally:
        await daemon.stop()
