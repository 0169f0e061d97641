"""The sandbox's availability probe, settings and error hints (no bubblewrap needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreman import sandbox
from foreman.config import resolve
from foreman.errors import ConfigError


def test_availability_names_a_missing_or_crippled_bwrap(tmp_path: Path) -> None:
    missing = sandbox.availability(str(tmp_path / "no-bwrap"))
    assert not missing.ok and "could not run" in missing.detail
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo bubblewrap 9; exit 0; }\n"
                    "echo 'bwrap: No permissions to creating new namespace' >&2; exit 1\n")
    fake.chmod(0o755)
    crippled = sandbox.availability(str(fake))
    assert not crippled.ok and "cannot create namespaces here" in crippled.detail
    assert "No permissions to creating new namespace" in crippled.detail
    assert sandbox.availability(str(fake)) is crippled  # probed once, then cached


def test_os_sandbox_setting_auto_required_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = resolve({"home": str(tmp_path)}, {})
    assert s.os_sandbox == "auto"
    with pytest.raises(ConfigError, match="--os-sandbox"):
        resolve({"home": str(tmp_path), "os_sandbox": "maybe"}, {})
    monkeypatch.setattr(sandbox, "availability", lambda bwrap=None: sandbox.Availability(False, "bwrap is not installed"))
    assert sandbox.from_settings(s) is None
    with pytest.raises(sandbox.SandboxUnavailable, match="bwrap is not installed"):
        sandbox.from_settings(resolve({"home": str(tmp_path), "os_sandbox": "required"}, {}))
    assert sandbox.from_settings(resolve({"home": str(tmp_path), "os_sandbox": "off"}, {})) is None
    assert sandbox.describe(s) == (False, "OS sandbox unavailable, agents' commands run unsandboxed: bwrap is not installed")
    monkeypatch.setattr(sandbox, "availability", lambda bwrap=None: sandbox.Availability(True, "bubblewrap 0.8.0", "/usr/bin/bwrap"))
    got = sandbox.from_settings(s)
    assert got is not None and got.bwrap == "/usr/bin/bwrap" and tmp_path in got.hide
    assert sandbox.policy_note("auto")[0] is True and sandbox.policy_note("off")[0] is False


@pytest.mark.parametrize("output,fragment", [
    ("sh: 1: cannot create /etc/x: Read-only file system", "read-only file system: outside the worktree"),
    ("OSError: [Errno 30] Read-only file system: '/home/u/x'", "read-only file system: outside the worktree"),
    ("curl: (6) Could not resolve host: example.com", "network is off for this command"),
    ("OSError: [Errno 101] Network is unreachable", "network is off for this command"),
    ("ConnectionRefusedError: [Errno 111] Connection refused", "network is off for this command"),
    ("pip: Temporary failure in name resolution", "network is off for this command"),
    ("cat: /home/u/.ssh/id_rsa: No such file or directory", "the home folder /home/u is hidden"),
])
def test_explain_names_the_rule(output: str, fragment: str) -> None:
    hint = sandbox.explain(output, home="/home/u")
    assert hint is not None and fragment in hint


def test_explain_says_nothing_for_ordinary_failures() -> None:
    assert sandbox.explain("AssertionError: 2 != 3\nFAILED (failures=1)", home="/home/u") is None
    assert sandbox.explain("cat: missing.txt: No such file or directory", home="/home/u") is None


def test_git_layout_of_a_worktree_never_opens_the_base_branch_folder(tmp_path: Path) -> None:
    common = tmp_path / "repo" / ".git"
    gitdir = common / "worktrees" / "kit-t1"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    (gitdir / "HEAD").write_text("ref: refs/heads/agentcraft/kit/t1\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {gitdir}\n")
    layout = sandbox.git_layout(wt)
    assert layout is not None and layout.common == common.resolve() and layout.gitdir == gitdir.resolve()
    assert layout.ref_dirs == (common.resolve() / "refs/heads/agentcraft/kit", common.resolve() / "logs/refs/heads/agentcraft/kit")
    (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
    assert sandbox.git_layout(wt).ref_dirs == ()
