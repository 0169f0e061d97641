"""Containment end to end with real bubblewrap: the network only when the policy's verdict says
so, the rule named when the sandbox blocks a command, a detached process dying with the
sandbox, and a command run as an agent's command that cannot answer its own decision.

Every test here runs real ``bwrap`` (installed by ``.ci/run``); they skip, naming the reason,
where bubblewrap is missing or cannot create namespaces.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from foreman.backends.local.executor import Executor
from foreman.backends.local.actions import Run
from foreman.backends.local.workspace import Workspace
from foreman.repos import ci

from ..local_backend.helpers import FakeTools
from .test_bwrap import FOUND, World, _alive_with, _wait_gone

pytestmark = pytest.mark.skipif(not FOUND.ok, reason=f"no OS sandbox here: {FOUND.detail}")


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


class _Server:
    """A local HTTP server that counts the requests it got."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                hits.append(self.path)
                body = b"hello from the host\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.hits = hits
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _executor(world: World, tools: FakeTools) -> Executor:
    return Executor(Workspace(world.wt), tools, env=world.env, run_timeout=60, max_output=6000, sandbox=world.sandbox)


async def test_a_command_gets_the_network_only_when_its_verdict_says_it_needs_it(world: World) -> None:
    """``curl`` to a host asks (a network key) and, once the user allows it, runs with the
    network; a project script the policy allows without asking runs with none, and the log and
    the tool result name the rule."""
    server = _Server()
    try:
        (world.wt / "probe.py").write_text(
            "import urllib.request, sys\n"
            f"print(urllib.request.urlopen('http://127.0.0.1:{server.port}/script', timeout=5).read().decode())\n")
        tools = FakeTools(world.wt, answer=True)  # the user answers Allow
        ex = _executor(world, tools)
        fetched = await ex.run(Run(kind="run", command=f"curl -sS http://127.0.0.1:{server.port}/curl"))
        assert tools.permits[-1][2] == "ask"  # it was asked about: the network key
        assert fetched.status == "ok" and "hello from the host" in fetched.text, fetched.text
        assert server.hits == ["/curl"]

        script = await ex.run(Run(kind="run", command="python3 probe.py"))
        assert tools.permits[-1][2] == "allow"  # allowed without asking, so no network
        assert script.status == "failed" and server.hits == ["/curl"]
        assert "[os sandbox] network is off for this command" in script.text
        kind, line = tools.logs[-1]
        assert kind == "error" and "the OS sandbox blocked it: network is off for this command" in line
    finally:
        server.close()


async def test_a_denied_answer_runs_nothing_and_a_network_verdict_never_leaks_to_the_next_command(world: World) -> None:
    server = _Server()
    try:
        denied = await _executor(world, FakeTools(world.wt, answer=False)).run(
            Run(kind="run", command=f"curl -sS http://127.0.0.1:{server.port}/x"))
        assert denied.status == "refused" and server.hits == []
        ex = _executor(world, FakeTools(world.wt, answer=True))
        assert (await ex.run(Run(kind="run", command=f"curl -sS http://127.0.0.1:{server.port}/a"))).status == "ok"
        after = await ex.run(Run(kind="run", command=f"{sys.executable} -c \"import urllib.request; "
                                                      f"urllib.request.urlopen('http://127.0.0.1:{server.port}/b', timeout=5)\""))
        assert after.status == "failed" and server.hits == ["/a"]
        assert ex.sandbox is world.sandbox and not world.sandbox.network  # the shared sandbox was never changed
    finally:
        server.close()


async def test_the_log_names_the_rule_when_a_write_outside_the_worktree_is_blocked(world: World) -> None:
    tools = FakeTools(world.wt, answer=True)
    out = await _executor(world, tools).run(Run(kind="run", command="touch /usr/foreman-contain-probe"))
    assert out.status == "failed" and not Path("/usr/foreman-contain-probe").exists()
    assert "[os sandbox] read-only file system: outside the worktree" in out.text
    kind, line = tools.logs[-1]
    assert kind == "error" and line.startswith("$ touch /usr/foreman-contain-probe -> exit 1; the OS sandbox blocked it: "
                                               "read-only file system: outside the worktree")
    ok = await _executor(world, tools).run(Run(kind="run", command="touch inside.txt"))
    assert ok.status == "ok" and tools.logs[-1][0] == "result" and "OS sandbox" not in tools.logs[-1][1]


