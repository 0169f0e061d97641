"""Line mode: replay a script, tail a commands file, or read stdin; no terminal needed.

``foreman tui --script FILE --transcript out.txt`` runs each line of FILE as a command (blank
lines and ``#`` comments are skipped), waits for every intent's reply, and fails with a message
naming the line (``demo.script:7: ...``) when a line is mistyped, an intent is refused, or a
``/wait`` does not happen within the timeout. ``--commands FILE`` then (or instead) runs lines
appended to FILE as they come; there a bad line is reported and skipped. ``--auto-answer
merge,permission`` answers decisions of those kinds with their first option.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import get_args

import protocol as p

from . import commands as c
from . import views
from .autoanswer import AutoAnswerer
from .client import Connection, ConnectionLost, RequestError
from .mirror import Mirror, Outcome
from .transcript import Transcript

logger = logging.getLogger(__name__)

DECISION_KINDS = frozenset(get_args(p.DecisionKind))
"""The decision kinds ``--auto-answer`` may name: the protocol's ``DecisionKind``."""


class ScriptFailed(Exception):
    """A script line failed; the message names the line and says why."""


class Quit(Exception):
    """A ``/quit`` line ended the session."""


def read_script(path: Path) -> list[tuple[str, str]]:
    """Read a script into ``(where, line)`` pairs, skipping blanks and ``#`` comments.

    Every line is parsed first, so a mistyped line fails before anything is sent.

    Raises:
        ScriptFailed: a line does not parse (the message names file and line).
        OSError: the file cannot be read.
    """
    lines: list[tuple[str, str]] = []
    problems: list[str] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        where = f"{path.name}:{number}"
        parsed = c.parse(text)
        if isinstance(parsed, c.Invalid):
            problems.append(f"{where}: {text!r}: {parsed.message}")
        lines.append((where, text))
    if problems:
        raise ScriptFailed("\n".join(problems))
    return lines


