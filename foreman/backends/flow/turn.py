"""Running one turn: launch it (one per agent at a time), run it on the agent's runner with the
Foreman's tools, and route its end to the step that owns its job (plan, work, review).

A failed turn shows the agent as ``error``, says why in the feed and blocks its task (the user
retries it); a session that could not be resumed asks the user first.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ForemanError
from ...executors import NodeLost, Place
from ...executors import of as executor_of
from ...usage import record_turn
from .. import prompts
from ..tools import DaemonTools
from ..turns import JobKind, TurnRequest, TurnResult
from . import merge, plan, processes, records, restart, review, work
from .team import LEAD, Running, team_line, title

if TYPE_CHECKING:
    from ..conductor import Conductor

logger = logging.getLogger(__name__)


def launch(c: Conductor, agent: str, job: JobKind, key: str, *, prompt: str, task_id: str | None = None,
           goal_id: str | None = None, session_id: str | None = None, question: str | None = None) -> None:
    """Start a turn in the background (after the agent's previous clean-up). An agent runs one
    turn at a time: while it runs one, the new turn waits its turn (the conductor's deferred
    queue). An agent that is off shift (``/stop``) or paused runs no turn: the turn waits in the
    same queue until ``/spawn`` or ``/resume`` brings the agent back, and the feed says so. With
    ``question`` (a decision id) the turn first waits for its answer and starts with it."""
    away = _away(c, agent)
    if agent in c.running or away:
        c.deferred.setdefault(agent, []).append((job, key, prompt, task_id, goal_id, session_id, question))
        records.save_queue(c, agent)  # a restart before it starts still starts it
        if away:
            how = f"/spawn @{agent}" if away == "off shift" else f"/resume @{agent}"
            what = f"The {job} of {task_id}" if task_id else f"{title(agent)}'s {job} turn"
            c.d.act(lambda core, now: core.feed(f"{what} waits: {title(agent)} is {away}; {how} to go on", now,
                                                kind="agent", agent=agent))
        c.kick()
        return
    turn_id = _next_turn_id(c, agent)
    records.set_session(c, key, agent=agent, job=job, task=task_id, goal=goal_id, state="running", question=question,
                        **({"session": session_id} if session_id else {}))
    t = c.d.spawn(_run(c, agent, job, key, turn_id, prompt, task_id, goal_id, question), f"turn {turn_id} {job}")
    c.running[agent] = Running(turn_id, job, key, t, task_id, goal_id)


def _away(c: Conductor, agent: str) -> str | None:
    """``off shift`` or ``paused`` when ``agent`` may run no turn now, else None (also for a name
    the world does not hold)."""
    a = c.d.core.world.agents.get(agent)
    if a is None:
        return None
    return "off shift" if not a.active else "paused" if a.paused else None


def _next_turn_id(c: Conductor, agent: str) -> str:
    counters = records.meta(c, "turns")
    counters[agent] = int(counters.get(agent, 0)) + 1
    records.set_meta(c, "turns", counters)
    return f"{agent}:{counters[agent]}"


def cwd_of(c: Conductor, agent: str, task_id: str | None, goal_id: str | None) -> Path:
    """Where ``agent`` works: its worktree of ``task_id``, else the repository's checkout."""
    if task_id and agent != LEAD:
        info = records.worktree_of(c, agent, task_id)
        if info:
            return Path(info["path"])
    repo_id = None
    if task_id:
        repo_id = c.d.core.task(task_id).repo
    elif goal_id:
        repo_id = c.d.core.goal(goal_id).repo
    repo = c.d.core.world.repos.get(repo_id or "") or next(iter(c.d.core.world.repos.values()), None)
    return Path(repo.path) if repo else Path.cwd()


def is_current(c: Conductor, agent: str, turn_id: str) -> bool:
    """True while ``turn_id`` is ``agent``'s running turn (not aborted, not superseded)."""
    run = c.running.get(agent)
    return run is not None and run.turn_id == turn_id


async def _run(c: Conductor, agent: str, job: JobKind, key: str, turn_id: str, prompt: str, task_id: str | None,
               goal_id: str | None, question: str | None = None) -> None:
    """Run one turn to its end. Any exception inside it (a runner bug, a reply nothing expected)
    ends it as failed with the reason (:func:`failed`): never an agent thinking forever."""
    cleanup = c.cleaning.get(agent)
    if cleanup is not None:
        await asyncio.gather(cleanup, return_exceptions=True)
    tools: DaemonTools | None = None
    lost: NodeLost | None = None
    session = records.sessions(c).get(key, {}).get("session")
    started = time.monotonic()
    try:
        if question is not None:
            prompt = await restart.answer_for_resume(c, agent, question) + "\n\n" + prompt
        if not await c.budget.admit(agent, task_id, goal_id):  # a reached cap: the user stopped the work
            if is_current(c, agent, turn_id):
                del c.running[agent]
                records.set_session(c, key, state="done")
                c.d.act(lambda core, now: core.set_activity(agent, "idle", now, activity="stopped: budget reached"))
                c.kick()
            return
        started = time.monotonic()
        req, tools = _request(c, agent, job, key, turn_id, prompt, task_id, goal_id, session)
        prompt = req.prompt  # (with the unread messages it took: a fresh session after a failed resume gets them)
        run = executor_of(c).run_turn(c.runners[agent], req, tools, place_of(c, agent, task_id, req.cwd))
        result = await asyncio.wait_for(run, timeout=c.settings.turn_timeout)
    except asyncio.TimeoutError:
        result = replace((tools.cancelled if tools else None) or TurnResult(ok=False), ok=False, session_id=session, aborted=False,
                         error=f"the turn timed out after {c.settings.turn_timeout:.0f} s")  # keeps its usage so far
    except asyncio.CancelledError:
        if tools is not None:  # the turn had started: what it used before the abort was spent
            _record_cancelled(c, tools, agent, task_id, goal_id, time.monotonic() - started)
        raise
    except NodeLost as exc:
        lost = exc
        result = TurnResult(ok=False, session_id=None, error=exc.message)
    except ForemanError as exc:
        result = TurnResult(ok=False, session_id=session, error=exc.message)
    except Exception as exc:  # noqa: BLE001 - a bug must end the turn, not leave it running forever
        logger.exception("turn %s of %s failed inside the Foreman", turn_id, agent)
        result = TurnResult(ok=False, session_id=session, error=f"internal error: {type(exc).__name__}: {exc}")
    finally:
        processes.untrack(c, turn_id)  # the runner killed what it started (the TurnRunner contract)
    record_turn(c.d, result, agent=agent, task=task_id, goal=goal_id, wall_seconds=time.monotonic() - started)
    if not is_current(c, agent, turn_id):
        return  # aborted: steering decides what happens next
    del c.running[agent]
    if lost is not None:
        node_lost(c, agent, job, key, task_id, lost)
        return
    try:
        if result.session_id:
            records.set_session(c, key, session=result.session_id)
        if result.cost_usd:
            _record_cost(c, agent, task_id, goal_id, result.cost_usd)
        records.set_session(c, key, state="done" if result.ok else "failed")
        await _ended(c, agent, job, key, result, task_id, goal_id, tools, prompt)
    except Exception as exc:  # noqa: BLE001 - the same rule for what happens after the turn
        logger.exception("the end of turn %s of %s failed", turn_id, agent)
        records.set_session(c, key, state="failed")
        failed(c, agent, job, task_id, f"internal error: {type(exc).__name__}: {exc}")


def place_of(c: Conductor, agent: str, task_id: str | None, cwd: Path) -> Place | None:
    """The executor's :class:`~foreman.executors.Place` of a worker's turn in its task worktree
    (None for the lead and for a turn outside a task worktree: those run where the daemon is)."""
    if not task_id or agent == LEAD:
        return None
    info = records.worktree_of(c, agent, task_id)
    if not info or Path(info["path"]) != cwd:
        return None
    repo = c.d.core.repo(info["repo"])
    return Place(repo=Path(repo.path), worktree=cwd, branch=info["branch"], base=info.get("base") or repo.base_branch,
                 agent=agent, task=task_id)


MAX_NODE_LOSSES = 3
"""Turns of one task lost with their nodes before the task is blocked (a node that dies on it)."""


def node_lost(c: Conductor, agent: str, job: str, key: str, task_id: str | None, exc: NodeLost) -> None:
    """A turn's node went away: the feed names it, the session (kept on that node) is dropped,
    and the task goes back on the board for the same agent, which resumes it (on another node)
    from the last branch bundle the daemon received; the :data:`MAX_NODE_LOSSES`-th loss of one
    task blocks it instead."""
    d = c.d
    data = records.sessions(c)
    data.get(key, {}).pop("session", None)
    records.set_meta(c, "sessions", data)
    records.set_session(c, key, state="aborted")
    text = f"{title(agent)}'s {job} turn was lost with {exc.node} ({exc.why})"
    losses = records.meta(c, "node_losses")
    if task_id:
        losses[task_id] = int(losses.get(task_id, 0)) + 1
        records.set_meta(c, "node_losses", losses)
    blocked = bool(task_id and losses[task_id] >= MAX_NODE_LOSSES)
    if not blocked and task_id and d.core.task(task_id).status in ("doing", "review"):
        text += f"; {task_id} goes back on the board and resumes from its last received commit"
        d.act(lambda core, now: core.set_task_status(task_id, "todo", now, who="foreman", reason=None))
    d.act(lambda core, now: core.feed(text, now, kind="error", agent=agent, task=task_id))
    d.act(lambda core, now: core.set_activity(agent, "idle", now, activity=f"lost {exc.node}"))
    if blocked and task_id:
        block(c, task_id, f"its turns were lost with their nodes {losses[task_id]} times (last: {exc.node})")
    else:
        c.kick()


def _record_cancelled(c: Conductor, tools: DaemonTools, agent: str, task_id: str | None, goal_id: str | None,
                      wall_seconds: float) -> None:
    """Record an aborted turn's usage: what its runner handed over (``tools.cancelled``), else
    the turn and its wall time alone. Never raises: the cancellation goes on."""
    partial = tools.cancelled or TurnResult(ok=False, error="the turn was aborted", aborted=True)
    try:
        record_turn(c.d, partial, agent=agent, task=task_id, goal=goal_id, wall_seconds=wall_seconds)
    except Exception:  # noqa: BLE001 - a store refusing must not turn an abort into a crash
        logger.exception("recording the usage of %s's aborted turn failed", agent)


def _request(c: Conductor, agent: str, job: JobKind, key: str, turn_id: str, prompt: str, task_id: str | None,
             goal_id: str | None, session: str | None) -> tuple[TurnRequest, DaemonTools]:
    """The request and tools of one turn (its worktree, system prompt, unread messages, safety env)."""
    from ...repos.gitsafety import safety_env

    lead = agent == LEAD
    cwd = cwd_of(c, agent, task_id, goal_id)
    tools = DaemonTools(c.d, agent, turn_id, lead=lead, cwd=cwd, task=task_id, goal=goal_id,
                        is_current=lambda: is_current(c, agent, turn_id),
                        on_merge_request=lambda tid, summary: merge.request(c, tid, summary),
                        on_session=lambda sid: records.set_session(c, key, session=sid),
                        on_process=lambda pid: processes.track(c, agent, turn_id, pid),
                        on_question=lambda did: records.set_session(c, key, question=did))
    prompt += prompts.unread_block(tools.unread())
    settings = c.settings
    branch = c.d.core.task(task_id).branch if task_id else None
    system = (prompts.LEAD_SYSTEM if lead else prompts.WORKER_SYSTEM).format(
        title=title(agent), user=settings.user_name, branch=branch or "?", workers=team_line(c))
    if block := prompts.repo_instructions(cwd, c.d.core.task(task_id) if task_id else None):
        system += "\n\n" + block
    req = TurnRequest(turn_id=turn_id, agent=agent, lead=lead, job=job, prompt=prompt, system=system, cwd=cwd,
                      session_id=session, task=task_id, goal=goal_id, model=c.models.get(agent),
                      max_turns=settings.max_turns or (settings.max_turns_lead if lead else settings.max_turns_worker),
                      env={**safety_env(os.environ, agent=agent, worktree=cwd), **processes.mark(c, agent, turn_id)})
    tools.activity("thinking", f"{job}: {prompt.splitlines()[0][:120]}", station="meeting" if job == "plan" else "desk")
    return req, tools


def _record_cost(c: Conductor, agent: str, task_id: str | None, goal_id: str | None, cost: float) -> None:
    costs = {k: dict(v) for k, v in c.d.core.world.meta.get("costs", {}).items()}
    goal_id = goal_id or (c.d.core.task(task_id).goal if task_id else None)
    for kind, ref in (("agent", agent), ("task", task_id), ("goal", goal_id)):
        if ref:
            bucket = costs.setdefault(kind, {})
            bucket[ref] = round(bucket.get(ref, 0.0) + cost, 6)
    records.set_meta(c, "costs", costs)


async def _ended(c: Conductor, agent: str, job: JobKind, key: str, result: TurnResult, task_id: str | None,
                 goal_id: str | None, tools: DaemonTools | None, prompt: str) -> None:
    d = c.d
    if not result.ok and (result.error or "").startswith("could not resume session"):
        d.spawn(_resume_failed(c, agent, job, key, task_id, goal_id, result.error or "", prompt),
                f"resume-failed {agent}")
        return
    if not result.ok:
        failed(c, agent, job, task_id, result.error or "the turn failed")
        if job == "plan" and goal_id:
            plan.failed(c, goal_id, result.error or "the turn failed")
        return
    if job == "plan" and goal_id:
        plan.ended(c, goal_id)
    elif job in ("work", "followup") and task_id and agent != LEAD:
        if work.ended(c, agent, key, task_id, result.text):
            return  # a nudge turn started
    elif job == "review" and task_id and tools is not None:
        await review.ended(c, task_id, tools)
    d.act(lambda core, now: core.set_activity(agent, "idle", now, activity="waiting for work"))
    maybe_followup(c, agent)
    c.kick()


def failed(c: Conductor, agent: str, job: str, task_id: str | None, reason: str) -> None:
    """End a failed turn: the agent shows ``error``, the feed says why, its open task is blocked."""
    d = c.d
    d.act(lambda core, now: core.set_activity(agent, "error", now, activity=reason[:200]))
    d.act(lambda core, now: core.log(agent, f"turn failed: {reason}", now, kind="error"))
    d.act(lambda core, now: core.feed(f"{title(agent)}'s {job} turn failed: {reason[:300]}", now,
                                      kind="error", agent=agent, task=task_id))
    if task_id and d.core.task(task_id).status in ("todo", "doing", "review"):
        d.act(lambda core, now: core.set_task_status(task_id, "blocked", now, who="foreman", reason=reason[:300]))
    c.kick()


def block(c: Conductor, task_id: str, reason: str) -> None:
    """Block a task that cannot go on (the reason in the task and the feed); the user retries it."""
    d = c.d
    if d.core.task(task_id).status in ("todo", "doing", "review"):
        d.act(lambda core, now: core.set_task_status(task_id, "blocked", now, who="foreman", reason=reason[:300]))
        d.act(lambda core, now: core.feed(f"{task_id} blocked: {reason[:300]}", now, kind="error", task=task_id))
    c.kick()


async def _resume_failed(c: Conductor, agent: str, job: JobKind, key: str, task_id: str | None, goal_id: str | None,
                         error: str, told: str) -> None:
    """A session could not be resumed: ask the user instead of silently starting over. A fresh
    session is told its job again (a work or follow-up job its task, a plan its goal, a review
    the task's diff and a new CI run) and what the lost session was to be told (``told``: e.g. a
    question's answer, unread messages it took)."""
    d = c.d
    d.act(lambda core, now: core.set_activity(agent, "error", now, activity="session could not be resumed"))
    dec = await d.ask("question", f"{title(agent)}'s session for {task_id or goal_id} could not be resumed "
                      f"({error[:200]}). Start a fresh session?", ["Start a fresh session", "Leave it blocked"],
                      asked_by="foreman", task=task_id, goal=goal_id if not task_id else None)
    if dec.answer is not None and dec.answer.option == 0:
        data = records.sessions(c)
        data.get(key, {}).pop("session", None)
        records.set_meta(c, "sessions", data)
        if job == "review" and task_id and d.core.task(task_id).status == "review":
            from . import ci  # (ci starts reviews: it imports this module)

            # the diff, CI and risks again, as for a first review: a resumed turn's prompt holds none of them
            d.spawn(ci.after_work(c, task_id, d.core.task(task_id).assignee or "",
                                  note="What the lost session was to be told:\n" + told), f"review {task_id}")
            return
        launch(c, agent, job, key, prompt=_fresh_prompt(c, agent, job, task_id, goal_id, told),
               task_id=task_id, goal_id=goal_id)
    elif task_id and d.core.task(task_id).status in ("todo", "doing", "review"):
        d.act(lambda core, now: core.set_task_status(task_id, "blocked", now, who="foreman",
                                                     reason="session could not be resumed"))


def _fresh_prompt(c: Conductor, agent: str, job: JobKind, task_id: str | None, goal_id: str | None, told: str) -> str:
    """The prompt of a fresh session replacing a lost one: the job again, then ``told``."""
    world = c.d.core.world
    parts = ["Your previous session was lost; start this job again from the current state."]
    if job in ("work", "followup") and task_id and agent != LEAD:
        answered = [x for x in world.decisions.values() if x.task == task_id and x.kind == "question"
                    and x.status == "answered"]
        parts.append(prompts.work_prompt(c.d.core.task(task_id), takeover_from=None, answered=answered, unread=[]))
    elif job == "plan" and goal_id:
        parts.append(prompts.plan_prompt(world.goals[goal_id].text, goal_id, []))
    parts.append("What the lost session was to be told:\n" + told)
    return "\n\n".join(parts)


def busy_on(c: Conductor, agent: str, task_id: str) -> bool:
    """True while ``agent`` runs a turn on ``task_id`` or has one queued (deferred)."""
    run = c.running.get(agent)
    return (run is not None and run.task_id == task_id) or any(
        queued[3] == task_id for queued in c.deferred.get(agent, []))


def maybe_followup(c: Conductor, agent: str) -> None:
    """Start a follow-up turn for an idle on-shift agent with unread messages (none while a
    turn of the agent is queued: that turn's prompt carries them)."""
    a = c.d.core.world.agents.get(agent)
    if a is None or not a.active or a.paused or agent in c.running or c.deferred.get(agent) \
            or not c.d.core.peek_unread(agent):
        return  # (a queued turn reads the unread messages in its prompt)
    task_id = a.task
    t = c.d.core.world.tasks.get(task_id or "")
    if t is None or t.status != "doing" or t.assignee != agent:
        task_id = None  # answer in a chat turn, never in a finished or foreign task's worktree
    launch(c, agent, "followup", f"{agent}:{task_id or 'chat'}", task_id=task_id,
           prompt="You have new messages; answer or act on them.")
