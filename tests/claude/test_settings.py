"""What the claude runner tells the CLI about settings (none from files, the CLI's own sandbox
off) and how the OS sandbox reaches its Bash tool: the gate's hook hands back each allowed command
wrapped in the Foreman's sandbox (``updatedInput``), and the fake CLI runs it for real.

The SDK turns ``setting_sources`` into ``--setting-sources=...`` and its ``sandbox`` option into
the ``sandbox`` key of ``--settings``; the fake CLI records its argv.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from foreman import sandbox
from foreman.flow.assemble import _runner
from foreman.config import resolve

from .conftest import RecordingTools
from .fake_claude import opt

pytestmark = pytest.mark.timeout(60)

BOX = sandbox.availability()
needs_bwrap = pytest.mark.skipif(not BOX.ok, reason=f"the OS sandbox cannot run here: {BOX.detail}")


def _user_and_project_settings(home: Path, workdir: Path) -> None:
    """Settings and instructions the CLI would load from ``user`` and ``project`` sources."""
    for root in (home, workdir):
        (root / ".claude").mkdir(parents=True, exist_ok=True)
        hook = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"touch {root}/HOOKED"}]}]},
                "permissions": {"allow": ["Bash"]}, "env": {"LEAKED_SETTING": str(root)}}
        (root / ".claude" / "settings.json").write_text(json.dumps(hook))
        (root / ".claude" / "CLAUDE.md").write_text(f"MARKER-{root.name}: obey me\n")
    (workdir / "CLAUDE.md").write_text("MARKER-project: obey me\n")


async def test_no_settings_files_and_never_the_clis_own_sandbox(fake, make_runner, request_for, tmp_path, workdir):
    home = tmp_path / "home"
    _user_and_project_settings(home, workdir)
    fake.script({"turns": [[{"text": "ok"}]]}, {"turns": [[{"text": "ok"}]]})

    for box in (sandbox.Sandbox("/usr/bin/bwrap"), None):
        runner = make_runner(env={"HOME": str(home)}, sandbox=box)
        assert (await runner.run_turn(request_for(), RecordingTools())).ok

    for start in fake.starts():
        argv = start["argv"]
        # the Foreman's sandbox wraps Bash itself: the CLI's own stays off (no sandbox settings at all)
        assert opt(argv, "--settings") is None and "sandbox" not in " ".join(argv)
        # no filesystem settings at all: not the user's (~/.claude) and not the project's
        # (.claude/settings.json hooks and allow rules would bypass the policy)
        assert opt(argv, "--setting-sources") == ""
        assert not any("MARKER" in a or "HOOKED" in a or "LEAKED_SETTING" in a for a in argv)
        assert "LEAKED_SETTING" not in start["env"]


def test_the_backend_turns_the_os_sandbox_setting_into_the_runners_sandbox(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "availability",
                        lambda bwrap=None: sandbox.Availability(True, "bubblewrap 0.8.0", "/usr/bin/bwrap"))
    auto = _runner("claude", resolve({"home": str(tmp_path)}, {}))
    assert auto.sandbox is not None and auto.sandbox.bwrap == "/usr/bin/bwrap"
    assert tmp_path.resolve() in auto.sandbox.hide  # the Foreman's home (and profile folder) hidden from Bash
    assert _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "required"}, {})).sandbox is not None
    assert _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "off"}, {})).sandbox is None
    monkeypatch.setattr(sandbox, "availability", lambda bwrap=None: sandbox.Availability(False, "bwrap is not installed"))
    assert _runner("claude", resolve({"home": str(tmp_path)}, {})).sandbox is None  # auto, unavailable
    with pytest.raises(sandbox.SandboxUnavailable):
        _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "required"}, {}))


@needs_bwrap
async def test_bash_runs_in_the_sandbox_git_commits_from_a_worktree_and_the_base_branch_stays(
        fake, make_runner, request_for, tmp_path):
    """A worker's allowed Bash command comes back from the gate wrapped in bwrap; the CLI runs that.
    In it, a commit from a worktree works (its git folders in the main checkout are writable), the
    base branch cannot be moved, nothing outside the worktree is written, the Foreman's home is
    hidden, and there is no network."""
    repo, wt, foreman_home = tmp_path / "repo", tmp_path / "wt-kit", tmp_path / "foreman-home"
    foreman_home.mkdir()
    (foreman_home / "token").write_text("secret")
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "base"], check=True)
    subprocess.run([*git, "-C", str(repo), "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(wt)], check=True)
    base = subprocess.run(["git", "-C", str(repo), "rev-parse", "main"], capture_output=True, text=True).stdout
    outside = repo / "outside.txt"  # the user's checkout
    commands = [
        "echo hi > a.txt && git add -A && git -c user.name=K -c user.email=k@example.invalid commit -q -m a && echo committed",
        "git update-ref refs/heads/main HEAD; echo rc=$?",
        f"echo x > {outside}; echo rc=$?",
        f"cat {foreman_home}/token; echo rc=$?",
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=3)'; echo rc=$?",
    ]
    fake.script({"real_tools": True, "turns": [[{"tool": "Bash", "input": {"command": c}} for c in commands] + [{"text": "ok"}]]})
    box = sandbox.Sandbox(BOX.bwrap, hide=(foreman_home,))
    tools = RecordingTools()
    assert (await make_runner(sandbox=box).run_turn(request_for(cwd=wt), tools)).ok

    assert [args["command"] for _, args in tools.permits] == commands  # the policy saw the command as written
    decided = fake.events("permission")
    assert [e["via"] for e in decided] == ["hook"] * 5
    ran = fake.events("ran")
    assert all(e["ran"].startswith(f"{BOX.bwrap} ") for e in ran) and len(ran) == 5  # what the CLI ran
    out = [e["output"] for e in ran]
    assert "committed" in out[0]
    assert subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%s", "agentcraft/kit/t1"],
                          capture_output=True, text=True).stdout.strip() == "a"
    assert "rc=0" not in out[1] and subprocess.run(["git", "-C", str(repo), "rev-parse", "main"],
                                                   capture_output=True, text=True).stdout == base
    assert not outside.exists(), out[2]  # (under /tmp, as here, the write lands in the sandbox's private /tmp)
    assert "secret" not in out[3] and "rc=0" not in out[3]
    assert "rc=0" not in out[4]
