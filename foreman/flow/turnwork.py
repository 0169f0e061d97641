"""Executors of turns: running one on its agent's runner with the Foreman's tools, aborting one,
killing a previous daemon's leftovers, and asking the user a question of the flow's own.

A turn runs after its agent's previous clean-up. Any exception inside it (a runner bug, a reply
nothing expected) ends it as failed with the reason: never an agent thinking forever. Its end is
the input :class:`~.model.TurnEnded` (``current`` False when steering aborted or replaced it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import replace
from pathlib import Path

from ..backends import prompts
from ..backends.turns import JobKind, TurnRequest, TurnResult
from ..core.records import Session
from ..core.roster import LEAD, title
from ..errors import ForemanError
from ..executors import NodeLost, Place
from ..repos.gitsafety import safety_env
from ..usage import record_turn
from . import processes
from .edge import Edge
from .model import AbortTurn, Answered, AskUser, MergePrepared, PrepareMerge, ReapLeftovers, RunTurn, TurnEnded
from .team import team_line
from .tools import DaemonTools

logger = logging.getLogger(__name__)


def start_turn(edge: Edge, e: RunTurn) -> None:
    """Start turn ``e.turn_id`` in the background; its end is submitted as :class:`TurnEnded`."""
    task = edge.host.spawn(_run(edge, e), f"turn {e.turn_id} {e.job}")
    edge.turns[e.agent] = (e.turn_id, task)


def is_current(edge: Edge, agent: str, turn_id: str) -> bool:
    """True while ``turn_id`` is ``agent``'s running turn (not aborted, not superseded)."""
    run = edge.runner.live.running.get(agent)
    return run is not None and run.turn_id == turn_id


def abort_turn(edge: Edge, e: AbortTurn) -> None:
    """Cancel ``agent``'s running turn; its clean-up (the runner kills its processes) runs in the
    background and the agent's next turn, CI and hand-off wait for it."""
    entry = edge.turns.pop(e.agent, None)
    if entry is not None and not entry[1].done():
        entry[1].cancel()
        edge.clean_up(e.agent, asyncio.gather(entry[1], return_exceptions=True))


def reap(edge: Edge, e: ReapLeftovers) -> None:
    """Kill what turns of a previous daemon left running (:func:`.processes.reap_leftovers`)."""
    processes.reap_leftovers(edge)


async def ask_user(edge: Edge, e: AskUser) -> Answered:
    """Ask the user (as the Foreman) and wait; the answer's option, or None when withdrawn."""
    dec = await edge.host.ask("question", e.prompt, list(e.options), asked_by="foreman", task=e.task, goal=e.goal)
    option = dec.answer.option if dec.status == "answered" and dec.answer is not None else None
    return Answered(e.about, e.ref, option, e.data)


async def answer_for_resume(edge: Edge, decision_id: str) -> str:
    """Wait for a question a turn of the previous daemon asked; return how it ended, for the
    resumed session's prompt. An aborted wait withdraws the question."""
    host = edge.host
    try:
        dec = await host.wait_decision(decision_id)
    except asyncio.CancelledError:
        if host.core.world.decisions[decision_id].status == "open":
            host.act(lambda core, now: core.cancel_decision(decision_id, now, reason="the asking turn ended"))
        raise
    head = f'The Foreman restarted after you asked the user "{dec.prompt}".'
    if dec.status == "answered" and dec.answer is not None:
        return f"{head} The user answered: {dec.answer.label}" + (f" ({dec.answer.text})" if dec.answer.text else "")
    return f"{head} The question was withdrawn; carry on with your best judgement."


