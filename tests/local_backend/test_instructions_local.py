"""The local backend: the demo repository's AGENTS.md reaches every model request (the
scripted server sees it in the system message), and every turn is counted in the usage."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from .fakeserver import FakeOpenAI, system_of
from .helpers import demo_daemon
from .test_flow_local import make_responder, wait_for


async def test_agents_md_reaches_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    with FakeOpenAI(make_responder("text", {})) as server:
        async with demo_daemon(tmp_path, server.url) as (daemon, _repo):
            repo_id = next(iter(daemon.core.world.repos))
            assert daemon.core.repo(repo_id).instructions == ["AGENTS.md"]
            world = daemon.core.world
            await wait_for(lambda: any(d.kind == "merge" and d.status == "open" for d in world.decisions.values()))
    assert server.requests
    for req in server.requests:
        assert "Standard library only: pocket-notes has no third-party dependencies" in system_of(req)
    assert world.agents["marlow"].usage.turns == 2 and world.agents["juniper"].usage.turns == 1
    assert world.goals["g1"].usage.turns == 3 and world.tasks["t1"].usage.turns == 2
