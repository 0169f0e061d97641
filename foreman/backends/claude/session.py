"""One claude turn: the CLI session a :class:`~.runner.ClaudeRunner` drives for one agent's
turn (connect, converse, map the stream, interrupt and close); the runner owns the agents' turns
and their clean-up order."""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import procs
from ...errors import ForemanError
from ...procs import ProcRef
from ..turns import AgentTools, TurnRequest, TurnResult
from . import cliproc
from .mapping import Transcript
from .options import agent_options
from .permissions import PermissionGate, SandboxedBash
from .results import result_error, resume_failure, streamed_usage, turn_result

if TYPE_CHECKING:
    from .runner import ClaudeRunner

logger = logging.getLogger(__name__)

_PIDFILES = itertools.count(1)
"""Numbers the turns' pid files in a runner's wrapper folder."""


class ClaudeTurn:
    """The state of one running turn (the SDK client, the CLI process, what the stream said)."""

    def __init__(self, runner: "ClaudeRunner", request: TurnRequest, tools: AgentTools, wrapper: Path) -> None:
        self.runner = runner
        self.request = request
        self.tools = tools
        self.wrapper = wrapper
        box = runner.sandbox
        self.gate = PermissionGate(tools, lead=request.lead, bash=None if box is None else SandboxedBash(
            box, Path(request.cwd), {**runner.env, **request.env}, writable=not request.lead))
        self.client: Any = None
        self.ref: ProcRef | None = None
        self.connected = False
        self.aborted = False
        self.said = Transcript(request.session_id)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=5)
        self.pidfile = wrapper.parent / f"cli-{next(_PIDFILES)}.pid"

    # ------------------------------------------------------------------ options
    def options(self, sdk: Any) -> Any:
        """This turn's ``ClaudeAgentOptions`` (:func:`.options.agent_options`)."""
        runner = self.runner
        return agent_options(sdk, self.request, self.tools, self.gate, env=runner.env, wrapper=self.wrapper,
                             pidfile=self.pidfile, effort=runner.effort, max_budget_usd=runner.max_budget_usd,
                             stderr=self._stderr)

    def _stderr(self, line: str) -> None:
        self.stderr_tail.append(line)
        logger.debug("claude[%s] %s", self.request.agent, line)

    def _with_stderr(self, text: str) -> str:
        return f"{text}: {self.stderr_tail[-1][:300]}" if self.stderr_tail else text

    # ------------------------------------------------------------------ the conversation
    async def converse(self) -> TurnResult:
        """Connect, send the prompt, map messages until the turn's result; never raises for CLI failures."""
        import claude_agent_sdk as sdk  # (the claude extra: loaded when a claude turn runs, about a second)

        error: str | None = None
        try:
            self.client = sdk.ClaudeSDKClient(self.options(sdk))
            await self._connect()
            await self.client.query(self.request.prompt)
            async for message in self.client.receive_response():
                self.said.count(sdk, message)
                if not self.aborted:
                    self._on_message(sdk, message)
                elif isinstance(message, sdk.ResultMessage):
                    self.said.result = message
        except sdk.ResultError as exc:
            error = result_error(exc, self.request.session_id)
        except sdk.ProcessError as exc:
            error = self._with_stderr(f"the claude CLI exited with code {exc.exit_code} in the middle of the turn")
        except sdk.CLIJSONDecodeError:
            error = "the claude CLI wrote a line that is not JSON; the session ended"
        except sdk.ClaudeSDKError as exc:
            error = self._with_stderr(f"the claude CLI failed: {exc}")
        except Exception as exc:  # control requests raise plain Exception (timeouts, CLI errors)
            logger.debug("turn %s failed", self.request.turn_id, exc_info=True)
            error = f"the claude turn failed: {exc}"
        if error:
            error = resume_failure(error, self.stderr_tail, self.request.session_id)
        return self._turn_result(error)

    async def _connect(self) -> None:
        connect = asyncio.ensure_future(self.client.connect())
        try:
            while not connect.done() and self.ref is None:
                self.ref = cliproc.spawned_ref(self.pidfile)
                if self.ref is not None:
                    self._spawned()
                await asyncio.wait({connect}, timeout=0.005)
            await connect
        finally:
            if not connect.done():
                connect.cancel()
        self.connected = True
        if self.ref is None:
            self.ref = cliproc.spawned_ref(self.pidfile)
            self._spawned()
        announced = cliproc.server_info_pid(await self.client.get_server_info())
        if self.ref is not None and announced is not None and announced != self.ref.pid:
            logger.warning("%s: the CLI says its pid is %s, the session wrapper said %s", self.request.agent,
                           announced, self.ref.pid)
        logger.info("%s: claude CLI pid %s, announced %s (turn %s)", self.request.agent,
                    self.ref.pid if self.ref else "?", announced, self.request.turn_id)

    def _spawned(self) -> None:
        ref, on_spawn = self.ref, self.runner.on_spawn
        if ref is None:
            return
        track = getattr(self.tools, "track_process", None)  # optional AgentTools hook (DaemonTools has it)
        callbacks = [lambda: on_spawn(self.request.agent, ref)] if on_spawn else []
        if track is not None:
            callbacks.append(lambda: track(ref.pid))
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("recording the CLI process failed")

    def _on_message(self, sdk: Any, message: Any) -> None:
        try:
            self.said.take(sdk, message, self.tools)
        except ForemanError as exc:  # the world refused a log line or an activity: the turn goes on
            logger.debug("%s: %s", self.request.agent, exc)

    def _turn_result(self, error: str | None) -> TurnResult:
        said = self.said
        res = said.result
        cost = self.runner.turn_cost(said.session_id, self.ref, res.total_cost_usd) if res is not None else None
        return turn_result(res, error=error, texts=said.texts, session_id=said.session_id, cost=cost,
                           max_turns=self.request.max_turns, api_error=said.api_error, aborted=self.aborted)

    def partial_result(self, body: asyncio.Future[TurnResult]) -> TurnResult:
        """What an aborted turn reported: the body's result when the stream ended (the CLI's
        result after the interrupt carries the turn's usage and cost), else the usage of the
        model responses received so far (:func:`.results.streamed_usage`; no cost: only a
        result says it)."""
        if body.done() and not body.cancelled() and body.exception() is None:
            result = body.result()
        else:
            said = self.said
            cost = said.result.total_cost_usd if said.result is not None else None  # this CLI's figure: its only turn
            result = turn_result(said.result, error=None, texts=said.texts, session_id=said.session_id, cost=cost,
                                 max_turns=self.request.max_turns, api_error=said.api_error, aborted=True)
        if result.input_tokens is None and result.output_tokens is None and self.said.streamed:
            result = replace(result, **streamed_usage(self.said.streamed.values()))
        return result

    # ------------------------------------------------------------------ ending
    async def interrupt(self, body: asyncio.Future[TurnResult], grace: float) -> None:
        """Interrupt the running turn and wait up to ``grace`` seconds for it to end."""
        deadline = time.monotonic() + grace
        if not self.connected:
            return  # still starting: nothing to interrupt, nothing to wait for
        if not body.done():
            try:
                await asyncio.wait_for(self.client.interrupt(), timeout=grace)
            except Exception as exc:  # noqa: BLE001 - control calls raise plain Exception (and TimeoutError)
                logger.info("%s: interrupt was not acknowledged (%s)", self.request.agent, exc or "timeout")
        left = deadline - time.monotonic()
        if left > 0 and not body.done():
            await asyncio.wait({body}, timeout=left)

    async def close(self, body: asyncio.Future[TurnResult], eof_grace: float, kill_grace: float) -> None:
        """Close the CLI's input, wait ``eof_grace`` s, then kill what is left of its process tree."""
        deadline = time.monotonic() + eof_grace
        while self.ref is None and self.client is not None and not body.done() and time.monotonic() < deadline:
            self.ref = cliproc.spawned_ref(self.pidfile)  # aborted while the SDK was still spawning the CLI
            if self.ref is None:
                await asyncio.sleep(0.01)
        if self.ref is None and self.client is not None:
            self.ref = cliproc.spawned_ref(self.pidfile)
        closing = None
        if self.connected and self.client is not None:
            closing = asyncio.ensure_future(self.client.disconnect())
            await asyncio.wait({closing}, timeout=eof_grace)
        if self.ref is not None:
            report = await procs.abort(self.ref, grace=kill_grace)
            if report.signalled:
                logger.info("%s: killed %d leftover process(es) of the claude CLI", self.request.agent,
                            len(report.signalled))
        if closing is not None:
            await asyncio.wait({closing}, timeout=eof_grace + kill_grace + 5.0)
            if closing.done() and not closing.cancelled() and closing.exception() is not None:
                logger.debug("disconnect failed: %r", closing.exception())