async def _run(edge: Edge, e: RunTurn) -> None:
    """Run one turn to its end and submit how it ended."""
    host, agent = edge.host, e.agent
    await edge.cleaned(agent)
    tools: DaemonTools | None = None
    lost: NodeLost | None = None
    s = host.core.record(Session, e.key)
    session = s.session_id if s is not None else None
    prompt = e.prompt
    started = time.monotonic()
    try:
        if e.question is not None:
            prompt = await answer_for_resume(edge, e.question) + "\n\n" + prompt
        if not await edge.budget.admit(agent, e.task, e.goal):  # a reached cap: the user stopped the work
            edge.runner.submit(TurnEnded(agent, e.turn_id, e.job, e.key, e.task, e.goal, ok=False,
                                         current=is_current(edge, agent, e.turn_id), budget_stopped=True))
            return
        started = time.monotonic()
        req, tools = request(edge, e, prompt, session)
        prompt = req.prompt  # (with the unread messages it took: a fresh session after a failed resume gets them)
        run = edge.place_executor().run_turn(edge.runners[agent], req, tools, turn_place(edge, agent, e.task, req.cwd))
        result = await asyncio.wait_for(run, timeout=edge.settings.turn_timeout)
    except asyncio.TimeoutError:
        result = replace((tools.cancelled if tools else None) or TurnResult(ok=False), ok=False, session_id=session,
                         aborted=False, error=f"the turn timed out after {edge.settings.turn_timeout:.0f} s")
    except asyncio.CancelledError:
        if tools is not None:  # the turn had started: what it used before the abort was spent
            _record_cancelled(edge, tools, e, time.monotonic() - started)
        raise
    except NodeLost as exc:
        lost = exc
        result = TurnResult(ok=False, session_id=None, error=exc.message)
    except ForemanError as exc:
        result = TurnResult(ok=False, session_id=session, error=exc.message)
    except Exception as exc:  # noqa: BLE001 - a bug must end the turn, not leave it running forever
        logger.exception("turn %s of %s failed inside the Foreman", e.turn_id, agent)
        result = TurnResult(ok=False, session_id=session, error=f"internal error: {type(exc).__name__}: {exc}")
    finally:
        processes.untrack(edge, e.turn_id)  # the runner killed what it started (the TurnRunner contract)
        if edge.turns.get(agent, ("",))[0] == e.turn_id:
            del edge.turns[agent]
    record_turn(host, result, agent=agent, task=e.task, goal=e.goal, wall_seconds=time.monotonic() - started)
    edge.runner.submit(TurnEnded(
        agent, e.turn_id, e.job, e.key, e.task, e.goal, ok=result.ok, current=is_current(edge, agent, e.turn_id),
        error=result.error, text=result.text, lost=f"{lost.node} ({lost.why})" if lost else None,
        node=lost.node if lost else None,
        resume_failed=not result.ok and (result.error or "").startswith("could not resume session"),
        merge_requested=bool(tools and tools.merge_requested), changes_requested=bool(tools and tools.changes_requested),
        session_id=result.session_id, cost_usd=result.cost_usd, prompt=prompt))


def cwd_of(edge: Edge, agent: str, task_id: str | None, goal_id: str | None) -> Path:
    """Where ``agent`` works: its worktree of ``task_id``, else the repository's checkout."""
    core = edge.host.core
    if task_id and agent != LEAD:
        info = core.worktree_of(agent, task_id)
        if info:
            return Path(info.path)
    repo_id = None
    if task_id:
        repo_id = core.task(task_id).repo
    elif goal_id:
        repo_id = core.goal(goal_id).repo
    repo = core.world.repos.get(repo_id or "") or next(iter(core.world.repos.values()), None)
    return Path(repo.path) if repo else Path.cwd()


def turn_place(edge: Edge, agent: str, task_id: str | None, cwd: Path) -> Place | None:
    """The executor's :class:`~foreman.executors.Place` of a worker's turn in its task worktree
    (None for the lead and for a turn outside a task worktree: those run where the daemon is)."""
    if not task_id or agent == LEAD:
        return None
    info = edge.host.core.worktree_of(agent, task_id)
    if not info or Path(info.path) != cwd:
        return None
    repo = edge.host.core.repo(info.repo)
    return Place(repo=Path(repo.path), worktree=cwd, branch=info.branch, base=info.base or repo.base_branch,
                 agent=agent, task=task_id)


