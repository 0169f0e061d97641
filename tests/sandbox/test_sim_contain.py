"""The sim with the OS sandbox: its CI runs sandboxed (the user's ``--ci`` too) and the feed
names the rule; a command run as an agent's command cannot answer the agent's own open decision
through the daemon's socket.

A real sim daemon (``foreman start --backend sim --os-sandbox required``), a real protocol
client, real ``bwrap``; skipped, naming the reason, where bubblewrap cannot run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from foreman.backends.local.actions import Run
from foreman.backends.local.executor import Executor
from foreman.backends.local.workspace import Workspace
from foreman.config import resolve
from foreman.policy import classify_command
from foreman.repos.gitsafety import safety_env
from foreman.sandbox import from_settings

from ..local_backend.helpers import FakeTools
from ..sim._sim import SimClient, start_daemon
from .test_bwrap import FOUND

pytestmark = pytest.mark.skipif(not FOUND.ok, reason=f"no OS sandbox here: {FOUND.detail}")

ESCAPE = Path("/usr/foreman-sim-ci-probe")

PROBE = '''\
import json, sys
port, record, decision, use_token = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "yes"
token = None
if use_token:
    try:
        with open(record) as f:
            token = json.load(f)["token"]
        print("TOKEN-READ")
    except Exception as exc:
        print("TOKEN-UNREADABLE", type(exc).__name__)
try:
    from websockets.sync.client import connect
    with connect(f"ws://127.0.0.1:{port}", open_timeout=5, close_timeout=2) as ws:
        print("CONNECTED")
        hello = {"type": "hello", "protocol": 1, "client": "probe"}
        if token:
            hello["token"] = token
        ws.send(json.dumps(hello))
        ws.send(json.dumps({"type": "decision.answer", "id": "p1", "decision": decision, "option": 0}))
        for _ in range(200):
            msg = json.loads(ws.recv(timeout=5))
            if msg.get("id") == "p1":
                print("REPLY", msg["type"])
                break
except Exception as exc:
    print("NO-ANSWER", type(exc).__name__, str(exc)[:200])
'''


def _all_but_permissions(decision: dict[str, Any], client: SimClient) -> int | None:
    return None if decision["kind"] == "permission" else 0


def _open_permission(client: SimClient) -> dict[str, Any] | None:
    return next((d for d in client.decisions.values() if d["kind"] == "permission" and d["status"] == "open"), None)


async def _probe(wt: Path, port: int, record: Path, decision: str, *, use_token: bool, sandbox: Any) -> str:
    """Run the probe the way the local backend runs an agent's RUN: the policy (the user
    approves what it asks), the git safety environment, the sandbox of the daemon's settings."""
    (wt / ".contain_probe.py").write_text(PROBE)
    tools = FakeTools(wt, agent="tove", answer=True)
    env = safety_env(os.environ, agent="tove", worktree=wt)
    ex = Executor(Workspace(wt), tools, env=env, run_timeout=60, max_output=6000, sandbox=sandbox)
    try:
        out = await ex.run(Run(kind="run", command=f"{sys.executable} .contain_probe.py {port} {record} {decision} "
                                                   f"{'yes' if use_token else 'no'}"))
    finally:
        (wt / ".contain_probe.py").unlink()
    assert out.status != "refused", out.text
    return out.text


async def test_sim_ci_is_sandboxed_and_an_agents_command_cannot_answer_its_own_decision(tmp_path: Path) -> None:
    ESCAPE.unlink(missing_ok=True)
    daemon = start_daemon(tmp_path, "--os-sandbox", "required", "--ci", f"touch {ESCAPE}", "--seed", "11")
    client = SimClient(answer=_all_but_permissions)
    try:
        await client.connect(daemon.port, since=0)
        # 3. the sim's own CI runs the user's --ci in the sandbox, and the feed names the rule
        await client.wait_for(lambda c: any(f.get("kind") == "ci" for f in c.feed), 60, "the first CI run")
        ci_line = next(f["text"] for f in client.feed if f.get("kind") == "ci")
        assert ci_line.startswith("CI failed on ") and \
            "the OS sandbox blocked it: read-only file system: outside the worktree" in ci_line, ci_line
        assert not ESCAPE.exists()

        # 4. a pending decision of tove's; her worktree; the daemon's own settings and sandbox
        await client.wait_for(lambda c: _open_permission(c) is not None, 60, "tove's permission decision")
        decision = _open_permission(client)
        assert decision is not None and decision["prompt"].startswith("Tove "), decision
        settings = resolve({"home": str(tmp_path), "profile": daemon.profile, "os_sandbox": "required"}, env={})
        record = settings.profile_dir / "foreman.json"
        assert json.loads(record.read_text())["token"]
        wt = next((settings.profile_dir / "worktrees").glob("*/tove-*"))
        sandbox = from_settings(settings)
        assert sandbox is not None

        said = await _probe(wt, daemon.port, record, decision["id"], use_token=True, sandbox=sandbox)
        assert "TOKEN-UNREADABLE" in said and "NO-ANSWER" in said and "CONNECTED" not in said, said
        assert _open_permission(client) == decision  # still pending, untouched

        # without the sandbox, the token is what stops a command that does not have it ...
        said = await _probe(wt, daemon.port, record, decision["id"], use_token=False, sandbox=None)
        assert "CONNECTED" in said and "REPLY error" in said, said
        assert _open_permission(client) == decision
        # ... and the policy asks before a command reads the profile folder by name
        assert classify_command(f"cat {record}", worktree=str(wt)).outcome == "ask"
        # ... but nothing stops a script the policy allows from reading it (docs/policy.md says so):
        # unsandboxed, a command that reads the token answers the decision.
        said = await _probe(wt, daemon.port, record, decision["id"], use_token=True, sandbox=None)
        assert "TOKEN-READ" in said and "REPLY ack" in said, said
        await client.wait_for(lambda c: c.decisions[decision["id"]]["status"] != "open", 20, "the answer")
    finally:
        await client.close()
        daemon.stop()
        ESCAPE.unlink(missing_ok=True)
