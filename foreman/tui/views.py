"""Text views of the mirror: what ``/status``, ``/tasks``, ``/agents``, ``/decisions``,
``/feed``, ``/usage``, ``/repo`` and ``/diff`` print in line mode and in the terminal app's console.

Pure functions of the mirror (no I/O, no clock). Times are shown as ``HH:MM:SS`` local time
of the entity's own timestamp.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable

import protocol as p
from protocol.text import display, ordinal

from ..core.usage import money  # noqa: F401  (one formatter for amounts, re-exported for the views)
from .mirror import Mirror, id_order

TASK_STATUS_ORDER: tuple[p.TaskStatus, ...] = ("doing", "review", "todo", "blocked", "done", "cancelled")
"""The order ``/tasks`` lists the task statuses in: what moves first."""


def safe(text: str) -> str:
    """Text from the daemon as every view shows it: bidi controls and control characters other
    than newline and tab escaped as ``<U+XXXX>`` (``protocol.text``, the rule of
    ``docs/protocol.md`` "Display-safe text"), so the terminal shows the text that is stored."""
    return display(text)


def one_line(text: str) -> str:
    """:func:`safe` text for a one-line place (a table cell, the banner): newlines and tabs as blanks."""
    return " ".join(display(text).replace("\t", " ").split("\n"))


def clock(at: float) -> str:
    """Format a Unix time (seconds) as local ``HH:MM:SS``; ``--:--:--`` for 0 (unknown)."""
    if not at:
        return "--:--:--"
    return _dt.datetime.fromtimestamp(at).strftime("%H:%M:%S")


def credentials_text(auth: str) -> str:
    """Label the backend's credential status (the wire's ``status.auth``) for people.

    ``status.auth`` comes from ``Backend.status()``: how the backend reaches its model (``none``
    for the sim, ``api-key``, ``missing: ...``), not whether clients need the daemon's token; so
    it is shown as ``credentials: ...``, and ``none`` as ``none needed``.
    """
    return f"credentials: {'none needed' if auth == 'none' else auth}"


def status_view(m: Mirror) -> list[str]:
    """Return the ``/status`` lines: the banner, goals, counts of tasks and open decisions."""
    if m.status is None:
        return ["not connected yet (no snapshot)"]
    s = m.status
    lines = [f"foreman {s.version} · backend {s.backend} ({credentials_text(s.auth)}) · profile {s.profile} · user {s.user_name} · seq {m.seq}"]
    for repo in m.repos.values():
        dirty = " (uncommitted changes)" if repo.dirty else ""
        lines.append(f"repo {repo.id}: {repo.path} · merges go to {repo.base_branch} @ {(repo.head or '?')[:8]}{dirty}")
    for goal in sorted(m.goals.values(), key=lambda g: id_order(g.id)):
        lines.append(f"goal {goal.id} [{goal.status} {goal.progress}%] {goal.text}")
    counts = {status: 0 for status in TASK_STATUS_ORDER}
    for task in m.tasks.values():
        counts[task.status] += 1
    lines.append("tasks: " + ", ".join(f"{n} {status}" for status, n in counts.items() if n) if m.tasks else "tasks: none")
    working = [a.name for a in m.agents.values() if a.active and a.state not in ("idle", "done")]
    lines.append(f"agents: {len(m.agents)} ({', '.join(working) or 'none'} working)")
    open_ = m.open_decisions()
    lines.append(f"open decisions: {', '.join(d.id for d in open_)}" if open_ else "open decisions: none")
    lines.append("usage: " + usage_status_text(s))
    return lines




def usage_status_text(s: p.Status) -> str:
    """The usage part of the status line: ``session $0.42 · today $1.20 of $10.00``."""
    cap = f" of {money(s.budget_day_usd)}" if s.budget_day_usd is not None else ""
    return f"session {money(s.usage_session.cost_usd)} · today {money(s.usage_day.cost_usd)}{cap}"


def _usage_row(name: str, u: p.Usage, cap: float | None = None) -> str:
    tokens = f"{u.input_tokens:>10,} in {u.output_tokens:>9,} out {u.cache_read_tokens:>10,} cache"
    return f"{name[:30]:<30} {u.turns:>5} turns {tokens} {money(u.cost_usd):>9}" + (f" of {money(cap)}" if cap is not None else "")


def usage_view(m: Mirror) -> list[str]:
    """Return the ``/usage`` lines: session and today, then per agent, goal and task."""
    lines: list[str] = []
    if m.status is not None:
        lines += [_usage_row("session", m.status.usage_session), _usage_row("today (UTC)", m.status.usage_day, m.status.budget_day_usd)]
    lines.append("agents:")
    lines += ["  " + _usage_row(a.name, a.usage) for a in m.agents.values()]
    lines.append("goals:")
    lines += ["  " + _usage_row(f"{g.id} {g.text}", g.usage, g.budget_usd) for g in sorted(m.goals.values(), key=lambda g: id_order(g.id))]
    tasks = [t for t in sorted(m.tasks.values(), key=lambda t: id_order(t.id)) if t.usage.turns or t.budget_usd is not None]
    lines.append("tasks:" if tasks else "tasks: none used anything yet")
    lines += ["  " + _usage_row(f"{t.id} {t.title}", t.usage, t.budget_usd) for t in tasks]
    return lines


def repos_view(m: Mirror) -> list[str]:
    """Return the ``/repo`` lines: each repository and the instruction files its agents get."""
    if not m.repos:
        return ["no repositories (add one: /repo add <path>)"]
    lines = []
    for repo in m.repos.values():
        dirty = " (uncommitted changes)" if repo.dirty else ""
        lines.append(f"{repo.id}: {repo.path} · merges go to {repo.base_branch} @ {(repo.head or '?')[:8]}{dirty}")
        found = ", ".join(repo.instructions) if repo.instructions else "none (no AGENTS.md or CLAUDE.md at the root)"
        lines.append(f"  instructions for agents: {found}")
    return lines


def risk_lines(risks: list[p.Risk], limit: int = 8) -> list[str]:
    """The findings of a merge's risk scan, most severe first: ``CRITICAL secret a.py:3 ...``."""
    out = []
    for r in risks[:limit]:
        where = (f" {r.path}" + (f":{r.line}" if r.line else "")) if r.path else ""
        out.append(f"{r.severity.upper()} {r.kind}{where}: {r.message}")
    if len(risks) > limit:
        out.append(f"... and {len(risks) - limit} more (see /diff)")
    return out


