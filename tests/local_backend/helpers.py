"""Shared pieces of the local backend's tests: an AgentTools double, settings, a git worktree,
and a real daemon on the demo repository with the model behind the scripted server."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from foreman.backends.turns import TurnRequest
from foreman.config import resolve
from foreman.errors import PolicyError
from foreman.policy import classify_tool


class FakeTools:
    """AgentTools for direct runner tests: the real permission policy (ask -> ``answer``),
    recorded Foreman calls, activities and log lines."""

    def __init__(self, cwd: Path, *, agent: str = "kit", lead: bool = False, answer: bool = False) -> None:
        self.agent = agent
        self.turn_id = f"{agent}:1"
        self.cwd = cwd
        self.lead = lead
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.permits: list[tuple[str, dict[str, Any], str]] = []
        self.activities: list[tuple[str, str]] = []
        self.logs: list[tuple[str, str]] = []
        self.inbox: list[str] = []
        self.pids: list[int] = []
        self.sessions: list[str] = []

    async def call(self, name: str, args: dict[str, Any]) -> str:
        self.calls.append((name, args))
        if name == "request_merge" and not self.lead:
            raise PolicyError("request_merge is not a tool kit may use")
        return f"{name} ok"

    async def permit(self, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
        verdict = classify_tool(tool, args, worktree=str(self.cwd), lead=self.lead)
        self.permits.append((tool, args, verdict.outcome))
        if verdict.outcome == "allow":
            return True, verdict.reason
        if verdict.outcome == "ask" and self.answer:
            return True, "the user allowed it"
        return False, verdict.reason if verdict.outcome == "deny" else "the user denied it"

    def activity(self, state: str, activity: str, *, station: str | None = None) -> None:
        self.activities.append((state, activity))

    def log(self, text: str, *, kind: str = "text") -> None:
        self.logs.append((kind, text))

    def unread(self) -> list[str]:
        out, self.inbox = self.inbox, []
        return out

    def track_process(self, pid: int) -> None:
        self.pids.append(pid)

    def session_started(self, session_id: str) -> None:
        self.sessions.append(session_id)


def settings_for(tmp: Path, url: str, **flags: Any):
    """Resolved settings with the local backend on ``url`` and a home under ``tmp``."""
    return resolve({"home": str(tmp / "home"), "backend": "local", "url": url, "port": 0, **flags}, env={})


def git_repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository with ``files`` committed on main."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, body in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "config", "user.name", "T"],
                ["git", "config", "user.email", "t@example.com"], ["git", "add", "-A"], ["git", "commit", "-qm", "init"]):
        subprocess.run(cmd, cwd=root, check=True)
    return root


def venv_env() -> dict[str, str]:
    """The environment with this interpreter's folder first on PATH (``python`` = the venv's)."""
    return {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}


def request(cwd: Path, prompt: str = "Do the task.", *, agent: str = "kit", lead: bool = False, job: str = "work",
            task: str | None = "t1", max_turns: int = 12, session_id: str | None = None) -> TurnRequest:
    return TurnRequest(turn_id=f"{agent}:1", agent=agent, lead=lead, job=job, prompt=prompt,  # type: ignore[arg-type]
                       system=f"You are {agent}.", cwd=cwd, task=task, max_turns=max_turns, session_id=session_id,
                       env=venv_env())


def fake_profile_config(url: str, *, protocol: str = "text", profile: dict[str, Any] | None = None,
                        config: dict[str, Any] | None = None) -> dict[str, Any]:
    """A profile's ``config.json`` (as a dict) whose local endpoint profile ``fake`` points at the
    scripted server at ``url`` (model ``fake-coder``, ``protocol``, 256 tokens, plus ``profile``);
    ``config`` adds top-level keys (``workerNames``, ``agents``)."""
    return {**(config or {}), "local": {"profile": "fake", "profiles": {
        "fake": {"url": url, "model": "fake-coder", "protocol": protocol, "maxTokens": 256, **(profile or {})}}}}


GOAL = "Add a word_count helper"
"""The demo goal the scripted responder (``test_flow_local.make_responder``) knows."""


@contextlib.asynccontextmanager
async def demo_daemon(tmp: Path, url: str, *, protocol: str = "text", profile: dict[str, Any] | None = None,
                      goal: str | None = GOAL, config: dict[str, Any] | None = None,
                      options: dict[str, Any] | None = None) -> AsyncIterator[tuple[Any, Path]]:
    """Run a real daemon with the local backend on the scripted server at ``url`` (profile
    ``fake``: ``protocol``, 256 tokens, plus ``profile``), one worker, pytest as CI, the demo
    repository under ``tmp`` registered and ``goal`` submitted; yield ``(daemon, repo)`` and stop
    the daemon after. The home is ``tmp/home``; ``config`` adds top-level keys to its
    ``config.json`` (``workerNames``), ``options`` overrides start options (``workers``, ``ci``)."""
    from foreman.flow.assemble import make_backend
    from foreman.backends.sim.demo_repo import create_demo_repo
    from foreman.daemon import Daemon

    home = tmp / "home"
    (home / "local").mkdir(parents=True, exist_ok=True)
    (home / "local" / "config.json").write_text(json.dumps(fake_profile_config(url, protocol=protocol, profile=profile,
                                                                               config=config)))
    repo = tmp / "pocket-notes"
    if not repo.exists():
        create_demo_repo(repo)
    settings = resolve({"home": str(home), "backend": "local", "port": 0, "workers": ["1"],
                        "ci": f"{sys.executable} -m pytest -q -p no:cacheprovider", "notify": False, **(options or {})},
                       env={})
    daemon = Daemon(settings, backend=make_backend(settings))
    await daemon.start()
    try:
        await daemon.add_repo(str(repo))
        repo_id = next(iter(daemon.core.world.repos))
        if goal:
            daemon.act(lambda c, now: c.submit_goal(goal, now, repo=repo_id))
        yield daemon, repo
    finally:
        await daemon.stop()
