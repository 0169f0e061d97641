"""The activity feed names the OS sandbox rule that blocked an agent's command, as it does for CI.

Real ``bwrap``: the local backend's executor with recording tools, then a real daemon with the
local backend (the model behind real HTTP, scripted) whose worker RUNs a project script that
writes outside its worktree. They skip, naming the reason, where bubblewrap is missing or
cannot create namespaces.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from foreman.backends.local.actions import Run
from foreman.backends.local.executor import Executor
from foreman.backends.local.workspace import Workspace

from ..local_backend.fakeserver import FakeOpenAI, Reply, system_of, text
from ..local_backend.helpers import FakeTools
from .test_bwrap import FOUND, World

pytestmark = pytest.mark.skipif(not FOUND.ok, reason=f"no OS sandbox here: {FOUND.detail}")

RULE = "read-only file system: outside the worktree"


class FeedTools(FakeTools):
    """FakeTools that also record the feed lines the executor puts out."""

    def __init__(self, *args, **kw) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kw)
        self.feeds: list[str] = []

    def feed(self, text: str) -> None:
        self.feeds.append(text)


async def test_a_blocked_run_puts_the_rule_in_the_feed_and_an_ordinary_failure_does_not(tmp_path: Path) -> None:
    world = World(tmp_path)
    tools = FeedTools(world.wt, answer=True)
    ex = Executor(Workspace(world.wt), tools, env=world.env, run_timeout=60, max_output=6000, sandbox=world.sandbox)
    out = await ex.run(Run(kind="run", command="touch /usr/foreman-run-feed-probe"))
    assert out.status == "failed" and not Path("/usr/foreman-run-feed-probe").exists()
    assert len(tools.feeds) == 1, tools.feeds
    assert tools.feeds[0].startswith("Kit's command `touch /usr/foreman-run-feed-probe` failed; "
                                     f"the OS sandbox blocked it: {RULE}"), tools.feeds
    assert (await ex.run(Run(kind="run", command="exit 3"))).status == "failed"  # not the sandbox's
    assert (await ex.run(Run(kind="run", command="touch inside.txt"))).status == "ok"
    assert len(tools.feeds) == 1, tools.feeds


def _repo(tmp: Path, probe: Path) -> Path:
    """The demo repository with a project script that writes ``probe`` (outside any worktree)."""
    from foreman.backends.sim.demo_repo import create_demo_repo

    repo = tmp / "pocket-notes"
    create_demo_repo(repo)
    (repo / "probe.py").write_text(f"open({str(probe)!r}, 'w').write('escaped')\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "add", "probe.py"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "probe"], cwd=repo, check=True, env=env)
    return repo


async def test_the_daemon_feed_names_the_rule_for_a_local_agents_command(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from foreman.flow.assemble import make_backend
    from foreman.config import resolve
    from foreman.daemon import Daemon

    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    probe = Path(f"/usr/foreman-run-feed-{uuid.uuid4().hex[:8]}")

    def reply(req: dict) -> Reply:
        steps = sum(1 for m in req["messages"] if m["role"] == "assistant")
        if "Marlow" in system_of(req):
            if steps == 0 and "Review task" not in str(req["messages"][1].get("content")):
                return text('TOOL create_task {"title": "Probe", "description": "Run probe.py.", '
                            '"assignee": "juniper"}\nFINAL Planned one task.')
            return text("FINAL Nothing more.")
        return text(["RUN python3 probe.py", "FINAL probe.py could not write its file."][min(steps, 1)])

    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    with FakeOpenAI(reply) as server:
        (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "fake", "profiles": {
            "fake": {"url": server.url, "model": "fake-coder", "protocol": "text", "maxTokens": 256}}}}))
        settings = resolve({"home": str(home), "backend": "local", "port": 0, "workers": ["1"], "ci": "true",
                            "notify": False, "os_sandbox": "required"}, env={})
        daemon = Daemon(settings, backend=make_backend(settings))
        await daemon.start()
        try:
            await daemon.add_repo(str(_repo(tmp_path, probe)))
            repo_id = next(iter(daemon.core.world.repos))
            daemon.act(lambda c, now: c.submit_goal("run the probe", now, repo=repo_id))
            feed = daemon.core.world.feed
            for _ in range(1200):
                if any("OS sandbox" in f.text for f in feed):
                    break
                await asyncio.sleep(0.05)
            lines = [f for f in feed if "OS sandbox" in f.text]
            assert lines, [f.text for f in feed]
            assert lines[0].text.startswith(f"Juniper's command `python3 probe.py` failed; the OS sandbox blocked it: "
                                            f"{RULE}"), lines[0].text
            assert lines[0].agent == "juniper" and lines[0].task == "t1"
            assert not probe.exists()
        finally:
            await daemon.stop()
            probe.unlink(missing_ok=True)
