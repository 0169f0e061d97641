"""Git refuses transports and signing inside the agent safety environment (real git, real bare remote)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foreman.repos.gitsafety import safety_env
from foreman.repos.worktrees import ensure_worktree, worktree_path

from .conftest import out, sh, write


@pytest.fixture
async def setup(repo: Path, home_profile: Path, tmp_path: Path) -> dict:
    bare = tmp_path / "remote.git"
    sh(tmp_path, "init", "-q", "--bare", str(bare))
    sh(repo, "remote", "add", "origin", str(bare))
    sh(repo, "push", "-q", "origin", "main")  # the daemon's user may push; agents may not
    wt = await ensure_worktree(repo, worktree_path(home_profile, "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    base = dict(os.environ, GIT_DIR=str(repo / ".git"), GIT_WORK_TREE=str(repo), GIT_INDEX_FILE="/tmp/x",
                GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="protocol.allow", GIT_CONFIG_VALUE_0="always")
    env = safety_env(base, agent="kit", worktree=wt.path)
    return {"bare": bare, "wt": wt.path, "env": env}


def remote_state(bare: Path) -> tuple[str, str]:
    return out(bare, "for-each-ref"), out(bare, "count-objects", "-v")


def run(cwd: Path, env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_env_shape(tmp_path: Path) -> None:
    env = safety_env({"PATH": "/bin", "GIT_DIR": "/x", "GIT_COMMON_DIR": "/y", "GIT_CONFIG_GLOBAL": "/z",
                      "SSH_AUTH_SOCK": "/s", "KEEP": "1"}, agent="kit", worktree=tmp_path / "wt")
    assert env["KEEP"] == "1" and "GIT_DIR" not in env and "GIT_COMMON_DIR" not in env and "SSH_AUTH_SOCK" not in env
    assert env["GIT_ALLOW_PROTOCOL"] == "agentcraft-none"
    assert env["GIT_CEILING_DIRECTORIES"] == str(tmp_path.resolve())
    assert (env["GIT_AUTHOR_NAME"], env["GIT_COMMITTER_EMAIL"]) == ("AgentCraft Kit", "kit@agentcraft.invalid")
    config = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(int(env["GIT_CONFIG_COUNT"]))}
    assert config["protocol.allow"] == "never" and config["commit.gpgSign"] == "false"


PUSHES = {
    "plain push": ["git", "push", "origin", "HEAD:refs/heads/pushed"],
    "push with -c protocol overrides": ["git", "-c", "protocol.allow=always", "-c", "protocol.file.allow=always",
                                        "push", "origin", "HEAD:refs/heads/pushed"],
    "alias on the command line": ["git", "-c", "alias.p=push", "p", "origin", "HEAD:refs/heads/pushed"],
    "shell alias": ["git", "-c", "alias.p=!git push origin HEAD:refs/heads/pushed", "p"],
    "script": ["sh", "push.sh"],
    "python -c": [sys.executable, "-c",
                  "import subprocess,sys; sys.exit(subprocess.call(['git','push','origin','HEAD:refs/heads/pushed']))"],
    "explicit pushurl": ["git", "-c", "remote.origin.pushurl={bare}", "push", "origin", "HEAD:refs/heads/pushed"],
    "file url": ["git", "push", "file://{bare}", "HEAD:refs/heads/pushed"],
    "send-pack": ["git", "send-pack", "{bare}", "HEAD:refs/heads/pushed"],
    "ext transport": ["git", "push", "ext::sh -c touch% {bare}/pwned", "HEAD:refs/heads/pushed"],
    "fetch": ["git", "fetch", "{bare}"],
    "ls-remote": ["git", "ls-remote", "origin"],
    "clone": ["git", "clone", "-q", "{bare}", "{wt}/clone"],
    "clone file url": ["git", "clone", "-q", "file://{bare}", "{wt}/clone2"],
}


@pytest.mark.parametrize("how", list(PUSHES))
async def test_transports_fail_and_remote_is_unchanged(setup: dict, how: str) -> None:
    bare, wt, env = setup["bare"], setup["wt"], setup["env"]
    write(wt / "push.sh", "git push origin HEAD:refs/heads/pushed\n")
    write(wt / "change.txt", "agent\n")
    assert run(wt, env, "git", "add", "-A").returncode == 0
    assert run(wt, env, "git", "commit", "-q", "-m", "agent commit").returncode == 0
    before = remote_state(bare)
    argv = [a.format(bare=bare, wt=wt) for a in PUSHES[how]]
    res = run(wt, env, *argv)
    assert res.returncode != 0, res.stderr
    assert "not allowed" in res.stderr, res.stderr  # refused at git's protocol check, no helper run
    assert remote_state(bare) == before
    assert not (bare / "pwned").exists() and not (wt / "clone" / "README.md").exists()
    # the same push works for the user outside the safety environment: the block is the env, not the repo
    if how == "plain push":
        assert run(wt, None, "git", "push", "-q", "origin", "HEAD:refs/heads/pushed").returncode == 0


async def test_local_git_works_with_the_agent_identity_unsigned(setup: dict, repo: Path) -> None:
    wt, env = setup["wt"], setup["env"]
    sh(repo, "config", "commit.gpgsign", "true")  # the user's config says sign
    write(wt / "a.txt", "a\n")
    for argv in (["git", "add", "a.txt"], ["git", "commit", "-q", "-m", "agent"], ["git", "status"],
                 ["git", "branch", "topic"], ["git", "log", "--oneline"]):
        res = run(wt, env, *argv)
        assert res.returncode == 0, (argv, res.stderr)
    assert out(wt, "log", "-1", "--format=%an <%ae>|%G?") == "AgentCraft Kit <kit@agentcraft.invalid>|N"
    assert out(repo, "rev-parse", "agentcraft/kit/t1") == out(wt, "rev-parse", "HEAD")  # GIT_DIR etc. were dropped


@pytest.fixture
def ssh_key(tmp_path: Path) -> Path:
    key = tmp_path / "k"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    return key


async def test_explicit_signing_fails(setup: dict, repo: Path, ssh_key: Path) -> None:
    wt, env = setup["wt"], setup["env"]
    key = ssh_key
    sh(repo, "config", "gpg.format", "ssh")
    sh(repo, "config", "user.signingkey", str(key))
    write(wt / "b.txt", "b\n")
    run(wt, env, "git", "add", "b.txt")
    head = out(wt, "rev-parse", "HEAD")
    res = run(wt, env, "git", "commit", "-S", "-q", "-m", "signed?")
    assert res.returncode != 0 and out(wt, "rev-parse", "HEAD") == head
    assert run(wt, env, "git", "tag", "-s", "-m", "t", "v1").returncode != 0
    assert run(wt, env, "git", "-c", "commit.gpgsign=true", "commit", "-q", "-m", "x").returncode != 0


async def test_deleted_link_stops_git_instead_of_reaching_the_parent(repo: Path, tmp_path: Path) -> None:
    enclosing = tmp_path / "agentcraft"  # make the Foreman home itself sit inside a repository
    sh(enclosing.parent, "init", "-q", str(enclosing))
    wt = await ensure_worktree(repo, worktree_path(enclosing / "claude", "repo", "kit", "t1"), "agentcraft/kit/t1", "main")
    (wt.path / ".git").unlink()
    plain = run(wt.path, dict(os.environ), "git", "rev-parse", "--show-toplevel")
    assert plain.stdout.strip() == str(enclosing.resolve())  # without the ceiling git walks up
    env = safety_env(os.environ, agent="kit", worktree=wt.path)
    for argv in (["git", "status"], ["git", "add", "-A"], ["git", "commit", "-m", "x"]):
        res = run(wt.path, env, *argv)
        assert res.returncode == 128 and "not a git repository" in res.stderr
    sub = wt.path / "src"
    assert run(sub, env, "git", "status").returncode == 128
    assert out(enclosing, "status", "--porcelain") == "?? claude/"


def test_a_colon_in_the_worktree_path_is_refused(tmp_path: Path) -> None:
    """GIT_CEILING_DIRECTORIES is colon-separated: a ':' path cannot stop git walking up (item 11)."""
    from foreman.repos.gitsafety import UnsafePath, check_ceiling_path

    outer = tmp_path / "outer"
    sh(tmp_path, "init", "-q", str(outer))
    parent = outer / "home:profile" / "worktrees"
    wt = parent / "kit-t1"  # a worktree whose .git link is gone
    wt.mkdir(parents=True)
    walked = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=wt, capture_output=True, text=True,
                            env={**os.environ, "GIT_CEILING_DIRECTORIES": str(parent)})
    assert walked.stdout.strip() == str(outer.resolve())  # the ceiling did not hold: why it is refused
    with pytest.raises(UnsafePath, match="contains ':'.*GIT_CEILING_DIRECTORIES"):
        check_ceiling_path(outer / "home:profile", what="home")
    with pytest.raises(UnsafePath, match="worktree folder"):
        safety_env({"PATH": "/bin"}, agent="kit", worktree=wt)
    link = tmp_path / "plain"
    link.symlink_to(outer / "home:profile")
    with pytest.raises(UnsafePath):  # a symlink hiding the ':' is resolved
        check_ceiling_path(link)
    assert check_ceiling_path(tmp_path / "fine", what="home") == (tmp_path / "fine").resolve()
