"""File tools and real symlinks on disk; the `foreman policy` entry point."""

from __future__ import annotations

import json
import os

import pytest

from foreman.policy import classify_command, classify_tool, policy_main

from .cases import WT, fake_realpath


def _t(tool: str, lead: bool = False, granted=(), **args):
    return classify_tool(tool, args, worktree=WT, lead=lead, granted=granted, tmpdir="/tmp", realpath=fake_realpath)


@pytest.mark.parametrize(("tool", "args", "outcome", "keys"), [
    ("Read", {"file_path": "/home/u/wt/src/a.py"}, "allow", []),
    ("Read", {"file_path": "src/a.py"}, "allow", []),
    ("Read", {"file_path": "/etc/passwd"}, "ask", ["Read:/etc/passwd"]),
    ("Read", {"file_path": "/home/u/wt/../secret"}, "ask", ["Read:/home/u/secret"]),
    ("Read", {"file_path": "/home/u/wt-evil/x"}, "ask", ["Read:/home/u/wt-evil/x"]),
    ("Read", {"file_path": "/home/u/wt/link/passwd"}, "ask", ["Read:/etc/passwd"]),
    ("Read", {"file_path": "/tmp/scratch"}, "allow", []),
    ("Read", {"file_path": "~/.ssh/id_rsa"}, "deny", []),
    ("Read", {"file_path": "/home/u/.aws/credentials"}, "deny", []),
    ("Grep", {"pattern": "x", "path": "/home/u/.gnupg"}, "deny", []),
    ("Read", {"file_path": "~/.ssh/id_rsa.pub"}, "ask", ["Read:~/.ssh/id_rsa.pub"]),
    # key material wherever it lies outside the worktree: a home under /tmp, any prefix
    ("Read", {"file_path": "/tmp/newhome/.ssh/id_rsa"}, "deny", []),
    ("Read", {"file_path": "/tmp/h/.agentcraft/foreman.json"}, "deny", []),
    ("Read", {"file_path": "/opt/x/.aws/credentials"}, "deny", []),
    ("Read", {"file_path": "../../tmp/h/.netrc"}, "deny", []),
    ("Grep", {"pattern": "x", "path": "/tmp/h/.gnupg"}, "deny", []),
    ("Write", {"file_path": "/tmp/h/.ssh/id_rsa"}, "deny", []),
    ("Edit", {"file_path": "~/.aws/credentials"}, "deny", []),
    ("Write", {"file_path": "/tmp/h/.agentcraft/foreman.json"}, "deny", []),
    ("Read", {"file_path": "/tmp/h/.ssh/known_hosts"}, "allow", []),
    ("Write", {"file_path": "/tmp/h/notes.txt"}, "allow", []),
    ("LS", {"path": "/tmp/h/.ssh"}, "allow", []),
    ("LS", {"path": "/home/u/.ssh"}, "ask", ["Read:/home/u/.ssh"]),
    ("Write", {"file_path": "/home/u/wt/src/new.py"}, "allow", []),
    ("Write", {"file_path": "/home/u/other.py"}, "ask", ["Write:/home/u/other.py"]),
    ("Edit", {"file_path": "/home/u/wt/docs/out/n.md"}, "ask", ["Write:/home/u/secret/n.md"]),
    ("Edit", {"file_path": "/home/u/wt/.git"}, "ask", ["Write:.git:/home/u/wt/.git"]),
    ("MultiEdit", {"file_path": "src/../.git"}, "ask", ["Write:.git:/home/u/wt/.git"]),
    ("NotebookEdit", {"notebook_path": "/home/u/wt/nb.ipynb"}, "allow", []),
    ("Glob", {"pattern": "**/*.py"}, "allow", []),
    ("Glob", {"pattern": "../../x/*"}, "ask", ["Glob:tree:/home/x"]),
    ("Glob", {"pattern": "src/*/../../../*"}, "ask", ["Glob:tree:/home/u/wt"]),
    ("Glob", {"pattern": "*.md", "path": "/etc"}, "ask", ["Glob:tree:/etc"]),
    ("Grep", {"pattern": "x"}, "allow", []),
    ("Grep", {"pattern": "x", "path": "/etc"}, "ask", ["Grep:tree:/etc"]),
    ("Grep", {"pattern": "x", "path": "link"}, "ask", ["Grep:tree:/etc"]),
    ("LS", {"path": "/home/u"}, "ask", ["Read:/home/u"]),
    ("WebFetch", {"url": "https://docs.python.org/3/"}, "ask", ["WebFetch:docs.python.org"]),
    ("WebFetch", {"url": "not a url"}, "deny", []),
    ("WebSearch", {"query": "x"}, "ask", ["WebSearch"]),
    ("Bash", {"command": "git push"}, "deny", []),
    ("Bash", {"command": "cat /etc/x"}, "ask", ["Bash:outside:/etc:r:"]),
    ("Task", {"prompt": "x"}, "deny", []),
    ("TodoWrite", {"todos": []}, "allow", []),
    ("mcp__agentcraft__send_message", {"to": "x"}, "allow", []),
    ("mcp__other__thing", {}, "ask", ["Tool:mcp__other__thing"]),
])
def test_tools(tool: str, args: dict, outcome: str, keys: list[str]) -> None:
    v = _t(tool, **args)
    assert (v.outcome, list(v.keys)) == (outcome, keys), v.reason


