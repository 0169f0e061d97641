"""What the claude runner tells the CLI about settings: the OS sandbox, and no filesystem settings.

The SDK merges its ``sandbox`` option into the CLI's ``--settings`` JSON (``sandbox`` key) and
turns ``setting_sources`` into ``--setting-sources=...``; the fake CLI records its argv.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from foreman import sandbox
from foreman.backends import _runner
from foreman.config import resolve

from .conftest import RecordingTools
from .fake_claude import opt

pytestmark = pytest.mark.timeout(60)

EXPECTED_SANDBOX = {
    "enabled": True, "allowUnsandboxedCommands": False, "autoAllowBashIfSandboxed": False, "excludedCommands": [],
    "network": {"allowedDomains": [], "allowLocalBinding": False, "allowAllUnixSockets": False},
}


def _user_and_project_settings(home: Path, workdir: Path) -> None:
    """Settings and instructions the CLI would load from ``user`` and ``project`` sources."""
    for root in (home, workdir):
        (root / ".claude").mkdir(parents=True, exist_ok=True)
        hook = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"touch {root}/HOOKED"}]}]},
                "permissions": {"allow": ["Bash"]}, "env": {"LEAKED_SETTING": str(root)}}
        (root / ".claude" / "settings.json").write_text(json.dumps(hook))
        (root / ".claude" / "CLAUDE.md").write_text(f"MARKER-{root.name}: obey me\n")
    (workdir / "CLAUDE.md").write_text("MARKER-project: obey me\n")


async def test_sandbox_settings_reach_the_cli_only_when_the_os_sandbox_is_on(fake, make_runner, request_for,
                                                                             tmp_path, workdir):
    home = tmp_path / "home"
    _user_and_project_settings(home, workdir)
    fake.script({"turns": [[{"text": "ok"}]]}, {"turns": [[{"text": "ok"}]]}, {"turns": [[{"text": "ok"}]]})

    for kw in ({"os_sandbox": True}, {"os_sandbox": True, "sandbox_required": True}, {}):
        runner = make_runner(env={"HOME": str(home)}, **kw)
        assert (await runner.run_turn(request_for(), RecordingTools())).ok

    sandboxed, required, plain = (start["argv"] for start in fake.starts())
    settings = json.loads(str(opt(sandboxed, "--settings")))
    assert settings == {"sandbox": EXPECTED_SANDBOX}  # nothing else: no user or project settings merged in
    # --os-sandbox required: a CLI that cannot start its sandbox fails instead of running Bash unsandboxed
    assert json.loads(str(opt(required, "--settings"))) == {"sandbox": {**EXPECTED_SANDBOX, "failIfUnavailable": True}}
    assert opt(plain, "--settings") is None
    assert "sandbox" not in " ".join(plain)
    for argv in (sandboxed, required, plain):
        # no filesystem settings at all: not the user's (~/.claude) and not the project's
        # (.claude/settings.json hooks and allow rules would bypass the policy)
        assert opt(argv, "--setting-sources") == ""
        assert not any("MARKER" in a or "HOOKED" in a or "LEAKED_SETTING" in a for a in argv)
    assert all("LEAKED_SETTING" not in start["env"] for start in fake.starts())


def test_the_backend_turns_the_os_sandbox_setting_into_the_runner_option(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "availability",
                        lambda bwrap=None: sandbox.Availability(True, "bubblewrap 0.8.0", "/usr/bin/bwrap"))
    auto = _runner("claude", resolve({"home": str(tmp_path)}, {}))
    assert auto.os_sandbox is True and auto.sandbox_required is False
    assert str(tmp_path) in auto.sandbox_hide  # the Foreman's home (and profile folder) hidden from Bash
    required = _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "required"}, {}))
    assert required.os_sandbox is True and required.sandbox_required is True
    off = _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "off"}, {}))
    assert off.os_sandbox is False and off.sandbox_hide == []
    monkeypatch.setattr(sandbox, "availability", lambda bwrap=None: sandbox.Availability(False, "bwrap is not installed"))
    assert _runner("claude", resolve({"home": str(tmp_path)}, {})).os_sandbox is False  # auto, unavailable
    with pytest.raises(sandbox.SandboxUnavailable):
        _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "required"}, {}))


@pytest.mark.skipif(sys.platform != "linux", reason="the CLI's sandbox needs bwrap and socat on Linux only")
async def test_preflight_says_when_the_clis_sandbox_cannot_start(fake, make_runner, monkeypatch, caplog):
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "socat" else real_which(name, *a, **k))
    with caplog.at_level(logging.WARNING, logger="foreman.backends.claude"):
        await make_runner(os_sandbox=True).preflight()
        await make_runner(os_sandbox=True, sandbox_required=True).preflight()
        await make_runner().preflight()  # sandbox off: nothing to say
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and all("sandbox needs" in line and "socat" in line for line in lines), lines
    assert "run WITHOUT a sandbox" in lines[0] and "its turns will fail" in lines[1]


async def test_sandbox_lets_git_commit_from_a_worktree_and_hides_the_foreman_home(fake, make_runner, request_for,
                                                                                 tmp_path):
    """A worktree's ``.git`` lives in the main checkout, outside the CLI's working directory: the
    folders a commit writes there are added (``filesystem.allowWrite``), never the base branch's."""
    repo, wt, foreman_home = tmp_path / "repo", tmp_path / "wt-kit", tmp_path / "foreman-home"
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "base"], check=True)
    subprocess.run([*git, "-C", str(repo), "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(wt)], check=True)
    fake.script({"turns": [[{"text": "ok"}]]})
    runner = make_runner(os_sandbox=True, sandbox_hide=[foreman_home])
    assert (await runner.run_turn(request_for(cwd=wt), RecordingTools())).ok
    (start,) = fake.starts()
    box = json.loads(str(opt(start["argv"], "--settings")))["sandbox"]
    common = (repo / ".git").resolve()
    assert box["filesystem"] == {
        "allowWrite": [str(common / "worktrees" / "wt-kit"), str(common / "objects"),
                       str(common / "refs/heads/agentcraft/kit"), str(common / "logs/refs/heads/agentcraft/kit")],
        "denyRead": [str(foreman_home)]}
    assert {k: v for k, v in box.items() if k != "filesystem"} == EXPECTED_SANDBOX