class LineRunner:
    """Runs command lines against a connection and writes the transcript.

    Args:
        conn: a running :class:`~foreman.tui.client.Connection` (its listener should call
            :meth:`on_message`).
        transcript: where to account for the session.
        auto_answer: decision kinds answered with their first option as soon as they open.
        wait_timeout: seconds a ``/wait`` or a reply may take before the line fails.
        cwd: the folder relative ``/repo add`` paths are relative to.
    """

    def __init__(
        self,
        conn: Connection,
        transcript: Transcript,
        *,
        auto_answer: Iterable[str] = (),
        wait_timeout: float = 120.0,
        cwd: str | None = None,
    ) -> None:
        self.conn = conn
        self.mirror: Mirror = conn.mirror
        self.transcript = transcript
        self.auto = AutoAnswerer(conn, auto_answer, lambda text, failed: transcript.write(text, 2 if failed else 0),
                                 timeout=wait_timeout)
        self.wait_timeout = wait_timeout
        self.cwd = cwd
        self.goals: list[str] = []
        """Goal ids this session submitted (``/wait goal done`` waits for them)."""
        self.sent = 0
        self.finished_at_connect: frozenset[str] | None = None
        """The goals already done or cancelled in the first snapshot (``--line`` waits for another)."""

    def on_message(self, msg: p.ServerMessage, outcome: Outcome) -> None:
        """Connection listener: write the transcript and start auto-answers."""
        if self.finished_at_connect is None and outcome is Outcome.APPLIED and msg.type == "snapshot":
            self.finished_at_connect = frozenset(g.id for g in self.mirror.goals.values() if g.status in ("done", "cancelled"))
        self.transcript.on_message(msg, outcome, self.mirror)
        self.auto.on_message(msg, outcome)

    async def run_lines(self, lines: list[tuple[str, str]], *, strict: bool = True) -> None:
        """Run lines in order.

        Args:
            lines: ``(where, text)`` pairs (see :func:`read_script`).
            strict: True (scripts): the first failing line raises. False: report and go on.

        Raises:
            ScriptFailed: (strict) a line failed; the message starts with its ``where``.
            Quit: a ``/quit`` line.
        """
        for where, text in lines:
            try:
                await self.execute(text, where)
            except ScriptFailed as exc:
                if strict:
                    raise
                self.transcript.write(f"error: {exc}", 2)

    async def execute(self, text: str, where: str) -> None:
        """Run one command line.

        Raises:
            ScriptFailed: the line is mistyped, refused, or its ``/wait`` timed out.
            Quit: the line is ``/quit``.
        """
        self.transcript.write(f"> {text}" + (f"    ({where})" if where else ""))
        action = c.interpret(text, self.mirror, self.cwd)
        match action:
            case c.Empty():
                return
            case c.Invalid(message=message):
                raise ScriptFailed(f"{where}: {text!r}: {message}")
            case c.Quit():
                raise Quit()
            case c.Help():
                self.transcript.lines(c.help_lines())
            case c.Show(view=view):
                self.transcript.lines(_VIEWS[view](self.mirror))
            case c.Wait():
                await self._wait(action, text, where)
            case c.Send():
                await self._send(action, text, where)

    async def _send(self, action: c.Send, text: str, where: str) -> None:
        try:
            reply = await self.conn.request(action.intent, self.wait_timeout)
        except RequestError as exc:
            raise ScriptFailed(f"{where}: {text!r} was refused: {exc.code}: {exc.message}") from None
        except ConnectionLost as exc:
            raise ScriptFailed(f"{where}: {text!r}: {exc}") from None
        except TimeoutError:
            raise ScriptFailed(f"{where}: {text!r}: no reply within {self.wait_timeout:g} s ({self.conn.last_error or 'connected'})") from None
        self.sent += 1
        if isinstance(reply, p.DiffResult):
            self.transcript.lines(views.diff_lines(reply.target, reply.diff, list(d.risks) if (d := self.mirror.decisions.get(reply.target)) else None))
        elif isinstance(reply, p.MemoryResult):
            assert isinstance(action.intent, p.MemoryRead)
            self.transcript.lines(views.memory_lines(reply, action.intent.note))
        else:
            self.transcript.write(c.acknowledged(action, reply.result), 2)
            if isinstance(action.intent, p.GoalSubmit) and reply.result:
                self.goals.append(reply.result)
            try:
                await self.conn.wait_seq(reply.seq, self.wait_timeout)
            except TimeoutError:
                raise ScriptFailed(f"{where}: {text!r}: acknowledged at seq {reply.seq} but the state never arrived") from None

    async def _wait(self, wait: c.Wait, text: str, where: str) -> None:
        if wait.what == "seconds":
            await asyncio.sleep(wait.seconds)
            return
        predicate, hint = self._wait_predicate(wait)
        try:
            await self.conn.wait_for(predicate, self.wait_timeout)
        except TimeoutError:
            raise ScriptFailed(
                f"{where}: {text!r} did not happen within {self.wait_timeout:g} s ({hint(self.mirror)})"
            ) from None
        except GoalCancelled as exc:
            raise ScriptFailed(f"{where}: {text!r}: goal {exc} was cancelled") from None
        self.transcript.write("ok", 2)

    def _wait_predicate(self, wait: c.Wait):
        if wait.what == "decision" and wait.target:
            target = wait.target
            return (lambda m: target in m.decisions), lambda m: f"decisions so far: {', '.join(m.decisions) or 'none'}"
        if wait.what == "decision":
            return (lambda m: bool(m.open_decisions())), lambda m: "no decision opened"
        if wait.what == "task":
            task, status = wait.target, wait.status
            return (
                lambda m: task in m.tasks and m.tasks[task].status == status,
                lambda m: f"{task} is {m.tasks[task].status}" if task in m.tasks else f"there is no task {task}",
            )
        return self.goal_done(wait.target)

    def goal_done(self, target: str | None = None, *, skip: Collection[str] = ()):
        """The test ``/wait goal done`` waits for, and a hint saying how far the goals are.

        Args:
            target: the goal to wait for; None: the goals this session submitted (:attr:`goals`,
                read at each check), else the latest goal.
            skip: goals that do not count as the latest one (``--line`` skips those already
                finished when it connected, and waits for the next one).

        Returns:
            ``(done, hint)``: ``done(mirror)`` is True once every watched goal is done and raises
            :class:`GoalCancelled` when one was cancelled; ``hint(mirror)`` describes them.
        """
        def goals(m: Mirror) -> tuple[list[p.Goal], int]:
            fixed = [target] if target else list(self.goals)
            if fixed:
                return [m.goals[g] for g in fixed if g in m.goals], len(fixed)
            latest = m.latest_goal()
            return ([latest] if latest is not None and latest.id not in skip else []), 1

        def done(m: Mirror) -> bool:
            found, wanted = goals(m)
            for g in found:
                if g.status == "cancelled":
                    raise GoalCancelled(g.id)
            return len(found) >= wanted and all(g.status == "done" for g in found)

        def hint(m: Mirror) -> str:
            return ", ".join(f"{g.id} {g.status} {g.progress}%" for g in goals(m)[0]) or "no goal yet"

        return done, hint

    async def wait_goal_done(self, *, skip: Collection[str] = ()) -> None:
        """Wait (with no time limit) until the goal this session watches is done: the goals it
        submitted, else the latest goal not in ``skip`` (see :meth:`goal_done`).

        Raises:
            ScriptFailed: the goal was cancelled.
        """
        done, _ = self.goal_done(skip=skip)
        try:
            await self.conn.wait_for(done, None)
        except GoalCancelled as exc:
            raise ScriptFailed(f"goal {exc} was cancelled") from None

    async def tail(self, path: Path, poll_interval: float = 0.2) -> None:
        """Run lines appended to ``path`` as they come, until a ``/quit`` line.

        The file may not exist yet; lines already in it when tailing starts are run too. A bad
        line is reported in the transcript and skipped.

        Raises:
            Quit: a ``/quit`` line.
        """
        offset = 0
        number = 0
        pending = ""
        while True:
            try:
                with path.open("r", encoding="utf-8") as f:
                    f.seek(offset)
                    chunk = f.read()
                    offset = f.tell()
            except FileNotFoundError:
                chunk = ""
            pending += chunk
            *complete, pending = pending.split("\n")
            for raw in complete:
                number += 1
                text = raw.strip()
                if text and not text.startswith("#"):
                    await self.run_lines([(f"{path.name}:{number}", text)], strict=False)
            await asyncio.sleep(poll_interval)


class GoalCancelled(Exception):
    """Raised inside a ``/wait goal done`` predicate: the goal can never be done."""


_VIEWS = {
    "status": views.status_view,
    "tasks": views.tasks_view,
    "agents": views.agents_view,
    "decisions": views.decisions_view,
    "feed": views.feed_view,
    "usage": views.usage_view,
    "repos": views.repos_view,
}
