"""The local backend's real runner on a Ray node: the demo task through the scripted
OpenAI-compatible server (real HTTP from the node), its RUN and CI on the node, the merge in the daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.config import resolve

from ..local_backend.fakeserver import FakeOpenAI
from ..local_backend.helpers import GOAL, fake_profile_config
from ..local_backend.test_flow_local import make_responder
from ..rig import wait_for
from .conftest import Nodes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


async def test_the_demo_task_on_a_node_with_the_local_backend(tmp_path: Path, ray_nodes: Nodes) -> None:
    from foreman.flow.assemble import make_backend
    from foreman.backends.sim.demo_repo import create_demo_repo
    from foreman.daemon import Daemon

    seen: dict = {}
    with FakeOpenAI(make_responder("text", seen)) as server:
        home = tmp_path / "home"
        (home / "local").mkdir(parents=True)
        (home / "local" / "config.json").write_text(json.dumps(fake_profile_config(server.url)))
        repo = tmp_path / "pocket-notes"
        create_demo_repo(repo)
        settings = resolve({"home": str(home), "backend": "local", "port": 0, "workers": ["1"], "notify": False,
                            "ci": f"{sys.executable} -m pytest -q -p no:cacheprovider", "executor": "ray",
                            "ray_address": ray_nodes.address, "ray_resources": "foreman_worker=1",
                            "ray_heartbeat": 1.0}, env={})
        daemon = Daemon(settings, backend=make_backend(settings))
        await daemon.start()
        try:
            await daemon.add_repo(str(repo))
            daemon.act(lambda c, now: c.submit_goal(GOAL, now, repo=next(iter(daemon.core.world.repos))))
            world = daemon.core.world

            def open_merge():
                return next((d for d in world.decisions.values() if d.kind == "merge" and d.status == "open"), None)

            try:
                await wait_for(open_merge, 150, "the merge decision")
            except AssertionError:
                raise AssertionError("no merge decision; feed: " + " | ".join(
                    f.text for f in list(world.feed)[-15:]) + f"; placements {daemon.backend.executor.placements}") from None
            assert "CI: passed" in seen["review"] and "The worker says: Added word_count(text)" in seen["review"]
            ex = daemon.backend.executor
            assert [(p["what"], p["agent"]) for p in ex.placements] == [("turn", "juniper"), ("ci", "juniper")]
            assert ex.placements[0]["node_id"] in ray_nodes.tmp
            daemon.act(lambda c, now: c.answer_decision(open_merge().id, 0, now))
            await wait_for(lambda: world.tasks["t1"].status == "done", 60, "t1 done")
        finally:
            await daemon.stop()
    main = subprocess.run(["git", "show", "main:pocket_notes/formatting.py"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout
    assert "def word_count(text: str) -> int:" in main
    assert len(server.requests) == 6  # plan, 4 worker rounds (from the node), review
