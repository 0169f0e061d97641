"""The real CLI with the runner's settings: its own sandbox around Bash (and git in it), and no filesystem settings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from foreman.backends.claude import options as runner_module
from foreman.backends.claude import sandbox_stubs

from ..claude.conftest import RecordingTools
from ..rig import PYPROJECT, git, make_repo
from .conftest import RealCLI
from .scripted_api import result_text, text, tool

pytestmark = pytest.mark.timeout(120)


def _plant_settings(home: Path, workdir: Path) -> None:
    """User settings (the test's HOME / CLAUDE_CONFIG_DIR) and project settings (the working
    directory), each with instructions and a Bash hook that leaves a file behind."""
    for where, root, claude_dir in (("user", home, home / ".claude"), ("project", workdir, workdir / ".claude")):
        claude_dir.mkdir(parents=True, exist_ok=True)
        hook = {"type": "command", "command": f"touch {root / ('HOOKED-' + where)}"}
        (claude_dir / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [hook]}]}}))
        (claude_dir / "CLAUDE.md").write_text(f"MARKER-{where}-instructions\n")
    (workdir / "CLAUDE.md").write_text("MARKER-project-root-instructions\n")


def _seen_by_the_model(requests) -> str:
    return "\n".join(r.system_text + json.dumps(r.messages) for r in requests)


async def test_user_and_project_settings_stay_out(claude_cli: RealCLI, make_runner, request_for, workdir: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    """Neither the user's nor the repository's settings reach the CLI: no instructions, no hooks.
    The control run (``setting_sources=["project"]``) shows why: the repository's hook runs."""
    _plant_settings(claude_cli.home, workdir)
    api = claude_cli.api
    api.script("kit", [tool("Bash", {"command": "echo hi", "description": "say hi"}), text("Done.")],
               [tool("Bash", {"command": "echo hi", "description": "say hi"}), text("Done.")])
    runner = make_runner()
    result = await runner.run_turn(request_for("kit"), RecordingTools())
    assert result.ok, (result.error, api.problems)
    assert "MARKER" not in _seen_by_the_model(api.of("kit", turn=0))
    assert not list(claude_cli.home.glob("HOOKED-*")) and not list(workdir.glob("HOOKED-*"))

    monkeypatch.setattr(runner_module, "SETTING_SOURCES", ["project"])
    control = await runner.run_turn(request_for("kit", prompt="Again."), RecordingTools())
    assert control.ok, control.error
    assert "MARKER-project-root-instructions" in _seen_by_the_model(api.of("kit", turn=1))
    assert (workdir / "HOOKED-project").exists()  # a repository's hook runs a command no policy saw
    assert not (claude_cli.home / "HOOKED-user").exists()


