"""A mixed team on a local multi-node Ray cluster: per the config file's ``agents`` section, Kit
runs on the claude backend (the real claude-agent-sdk driving the scripted fake ``claude`` CLI)
and Juniper on the local backend (real HTTP to the scripted OpenAI-compatible server). Their task
turns and CI run on different nodes, the merge decisions open and are answered in the daemon,
and main's merged tree is the one the same run gives with the local executor."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from foreman.daemon import Daemon

from ..claude.fake_claude import FakeClaude, opt
from ..local_backend.fakeserver import FakeOpenAI
from ..local_backend.helpers import fake_profile_config
from ..local_backend.test_flow_local import make_responder
from ..rig import DaemonRig, git, wait_for
from .conftest import RAY, Nodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(360)]

KIT_MODEL, JUNIPER_MODEL = "sonnet-for-kit", "coder-for-juniper"
AGENTS = {"kit": {"backend": "claude", "model": KIT_MODEL}, "juniper": {"backend": "local", "model": JUNIPER_MODEL}}
KIT_TURN = [
    {"text": "Writing greet.py."},
    {"tool": "Write", "input": {"file_path": "greet.py", "content": "def greet():\n    return 'hi'\n"}},
    {"tool": "Bash", "input": {"command": "git add greet.py && git commit -q -m 'Add greet' && echo committed"}},
    {"mcp": "update_task", "args": {"status": "review"}},
    {"text": "greet() is in."},
]


class MixedRig(DaemonRig):
    """The demo repository (``proj``) and the backends :func:`foreman.backends.make_backend` builds
    from the settings and the profile's ``config.json`` (its ``agents`` section mixes the team)."""

    def make_daemon(self, **kw: Any) -> Daemon:
        from foreman.flow.assemble import make_backend

        return Daemon(self.settings, backend=make_backend(self.settings))


async def run_mixed(tmp: Path, url: str, monkeypatch: pytest.MonkeyPatch, **flags: Any) -> dict[str, Any]:
    """Create Juniper's demo task (t1) and Kit's greet task (t2), answer both merge decisions in
    the daemon (t1 first) and return main's tree, the placements, the decisions and the fake CLI."""
    from foreman.backends.sim.demo_repo import create_demo_repo

    fake = FakeClaude(tmp / "fake")
    fake.script({"real_tools": True, "turns": [KIT_TURN]})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # (the claude runner takes the daemon's environment)
    monkeypatch.setenv("FAKE_CLAUDE_SCENARIO", fake.env["FAKE_CLAUDE_SCENARIO"])
    home = tmp / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps(fake_profile_config(url, config={"agents": AGENTS})))
    repo = tmp / "proj"
    create_demo_repo(repo)
    rig = MixedRig(tmp, repo=repo, backend="local", workers=["2"], lead_review=False, notify=False, os_sandbox="off",
                   claude_cli=str(fake.cli), ci=f"{sys.executable} -m pytest -q -p no:cacheprovider", **flags)
    await rig.start()
    try:
        assert {a: rig.backend.runners[a].name for a in ("juniper", "kit")} == {"juniper": "local", "kit": "claude"}
        rig.task("Add word_count", assignee="juniper",
                 description="Add word_count(text) to pocket_notes/formatting.py with a test.")
        rig.task("Add greet", assignee="kit", description="greet() in greet.py")
        try:
            reached = await wait_for(lambda: "merges" if rig.open_decision("t1") and rig.open_decision("t2") else (
                "blocked" if any(t.status == "blocked" for t in rig.world.tasks.values()) else None), 120)
        except AssertionError:
            reached = "nothing in 120 s"
        assert reached == "merges", f"no two merge decisions ({reached}); feed:\n" + "\n".join(rig.c.feed())
        merges = {}
        for task in ("t1", "t2"):
            merges[task] = rig.open_decision(task).id
            await rig.c.answer(merges[task], 0)  # (the user answers over the protocol)
            await rig.wait_status(task, "done", timeout=60)
        return {"tree": git(repo, "rev-parse", "main^{tree}").strip(), "repo": repo, "fake": fake,
                "placements": list(getattr(rig.backend.executor, "placements", [])),
                "merges": {t: rig.world.decisions[d] for t, d in merges.items()},
                "nodes": {a: rig.world.agents[a].node for a in ("marlow", "juniper", "kit")}}
    finally:
        await rig.stop()


async def test_a_mixed_team_on_two_nodes_merges_as_with_the_local_executor(
        tmp_path: Path, ray_nodes: Nodes, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(make_responder("text", {}), models=("fake-coder", JUNIPER_MODEL)) as server:
        local = await run_mixed(tmp_path / "local", server.url, monkeypatch, executor="local")
        assert len(server.requests) == 4  # Juniper's four rounds; the lead never ran
        remote = await run_mixed(tmp_path / "ray", server.url, monkeypatch, ray_address=ray_nodes.address, **RAY)
        assert len(server.requests) == 8  # and four more, from a node
    assert local["placements"] == []
    assert remote["tree"] == local["tree"]  # the same merged result
    # each worker's turn and its CI ran on its own node; nothing else ran remotely (merges stay here)
    placements = remote["placements"]
    turns = {p["agent"]: p["node_id"] for p in placements if p["what"] == "turn"}
    assert sorted((p["what"], p["agent"]) for p in placements) == [
        ("ci", "juniper"), ("ci", "kit"), ("turn", "juniper"), ("turn", "kit")]
    assert turns["juniper"] != turns["kit"] and set(turns.values()) <= set(ray_nodes.tmp)
    assert all(p["node_id"] == turns[p["agent"]] for p in placements if p["what"] == "ci")
    nodes = remote["nodes"]
    assert nodes["marlow"] is None and all(turns[a][:8] in (nodes[a] or "") for a in turns)
    # the per-agent backends and models: the fake CLI started on Kit's node with Kit's model ...
    starts = remote["fake"].starts()
    assert len(starts) == 1 and opt(starts[0]["argv"], "--model") == KIT_MODEL
    assert Path(starts[0]["cwd"]).is_relative_to(ray_nodes.tmp[turns["kit"]]), starts[0]["cwd"]
    # ... and Juniper's requests named Juniper's model
    assert {r["model"] for r in server.requests} == {JUNIPER_MODEL}
    # both merge decisions were opened and answered in the daemon, in both runs
    for run in (local, remote):
        assert {t: (d.kind, d.status) for t, d in run["merges"].items()} == {
            "t1": ("merge", "answered"), "t2": ("merge", "answered")}
    main = remote["repo"]
    assert "def word_count(text: str) -> int:" in git(main, "show", "main:pocket_notes/formatting.py")
    assert git(main, "show", "main:greet.py") == "def greet():\n    return 'hi'\n"
