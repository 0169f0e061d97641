"""The real CLI with the runner's settings: no filesystem settings, and every Bash command put to
the policy and run in the Foreman's OS sandbox (the gate's ``PreToolUse`` hook hands it back
wrapped in bwrap; the CLI's own sandbox stays off)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from foreman.backends.claude import options as runner_module
from foreman import sandbox

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


BOX = sandbox.availability()
needs_bwrap = pytest.mark.skipif(not BOX.ok, reason=f"the OS sandbox cannot run here: {BOX.detail}")


def _out(api, agent: str, step: int) -> str:
    return result_text(api.of(agent)[step].tool_results()[0]).split("<system-reminder>")[0]


@needs_bwrap
async def test_every_command_goes_through_the_policy_and_runs_in_the_foreman_sandbox(
        claude_cli: RealCLI, make_runner, request_for, tmp_path: Path):
    """A worker in a real worktree: the commands the CLI deems read-only (``ls``, ``git status``)
    reach the policy too; ``git add -A`` and a commit work and the user's global excludes hold; the
    base branch cannot be moved and the user's checkout is not written; the network is there only
    for a command whose verdict needs it (``curl``), not for one whose verdict does not."""
    repo = make_repo(tmp_path, files=PYPROJECT)
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(wt))
    base = git(repo, "rev-parse", "main")
    (claude_cli.home / ".config" / "git").mkdir(parents=True)
    (claude_cli.home / ".config" / "git" / "ignore").write_text("*.log\n")  # the user's global excludes
    port = int(claude_cli.api.url.rsplit(":", 1)[1].split("/")[0])
    commands = [
        "ls",
        "echo x > a.txt && echo noise > debug.log && git status --porcelain",
        "git add -A && git -c user.name=K -c user.email=k@example.com commit -q -m a && echo committed",
        "git update-ref refs/heads/main HEAD; echo rc=$?",
        f"echo x > {repo}/outside.txt; ls {repo}",
        f"curl -s -o /dev/null -w 'http %{{http_code}}' http://127.0.0.1:{port}/",
        f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3)'; echo rc=$?",
        "touch /usr/foreman-probe",
    ]
    api = claude_cli.api
    api.script("kit", [*(tool("Bash", {"command": c, "description": f"step {i}"}) for i, c in enumerate(commands)),
                       text("Done.")])
    tools = RecordingTools("kit")
    result = await make_runner(sandbox=sandbox.Sandbox(BOX.bwrap)).run_turn(request_for("kit", cwd=wt), tools)
    assert result.ok, result.error
    assert [args["command"] for _, args in tools.permits] == commands  # ls and git status too
    out = [_out(api, "kit", i) for i in range(1, len(commands))]
    assert "proj.py" in out[0].split()
    assert out[1].split() == ["??", "a.txt"], out[1]  # the global excludes hold: no debug.log
    assert "committed" in out[2], out[2]
    assert git(wt, "show", "--name-only", "--format=", "HEAD").split() == ["a.txt"]
    assert "rc=0" not in out[3] and git(repo, "rev-parse", "main") == base
    assert not (repo / "outside.txt").exists()
    assert out[5].startswith("http ") and out[5] != "http 000", out[5]  # curl's verdict needs the network
    assert "rc=0" not in out[6], out[6]  # python -c's does not: no route to the daemon's loopback
    # a command that fails on a sandbox rule: the model is told which rule, and so is the agent's log
    assert "[os sandbox] read-only file system: outside the worktree" in json.dumps(api.of("kit")[8].messages[-1])
    assert any("touch /usr/foreman-probe" in line and "the OS sandbox blocked it" in line for _, line in tools.logs)


@needs_bwrap
async def test_the_leads_commands_read_the_users_checkout_and_never_write_it(
        claude_cli: RealCLI, make_runner, request_for, tmp_path: Path):
    repo = make_repo(tmp_path, files=PYPROJECT)
    api = claude_cli.api
    api.script("marlow", [
        tool("Bash", {"command": "cat proj.py", "description": "read"}),
        tool("Bash", {"command": "echo x > notes.txt; echo rc=$?", "description": "write"}),
        text("Done."),
    ])
    result = await make_runner(sandbox=sandbox.Sandbox(BOX.bwrap)).run_turn(request_for("marlow", cwd=repo),
                                                                            RecordingTools("marlow"))
    assert result.ok, result.error
    assert "def hello" in _out(api, "marlow", 1)
    assert "rc=0" not in _out(api, "marlow", 2) and not (repo / "notes.txt").exists()


@needs_bwrap
async def test_two_workers_commands_at_once_leave_the_shared_git_folder_alone(
        claude_cli: RealCLI, make_runner, request_for, tmp_path: Path):
    """Two workers' worktrees share the repository's ``.git``. The sandbox adds nothing there while a
    command runs (the CLI's own sandbox put placeholder files there, and a second worker's command
    started then failed: "bwrap: Can't find source path .git/config.lock"), so commands started
    while another runs, and ending while another starts, all succeed."""
    repo = make_repo(tmp_path, files=PYPROJECT)
    common = repo / ".git"
    trees = {}
    for agent in ("juniper", "kit"):
        trees[agent] = tmp_path / f"wt-{agent}"
        git(repo, "worktree", "add", "-q", "-b", f"agentcraft/{agent}/t1", str(trees[agent]))
    before = {p.name for p in common.iterdir()}
    api = claude_cli.api
    for agent in trees:  # overlapping short and long commands, several times over
        api.script(agent, [*(tool("Bash", {"command": f"sleep 0.{3 + i % 5}; echo {agent}-{i}", "description": "w"})
                             for i in range(6)), text("Done.")])
    box = sandbox.Sandbox(BOX.bwrap)
    seen: set[str] = set()

    async def watch() -> None:
        while True:
            seen.update(p.name for p in common.iterdir())
            await asyncio.sleep(0.01)

    watcher = asyncio.create_task(watch())
    try:
        results = await asyncio.gather(*(make_runner(sandbox=box).run_turn(request_for(agent, cwd=wt),
                                                                           RecordingTools(agent))
                                         for agent, wt in trees.items()))
    finally:
        watcher.cancel()
    assert all(r.ok for r in results), [r.error for r in results]
    for agent in trees:
        outs = [_out(api, agent, i) for i in range(1, 7)]
        assert [o.strip() for o in outs] == [f"{agent}-{i}" for i in range(6)], outs
    assert seen == before, seen ^ before  # no placeholder (config.lock ...) ever appeared in the shared .git