async def test_required_sandbox_never_runs_bash_unsandboxed(claude_cli: RealCLI, make_runner, request_for,
                                                            workdir: Path, tmp_path: Path):
    """``--os-sandbox required``: Bash runs inside the CLI's sandbox, or the turn fails."""
    outside = tmp_path / "outside.txt"
    api = claude_cli.api
    api.script("kit", [
        tool("Bash", {"command": "echo in > inside.txt && cat inside.txt", "description": "write inside"}),
        tool("Bash", {"command": f"echo out > {outside}; echo rc=$?", "description": "write outside"}),
        text("Done."),
    ])
    tools = RecordingTools("kit")
    result = await make_runner(os_sandbox=True, sandbox_required=True).run_turn(request_for("kit"), tools)
    if shutil.which("socat") is None or shutil.which("bwrap") is None:
        # the CLI cannot start its sandbox here: it ends the turn at start instead of running Bash unsandboxed
        assert not result.ok and "sandbox" in (result.error or "").lower(), result.error
        assert tools.permits == [] and not (workdir / "inside.txt").exists() and not outside.exists()
        return
    assert result.ok, result.error
    assert (workdir / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
    assert "rc=0" not in result_text(api.of("kit")[2].tool_results()[0])


@pytest.mark.skipif(shutil.which("socat") is None or shutil.which("bwrap") is None,
                    reason="the CLI's own sandbox needs bwrap and socat (apt-get install bubblewrap socat)")
async def test_git_add_all_commits_inside_the_cli_sandbox(claude_cli: RealCLI, make_runner, request_for,
                                                          tmp_path: Path):
    """The CLI's sandbox mounts /dev/null over .bashrc, .vscode, .claude/hooks ... in the working
    directory; git in its commands ignores them (:mod:`~foreman.backends.claude.sandbox_stubs`),
    so ``git add -A`` and a commit work in a real worktree, and the user's global excludes still hold."""
    repo = make_repo(tmp_path, files=PYPROJECT)
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(wt))
    (claude_cli.home / ".config" / "git").mkdir(parents=True)
    (claude_cli.home / ".config" / "git" / "ignore").write_text("*.log\n")  # the user's global excludes
    api = claude_cli.api
    api.script("kit", [
        tool("Bash", {"command": "stat -c '%F' .bashrc .vscode .claude/hooks", "description": "the stubs"}),
        tool("Bash", {"command": "echo x > a.txt && echo noise > debug.log && git status --porcelain",
                      "description": "status"}),
        tool("Bash", {"command": "git add -A && git -c user.name=K -c user.email=k@example.com commit -q -m a && "
                                 "echo committed", "description": "commit"}),
        text("Done."),
    ])
    result = await make_runner(os_sandbox=True).run_turn(request_for("kit", cwd=wt), RecordingTools("kit"))
    assert result.ok, result.error
    stubs, status, commit = (result_text(api.of("kit")[i].tool_results()[0]).split("<system-reminder>")[0]
                             for i in (1, 2, 3))
    assert stubs.split() == ["character", "special", "file"] * 3, stubs  # the sandbox's stubs are there
    assert status.split() == ["??", "a.txt"], status  # git sees neither the stubs nor the ignored log
    assert "committed" in commit, commit
    assert git(wt, "show", "--name-only", "--format=", "HEAD").split() == ["a.txt"]
    assert git(repo, "log", "-1", "--format=%s", "agentcraft/kit/t1").strip() == "a"
    assert not (repo / ".git" / "info" / "exclude").exists() or ".bashrc" not in (
        repo / ".git" / "info" / "exclude").read_text()  # the user's repository is left alone


def test_the_excludes_setting_keeps_the_safety_settings_numbers(tmp_path: Path):
    env = {"GIT_CONFIG_COUNT": "3", "HOME": str(tmp_path)}
    path = sandbox_stubs.excludes_file(tmp_path, env)
    assert sandbox_stubs.git_env(env, path) == {"GIT_CONFIG_KEY_3": "core.excludesFile",
                                               "GIT_CONFIG_VALUE_3": str(path), "GIT_CONFIG_COUNT": "4"}
    assert "/.bashrc\n" in path.read_text() and "/.claude/\n" in path.read_text()


def test_turns_starting_at_once_write_the_excludes_file_safely(tmp_path: Path):
    from concurrent.futures import ThreadPoolExecutor

    homes = []
    for name in ("one", "two"):  # two users' global excludes: every call rewrites the file
        (tmp_path / name / ".config" / "git").mkdir(parents=True)
        (tmp_path / name / ".config" / "git" / "ignore").write_text(f"*.{name}\n")
        homes.append({"HOME": str(tmp_path / name)})
    with ThreadPoolExecutor(8) as pool:
        paths = list(pool.map(lambda i: sandbox_stubs.excludes_file(tmp_path, homes[i % 2]), range(400)))
    assert set(paths) == {tmp_path / sandbox_stubs.EXCLUDES_NAME}
    assert "/.vscode\n" in paths[0].read_text() and not list(tmp_path.glob("*.tmp"))
