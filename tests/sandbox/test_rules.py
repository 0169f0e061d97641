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


def _foreman_without_bwrap(tmp_path: Path, *args: str):
    import os
    import shutil
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    git = shutil.which("git")
    assert git is not None
    if not (bin_dir / "git").exists():
        (bin_dir / "git").symlink_to(git)
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}
    env.update(PATH=str(bin_dir), PYTHONPATH=str(root))
    return subprocess.run([sys.executable, "-m", "foreman", *args], capture_output=True, text=True, env=env, cwd=root, timeout=60)


def test_required_refuses_to_start_without_bwrap_and_doctor_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = _foreman_without_bwrap(tmp_path, "start", "--home", str(home), "--port", "0", "--os-sandbox", "required")
    assert out.returncode == 2
    assert "--os-sandbox required, but the OS sandbox cannot run: bwrap is not installed" in out.stderr
    assert not (home / "sim" / "state.db").exists()
    doctor = _foreman_without_bwrap(tmp_path, "doctor", "--home", str(home), "--port", "0", "--os-sandbox", "required")
    assert doctor.returncode == 1 and "[FAIL] OS sandbox unavailable" in doctor.stdout
    auto = _foreman_without_bwrap(tmp_path, "doctor", "--home", str(home), "--port", "0")
    assert auto.returncode == 0 and "[warn] OS sandbox unavailable" in auto.stdout and "apt-get install bubblewrap" in auto.stdout
    off = _foreman_without_bwrap(tmp_path, "doctor", "--home", str(home), "--port", "0", "--os-sandbox", "off")
    assert off.returncode == 0 and "[warn] OS sandbox off" in off.stdout and "--os-sandbox auto" in off.stdout


def test_with_the_network_a_failed_connection_is_not_the_sandboxs() -> None:
    refused = "curl: (7) Failed to connect to x port 80: Connection refused"
    assert "network is off" in (sandbox.explain(refused) or "")
    assert sandbox.explain(refused, network=True) is None
    box = sandbox.Sandbox("/usr/bin/bwrap")
    assert box.explain(refused) and box.with_network().explain(refused) is None
    assert box.with_network().explain("touch: cannot touch '/usr/x': Read-only file system")  # still the sandbox's
    assert not box.network and box.with_network().network and not box.with_network().with_network(False).network
    wrapped = box.with_network().wrap(["true"], worktree="/tmp", env={})
    assert "--unshare-net" not in wrapped and "--unshare-net" in box.wrap(["true"], worktree="/tmp", env={})


def test_rule_of_reads_the_line_the_ci_runner_appends() -> None:
    out = f"touch: cannot touch '/usr/x': Read-only file system\n\n{sandbox.RULE_PREFIX}read-only file system: outside\n"
    assert sandbox.rule_of(out) == "read-only file system: outside"
    assert sandbox.rule_of("FAILED (failures=1)\n") is None


def test_start_without_bwrap_says_once_that_the_sandbox_is_off(tmp_path: Path) -> None:
    """Found by a newcomer: the start printed the sandbox warning twice (a line of its own, then the
    same as a log record). It is one log record, a warning, in the terminal and in foreman.log."""
    import socket

    home = tmp_path / "home"
    with socket.socket() as held:  # (the start stops at the port, after the sandbox check, with no state)
        held.bind(("127.0.0.1", 0))
        held.listen()
        out = _foreman_without_bwrap(tmp_path, "start", "--home", str(home), "--sandbox", str(tmp_path / "sandbox"),
                                     "--port", str(held.getsockname()[1]), "--no-autostart")
    assert out.returncode == 2
    said = [line for line in out.stderr.splitlines() if "OS sandbox unavailable" in line]
    assert len(said) == 1 and " WARNING " in said[0] and "apt-get install bubblewrap" in said[0], out.stderr
    assert "OS sandbox unavailable" in (home / "sim" / "foreman.log").read_text()