def task_line(task: p.Task) -> str:
    """One line for a task: ``t3 [doing] Title (kit) after t1,t2 prio 2``."""
    parts = [f"{task.id} [{task.status}] {task.title}"]
    if task.usage.turns:
        parts.append(money(task.usage.cost_usd) + (f"/{money(task.budget_usd)}" if task.budget_usd is not None else ""))
    if task.assignee:
        parts.append(f"({task.assignee})")
    if task.deps:
        parts.append("after " + ",".join(task.deps))
    if task.priority:
        parts.append(f"prio {task.priority}")
    if note := merge_note(task):
        parts.append(note)
    if task.status == "blocked" and task.blocked_reason:
        parts.append(f"— {task.blocked_reason}")
    return " ".join(parts)


def merge_note(task: p.Task) -> str:
    """Where the task's approved merge is: ``merge: testing``, ``merge: queued, 2nd``, in a merge
    train ``merge: queued, 2nd, testing behind t3`` (or ``passed behind t3``, ``FAILED (exit 1)
    behind t3``), the last merge test's failure (``merge test FAILED (exit 1)``), ``merged
    untested``; empty otherwise."""
    test = task.merge_test
    if task.merge_queue == 1:
        return "merge: testing" if test is not None and test.state == "testing" else "merge: landing"
    if task.merge_queue:
        if test is not None and test.behind:
            how = {"testing": "testing", "passed": "passed", "untested": "untested"}.get(test.state) or test.verdict
            return f"merge: queued, {ordinal(task.merge_queue)}, {how} behind {test.behind}"
        return f"merge: queued, {ordinal(task.merge_queue)}"
    if test is not None and test.state in ("failed", "timed_out") and task.status != "done":
        return f"merge test {test.verdict}"
    if test is not None and test.state == "untested" and task.status == "done":
        return "merged untested"
    return ""


