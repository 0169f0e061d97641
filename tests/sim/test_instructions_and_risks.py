"""The sim's demo repository has an AGENTS.md the lead cites once, and every merge decision
carries the risk scan of the commit it would merge (the sim's changes are clean: nothing critical)."""

from __future__ import annotations

from .conftest import Run


def test_repo_lists_agents_md_and_the_lead_cites_it_once(first_run: Run) -> None:
    c = first_run.client
    repos = [m["repo"] for m in c.messages if m["type"] == "repo.upsert"] or c.snapshot.get("repos", [])
    assert repos and all(r["instructions"] == ["AGENTS.md"] for r in repos)
    assert (first_run.repo / "AGENTS.md").read_text().startswith("# Notes for coding agents")
    cites = [m["line"] for m in c.messages if m["type"] == "log.append" and "AGENTS.md asks" in m["line"]["text"]]
    assert len(cites) == 1 and cites[0]["agent"] == "marlow"


def test_merge_decisions_carry_the_risk_scan(first_run: Run) -> None:
    merges = first_run.client.decisions_of("merge")
    assert merges
    for d in merges:
        assert isinstance(d["risks"], list)
        assert not [r for r in d["risks"] if r["severity"] == "critical"], d["risks"]
        assert d["options"][0] == "Merge"
