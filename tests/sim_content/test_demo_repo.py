"""The pocket-notes demo repository: real git, real unittest runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foreman.backends.sim.demo_content import COMMITS
from foreman.backends.sim.demo_repo import BASE_BRANCH, apply_step, create_demo_repo
from foreman.backends.sim.patches import Step

from ._repo import git, run_demo_tests

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def test_creates_a_repository_whose_tests_pass_quickly(tmp_path: Path) -> None:
    repo = tmp_path / "sim-demo"
    head = create_demo_repo(repo)

    assert git(repo, "rev-parse", "HEAD").stdout.strip() == head
    assert git(repo, "symbolic-ref", "--short", "HEAD").stdout.strip() == BASE_BRANCH
    assert git(repo, "status", "--porcelain").stdout == ""
    log = git(repo, "log", "--format=%an <%ae>|%cn|%aI|%s").stdout.splitlines()
    assert len(log) == len(COMMITS) == 3
    assert all(line.startswith("Sam Rivera <sam@pocket-notes.example>|Sam Rivera|") for line in log)
    assert log[-1].split("|")[2] == "2025-03-03T09:14:00+01:00"

    started = time.monotonic()
    done = run_demo_tests(repo)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "Ran 20 tests" in done.stderr
    assert elapsed < 2.0
    # running the tests leaves nothing to commit (__pycache__ is ignored)
    assert git(repo, "status", "--porcelain").stdout == ""


def test_head_is_deterministic_and_ignores_the_users_git_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = create_demo_repo(tmp_path / "a")

    # A hostile environment: a global config that signs and names someone else, git variables
    # that would redirect git to another repository, a different time zone.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Someone Else\n\temail = else@example.com\n"
        "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = /nonexistent/gpg\n"
        "[init]\n\tdefaultBranch = trunk\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "a" / ".git"))
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2001-01-01T00:00:00Z")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    second = create_demo_repo(tmp_path / "b")

    assert second == first
    assert len(first) == 40 and int(first, 16) >= 0
    assert not (tmp_path / "b" / ".git" / "refs" / "heads" / "trunk").exists()


def test_refuses_an_existing_path_without_force(tmp_path: Path) -> None:
    repo = tmp_path / "sim-demo"
    head = create_demo_repo(repo)
    (repo / "scratch.txt").write_text("user's work\n", encoding="utf-8")

    with pytest.raises(FileExistsError, match="already exists.*--force"):
        create_demo_repo(repo)
    assert (repo / "scratch.txt").exists()

    assert create_demo_repo(repo, force=True) == head
    assert not (repo / "scratch.txt").exists()
    assert git(repo, "status", "--porcelain").stdout == ""
    assert [p.name for p in tmp_path.iterdir()] == ["sim-demo"]  # no staging folder left


def test_force_never_removes_something_that_is_not_a_demo_repository(tmp_path: Path) -> None:
    other = tmp_path / "project"
    other.mkdir()
    (other / "important.txt").write_text("keep me\n", encoding="utf-8")
    with pytest.raises(FileExistsError, match="does not look like"):
        create_demo_repo(other, force=True)
    assert (other / "important.txt").read_text(encoding="utf-8") == "keep me\n"

    empty = tmp_path / "empty"
    empty.mkdir()
    create_demo_repo(empty, force=True)
    assert (empty / "pocket_notes" / "cli.py").is_file()


def test_apply_step_writes_deletes_and_refuses_paths_outside(tmp_path: Path) -> None:
    repo = tmp_path / "sim-demo"
    create_demo_repo(repo)
    apply_step(repo, Step("x", writes={"docs/new.md": "hi\n"}, deletes=("tests/test_notes.py", "gone.txt")))
    assert (repo / "docs" / "new.md").read_bytes() == b"hi\n"
    assert not (repo / "tests" / "test_notes.py").exists()

    for bad in ["../escape.txt", "/abs.txt", ".git/config", "a/../../b", "C:/x", "a\\b"]:
        with pytest.raises(ValueError, match="refusing"):
            apply_step(repo, Step("x", writes={bad: "nope"}))
    assert not (tmp_path / "escape.txt").exists()


def test_the_demo_cli_works_as_a_program(tmp_path: Path) -> None:
    repo = tmp_path / "sim-demo"
    create_demo_repo(repo)
    env = {**os.environ, "POCKET_NOTES_FILE": str(tmp_path / "notes.json")}

    def notes(*argv: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pocket_notes", *argv], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=30, check=True)
        return done.stdout

    assert notes("add", "Buy milk", "and eggs") == "added note 1\n"
    assert "Buy milk" in notes("search", "eggs")
    assert "search" in notes("--help")


def test_create_demo_script(tmp_path: Path) -> None:
    script = PROJECT_ROOT / "sandbox" / "create_demo.py"
    target = tmp_path / "demo"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), *args], capture_output=True,
                              text=True, timeout=60, check=False)

    done = run(str(target))
    assert done.returncode == 0, done.stderr
    assert str(target) in done.stdout
    assert (target / ".git").is_dir()

    refused = run(str(target))
    assert refused.returncode == 1
    assert "--force" in refused.stderr

    assert run(str(target), "--force").returncode == 0