async def test_the_ci_result_carries_the_rule_for_the_feed(world: World) -> None:
    res = await world.run("echo x > /etc/foreman-contain-probe")
    assert not res.ok and res.sandbox_rule and res.sandbox_rule.startswith("read-only file system: outside the worktree")
    res = await world.run("exit 3")  # an ordinary failure names no rule
    assert not res.ok and res.sandbox_rule is None
    res = await ci.run_ci("echo 'sh: x: Read-only file system' >&2; exit 1", cwd=world.wt, env=world.env, timeout=30)
    assert not res.ok and res.sandbox_rule is None  # unsandboxed: the failure is not the sandbox's


def test_a_process_started_with_env_i_and_setsid_still_dies_with_the_sandbox(world: World) -> None:
    """A process that drops its environment (``env -i``) and leaves the session and process
    group (``setsid -f``) escapes process-group kills; the sandbox's pid namespace still ends it
    when the command exits. Unsandboxed, the same line leaves it running (the control)."""
    def start(token: str) -> list[str]:
        sleeper = f"env -i /usr/bin/setsid -f {sys.executable} -c 'import time; time.sleep(300)' {token}"
        return ["/bin/sh", "-c", f"{sleeper} > /dev/null 2>&1 < /dev/null; sleep 0.5; echo started"]

    token = f"foreman-envi-{uuid.uuid4().hex}"
    control = subprocess.run(start(token), capture_output=True, text=True, timeout=60)
    try:
        assert control.returncode == 0 and "started" in control.stdout
        assert _alive_with(token, sleeper_only=True), "unsandboxed, the detached process should survive its command"
    finally:
        for proc in _alive_with(token):
            proc.kill()
    token = f"foreman-envi-{uuid.uuid4().hex}"
    argv = world.sandbox.wrap(start(token), worktree=world.wt, env=world.env)
    done = subprocess.run(argv, capture_output=True, text=True, env=world.env, timeout=60)
    try:
        assert done.returncode == 0 and "started" in done.stdout, done.stderr
        assert _wait_gone(token) == []
    finally:
        for proc in _alive_with(token):
            proc.kill()


async def test_the_flows_ci_feed_line_names_the_sandbox_rule(tmp_path: Path) -> None:
    """The flow's CI (a real daemon, real git, the scripted model edge) runs the user's ``--ci``
    in the sandbox; both runs' feed lines say which rule blocked them."""
    from ..conductor.scripted import ScriptedRig, done, write_and_commit
    from ..rig import wait_for

    async def work(req, tools):
        if req.job == "work":  # the follow-up after a failed CI changes nothing and asks for review again
            await write_and_commit(req, "change.txt", "x\n", "change")
        await tools.call("update_task", {"status": "review"})
        return done()

    probe = Path(f"/usr/foreman-flow-ci-probe-{uuid.uuid4().hex[:8]}")
    rig = ScriptedRig.worker(tmp_path, work, ci=f"touch {probe}", os_sandbox="required")
    try:
        await rig.start()
        t1 = rig.task("Blocked CI", assignee="kit")
        await wait_for(lambda: rig.open_decision(t1), timeout=90, what="the merge decision after two CI runs")
        lines = [f.text for f in rig.world.feed if f.task == t1 and f.text.startswith("CI")]
        assert len(lines) == 2, lines
        assert all(line.startswith(f"CI failed on {t1}; the OS sandbox blocked it: read-only file system: "
                                   "outside the worktree") for line in lines), lines
        assert not probe.exists()
    finally:
        await rig.stop()
        probe.unlink(missing_ok=True)
