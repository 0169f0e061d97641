"""Usage accumulates per agent, task and goal, survives a restart, travels in foreman.status,
and ``foreman usage`` reads it from the store without a daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import protocol as p
from foreman.cli import main
from foreman.config import resolve
from foreman.core.usage import add, day_key, minus, over_budget
from foreman.daemon import Daemon
from tests.conductor.test_daemon_edges import NoTeam

T0 = 1_767_225_600.0  # 2026-01-01 00:00 UTC


def turn(cost: float, inp: int = 1000, out: int = 200) -> p.Usage:
    return p.Usage(input_tokens=inp, output_tokens=out, cache_read_tokens=50, cache_write_tokens=5, cost_usd=cost, turns=1,
                   wall_seconds=2.5)


def test_arithmetic_and_days() -> None:
    s = add(turn(0.1), turn(0.2))
    assert (s.input_tokens, s.output_tokens, s.turns, s.cost_usd, s.wall_seconds) == (2000, 400, 2, 0.3, 5.0)
    assert minus(s, turn(0.1)).cost_usd == 0.2 and minus(turn(0.1), s).input_tokens == 0
    assert day_key(T0) == "2026-01-01" and day_key(T0 - 1) == "2025-12-31"
    assert over_budget(5.0, 5.0) and not over_budget(4.99, 5.0) and not over_budget(100.0, None)


def settings_for(home: Path, **extra):
    return resolve({"home": str(home), "port": 0, "backend": "sim", **extra}, env={})


async def test_usage_lands_on_agent_task_goal_and_survives_restart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    clock = [T0]
    daemon = Daemon(settings_for(home, budget_day="9.5"), backend=NoTeam(), clock=lambda: clock[0])
    await daemon.start()
    try:
        g = daemon.act(lambda c, now: c.submit_goal("add tags", now))
        t = daemon.act(lambda c, now: c.create_task("tags", now, goal=g.id))
        daemon.act(lambda c, now: c.record_usage(turn(0.25), now, agent="kit", task=t.id))
        daemon.act(lambda c, now: c.record_usage(turn(0.5), now, agent="kit", goal=g.id))  # a planning turn: goal only
        daemon.act(lambda c, now: c.record_usage(turn(1.0), now, agent="ghost", task="t99"))  # unknown: totals only
        status = daemon.status()
        assert status.usage_session.cost_usd == 1.75 and status.usage_day.turns == 3 and status.budget_day_usd == 9.5
    finally:
        await daemon.stop()
    clock[0] = T0 + 3600
    again = Daemon(settings_for(home), backend=NoTeam(), clock=lambda: clock[0])
    await again.start()
    try:
        w = again.core.world
        assert w.agents["kit"].usage.cost_usd == 0.75 and w.agents["kit"].usage.turns == 2
        assert w.tasks[t.id].usage.cost_usd == 0.25 and w.tasks[t.id].usage.input_tokens == 1000
        assert w.goals[g.id].usage.cost_usd == 0.75
        status = again.status()
        assert status.usage_session.cost_usd == 0.0  # a new session
        assert status.usage_day.cost_usd == 1.75  # the same UTC day
        snap = json.loads(again.snapshot_frame())
        assert snap["status"]["usageDay"]["costUsd"] == 1.75
        assert next(a for a in snap["agents"] if a["name"] == "kit")["usage"]["turns"] == 2
    finally:
        await again.stop()
    # the CLI reads the same from the store, no daemon running
    assert main(["usage", "--home", str(home), "--backend", "sim", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"]["costUsd"] == 1.75 and data["total"]["turns"] == 3
    assert {a["name"]: a["usage"]["costUsd"] for a in data["agents"]}["kit"] == 0.75
    assert data["tasks"][0]["usage"]["costUsd"] == 0.25 and data["goals"][0]["usage"]["costUsd"] == 0.75
    assert data["days"]["2026-01-01"]["turns"] == 3
    assert main(["usage", "--home", str(home), "--backend", "sim"]) == 0
    text = capsys.readouterr().out
    assert "kit" in text and "0.7500" in text and "total" in text


def test_usage_without_state_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["usage", "--home", str(tmp_path / "nothing"), "--backend", "sim"]) == 2
    assert "no state in" in capsys.readouterr().err


def test_turn_usage_reads_what_the_backend_reported() -> None:
    from dataclasses import dataclass

    from foreman.backends.turns import TurnResult
    from foreman.core.usage import turn_usage

    bare = turn_usage(TurnResult(ok=True), wall_seconds=1.25)
    assert (bare.turns, bare.cost_usd, bare.input_tokens, bare.wall_seconds) == (1, 0.0, 0, 1.25)

    @dataclass
    class Reported:
        cost_usd: float | None = 0.0123
        input_tokens: int | None = 1200
        output_tokens: int | None = 340
        cache_read_tokens: int | None = None
        cache_write_tokens: int | None = 77

    u = turn_usage(Reported(), wall_seconds=-1)
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_usd, u.wall_seconds) == (
        1200, 340, 0, 77, 0.0123, 0.0)


def test_usage_takes_only_the_options_it_reads(capsys) -> None:
    """`foreman usage --reset` was accepted and did nothing (the parser had every start option);
    an option usage cannot honour is now refused by argparse (exit 2) and --help lists four."""
    with pytest.raises(SystemExit) as exc:
        main(["usage", "--reset"])
    assert exc.value.code == 2 and "unrecognized arguments: --reset" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["usage", "--help"])
    assert len(capsys.readouterr().out.splitlines()) < 15
