"""The puppet behaviour of the chaos run: a lead that plans idempotently and workers that edit,
run commands, ask questions, commit (or not) and report, each decided by a seed per turn."""

from __future__ import annotations

import asyncio
import random
import subprocess

from foreman.backends.turns import TurnResult
from foreman.errors import ForemanError

from .harness import Puppet, Turn

TITLES = [f"chaos-{i}" for i in range(6)]
"""The tasks the lead plans (each exactly once, however often planning restarts)."""


async def plan(turn: Turn) -> TurnResult:
    """Create the missing chaos tasks (a restarted plan must not duplicate them)."""
    try:
        existing = await turn.tools.call("list_tasks", {})
        for title in TITLES:
            if f"] {title} (" not in existing:
                await turn.tools.call("create_task", {"title": title, "description": f"write {title}"})
    except ForemanError:
        pass
    return TurnResult(ok=True, session_id="lead-plan")


def _commit(turn: Turn, message: str) -> None:
    for args in (["git", "add", "-A"], ["git", "commit", "-q", "-m", message]):
        subprocess.run(args, cwd=turn.req.cwd, env=turn.req.env, check=True, capture_output=True)


async def work(turn: Turn) -> TurnResult:
    """Edit ``<task>.txt``, maybe run ``sleep 60`` and ask, then commit and report (or not)."""
    req = turn.req
    rnd = random.Random(req.turn_id)
    if not req.task:
        return TurnResult(ok=True, session_id=f"{req.agent}-chat")
    sid = f"{req.agent}-{req.task}"
    turn.tools.session_started(sid)
    try:
        with open(req.cwd / f"{req.task}.txt", "a", encoding="utf-8") as f:
            f.write(f"{req.turn_id}\n")
        if rnd.random() < 0.5:
            await turn.start_command("sleep", "60")
        if rnd.random() < 0.25:
            await turn.tools.call("ask_user", {"question": f"{req.task}: which wording?", "options": ["A", "B"]})
        await asyncio.sleep(rnd.uniform(0.1, 1.2))
        if rnd.random() < 0.8:
            await asyncio.to_thread(_commit, turn, f"{req.task} by {req.agent}")
            await turn.tools.call("update_task", {"status": "review"})
    except ForemanError:
        pass  # a stale turn's calls are refused; a model would just stop
    return TurnResult(ok=True, session_id=sid)


def install(puppet: Puppet) -> None:
    """Give ``puppet`` the chaos behaviour for every agent and job."""
    puppet.on(("marlow", "plan"), plan)
    for name in ("juniper", "kit", "wren", "rowan", "tove"):
        puppet.on((name, "work"), work)
        puppet.on((name, "followup"), work)