async def request_merge(edge: Edge, task_id: str, summary: str) -> str:
    """The lead's ``request_merge``: prepare the task's merge decision now and say what came of it
    (a line for the lead's tool result)."""
    result = await edge.runner.perform(PrepareMerge(task_id, summary))
    if not isinstance(result, MergePrepared):
        return f"{task_id}: nothing to merge"
    if result.outcome == "nothing":
        return (f"{task_id} has no worktree; closed as done" if result.reason == "no worktree"
                else f"{task_id} changed no files; closed as done without a merge")
    if result.outcome == "failed":
        return f"{task_id} is blocked: {result.reason}"
    if result.outcome == "refused":
        return f"no merge decision for {task_id}: {result.reason}; it went back to its worker with the hook's output"
    opened = [d for d in edge.host.core.world.decisions.values() if d.task == task_id and d.kind == "merge"
              and d.status == "open"]
    return f"merge decision {opened[-1].id} opened for {task_id}" if opened else f"{task_id} moved on; no merge decision"


def request(edge: Edge, e: RunTurn, prompt: str, session: str | None) -> tuple[TurnRequest, DaemonTools]:
    """The request and tools of one turn (its worktree, system prompt, unread messages, safety env)."""
    host, agent = edge.host, e.agent
    lead = agent == LEAD
    cwd = cwd_of(edge, agent, e.task, e.goal)

    def on_session(sid: str) -> None:
        host.act(lambda core, now: core.update_session(e.key, session_id=sid))

    def on_question(did: str) -> None:
        host.act(lambda core, now: core.update_session(e.key, question=did))

    tools = DaemonTools(host, agent, e.turn_id, lead=lead, cwd=cwd, task=e.task, goal=e.goal,
                        is_current=lambda: is_current(edge, agent, e.turn_id),
                        on_merge_request=lambda tid, summary: request_merge(edge, tid, summary),
                        on_session=on_session,
                        on_process=lambda pid: processes.track(edge, agent, e.turn_id, pid),
                        on_question=on_question)
    prompt += prompts.unread_block(tools.unread())
    settings = edge.settings
    core = host.core
    branch = core.task(e.task).branch if e.task else None
    system = (prompts.LEAD_SYSTEM if lead else prompts.WORKER_SYSTEM).format(
        title=title(agent), user=settings.user_name, branch=branch or "?", workers=team_line(host, settings))
    if block := prompts.repo_instructions(cwd, core.task(e.task) if e.task else None):
        system += "\n\n" + block
    job: JobKind = e.job
    req = TurnRequest(turn_id=e.turn_id, agent=agent, lead=lead, job=job, prompt=prompt, system=system, cwd=cwd,
                      session_id=session, task=e.task, goal=e.goal, model=edge.models.get(agent),
                      max_turns=settings.max_turns or (settings.max_turns_lead if lead else settings.max_turns_worker),
                      env={**safety_env(os.environ, agent=agent, worktree=cwd), **processes.mark(edge, agent, e.turn_id)})
    tools.activity("thinking", f"{e.job}: {prompt.splitlines()[0][:120]}", station="meeting" if e.job == "plan" else "desk")
    return req, tools


def _record_cancelled(edge: Edge, tools: DaemonTools, e: RunTurn, wall_seconds: float) -> None:
    """Record an aborted turn's usage: what its runner handed over (``tools.cancelled``), else the
    turn and its wall time alone. Never raises: the cancellation goes on."""
    partial = tools.cancelled or TurnResult(ok=False, error="the turn was aborted", aborted=True)
    try:
        record_turn(edge.host, partial, agent=e.agent, task=e.task, goal=e.goal, wall_seconds=wall_seconds)
    except Exception:  # noqa: BLE001 - a store refusing must not turn an abort into a crash
        logger.exception("recording the usage of %s's aborted turn failed", e.agent)
