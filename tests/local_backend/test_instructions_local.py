"""The local backend: the demo repository's AGENTS.md reaches every model request (the
scripted server sees it in the system message), and every turn is counted in the usage."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from foreman.backends import make_backend
from foreman.backends.sim.demo_repo import create_demo_repo
from foreman.config import resolve
from foreman.daemon import Daemon

from .fakeserver import FakeOpenAI, system_of
from .test_flow_local import make_responder, wait_for


async def test_agents_md_reaches_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    repo = tmp_path / "pocket-notes"
    create_demo_repo(repo)
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    with FakeOpenAI(make_responder("text", {})) as server:
        (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "fake", "profiles": {
            "fake": {"url": server.url, "model": "fake-coder", "protocol": "text", "maxTokens": 256}}}}))
        settings = resolve({"home": str(home), "backend": "local", "port": 0, "workers": ["1"],
                            "ci": f"{sys.executable} -m pytest -q -p no:cacheprovider", "notify": False}, env={})
        daemon = Daemon(settings, backend=make_backend(settings))
        await daemon.start()
        try:
            await daemon.add_repo(str(repo))
            repo_id = next(iter(daemon.core.world.repos))
            assert daemon.core.repo(repo_id).instructions == ["AGENTS.md"]
            daemon.act(lambda c, now: c.submit_goal("Add a word_count helper", now, repo=repo_id))
            world = daemon.core.world
            await wait_for(lambda: any(d.kind == "merge" and d.status == "open" for d in world.decisions.values()))
        finally:
            await daemon.stop()
    assert server.requests
    for req in server.requests:
        assert "Standard library only: pocket-notes has no third-party dependencies" in system_of(req)
    assert world.agents["marlow"].usage.turns == 2 and world.agents["juniper"].usage.turns == 1
    assert world.goals["g1"].usage.turns == 3 and world.tasks["t1"].usage.turns == 2
