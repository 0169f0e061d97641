"""Anchored edits in memory, the workspace's guards, and RUN's process-tree handling."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import psutil
import pytest

from foreman.backends.local import edits
from foreman.backends.local.commands import is_test_command, run_command
from foreman.backends.local.registry import Create, Edit, Read
from foreman.backends.local.workspace import Refused, Workspace


def test_plan_edit_exact_loose_ambiguous_and_missing() -> None:
    src = "a = 1\nb = 2   \nc = 3\n"
    plan = edits.plan_edit(src, "b = 2   \n", "b = 20", path="x.py")
    assert plan.new == "a = 1\nb = 20\nc = 3\n" and (plan.first_line, plan.last_line) == (2, 2)
    assert "-b = 2" in plan.diff and "+b = 20" in plan.diff
    loose = edits.plan_edit(src, "b = 2\nc = 3", "b = 2\nc = 30")
    assert loose.match == "trailing_whitespace" and loose.new.endswith("c = 30\n")
    with pytest.raises(edits.EditRefused, match="matches 2 places"):
        edits.plan_edit("x\nx\n", "x", "y")
    with pytest.raises(edits.EditRefused, match="closest passage starts at line 3"):
        edits.plan_edit("one\ntwo\ndef f(a):\n    return a\n", "def f(b):\n    return a", "")
    assert edits.region("l1\nl2\nl3\nl4\n", 2, 3, context=0) == "2| l2\n3| l3"


def test_workspace_guards(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    ws = Workspace(tmp_path, max_read_chars=30)
    with pytest.raises(Refused, match="outside your worktree"):
        ws.rel("../etc/passwd")
    with pytest.raises(Refused, match=".git folder"):
        ws.rel(".git/config")
    with pytest.raises(Refused, match="READ f.py first"):
        ws.propose(Edit(path="f.py", search="line 1", replace="x"))
    out = ws.read(Read(path="f.py"))
    assert "clipped" in out.text and not ws.seen["f.py"].whole
    whole = "".join(f"line {i}\n" for i in range(1, 11))
    with pytest.raises(Refused, match="ranged or clipped read"):
        ws.propose(Create(path="f.py", content="new\n"))
    with pytest.raises(Refused, match="ranged or clipped read"):
        ws.propose(Edit(path="f.py", search=whole, replace="new"))
    change = ws.propose(Edit(path="f.py", search="line 2\n", replace="line two"))
    (tmp_path / "f.py").write_text(whole + "extra\n")  # changes while waiting for approval
    with pytest.raises(Refused, match="changed while the change waited"):
        ws.commit(change)
    assert "line two" not in (tmp_path / "f.py").read_text()


def test_commit_returns_the_region(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a\nb\nc\n")
    ws = Workspace(tmp_path)
    ws.read(Read(path="f.py"))
    out = ws.commit(ws.propose(Edit(path="f.py", search="b", replace="B1\nB2")))
    assert out.startswith("edited f.py") and "2| B1\n3| B2\n4| c" in out
    assert ws.commit(ws.propose(Create(path="new/g.py", content="x = 1"))).startswith("wrote new/g.py")
    assert (tmp_path / "new" / "g.py").read_text() == "x = 1\n"


def test_test_command_detection() -> None:
    assert is_test_command("python -m pytest -q") and is_test_command("npm test") and is_test_command("go test ./...")
    assert not is_test_command("ls -la") and not is_test_command("git status")


async def test_run_output_is_bounded_and_timeout_kills(tmp_path: Path) -> None:
    res = await run_command("yes 0123456789 | head -c 200000", cwd=tmp_path, env=None, timeout=10, max_output=1000)
    assert res.exit_code == 0 and "bytes of output cut" in res.output and len(res.output) < 1200
    slow = await run_command("sleep 30", cwd=tmp_path, env=None, timeout=0.3)
    assert slow.timed_out and slow.duration < 5


async def test_cancel_kills_the_command_tree(tmp_path: Path) -> None:
    pids: list[int] = []
    marker = tmp_path / "started"
    task = asyncio.ensure_future(run_command(f"sleep 30 & sleep 31 & touch {marker}; wait", cwd=tmp_path, env=None,
                                             timeout=60, on_start=pids.append))
    for _ in range(200):
        if marker.exists():
            break
        await asyncio.sleep(0.02)
    children = psutil.Process(pids[0]).children(recursive=True)
    assert len(children) >= 2
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not psutil.pid_exists(pids[0]) or psutil.Process(pids[0]).status() == psutil.STATUS_ZOMBIE
    assert all(not c.is_running() or c.status() == psutil.STATUS_ZOMBIE for c in children)
    assert os.getpgid(0) != pids[0]


def test_plan_edit_tolerates_a_whole_block_indented_differently() -> None:
    src = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    plan = edits.plan_edit(src, "def f(self):\n    return 1", "def f(self):\n    if True:\n        return 3")
    assert plan.match == "indentation"
    assert plan.new == "class A:\n    def f(self):\n        if True:\n            return 3\n\n    def g(self):\n        return 2\n"
    with pytest.raises(edits.EditRefused, match="matches 2 places"):  # ambiguous once shifted: refused
        edits.plan_edit("class A:\n    x = 1\nclass B:\n    x = 1\n", "x = 1", "x = 2")
    with pytest.raises(edits.EditRefused, match="does not match"):  # nowhere: a failure, never a guess
        edits.plan_edit(src, "return 7", "return 8")


def test_local_edits_keep_crlf_on_every_line(tmp_path: Path) -> None:
    """Issue 12 item 15: a CRLF file stays CRLF, whatever line ends the model's text used."""
    crlf = "def f():\r\n    return 1\r\n\r\n\r\ndef g():\r\n    return 2\r\n"
    (tmp_path / "m.py").write_bytes(crlf.encode())
    ws = Workspace(tmp_path)
    ws.read(Read(path="m.py"))
    ws.commit(ws.propose(Edit(path="m.py", search="def f():\n    return 1", replace="def f():\n    x = 1\n    return x")))
    data = (tmp_path / "m.py").read_bytes()
    assert data == b"def f():\r\n    x = 1\r\n    return x\r\n\r\n\r\ndef g():\r\n    return 2\r\n"
    ws.read(Read(path="m.py"))
    ws.commit(ws.propose(Create(path="m.py", content="def f():\n    return 5\n")))
    assert (tmp_path / "m.py").read_bytes() == b"def f():\r\n    return 5\r\n"
    plan = edits.plan_edit("a\r\nb\r\n", "b\r\n", "c\nd")  # CRLF in the model's text too
    assert plan.new == "a\r\nc\r\nd\r\n"
