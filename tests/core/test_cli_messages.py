"""What the ``foreman`` command says when it is used wrong, and what its help shows (issue 38 item 4):
a usage error is one line pointing to ``--help``, help lists the values an option takes, and
``doctor`` and ``config`` take only the flags they use."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from foreman.cli import main
from foreman.config import OPTIONS

from .live import ROOT


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``foreman ARGV`` through the CLI's main function: (exit code, stdout, stderr)."""
    try:
        code = main(argv)
    except SystemExit as stop:  # (argparse's exits: --help, a usage error)
        code = int(stop.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv,command", [
    (["start", "--port"], "foreman start"),
    (["start", "--bogus"], "foreman start"),
    (["doctor", "--port"], "foreman doctor"),
    (["config", "--jsn"], "foreman config"),
    (["stop", "--timeout", "soon"], "foreman stop"),
    (["risk"], "foreman risk"),
    (["--bogus"], "foreman"),
    (["strat"], "foreman"),
    (["tui", "--bogus"], "foreman tui"),
    (["policy", "--bogus", "--", "ls"], "foreman policy"),
    (["decode", "--role", "boss", "x"], "foreman decode"),
    (["replay", "--bogus"], "foreman replay"),
])
def test_a_usage_error_is_one_line_pointing_to_help(argv: list[str], command: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a newcomer: `foreman start --port` printed the 34-line usage of every option before
    the one line that said what was wrong."""
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"{command}: error: ") and err.rstrip().endswith(f"see `{command} --help`"), err


@pytest.mark.parametrize("argv,meant", [
    (["start", "--prot", "9"], "--port"),
    (["start", "--wroker-names=ash"], "--worker-names"),
    (["doctor", "--bakend", "claude"], "--backend"),
    (["strat"], "start"),
    (["tui", "--scrpit", "x"], "--script"),
])
def test_a_misspelt_flag_or_command_gets_the_one_meant(argv: list[str], meant: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2 and f"(did you mean {meant}?)" in err, err


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run([*argv, "--help"], capsys)
    assert code == 0
    return " ".join(out.split())


def test_help_shows_the_values_of_every_option_with_a_fixed_set(capsys: pytest.CaptureFixture[str]) -> None:
    """`--backend BACKEND` did not say which backends there are."""
    text = _help(["start"], capsys)
    fixed = [opt for opt in OPTIONS if opt.choices]
    assert {opt.key for opt in fixed} >= {"backend", "merge_style", "os_sandbox", "executor", "effort", "log_level",
                                           "lead_backend", "worker_backend", "showcase"}
    for opt in fixed:
        shown = "{" + ",".join(opt.choices) + "}"
        assert re.search(rf"{opt.cli} \[?{re.escape(shown)}", text), (opt.cli, shown)
    assert "--backend {sim,claude,local}" in _help(["doctor"], capsys)
    assert "--backend {sim,claude,local}" in _help(["usage"], capsys)


def test_doctor_and_config_take_only_the_flags_they_use(capsys: pytest.CaptureFixture[str]) -> None:
    """Both took every flag of `foreman start` (`foreman doctor --goal x` ran, ignoring it)."""
    doctor = _help(["doctor"], capsys)
    for flag in ("--home", "--profile", "--backend", "--port", "--repo", "--os-sandbox", "--executor", "--url",
                 "--local-profile", "--claude-cli", "--ray-address", "--lead-backend", "--workers"):
        assert flag in doctor, flag
    config = _help(["config"], capsys)
    for flag in ("--home", "--profile", "--backend", "--json"):
        assert flag in config, flag
    for flag in ("--goal", "--reset", "--speed", "--auto-answer", "--exit-on-goal-done", "--budget-day", "--notify"):
        assert flag not in doctor and flag not in config, flag
    code, _, err = run(["doctor", "--goal", "x"], capsys)
    assert code == 2 and "unrecognized arguments: --goal x" in err
    code, _, err = run(["config", "--reset"], capsys)
    assert code == 2 and "unrecognized arguments: --reset" in err


def _foreman(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTCRAFT_")}
    full.update(env or {}, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "foreman", *args], capture_output=True, text=True, env=full, cwd=ROOT,
                          stdin=subprocess.DEVNULL, timeout=60)


def test_a_port_held_by_another_program_is_named_with_how_to_pick_another(tmp_path: Path) -> None:
    """Found by a newcomer: a port held by another program was reported as "another Foreman may be
    running (see foreman.json)", which named no Foreman, since none ran."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = _foreman("start", "--home", str(tmp_path / "home"), "--port", str(port), "--no-autostart",
                       "--sandbox", str(tmp_path / "sandbox"))
    assert out.returncode == 2
    said = [line for line in out.stderr.splitlines() if line.startswith("foreman: ")]
    assert said == [f"foreman: port {port} is already in use by {psutil.Process().name()} (pid {os.getpid()}): stop it, "
                    "or start on another port with --port N (--port 0 lets the OS pick a free one)"], out.stderr
    assert "another Foreman" not in out.stderr