# Issue 37: the file tools read Windows-shaped paths as Windows would (a drive, %VAR%, $env:,
# a backslash lead out of the worktree) and ask before writing into a .git below the top.
@pytest.mark.parametrize(("tool", "args", "outcome", "keys"), [
    ("Read", {"file_path": "C:\\Users\\u\\.ssh\\id_rsa"}, "deny", []),
    ("Read", {"file_path": "%USERPROFILE%\\.aws\\credentials"}, "deny", []),
    ("Read", {"file_path": "$env:USERPROFILE\\.netrc"}, "deny", []),
    ("Read", {"file_path": "..\\..\\.ssh\\id_rsa"}, "deny", []),
    ("Grep", {"pattern": "token", "path": "C:\\Users\\u\\.aws"}, "deny", []),
    ("Edit", {"file_path": "%APPDATA%\\gnupg\\private-keys-v1.d\\k.key"}, "deny", []),
    ("Edit", {"file_path": "%APPDATA%\\gnupg\\gpg-agent.conf"}, "ask", ["Write:~/AppData/Roaming/gnupg/gpg-agent.conf"]),
    ("Read", {"file_path": "..\\..\\x"}, "ask", ["Read:/home/x"]),
    ("Write", {"file_path": "C:\\Windows\\x.txt"}, "ask", ["Write:/C:/Windows/x.txt"]),
    ("Write", {"file_path": "..\\out.txt"}, "ask", ["Write:/home/u/out.txt"]),
    ("Glob", {"pattern": "*", "path": "C:\\Users"}, "ask", ["Glob:tree:/C:/Users"]),
    ("Glob", {"pattern": "..\\..\\*"}, "ask", ["Glob:tree:/home"]),
    ("Grep", {"pattern": "x", "path": "%USERPROFILE%"}, "ask", ["Grep:tree:~"]),
    ("Read", {"file_path": "src\\a.py"}, "allow", []),
    ("Write", {"file_path": "build\\out.txt"}, "allow", []),
    ("Glob", {"pattern": "src\\*.py"}, "allow", []),
    ("Write", {"file_path": "sub/.git/hooks/pre-commit"}, "ask", ["Write:.git:/home/u/wt/sub/.git/hooks/pre-commit"]),
    ("Edit", {"file_path": "vendor/lib/.git/config"}, "ask", ["Write:.git:/home/u/wt/vendor/lib/.git/config"]),
    ("Edit", {"file_path": "sub\\.git\\config"}, "ask", ["Write:.git:/home/u/wt/sub/.git/config"]),
    ("Write", {"file_path": "sub/.GIT/config"}, "ask", ["Write:.git:/home/u/wt/sub/.GIT/config"]),
    ("Read", {"file_path": "sub/.git/config"}, "allow", []),
    ("Write", {"file_path": "sub/.gitignore"}, "allow", []),
])
def test_tools_windows_paths_and_nested_git(tool: str, args: dict, outcome: str, keys: list[str]) -> None:
    v = _t(tool, **args)
    assert (v.outcome, list(v.keys)) == (outcome, keys), v.reason


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit"])
def test_lead_never_edits(tool: str) -> None:
    assert _t(tool, lead=True, file_path="/home/u/wt/a.py").outcome == "deny"
    assert _t("Read", lead=True, file_path="/home/u/wt/a.py").outcome == "allow"


