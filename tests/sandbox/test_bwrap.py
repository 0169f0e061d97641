"""The OS sandbox with real processes under bubblewrap: what a command can write, read and reach.

Every test here runs real ``bwrap``; they skip, naming the reason, where bubblewrap is missing
or cannot create namespaces (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest

from foreman.backends.local import commands
from foreman.backends.sim.demo_repo import create_demo_repo, demo_test_command
from foreman.repos import ci
from foreman.repos.gitsafety import safety_env
from foreman.repos.hooks import CommitHooks, HookRefused
from foreman.repos.worktrees import commit_for_agent
from foreman.sandbox import Sandbox, availability

FOUND = availability()
pytestmark = pytest.mark.skipif(not FOUND.ok, reason=f"no OS sandbox here: {FOUND.detail}")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


class World:
    """A repository with an agent worktree, a user home with secrets and caches, a Foreman home."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        (self.repo / "README.md").write_text("hello\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", "init")
        self.foreman_home = root / "fhome"
        self.wt = self.foreman_home / "p" / "worktrees" / "repo" / "kit-t1"
        git(self.repo, "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(self.wt))
        self.home = root / "userhome"
        (self.home / ".ssh").mkdir(parents=True)
        (self.home / ".ssh" / "id_ed25519").write_text("SECRET-KEY\n")
        (self.home / ".cache" / "pip").mkdir(parents=True)
        (self.home / ".cache" / "pip" / "seen").write_text("cached\n")
        (self.foreman_home / "p" / "foreman.json").write_text('{"token": "TOKEN-XYZ"}')
        self.sandbox = Sandbox(FOUND.bwrap, hide=(self.foreman_home, self.foreman_home / "p"))
        self.env = {**safety_env(os.environ, agent="kit", worktree=self.wt), "HOME": str(self.home)}

    async def run(self, command: str, **kw) -> ci.CIResult:
        return await ci.run_ci(command, cwd=self.wt, env=self.env, timeout=60, sandbox=self.sandbox, **kw)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


async def test_writing_in_the_worktree_and_its_temp_folder_works(world: World) -> None:
    res = await world.run("echo made > made.txt && echo t > /tmp/scratch && cat /tmp/scratch && echo $TMPDIR")
    assert res.ok, res.output
    assert res.output.split() == ["t", "/tmp"]
    assert (world.wt / "made.txt").read_text() == "made\n"


async def test_writing_outside_the_worktree_fails_with_a_hint(world: World, tmp_path: Path) -> None:
    res = await world.run(f"echo x > {world.repo / '.git' / 'probe'}")
    assert not res.ok and "Read-only file system" in res.output
    assert "[os sandbox] read-only file system: outside the worktree" in res.output
    assert not (world.repo / ".git" / "probe").exists()
    res = await world.run("echo x > /usr/foreman-sandbox-probe")
    assert not res.ok and "Read-only file system" in res.output
    assert not Path("/usr/foreman-sandbox-probe").exists()
    beside = tmp_path / "beside.txt"  # under the host's /tmp: the sandbox's /tmp is its own
    res = await world.run(f"mkdir -p {tmp_path} && echo x > {beside}; echo done")
    assert res.ok and not beside.exists()


async def test_home_is_hidden_but_toolchain_caches_stay(world: World) -> None:
    res = await world.run("cat $HOME/.ssh/id_ed25519")
    assert not res.ok and "SECRET" not in res.output and "No such file or directory" in res.output
    assert "home folder" in res.output and "hidden" in res.output
    res = await world.run("cat $HOME/.cache/pip/seen && echo new > $HOME/.cache/pip/written")
    assert res.ok, res.output
    assert (world.home / ".cache" / "pip" / "written").read_text() == "new\n"
    res = await world.run(f"cat {world.foreman_home / 'p' / 'foreman.json'}")  # the Foreman's profile folder
    assert not res.ok and "TOKEN" not in res.output


async def test_no_tcp_connection_leaves_the_sandbox(world: World) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        server.settimeout(30)
        try:
            conn, _ = server.accept()
            accepted.append(True)
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    probe = f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\""
    try:
        res = await world.run(probe)
        assert not res.ok and "connected" not in res.output
        assert "[os sandbox] network is off for this command" in res.output
        assert not accepted
        argv = world.sandbox.wrap(["/bin/sh", "-c", probe], worktree=world.wt, env=world.env, network=True)
        asked = subprocess.run(argv, capture_output=True, text=True, env=world.env, timeout=60)
        assert asked.returncode == 0 and "connected" in asked.stdout, asked.stderr  # network when asked for
    finally:
        server.close()
        thread.join(5)


async def test_git_commit_in_the_worktree_works_but_the_base_branch_cannot_move(world: World) -> None:
    res = await world.run("echo change >> README.md && git add -A && git commit -qm 'from the sandbox' && git log --oneline -1")
    assert res.ok, res.output
    assert git(world.repo, "log", "-1", "--format=%s", "agentcraft/kit/t1") == "from the sandbox"
    main_before = git(world.repo, "rev-parse", "main")
    res = await world.run("git update-ref refs/heads/main HEAD")
    assert not res.ok and "Read-only file system" in res.output
    assert git(world.repo, "rev-parse", "main") == main_before


async def test_the_demo_repository_suite_passes_inside_the_sandbox(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    create_demo_repo(demo)
    wt = tmp_path / "fhome" / "p" / "worktrees" / "demo" / "kit-t1"
    git(demo, "worktree", "add", "-q", "-b", "agentcraft/kit/t1", str(wt))
    env = {**safety_env(os.environ, agent="kit", worktree=wt), "PYTHONDONTWRITEBYTECODE": "1"}
    sandbox = Sandbox(FOUND.bwrap, hide=(tmp_path / "fhome",))
    res = await ci.run_ci(demo_test_command(sys.executable), cwd=wt, env=env, timeout=120, sandbox=sandbox)
    assert res.ok, res.output
    assert "OK" in res.output


async def test_local_run_goes_through_the_sandbox(world: World) -> None:
    out = await commands.run_command(f"touch {world.repo}/.git/escaped; touch inside", cwd=world.wt, env=world.env,
                                     timeout=30, sandbox=world.sandbox)
    assert out.exit_code == 0 and (world.wt / "inside").exists() and not (world.repo / ".git" / "escaped").exists()
    assert "Read-only file system" in out.output


def _alive_with(token: str, *, sleeper_only: bool = False) -> list[psutil.Process]:
    """Processes whose command line holds ``token`` (bwrap and sh too, unless ``sleeper_only``)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if token in " ".join(cmdline) and (not sleeper_only or cmdline[:1] == [sys.executable]):
            found.append(proc)
    return found


def _wait_gone(token: str, seconds: float = 10.0) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = []
        for proc in _alive_with(token):
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
            except psutil.NoSuchProcess:  # gone between the listing and the look
                pass
        if not alive:
            return []
        time.sleep(0.1)
    return alive


def test_a_background_process_dies_with_the_sandbox(world: World) -> None:
    token = f"foreman-bg-{uuid.uuid4().hex}"
    sleeper = f"{sys.executable} -c 'import time; time.sleep(300)' {token}"
    argv = world.sandbox.wrap(["/bin/sh", "-c", f"{sleeper} > /dev/null 2>&1 & sleep 0.5; echo started"],
                              worktree=world.wt, env=world.env)
    done = subprocess.run(argv, capture_output=True, text=True, env=world.env, timeout=60)
    assert done.returncode == 0 and "started" in done.stdout
    assert _wait_gone(token) == []
    # killing bwrap itself (as the CI runner's timeout does) takes the whole tree with it
    token = f"foreman-fg-{uuid.uuid4().hex}"
    argv = world.sandbox.wrap(["/bin/sh", "-c", f"{sys.executable} -c 'import time; time.sleep(300)' {token} & wait"],
                              worktree=world.wt, env=world.env)
    proc = subprocess.Popen(argv, env=world.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not _alive_with(token, sleeper_only=True) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive_with(token, sleeper_only=True), "the sandboxed process never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert _wait_gone(token) == []
    finally:
        for p in _alive_with(token):
            p.kill()


async def test_a_python_installation_under_tmp_stays_visible(world: World, tmp_path: Path) -> None:
    """/tmp is private in the sandbox, but a virtualenv there (a checkout under /tmp, as CI's may
    be) is the Foreman's own Python: it is bound back read-only, so CI commands can run it."""
    assert tmp_path.resolve().is_relative_to("/tmp"), "pytest's temporary folder is expected under /tmp"
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "tool").write_text("#!/bin/sh\necho tool ran\n")
    (venv / "tool").chmod(0o755)
    box = Sandbox(FOUND.bwrap, hide=world.sandbox.hide, read_only=(tmp_path / "venv",))
    res = await ci.run_ci(str(venv / "tool"), cwd=world.wt, env=world.env, timeout=60, sandbox=box)
    assert res.ok and "tool ran" in res.output, res.output
    res = await ci.run_ci(f"touch {venv / 'written'}", cwd=world.wt, env=world.env, timeout=60, sandbox=box)
    assert not res.ok and not (venv / "written").exists(), "the bound-back installation must stay read-only"


async def test_the_ci_log_line_names_the_command_not_the_sandbox(world: World, caplog: pytest.LogCaptureFixture) -> None:
    """The INFO line of a CI run says which command ran and how it ended; the bwrap command line
    (dozens of mounts) goes to DEBUG only."""
    import logging
    import re

    with caplog.at_level(logging.INFO, logger="foreman.repos.ci"):
        res = await world.run("exit 3")
    assert res.exit_code == 3
    lines = [r.getMessage() for r in caplog.records if r.name == "foreman.repos.ci" and r.levelno == logging.INFO]
    assert len(lines) == 1 and re.fullmatch(r"ci 'exit 3' exited 3 after \d+\.\ds in the OS sandbox", lines[0]), lines
    assert not any("bwrap" in line for line in lines)


async def test_commit_hooks_run_in_the_sandbox_and_can_stage(world: World) -> None:
    """The repository's commit hooks run on the Foreman's commit of an agent's leftovers inside the
    agent's sandbox (issue 37 item 4): a hook can stage on the temporary index (kept in the
    worktree's git dir, which the sandbox lets git write) but not write outside the worktree."""
    hooks = world.repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text(
        f"#!/bin/sh\necho staged > staged.txt && git add staged.txt\necho x > {world.repo}/escaped 2>/dev/null\nexit 0\n")
    (hooks / "pre-commit").chmod(0o755)
    (world.wt / "work.txt").write_text("work\n")
    done = await commit_for_agent(world.repo, world.wt, "agentcraft/kit/t1", "t1", "AgentCraft Kit <kit@agentcraft.invalid>",
                                  hooks=CommitHooks(world.env, sandbox=world.sandbox, timeout=60))
    assert done.commit is not None and done.hooks == ("pre-commit",)
    assert git(world.repo, "ls-tree", "--name-only", "agentcraft/kit/t1").split() == ["README.md", "staged.txt", "work.txt"]
    assert not (world.repo / "escaped").exists()


@pytest.mark.parametrize("where", ["home", "tmp"])
async def test_hooks_in_a_folder_the_sandbox_hides_still_run(world: World, tmp_path: Path, where: str) -> None:
    """Found by a newcomer: ``core.hooksPath`` under the home folder (a shared ``~/.githooks``) or
    under ``/tmp`` was hidden in the sandbox, so ``git hook run`` found no hook and every commit was
    refused (3 refusals: blocked), whatever the hook said. The hooks' folder stays visible,
    read-only; a tool a hook calls from the hidden home fails with the sandbox's hint."""
    folder = (world.home / ".githooks") if where == "home" else Path(tempfile.mkdtemp(prefix="hooks-", dir="/tmp"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        await _hooks_in(world, folder)
    finally:
        if where == "tmp":
            shutil.rmtree(folder)


async def _hooks_in(world: World, folder: Path) -> None:
    (folder / "pre-commit").write_text("#!/bin/sh\necho ran the shared hook\nexit 0\n")
    (folder / "pre-commit").chmod(0o755)
    git(world.repo, "config", "core.hooksPath", str(folder))
    (world.wt / "work.txt").write_text("work\n")
    hooks = CommitHooks(world.env, sandbox=world.sandbox, timeout=60)
    done = await commit_for_agent(world.repo, world.wt, "agentcraft/kit/t1", "t1", "AgentCraft Kit <kit@agentcraft.invalid>",
                                  hooks=hooks)
    assert done.commit is not None and done.hooks == ("pre-commit",)
    tool = world.home / "tools" / "lint"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    (folder / "pre-commit").write_text(f"#!/bin/sh\n{tool}\n")
    (world.wt / "more.txt").write_text("more\n")
    with pytest.raises(HookRefused) as info:
        await commit_for_agent(world.repo, world.wt, "agentcraft/kit/t1", "t1", "AgentCraft Kit <kit@agentcraft.invalid>",
                               hooks=hooks)
    assert "the home folder" in info.value.output and "hidden in the OS sandbox" in info.value.output
