"""Usage reports: the ``foreman.status`` totals and ``foreman usage`` (read from the store,
no daemon needed).

``foreman usage`` opens ``<home>/<profile>/state.db`` read-only (SQLite ``mode=ro``), so it
works beside a running daemon and never changes the state.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel

from protocol import Agent, Goal, Task, Usage

from .core.usage import day_usage, minus, money, turn_usage
from .errors import ForemanError


def usage_status(meta: Mapping[str, Any], base: Usage, now: float, settings: Any) -> dict[str, Any]:
    """The ``foreman.status`` usage fields: the session's usage (the running total minus
    ``base``, the total at start), today's (UTC) and the daily cap."""
    total = Usage.model_validate(meta.get("usage_total", {}))
    return {"usage_session": minus(total, base), "usage_day": day_usage(meta.get("usage_days", {}), now),
            "budget_day_usd": getattr(settings, "budget_day", None)}


@dataclass
class UsageReport:
    """Usage per agent, task and goal, per day and in total, as stored."""

    agents: list[Agent] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    days: dict[str, Usage] = field(default_factory=dict)
    total: Usage = field(default_factory=Usage)

    def wire(self) -> dict[str, Any]:
        """The report as JSON-ready data (camelCase usage objects)."""
        return {
            "total": self.total.wire(),
            "days": {k: v.wire() for k, v in sorted(self.days.items())},
            "agents": [{"name": a.name, "usage": a.usage.wire()} for a in self.agents],
            "tasks": [{"id": t.id, "title": t.title, "goal": t.goal, "budgetUsd": t.budget_usd, "usage": t.usage.wire()} for t in self.tasks],
            "goals": [{"id": g.id, "text": g.text, "budgetUsd": g.budget_usd, "usage": g.usage.wire()} for g in self.goals],
        }


def read_report(profile_dir: Path) -> UsageReport:
    """Read the usage of a profile from its store, read-only.

    Raises:
        ForemanError: there is no store in ``profile_dir``, or it cannot be read.
    """
    db_path = profile_dir / "state.db"
    if not db_path.exists():
        raise ForemanError(f"no state in {profile_dir} (has this profile run? try --profile or --home)")
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT kind, json FROM entities WHERE kind IN ('agent','task','goal') ORDER BY rowid").fetchall()
            meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('usage_total','usage_days')").fetchall())
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ForemanError(f"cannot read {db_path}: {exc}") from None
    report = UsageReport()
    models: dict[str, tuple[type[BaseModel], list[Any]]] = {"agent": (Agent, report.agents), "task": (Task, report.tasks), "goal": (Goal, report.goals)}
    for kind, text in rows:
        model, into = models[kind]
        into.append(model.model_validate_json(text))
    report.total = Usage.model_validate(json.loads(meta.get("usage_total", "{}")))
    report.days = {k: Usage.model_validate(v) for k, v in json.loads(meta.get("usage_days", "{}")).items()}
    return report


def _row(name: str, u: Usage, extra: str = "") -> str:
    return (f"{name[:34]:34} {u.turns:6} {u.input_tokens:12,} {u.output_tokens:11,} {u.cache_read_tokens:12,} "
            f"{u.cache_write_tokens:11,} {money(u.cost_usd).replace('$', ''):>10} {u.wall_seconds / 60:8.1f}{extra}")


def _cap(usd: float | None) -> str:
    return f"  cap {money(usd)}" if usd is not None else ""


def format_report(report: UsageReport, *, now: float | None = None) -> str:
    """The report as a text table (per agent, goal and task; today and in total)."""
    head = f"{'':34} {'turns':>6} {'input':>12} {'output':>11} {'cache read':>12} {'cache write':>11} {'USD':>10} {'minutes':>8}"
    today = time.strftime("%Y-%m-%d", time.gmtime(now if now is not None else time.time()))
    lines = [head, _row("total", report.total), _row(f"today ({today} UTC)", report.days.get(today, Usage())), "", "agents"]
    lines += [_row("  " + a.name, a.usage) for a in report.agents] or ["  (none)"]
    lines += ["", "goals"]
    lines += [_row(f"  {g.id} {g.text}", g.usage, _cap(g.budget_usd)) for g in report.goals] or ["  (none)"]
    lines += ["", "tasks"]
    lines += [_row(f"  {t.id} {t.title}", t.usage, _cap(t.budget_usd))
              for t in report.tasks if t.usage.turns or t.budget_usd is not None] or ["  (no task has used a model yet)"]
    return "\n".join(lines)


def usage_main(settings: Any, *, as_json: bool) -> int:
    """``foreman usage [--json]``: print the stored usage of the resolved profile; exit 0."""
    report = read_report(settings.profile_dir)
    if as_json:
        print(json.dumps(report.wire(), indent=2))
    else:
        print(format_report(report))
    sys.stdout.flush()
    return 0


def record_turn(daemon: Any, result: Any, *, agent: str, task: str | None, goal: str | None, wall_seconds: float) -> None:
    """Add a finished turn's usage to its agent, task and goal (durably) and publish the new
    status totals (``foreman.status``)."""
    usage = turn_usage(result, wall_seconds=wall_seconds)
    daemon.act(lambda c, now: c.record_usage(usage, now, agent=agent, task=task, goal=goal))
    daemon.publish_status()