def test_granted_tool_keys_are_exact() -> None:
    assert _t("Read", granted=["Read:/etc/passwd"], file_path="/etc/passwd").outcome == "allow"
    assert _t("Read", granted=["Read:/etc/passwd"], file_path="/etc/group").outcome == "ask"
    assert _t("Read", granted=["Read:/etc/shadow"], file_path="/etc/shadow").outcome == "deny"  # key material
    assert _t("Write", granted=["Read:/etc/passwd"], file_path="/etc/passwd").outcome == "ask"


def test_real_symlinks_on_disk(tmp_path) -> None:
    wt = tmp_path / "wt"
    (wt / "src").mkdir(parents=True)
    outside = tmp_path / "secret"
    outside.mkdir()
    (wt / "escape").symlink_to(outside)
    (wt / "loop").symlink_to(wt / "src")
    (tmp_path / "wt-evil").mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    kw = dict(worktree=str(wt), tmpdir=str(scratch))
    assert classify_command("cat src/a.py loop/b.py", **kw).outcome == "allow"
    v = classify_command("cat escape/key", **kw)
    assert v.keys == (f"Bash:outside:{outside}:r:",)
    assert classify_command("cat escape/../../wt-evil/x", **kw).outcome == "ask"
    assert classify_command(f"cat {tmp_path}/wt-evil/x", **kw).keys == (f"Bash:outside:{tmp_path}/wt-evil:r:",)
    assert classify_tool("Read", {"file_path": str(wt / "escape" / "k")}, **kw).keys == (f"Read:{outside}/k",)
    assert classify_command("echo x > escape/f", **kw).outcome == "ask"
    assert classify_command(f"echo x > {scratch}/f", **kw).outcome == "allow"


def test_npx_uses_the_worktree_install_on_disk(tmp_path) -> None:
    wt = tmp_path / "wt"
    target = wt / "node_modules" / "eslint" / "bin"
    target.mkdir(parents=True)
    (target / "eslint.js").write_text("")
    (wt / "node_modules" / ".bin").mkdir()
    os.symlink("../eslint/bin/eslint.js", wt / "node_modules" / ".bin" / "eslint")
    kw = dict(worktree=str(wt), tmpdir=str(tmp_path / "t"))
    assert classify_command("npx eslint .", **kw).outcome == "allow"
    assert classify_command("npx prettier .", **kw).keys == ("Bash:net:npx:prettier",)


