"""The terminal client's usage, repository and risk views (pure functions of the mirror)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import protocol as p
from foreman.tui import commands as c
from foreman.tui import views
from foreman.tui.mirror import Mirror

U = p.Usage(input_tokens=12_000, output_tokens=800, cache_read_tokens=5_000, cost_usd=0.4321, turns=3, wall_seconds=90)
KEY = p.Risk(kind="secret", severity="critical", path="a.py", line=3, message="AWS Access Key (AKIA...)")


def world() -> Mirror:
    m = Mirror()
    status = p.Status(backend="claude", version="0", user_name="ada", usage_session=U,
                      usage_day=p.Usage(cost_usd=4.8, turns=9), budget_day_usd=5.0)
    m.apply(p.Snapshot(
        seq=1, status=status,
        agents=[p.Agent(name="kit", usage=U), p.Agent(name="wren")],
        goals=[p.Goal(id="g1", text="tags", usage=U, budget_usd=5.0)],
        tasks=[p.Task(id="t1", title="Tag model", status="doing", assignee="kit", usage=U), p.Task(id="t2", title="Idle")],
        decisions=[p.Decision(id="d1", kind="merge", prompt="Merge t1?", options=["Request changes", "Merge anyway (risk acknowledged)", "Reject"],
                              asked_by="marlow", task="t1", risks=[KEY])],
        repos=[p.Repo(id="proj", path="/src/proj", instructions=["AGENTS.md"]), p.Repo(id="bare", path="/src/bare")],
    ))
    return m


def test_usage_view_and_status_line() -> None:
    m = world()
    lines = views.usage_view(m)
    assert lines[0].startswith("session") and "$0.4321" in lines[0]
    assert "today (UTC)" in lines[1] and "$4.80 of $5.00" in lines[1]
    assert any(line.strip().startswith("kit") and "12,000 in" in line for line in lines)
    assert any("g1 tags" in line and "of $5.00" in line for line in lines)
    assert any("t1 Tag model" in line for line in lines) and not any("t2 Idle" in line for line in lines)
    assert views.usage_status_text(m.status) == "session $0.4321 · today $4.80 of $5.00"
    assert views.status_view(m)[-1] == "usage: session $0.4321 · today $4.80 of $5.00"
    assert "$0.4321" in views.task_line(m.tasks["t1"]) and "$" not in views.task_line(m.tasks["t2"])
    assert "$0.4321" in next(line for line in views.agents_view(m) if line.startswith("kit"))


def test_repo_view_and_commands() -> None:
    m = world()
    lines = views.repos_view(m)
    assert "  instructions for agents: AGENTS.md" in lines
    assert "  instructions for agents: none (no AGENTS.md or CLAUDE.md at the root)" in lines
    assert c.interpret("/repo", m) == c.Show("repos") and c.interpret("/usage", m) == c.Show("usage")
    assert isinstance(c.interpret("/usage now", m), c.Invalid)


def test_risks_in_the_decision_view_and_the_diff() -> None:
    m = world()
    lines = views.decision_lines(m.decisions["d1"])
    assert "    risk: CRITICAL secret a.py:3: AWS Access Key (AKIA...)" in lines
    assert lines[-1] == "    1 Request changes · 2 Merge anyway (risk acknowledged) · 3 Reject"
    diff = p.Diff(repo="proj", base="a" * 40, head="b" * 40)
    shown = views.diff_lines("d1", diff, m.decisions["d1"].risks)
    assert shown[1] == "# merge-risk scan: 1 finding(s)" and shown[2].startswith("# CRITICAL secret a.py:3")
    assert views.diff_lines("kit-t1", diff)[1] == "# no changes"


# ---------------------------------------------------------------- amounts of money
@pytest.mark.parametrize("usd,text", [
    (0.0, "$0.0000"),
    (0.00012, "$0.00012"),
    (0.000123456, "$0.00012"),
    (0.0001, "$0.0001"),
    (0.00005, "$0.00005"),
    (0.000001, "$0.000001"),
    (0.0000015, "$0.0000015"),
    (0.0012, "$0.0012"),
    (0.005, "$0.0050"),
    (0.0123, "$0.0123"),
    (0.4321, "$0.4321"),
    (0.99996, "$1.00"),
    (1.0, "$1.00"),
    (4.8, "$4.80"),
    (1234.5, "$1234.50"),
])
def test_money_keeps_significant_digits_of_small_amounts(usd: float, text: str) -> None:
    assert views.money(usd) == text


@given(st.floats(min_value=1e-9, max_value=0.01, allow_nan=False, exclude_max=True))
def test_money_never_shows_a_nonzero_amount_as_zero(usd: float) -> None:
    shown = views.money(usd)
    value = float(shown.removeprefix("$"))
    assert value > 0 and abs(value - usd) <= usd * 0.05, (usd, shown)  # two significant digits at least


def test_status_line_shows_a_tiny_cap_and_cost() -> None:
    status = p.Status(backend="local", version="0", user_name="ada", usage_session=p.Usage(cost_usd=0.000042, turns=1),
                      usage_day=p.Usage(cost_usd=0.000042, turns=1), budget_day_usd=0.0001)
    assert views.usage_status_text(status) == "session $0.000042 · today $0.000042 of $0.0001"


def test_foreman_usage_table_shows_tiny_costs_and_caps() -> None:
    from foreman.usage import UsageReport, format_report

    tiny = p.Usage(cost_usd=0.00012, turns=1)
    report = UsageReport(goals=[p.Goal(id="g1", text="tags", usage=tiny, budget_usd=0.0005)], total=tiny)
    text = format_report(report)
    total = next(line for line in text.splitlines() if line.startswith("total"))
    assert "0.00012" in total
    assert "cap $0.0005" in next(line for line in text.splitlines() if "g1 tags" in line)


def test_foreman_usage_says_when_a_section_has_nothing_yet() -> None:
    """Found by a newcomer: after a sim run (no model turns) the tasks section was a bare header."""
    from foreman.usage import UsageReport, format_report

    report = UsageReport(tasks=[p.Task(id="t1", title="idle", goal="g1")])
    lines = format_report(report).splitlines()
    for section, empty in (("agents", "  (none)"), ("goals", "  (none)"), ("tasks", "  (no task has used a model yet)")):
        assert lines[lines.index(section) + 1] == empty, lines
    used = UsageReport(tasks=[p.Task(id="t1", title="busy", goal="g1", usage=p.Usage(turns=2, cost_usd=0.01))])
    assert any(line.startswith("  t1 busy") for line in format_report(used).splitlines())


def test_repo_lines_say_where_merges_go_not_what_the_checkout_has() -> None:
    """Found by a newcomer: with the checkout on a detached HEAD, ``/repo`` said "on main @ <main's
    head>", as if the checkout were on main. The line names the base branch merges go to."""
    from foreman.tui.mirror import Mirror

    m = Mirror()
    m.repos = {"demo": p.Repo(id="demo", path="/src/demo", base_branch="main", head="76cab273aa", dirty=True)}
    assert views.repos_view(m)[0] == "demo: /src/demo · merges go to main @ 76cab273 (uncommitted changes)"
    assert not any(" on main" in line for line in views.repos_view(m))
