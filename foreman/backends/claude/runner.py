"""The claude backend's turn runner: one turn = one claude CLI process driven by claude-agent-sdk.

A turn spawns the CLI through :class:`claude_agent_sdk.ClaudeSDKClient` (resuming the agent's
session when it has one), sends the prompt, maps the message stream onto the world (activity,
log lines) until the turn's ``result``, then closes the CLI: end of input, a grace period, and a
sweep of the CLI's process session for anything left behind.

Abort (the ``run_turn`` task is cancelled: pause, stop, cancel, timeout, shutdown): the turn is
interrupted, the interrupted turn's result is awaited for ``abort_grace`` seconds, input is
closed, and ``eof_grace`` seconds later the whole process tree is killed (SIGTERM, then SIGKILL
after ``kill_grace``). The clean-up runs shielded from further cancellation, and the agent's
next turn waits for it (:meth:`ClaudeRunner.wait_clean`), so two CLIs never share a session.

``claude_agent_sdk`` is imported lazily: a daemon that never runs claude turns never loads it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from ...errors import BackendError
from ...procs import ProcRef
from ...sandbox import Sandbox
from ..turns import AgentTools, TurnRequest, TurnResult, hand_over_cancelled
from . import cliproc
from .auth import auth_status
from .results import RESUME_FAILED
from .session import ClaudeTurn

__all__ = ["RESUME_FAILED", "ClaudeRunner"]

logger = logging.getLogger(__name__)


class ClaudeRunner:
    """Runs turns with Claude through claude-agent-sdk (implements :class:`~..turns.TurnRunner`).

    Args:
        cli_path: the claude executable (``--claude-cli``); None: the one bundled with the SDK.
        use_claude_login: allow the local CLI login when no API key or cloud switch is set.
        effort: reasoning effort (``low`` ... ``max``) or None for the model's default.
        max_budget_usd: cap in USD per turn (``--max-budget-usd``) or None.
        env: the daemon's environment (auth is read from it; the CLI inherits it, with the
            turn's own ``TurnRequest.env`` on top).
        abort_grace: seconds an aborted turn gets to end after the interrupt.
        eof_grace: seconds the CLI gets to exit after its input is closed.
        kill_grace: seconds between SIGTERM and SIGKILL for what is left of its process tree.
        on_spawn: called with ``(agent, ProcRef)`` as soon as a turn's CLI process exists, e.g.
            to persist it so a restarted daemon can sweep the session of a CLI it lost
            (``foreman.procs.abort(ref)``; the CLI itself dies with the daemon).
        sandbox: the OS sandbox (``foreman.sandbox.from_settings``), or None when it is off: the
            permission gate runs every allowed Bash command in it (:mod:`.permissions`).
    """

    name = "claude"

    def __init__(self, *, cli_path: str | None, use_claude_login: bool, effort: str | None,
                 max_budget_usd: float | None, env: Mapping[str, str], abort_grace: float = 3.0,
                 eof_grace: float = 3.0, kill_grace: float = 2.0,
                 on_spawn: Callable[[str, ProcRef], None] | None = None, sandbox: Sandbox | None = None) -> None:
        self.cli_path = cli_path
        self.use_claude_login = use_claude_login
        self.effort = effort or None
        self.max_budget_usd = max_budget_usd
        self.env = dict(env)
        self.abort_grace = abort_grace
        self.eof_grace = eof_grace
        self.kill_grace = kill_grace
        self.on_spawn = on_spawn
        self.sandbox = sandbox
        self._scratch: Path | None = None
        self._wrapper: Path | None = None
        self._gates: dict[str, asyncio.Future[None]] = {}
        self._turns: dict[str, ClaudeTurn] = {}
        self._last_cost: dict[tuple[str, ProcRef | None], float] = {}

    # ------------------------------------------------------------------ banner and checks
    def status(self) -> tuple[str, str]:
        """Return ``(auth, detail)``: which credentials the CLI will use, or what is missing."""
        return auth_status({**os.environ, **self.env}, use_claude_login=self.use_claude_login)

    async def preflight(self) -> None:
        """Check the SDK imports, the CLI exists and credentials are configured.

        Raises:
            BackendError: naming the fix (install the extra, ``--claude-cli``, set a key).
        """
        self._ensure_wrapper()
        auth, detail = self.status()
        if auth == "missing":
            raise BackendError(f"no Claude credentials: {detail}")

    def _ensure_wrapper(self) -> Path:
        if self._wrapper is None or not self._wrapper.exists():
            cliproc.require_sdk()
            real = cliproc.find_cli(self.cli_path)
            if self._scratch is None:
                self._scratch = Path(tempfile.mkdtemp(prefix="foreman-claude-"))
            self._wrapper = cliproc.write_wrapper(real, self._scratch)
        return self._wrapper

    # ------------------------------------------------------------------ process control
    def cli_version(self) -> str | None:
        """The version of the claude CLI this runner starts (``2.1.332``), for ``foreman doctor``
        and the agent entity; None when it cannot be told (:func:`.cliproc.cli_version`)."""
        return cliproc.cli_version(self.cli_path)

    def cli_process(self, agent: str) -> ProcRef | None:
        """The CLI process of ``agent``'s running turn (its pid is also its process group and session id)."""
        turn = self._turns.get(agent)
        return turn.ref if turn is not None else None

    async def wait_clean(self, agent: str) -> None:
        """Return once ``agent``'s previous turn, clean-up included, is over (no CLI left)."""
        gate = self._gates.get(agent)
        while gate is not None and not gate.done():
            await asyncio.shield(gate)
            gate = self._gates.get(agent)

    async def _claim(self, agent: str) -> asyncio.Future[None]:
        await self.wait_clean(agent)
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._gates[agent] = gate
        return gate

    # ------------------------------------------------------------------ turns
    async def run_turn(self, request: TurnRequest, tools: AgentTools) -> TurnResult:
        """Run one turn to its end; see the module docstring.

        Returns:
            The :class:`TurnResult`; model and CLI failures give ``ok=False`` with the reason.

        Raises:
            asyncio.CancelledError: the turn was aborted; the CLI's process tree is gone first
                (unless cancelled again during the clean-up, which then goes on in the background
                and the agent's next turn waits for it).
            BackendError: the claude CLI cannot be found or the SDK is not installed.
        """
        wrapper = self._ensure_wrapper()
        gate = await self._claim(request.agent)
        try:
            turn = ClaudeTurn(self, request, tools, wrapper)
        except BaseException:
            gate.set_result(None)  # no CLI was started: the agent's next turn need not wait
            raise
        self._turns[request.agent] = turn
        body = asyncio.ensure_future(turn.converse())
        try:
            result = await asyncio.shield(body)
        except asyncio.CancelledError:
            logger.info("aborting %s's turn %s", request.agent, request.turn_id)
            finish = asyncio.ensure_future(self._finish(turn, body, gate, abort=True))
            try:
                await asyncio.shield(finish)
            except asyncio.CancelledError:
                pass  # cancelled again: the clean-up goes on; the next turn waits for it
            hand_over_cancelled(tools, turn.partial_result(body))
            raise
        except BaseException:
            await asyncio.shield(asyncio.ensure_future(self._finish(turn, body, gate, abort=False)))
            raise
        await asyncio.shield(asyncio.ensure_future(self._finish(turn, body, gate, abort=False)))
        return result

    async def _finish(self, turn: ClaudeTurn, body: asyncio.Future[TurnResult], gate: asyncio.Future[None],
                      *, abort: bool) -> None:
        try:
            if abort:
                turn.aborted = True
                await turn.interrupt(body, self.abort_grace)
            await turn.close(body, self.eof_grace, self.kill_grace)
            if not body.done():  # the stream is closed now: the body ends by itself
                await asyncio.wait({body}, timeout=self.eof_grace + 1.0)
            if not body.done():
                body.cancel()
                await asyncio.wait({body}, timeout=1.0)
            if body.done() and not body.cancelled() and body.exception() is not None and abort:
                logger.debug("aborted turn ended with %r", body.exception())
        except Exception:
            logger.exception("clean-up of %s's turn failed", turn.request.agent)
        finally:
            turn.pidfile.unlink(missing_ok=True)
            if self._turns.get(turn.request.agent) is turn:
                del self._turns[turn.request.agent]
            for key in [k for k in self._last_cost if k[1] == turn.ref]:
                del self._last_cost[key]  # that CLI process is gone: its cumulative cost is final
            if not gate.done():
                gate.set_result(None)

    def turn_cost(self, session_id: str | None, ref: ProcRef | None, cumulative: float | None) -> float | None:
        """The cost of one turn from the CLI's cumulative ``total_cost_usd``.

        ``total_cost_usd`` adds up per CLI process (a resumed session starts a new process at
        zero), so the difference is taken against the previous result of the same session in
        the same process (none: the whole figure).
        """
        if cumulative is None:
            return None
        key = (session_id or "", ref)
        previous = self._last_cost.get(key, 0.0)
        self._last_cost[key] = cumulative
        return max(cumulative - previous, 0.0)

    async def close(self) -> None:
        """Wait for every turn's clean-up, then remove the wrapper's scratch directory."""
        for agent in list(self._gates):
            await self.wait_clean(agent)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
            self._wrapper = None