def test_policy_main_prints_outcome_keys_and_reason_and_exits_by_outcome(capsys) -> None:
    assert policy_main(["--worktree", WT, "--", "cat /etc/passwd"]) == 3  # ask
    out = capsys.readouterr().out
    assert out.startswith("ask\n") and "key: Bash:outside:/etc:r:" in out and "reason:" in out
    assert policy_main(["--worktree", WT, "--json", "--", "git push"]) == 1  # deny
    data = json.loads(capsys.readouterr().out)
    assert data == {"outcome": "deny", "keys": [], "reason": data["reason"], "network": False} and "push" in data["reason"]
    assert policy_main(["--worktree", WT, "--", "cat ~/.ssh/id_rsa"]) == 1
    assert capsys.readouterr().out.startswith("deny\n")
    assert policy_main(["--worktree", WT, "--lead", "--json", "--", "git", "log", ">", "x"]) == 3
    assert json.loads(capsys.readouterr().out)["outcome"] == "ask"
    assert policy_main(["--worktree", WT, "--grant", "Bash:outside:/etc:r:", "--json", "--", "cat /etc/hosts"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "allow"
    assert policy_main(["--worktree", WT, "--json"]) == 2  # no command: a usage error


def test_policy_cli_exit_status_from_a_real_process(tmp_path) -> None:
    import subprocess
    import sys

    def run(cmd: str) -> int:
        return subprocess.run([sys.executable, "-m", "foreman", "policy", "--worktree", str(tmp_path), "--", cmd],
                              capture_output=True, text=True, env={**os.environ, "HOME": str(tmp_path / "h")}).returncode

    assert [run("ls"), run("git push origin main"), run("pip install requests"), run("cat ~/.aws/credentials")] == [0, 1, 3, 1]


def test_policy_main_says_when_an_allowed_command_would_get_the_network(capsys) -> None:
    from foreman.sandbox import availability

    assert policy_main(["--worktree", WT, "--json", "--", "pip install requests"]) == 3
    assert json.loads(capsys.readouterr().out)["network"] is True
    assert policy_main(["--worktree", WT, "--json", "--", "pytest -q"]) == 0
    assert json.loads(capsys.readouterr().out)["network"] is False
    policy_main(["--worktree", WT, "--", "pip install requests"])
    out = capsys.readouterr().out
    if availability().ok:
        assert "once allowed, this command gets the network" in out, out
    policy_main(["--worktree", WT, "--", "pytest -q"])
    out = capsys.readouterr().out
    assert "gets the network" not in out


def test_a_worktree_under_the_scratch_dir_does_not_make_its_neighbours_scratch() -> None:
    import posixpath

    from foreman.policy import classify_command

    wt = "/tmp/fh-home/sim/worktrees/demo/kit-t1"
    for cmd in ("rm ../juniper-t1/README.md", "cat ../../../state.db", "cp x /tmp/fh-home/sim/state.db"):
        v = classify_command(cmd, worktree=wt, tmpdir="/tmp", realpath=posixpath.normpath)
        assert v.outcome == "ask", (cmd, v)
    assert classify_command("echo hi > /tmp/scratch.txt", worktree=wt, tmpdir="/tmp",
                            realpath=posixpath.normpath).outcome == "allow"


def test_programs_by_path_on_disk_ask_unless_they_are_the_projects_own_tools(tmp_path) -> None:
    wt = tmp_path / "wt"
    (wt / ".venv" / "bin").mkdir(parents=True)
    (wt / "bin").mkdir()
    os.symlink("/usr/bin/python3", wt / ".venv" / "bin" / "python")  # as `python -m venv` makes it
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "evil").write_text("#!/bin/sh\ngit push\n")
    os.symlink(tmp_path / "t" / "evil", wt / ".venv" / "bin" / "pytest")  # a "tool" leading to the temp dir
    os.symlink("/usr/bin/git", wt / "bin" / "git")
    (wt / "gradlew").write_text("#!/bin/sh\n")
    os.symlink("/etc/passwd", wt / "mvnw")  # an entry-point name leading out of the worktree
    kw = dict(worktree=str(wt), tmpdir=str(tmp_path / "t"))
    assert classify_command(".venv/bin/python -m pytest -q", **kw).outcome == "allow"
    assert classify_command("./gradlew test", **kw).outcome == "allow"
    assert classify_command(".venv/bin/pytest", **kw).outcome == "ask"
    assert classify_command("./mvnw test", **kw).outcome == "ask"
    assert classify_command("bin/git push", **kw).outcome == "deny"
    assert classify_command("bin/git status", **kw).outcome == "ask"
    assert classify_command(".venv/bin/python -c 'import os; os.system(\"git push\")'", **kw).outcome == "deny"


def test_policy_main_takes_the_base_branches(capsys) -> None:
    assert policy_main(["--worktree", WT, "--json", "--base", "main", "--", "git update-ref refs/heads/main HEAD"]) == 3
    assert json.loads(capsys.readouterr().out)["keys"] == ["Bash:exact:git update-ref refs/heads/main HEAD"]
    assert policy_main(["--worktree", WT, "--json", "--base", "main", "--", "git update-ref refs/heads/x HEAD"]) == 3
    assert json.loads(capsys.readouterr().out)["keys"] == ["Bash:git update-ref:refs/heads/x"]


@pytest.mark.parametrize("words", [[], ["--"], ["--", ""], ["--", "   "]])
def test_policy_main_without_a_command_is_a_usage_error(capsys, words) -> None:
    """An empty command is not 'allow' (a newcomer's `foreman policy -- ''` got allow, exit 0)."""
    assert policy_main(["--worktree", WT, *words]) == 2
    assert "give a command after --" in capsys.readouterr().err


def test_output_into_a_closed_pipe_ends_quietly():
    """``foreman policy --json ... | head -c0``: the reader is gone before the command writes; the
    command ends with 141 (SIGPIPE's shell code), no traceback."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "foreman", "policy", "--json", "git push origin main"],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_a_worktree_that_is_not_a_folder_is_judged_with_a_note(tmp_path, capsys):
    assert policy_main(["--worktree", str(tmp_path / "missing"), "--", "ls"]) == 0
    assert "is not a folder here; paths are judged as if it were the agent's worktree" in capsys.readouterr().err
    assert policy_main(["--worktree", str(tmp_path), "--", "ls"]) == 0
    assert "not a folder" not in capsys.readouterr().err