def status_cell(task: p.Task) -> str:
    """The status column of the tasks table: the status, or ``merging`` / ``queued N`` while its
    approved merge is tested or waits in the merge queue (``merging N`` while a merge train tests
    it behind the ones ahead)."""
    if task.merge_queue == 1:
        return "merging"
    test = task.merge_test
    if task.merge_queue and test is not None and test.behind and test.state == "testing":
        return f"merging {task.merge_queue}"
    return f"queued {task.merge_queue}" if task.merge_queue else task.status


def tasks_view(m: Mirror) -> list[str]:
    """Return the ``/tasks`` lines: tasks grouped by status (see TASK_STATUS_ORDER), ids in order."""
    if not m.tasks:
        return ["no tasks"]
    lines: list[str] = []
    for status in TASK_STATUS_ORDER:
        group = sorted((t for t in m.tasks.values() if t.status == status), key=lambda t: id_order(t.id))
        if group:
            lines.append(f"{status} ({len(group)}):")
            lines.extend("  " + task_line(t) for t in group)
    return lines


def agent_state(agent: p.Agent) -> str:
    """The state column of an agent: ``editing@desk``, with ``paused`` / ``off shift`` marks."""
    text = f"{agent.state}@{agent.station}"
    if not agent.active:
        text += " (off shift)"
    elif agent.paused:
        text += " (paused)"
    return text


def team_order(agents: Iterable[p.Agent]) -> list[p.Agent]:
    """The agents as the client lists them: the lead, the workers on shift by seat, then those
    off shift by seat (agents without a seat, from an older Foreman, by name at the end of their group)."""
    return sorted(agents, key=lambda a: (a.role != "lead", not a.active, a.seat is None, a.seat or 0, a.name))


def idle_banner(agents: Iterable[p.Agent]) -> str:
    """The banner when no decision is open: ``nothing needs you · 2 of 5 workers working · the
    lead is busy`` (workers on shift, counted as :func:`team_summary` counts them; the lead apart)."""
    agents = list(agents)
    on = [a for a in agents if a.role == "worker" and a.active]
    working = sum(1 for a in on if a.state not in ("idle", "done") and not a.paused)
    lead_busy = any(a.role == "lead" and a.active and not a.paused and a.state not in ("idle", "done") for a in agents)
    noun = "worker" if len(on) == 1 else "workers"
    return f"nothing needs you · {working} of {len(on)} {noun} working" + (" · the lead is busy" if lead_busy else "")


def team_summary(agents: Iterable[p.Agent]) -> str:
    """One line about the team for the agents pane's title: ``12 on shift · 3 working · 2 off shift``."""
    workers = [a for a in agents if a.role == "worker"]
    on = [a for a in workers if a.active]
    working = sum(1 for a in on if a.state not in ("idle", "done") and not a.paused)
    off = len(workers) - len(on)
    return f"{len(on)} on shift · {working} working" + (f" · {off} off shift" if off else "")


def agents_view(m: Mirror) -> list[str]:
    """Return the ``/agents`` lines: name, role, state@station, task, activity (lead, then workers
    on shift by seat, then off shift), and the team's summary."""
    if not m.agents:
        return ["no agents"]
    width = max(len(name) for name in m.agents)
    lines = []
    for agent in team_order(m.agents.values()):
        task = agent.task or "-"
        activity = f"  {agent.activity}" if agent.activity else ""
        lines.append(f"{agent.name:<{width}} {agent.role:<6} {agent_state(agent):<28} {task:<5} {money(agent.usage.cost_usd):>8}{activity}")
    lines.append(f"team: {team_summary(m.agents.values())}")
    return lines


def options_text(decision: p.Decision) -> str:
    """The options of a decision numbered from 1, as the user types them: ``1 Merge · 2 Reject``."""
    return " · ".join(f"{i} {label}" for i, label in enumerate(decision.options, 1))


