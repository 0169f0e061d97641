"""What the claude runner tells the CLI about settings: the OS sandbox, and no filesystem settings.

The SDK merges its ``sandbox`` option into the CLI's ``--settings`` JSON (``sandbox`` key) and
turns ``setting_sources`` into ``--setting-sources=...``; the fake CLI records its argv.
"""

from __future__ import annotations

import json
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
    fake.script({"turns": [[{"text": "ok"}]]}, {"turns": [[{"text": "ok"}]]})

    on = make_runner(os_sandbox=True, env={"HOME": str(home)})
    assert (await on.run_turn(request_for(), RecordingTools())).ok
    off = make_runner(env={"HOME": str(home)})
    assert (await off.run_turn(request_for(), RecordingTools())).ok

    sandboxed, plain = (start["argv"] for start in fake.starts())
    settings = json.loads(str(opt(sandboxed, "--settings")))
    assert settings == {"sandbox": EXPECTED_SANDBOX}  # nothing else: no user or project settings merged in
    assert opt(plain, "--settings") is None
    assert "sandbox" not in " ".join(plain)
    for argv in (sandboxed, plain):
        # no filesystem settings at all: not the user's (~/.claude) and not the project's
        # (.claude/settings.json hooks and allow rules would bypass the policy)
        assert opt(argv, "--setting-sources") == ""
        assert not any("MARKER" in a or "HOOKED" in a or "LEAKED_SETTING" in a for a in argv)
    assert all("LEAKED_SETTING" not in start["env"] for start in fake.starts())


def test_the_backend_turns_the_os_sandbox_setting_into_the_runner_option(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "availability",
                        lambda bwrap=None: sandbox.Availability(True, "bubblewrap 0.8.0", "/usr/bin/bwrap"))
    assert _runner("claude", resolve({"home": str(tmp_path)}, {})).os_sandbox is True
    assert _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "off"}, {})).os_sandbox is False
    monkeypatch.setattr(sandbox, "availability", lambda bwrap=None: sandbox.Availability(False, "bwrap is not installed"))
    assert _runner("claude", resolve({"home": str(tmp_path)}, {})).os_sandbox is False  # auto, unavailable
    with pytest.raises(sandbox.SandboxUnavailable):
        _runner("claude", resolve({"home": str(tmp_path), "os_sandbox": "required"}, {}))
