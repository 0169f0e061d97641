"""Fixtures: real git repositories in temporary folders, isolated from the machine's git config."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from foreman.repos import _objects
from foreman.repos._git import GitProcess

USER_NAME = "Ada User"
USER_EMAIL = "ada@example.com"


def sh(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run git synchronously for test set-up; returns the completed process (text mode)."""
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=check, capture_output=True, text=True)


def out(cwd: Path, *args: str) -> str:
    return sh(cwd, *args).stdout.strip()


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def commit_all(cwd: Path, message: str) -> str:
    sh(cwd, "add", "-A")
    sh(cwd, "commit", "-q", "-m", message)
    return out(cwd, "rev-parse", "HEAD")


@pytest.fixture(autouse=True)
def git_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME with its own global git config (the test user's identity)."""
    home = tmp_path / "home"
    home.mkdir()
    for key in list(os.environ):
        if key.startswith("GIT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    (home / ".gitconfig").write_text(
        f"[user]\n\tname = {USER_NAME}\n\temail = {USER_EMAIL}\n[init]\n\tdefaultBranch = main\n"
        "[protocol \"file\"]\n\tallow = always\n"
    )
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository ``repo`` on ``main`` with one commit (README.md, src/app.py)."""
    root = tmp_path / "repo"
    root.mkdir()
    sh(root, "init", "-q", "-b", "main")
    write(root / "README.md", "# demo\n")
    write(root / "src" / "app.py", "def main():\n    return 1\n")
    commit_all(root, "initial")
    return root.resolve()


@pytest.fixture
def home_profile(tmp_path: Path) -> Path:
    path = tmp_path / "agentcraft" / "claude"
    path.mkdir(parents=True)
    return path.resolve()


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The argument lists of every git process the code under test starts (``GitProcess``), in
    order; a test clears it where its count starts. The cache of answers git gives for object ids
    alone starts empty, so a read asked before in another test is counted here."""
    seen: list[list[str]] = []
    call = GitProcess.call

    async def counted(self: GitProcess, *args: Any, **kw: Any) -> Any:
        seen.append(self.argv)
        return await call(self, *args, **kw)

    monkeypatch.setattr(GitProcess, "call", counted)
    monkeypatch.setattr(_objects, "_answers", _objects._Answers())
    return seen