def decision_lines(decision: p.Decision) -> list[str]:
    """The lines that present one decision: head, detail (if any), numbered options."""
    about = ", ".join(x for x in (decision.task, decision.worktree) if x)
    head = f"{decision.id} {decision.kind} from {decision.asked_by}" + (f" ({about})" if about else "")
    lines = [f"{head}: {decision.prompt}"]
    if decision.detail:
        lines.extend("    " + line for line in decision.detail.splitlines())
    if decision.risks:
        lines.extend("    risk: " + line for line in risk_lines(decision.risks, limit=5))
    lines.append("    " + options_text(decision))
    return lines


def answer_text(decision: p.Decision) -> str:
    """How an answered (or cancelled) decision ended: ``d3 answered: Merge (by user) "text"``."""
    if decision.status == "cancelled":
        return f"{decision.id} cancelled"
    if decision.answer is None:
        return f"{decision.id} {decision.status}"
    a = decision.answer
    extra = f' "{a.text}"' if a.text else ""
    return f"{decision.id} answered: {a.option + 1} {a.label} (by {a.by}){extra}"


def decisions_view(m: Mirror) -> list[str]:
    """Return the ``/decisions`` lines: open decisions, oldest first."""
    open_ = m.open_decisions()
    if not open_:
        return ["no open decisions"]
    lines: list[str] = []
    for d in open_:
        lines.extend(decision_lines(d))
    return lines


def feed_line(item: p.FeedItem) -> str:
    """One feed line: ``12:03:04 [task] kit: text``."""
    who = f"{item.agent}: " if item.agent else ""
    return f"{clock(item.at)} [{item.kind}] {who}{item.text}"


def message_line(msg: p.Message) -> str:
    """One message line: ``12:03:04 kit -> wren: text``."""
    return f"{clock(msg.at)} {msg.sender} -> {msg.to}: {msg.text}"


def feed_view(m: Mirror, limit: int = 20) -> list[str]:
    """Return the ``/feed`` lines: the last ``limit`` feed items, oldest first."""
    items = list(m.feed)[-limit:]
    return [feed_line(i) for i in items] if items else ["the feed is empty"]


def diff_lines(target: str, diff: p.Diff, risks: list[p.Risk] | None = None) -> list[str]:
    """Render a structured diff as unified-diff-like text lines.

    The first character of each line tells its kind: ``+``/``-``/`` `` hunk lines, ``@`` hunk
    headers, ``#`` file headers and the summary (the app colours by it).
    """
    summary = f"{diff.files_changed} files, +{diff.additions} -{diff.deletions}"
    lines = [f"# {target}: {diff.repo} {diff.base[:8]}..{diff.head[:8]} — {summary}"]
    if risks:
        lines.append(f"# merge-risk scan: {len(risks)} finding(s)")
        lines.extend("# " + line for line in risk_lines(risks, limit=50))
    if not diff.files:
        lines.append("# no changes")
    for f in diff.files:
        name = f"{f.old_path} -> {f.path}" if f.old_path and f.old_path != f.path else f.path
        lines.append(f"# {name} ({f.status}, +{f.additions} -{f.deletions})")
        if f.binary:
            lines.append("# binary file not shown")
        elif f.truncated:
            lines.append("# diff too large to show")
        for h in f.hunks:
            header = f" {h.header}" if h.header else ""
            lines.append(f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@{header}")
            lines.extend(f"{ln.op}{ln.text}" for ln in h.lines)
    return lines


def memory_lines(result: p.MemoryResult, asked: str | None) -> list[str]:
    """Render a ``memory`` reply: the index of notes, or the asked note's text."""
    if asked is None:
        return ["memory notes:"] + [f"  {n.note}" for n in result.notes] if result.notes else ["no memory notes"]
    lines: list[str] = []
    for note in result.notes:
        lines.append(f"# {note.note}")
        lines.extend(note.text.splitlines() or ["(empty)"])
    return lines or [f"no note {asked}"]
