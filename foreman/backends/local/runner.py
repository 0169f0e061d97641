"""``LocalRunner``: the :class:`~foreman.backends.turns.TurnRunner` for OpenAI-compatible endpoints.

It serves the conductor (plan, work, review, follow-up turns) with any local server
(llama.cpp's ``llama-server``, Ollama, vLLM, LM Studio) and is independent of the other
runners, so a mixed team (``--lead-backend claude --worker-backend local``) just picks it
per role. Per turn it builds the prompt (the text protocol from the registry, or the native
tool schema), runs the :class:`~.loop.AgentLoop`, records every reply under
``<home>/<profile>/traces/`` and keeps the conversation of each session under
``<home>/<profile>/local/sessions/`` so a follow-up turn resumes it.

When a worker's FINAL is accepted on a task, the runner commits what the worktree holds (with
the agent's identity, through the policy like any command) and moves the task to review:
small models rarely manage git themselves, and the lead's review and CI check the claims.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shlex
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import BackendError, ForemanError
from ...private import private_dir, private_file
from ...sandbox import from_settings
from ..turns import AgentTools, TurnRequest, TurnResult, hand_over_cancelled
from . import commands
from .endpoint import Endpoint
from .executor import Executor
from .guided import GuidedStats, GuidedTask
from .guided_text import EDITS_FORMAT, ci_command_for
from .loop import AgentLoop, LoopStats
from .profiles import LocalProfile, resolve_profile
from .registry import openai_tools, render_instructions
from .trace import TraceRecorder
from .workspace import Workspace

logger = logging.getLogger(__name__)

_NATIVE_HELP = ("Act only through the tool calls you are given. Paths are relative to your working directory. "
                "Read a file before you edit it; an edit's search text must match the file exactly. When the work "
                "is done and verified, call final with a summary.")
_WORKER_FINISH = ("When the change is made and the tests pass, end with FINAL followed by what you changed; the "
                  "Foreman then commits your files and sends the task to review.")
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]+")


class SessionStore:
    """The conversations of local sessions, one JSON file each (system prompt excluded).

    Args:
        directory: ``<home>/<profile>/local/sessions``.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{_SAFE_ID.sub('_', session_id)}.json"

    def load(self, session_id: str) -> list[dict[str, Any]]:
        """The messages of a session after its system prompt ([] when unknown or unreadable)."""
        try:
            data = json.loads(self._path(session_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [m for m in data.get("messages", []) if isinstance(m, dict)] if isinstance(data, dict) else []

    def save(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Write a session's messages (atomically: temp file, then rename)."""
        private_dir(self.directory)  # the home's folders 0700, files 0600 (foreman/private.py)
        path = self._path(session_id)
        tmp = private_file(path.with_suffix(".tmp"))
        tmp.write_text(json.dumps({"v": 1, "messages": messages}, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)


class LocalRunner:
    """Runs agent turns on an OpenAI-compatible endpoint.

    Args:
        settings: the resolved settings (``url``, ``model``, ``lead_model``, ``worker_model``,
            ``turn_timeout``, the ``local`` section, ``profile_dir``).
        profile: a profile name to use instead of the configured one.
        endpoint: an :class:`Endpoint` to use (tests); built from the profile otherwise.

    Raises:
        ConfigError: the ``local`` section is malformed or names an unknown profile.
    """

    name = "local"

    def __init__(self, settings: Any, *, profile: str | None = None, endpoint: Endpoint | None = None) -> None:
        self.settings = settings
        self.profile: LocalProfile = resolve_profile(settings, profile)
        self._endpoint = endpoint
        self.default_model: str | None = None
        self.home = Path(settings.profile_dir)
        self.traces_dir = self.home / "traces"

        self.sandbox = from_settings(settings)
        """The OS sandbox RUN commands run in (None: off or unavailable)."""
        self.sessions = SessionStore(self.home / "local" / "sessions")
        self.stats: dict[str, LoopStats] = {}
        self._constrained: dict[str, bool] = {}
        """Figures of every turn run, by turn id (the bench reads them)."""

    @property
    def endpoint(self) -> Endpoint:
        """The endpoint client (built on first use; the ``openai`` import happens here)."""
        if self._endpoint is None:
            self._endpoint = Endpoint(self.profile.url, api_key=self.profile.api_key,
                                      request_timeout=self.profile.request_timeout)
        return self._endpoint

    # -- TurnRunner ------------------------------------------------------------------------
    def status(self) -> tuple[str, str]:
        """``("none", "<url> <model> (<protocol> protocol)")``: local servers need no login."""
        model = self.profile.model or self.default_model or "the endpoint's first model"
        return "none", f"{self.profile.url} {model} ({self.profile.protocol} protocol, profile {self.profile.name})"

    def _wanted_models(self) -> list[str | None]:
        s = self.settings
        kinds = {"lead": getattr(s, "lead_backend", "") or s.backend, "worker": getattr(s, "worker_backend", "") or s.backend}
        wanted: list[str | None] = []
        for role, kind in kinds.items():
            if kind == "local":
                wanted.append(getattr(s, "model", None) or getattr(s, f"{role}_model", None) or self.profile.model)
        return wanted or [self.profile.model]

    async def preflight(self) -> None:
        """Ask the endpoint what it serves and make a minimal completion with each model used.

        Raises:
            BackendError: the endpoint is unreachable, or a model is not served or fails.
        """
        self.default_model = await self.endpoint.preflight(self._wanted_models())
        logger.info("local endpoint %s ready (default model %s)", self.profile.url, self.default_model)

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._endpoint is not None:
            await self._endpoint.close()

    async def _model(self, request: TurnRequest) -> str:
        model = request.model or self.profile.model or self.default_model
        if model:
            return model
        served = await self.endpoint.models()
        if not served:
            raise BackendError(f"the endpoint {self.profile.url} serves no model")
        self.default_model = served[0]
        return served[0]

    def _system(self, request: TurnRequest) -> str:
        role = "lead" if request.lead else "worker"
        parts = [request.system.strip()]
        if self.profile.protocol == "native":
            parts.append(_NATIVE_HELP)
        else:
            parts.append(render_instructions(role).strip())
            parts.append("Paths are relative to your working directory. READ a file before you edit it.")
        if not request.lead:
            parts.append(_WORKER_FINISH)
        return "\n\n".join(p for p in parts if p)

    async def run_turn(self, request: TurnRequest, tools: AgentTools) -> TurnResult:
        """Run one turn to FINAL or a cap; never raises for model failures (``ok=False``).

        The result carries the turn's usage: prompt and completion tokens summed over every
        model call of the turn (the agent loop and, in "auto" mode, the guided retry), from the
        streams' ``usage`` chunks (None when the server reports none), the model the server
        said answered, and ``cost_usd`` from the profile's prices per million tokens (0 without).

        Cancellation kills any command the turn started (its whole process tree) before the
        ``CancelledError`` propagates; the conversation so far is kept for a resume, and the
        usage of the replies received so far goes to :func:`hand_over_cancelled`.
        """
        used: list[LoopStats] = []
        try:
            result = await self._run_turn(request, tools, used)
        except asyncio.CancelledError:
            aborted = TurnResult(ok=False, session_id=request.session_id, error="the turn was aborted", aborted=True)
            hand_over_cancelled(tools, self._with_usage(aborted, used))
            raise
        return self._with_usage(result, used)

    def _with_usage(self, result: TurnResult, used: list[LoopStats]) -> TurnResult:
        """``result`` with the usage of the model calls in ``used`` (see :meth:`run_turn`)."""
        reported = any(s.usage_replies for s in used)
        tokens_in = sum(s.prompt_tokens for s in used) if reported else None
        tokens_out = sum(s.completion_tokens for s in used) if reported else None
        cost = ((tokens_in or 0) * self.profile.price_in_per_mtok
                + (tokens_out or 0) * self.profile.price_out_per_mtok) / 1_000_000
        model = next((s.model for s in reversed(used) if s.model), None)
        return replace(result, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost,
                       model=model or result.model)

    async def _run_turn(self, request: TurnRequest, tools: AgentTools, used: list[LoopStats]) -> TurnResult:
        session_id = request.session_id or f"{request.agent}-{uuid.uuid4().hex[:12]}"
        started = getattr(tools, "session_started", None)
        if callable(started):
            started(session_id)
        request = replace(request, session_id=session_id)
        try:
            model = await self._model(request)
        except BackendError as exc:
            return TurnResult(ok=False, session_id=session_id, error=exc.message)
        workspace = Workspace(request.cwd)
        history = self.sessions.load(session_id) if request.session_id else []
        prompt = request.prompt
        if not history:
            prompt += "\n\nFiles in your working directory:\n" + workspace.file_map()
        messages = [{"role": "system", "content": self._system(request)}, *history,
                    {"role": "user", "content": prompt}]
        wall = self.profile.wall_timeout
        turn_timeout = float(getattr(self.settings, "turn_timeout", 0) or 0)
        if turn_timeout and (wall is None or wall > turn_timeout * 0.95):
            wall = turn_timeout * 0.95
        profile = replace(self.profile, wall_timeout=wall)
        guidable = not request.lead and bool(request.task) and request.job in ("work", "followup")
        if guidable and (profile.mode == "guided" or (profile.mode == "auto" and profile.small)):
            return await self._guided(request, tools, profile, model, session_id, used)
        executor = Executor(workspace, tools, env=dict(request.env) or None, run_timeout=profile.run_timeout,
                            max_output=profile.max_output, sandbox=self.sandbox)
        recorder = TraceRecorder(self.traces_dir / f"{_SAFE_ID.sub('_', session_id)}.jsonl")
        role = "lead" if request.lead else "worker"
        loop = AgentLoop(request, tools, self.endpoint, profile, model, messages, recorder, executor,
                         tool_schema=openai_tools(role) if profile.protocol == "native" else None)
        self.stats[request.turn_id] = loop.stats
        used.append(loop.stats)
        try:
            result = await loop.run()
        finally:
            try:
                self.sessions.save(session_id, messages[1:])
            except OSError as exc:
                logger.warning("cannot save local session %s: %s", session_id, exc)
        if guidable and profile.mode == "auto" and not result.ok and not result.aborted:
            tools.log(f"the agent loop failed this turn ({result.error}); trying guided mode", kind="error")
            return await self._guided(request, tools, profile, model, session_id, used)
        if result.ok and guidable:
            await self._finish_worker(request, tools, result.text)
        return result

    async def _guided(self, request: TurnRequest, tools: AgentTools, profile: LocalProfile, model: str,
                      session_id: str, used: list[LoopStats]) -> TurnResult:
        """Run the turn in guided mode (:mod:`.guided`); commit and send to review only when an
        attempt passed the checks (otherwise the guided task already set the task blocked)."""
        stats = GuidedStats()
        self.stats[request.turn_id] = stats
        used.append(stats)
        response_format = await self._response_format(model) if profile.constrained == "auto" else None
        deadline = time.monotonic() + profile.wall_timeout if profile.wall_timeout else None
        task = GuidedTask(request, tools, self.endpoint, profile, model,
                          ci_command=ci_command_for(self.settings, Path(request.cwd)),
                          ci_timeout=float(getattr(self.settings, "ci_timeout", 0) or 600.0),
                          trace_path=self.traces_dir / "guided" / f"{_SAFE_ID.sub('_', session_id)}.jsonl",
                          stats=stats, deadline=deadline, response_format=response_format)
        try:
            result = await task.run()
        except BackendError as exc:
            return TurnResult(ok=False, session_id=session_id, error=exc.message)
        if stats.passed:
            await self._finish_worker(request, tools, result.text)
        stats.stages.mark("commit", "committed, to review" if stats.passed else "task blocked")
        return result

    async def _response_format(self, model: str) -> dict[str, Any] | None:
        """The guided edit schema when the endpoint enforces ``response_format`` json_schema
        (probed once per model), else None: the text decoder reads free replies."""
        if model not in self._constrained:
            supported = await self.endpoint.supports_json_schema(model)
            self._constrained[model] = supported
            logger.info("local endpoint %s: json_schema response_format %s", self.profile.url,
                        "enforced" if supported else "not supported; guided replies use the text decoder")
        return EDITS_FORMAT if self._constrained[model] else None

    async def _finish_worker(self, request: TurnRequest, tools: AgentTools, summary: str) -> None:
        """Commit the worktree's changes (through the policy) and move the task to review."""
        env = dict(request.env) or None
        status = await commands.run_command("git status --porcelain", cwd=request.cwd, env=env, timeout=30.0)
        if status.exit_code == 0 and status.output.strip():
            title = (summary.strip().splitlines() or ["work"])[0][:72]
            command = f"git add -A && git commit -q -m {shlex.quote(f'{request.task}: {title}')}"
            allowed, reason = await tools.permit("Bash", {"command": command})
            if allowed:
                res = await commands.run_command(command, cwd=request.cwd, env=env, timeout=60.0)
                if res.exit_code != 0:
                    tools.log(f"committing the work failed: {res.output[-500:]}", kind="error")
            else:
                tools.log(f"the work was not committed: {reason}", kind="error")
        try:
            await tools.call("update_task", {"status": "review", "note": summary[:300]})
        except ForemanError as exc:
            logger.info("update_task review after FINAL: %s", exc.message)


def traces_dir(settings: Any) -> Path:
    """The default directory of ``foreman replay``: ``<home>/<profile>/traces``."""
    return Path(settings.profile_dir) / "traces"


__all__ = ["LocalRunner", "SessionStore", "traces_dir"]
