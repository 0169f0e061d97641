"""Repository instructions: which files are found, the 8 KB bound, the repo entity, prompts."""

from __future__ import annotations

import os
from pathlib import Path

from foreman.backends.prompts import instructions_block, risk_block, with_instructions
from foreman.instructions import MAX_BYTES, find, root_files
from protocol import Risk


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_agents_md_wins_over_claude_md_and_folders_add_theirs(tmp_path: Path) -> None:
    root = tree(tmp_path, {"AGENTS.md": "Use ruff.", "CLAUDE.md": "ignored", "notes/CLAUDE.md": "Notes rules.",
                           "notes/tags/AGENTS.md": "Tag rules.", "other/AGENTS.md": "Not mine."})
    assert root_files(root) == ["AGENTS.md"]
    got = find(root, ["notes/tags/normalise.py"])
    assert got.files == ["AGENTS.md", "notes/CLAUDE.md", "notes/tags/AGENTS.md"]
    assert "Use ruff." in got.text and "Notes rules." in got.text and "Tag rules." in got.text
    assert "Not mine." not in got.text and "ignored" not in got.text and not got.truncated
    assert got.text.index("Use ruff.") < got.text.index("Notes rules.") < got.text.index("Tag rules.")


def test_claude_md_when_no_agents_md_and_none_at_all(tmp_path: Path) -> None:
    assert root_files(tree(tmp_path / "a", {"CLAUDE.md": "x"})) == ["CLAUDE.md"]
    empty = find(tree(tmp_path / "b", {"README.md": "x"}), ["src/"])
    assert empty.files == [] and empty.text == "" and instructions_block(empty.files, empty.text) == ""
    assert with_instructions("do it", empty.files, empty.text) == "do it"


def test_bounded_with_a_note(tmp_path: Path) -> None:
    root = tree(tmp_path, {"AGENTS.md": "é" * 6000, "src/AGENTS.md": "second file"})
    got = find(root, ["src/"])
    assert got.truncated and len(got.text.encode()) <= MAX_BYTES
    assert "was cut at 8 KB" in got.text and "second file" not in got.text
    got.text.encode("utf-8")  # never a broken character


def test_symlinked_instructions_are_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("from outside")
    root = tmp_path / "repo"
    root.mkdir()
    os.symlink(secret, root / "AGENTS.md")
    tree(root, {"CLAUDE.md": "inside"})
    assert root_files(root) == ["CLAUDE.md"]
    assert "from outside" not in find(root).text


def test_prompt_blocks() -> None:
    p = with_instructions("Your task t1", ["AGENTS.md"], "# From AGENTS.md\n\nRun make test.")
    assert p.startswith("The repository's instructions for agents (AGENTS.md)") and p.endswith("Your task t1")
    block = risk_block([Risk(kind="secret", severity="critical", path="a.py", line=3, message="AWS Access Key (AKIA...)")])
    assert "CRITICAL secret a.py:3" in block and "must be removed or explained" in block
    assert risk_block([]) == "Merge-risk scan: nothing found."


async def test_repo_entity_lists_instruction_files(tmp_path: Path) -> None:
    from foreman.config import resolve
    from foreman.daemon import Daemon
    from tests.conductor.test_daemon_edges import NoTeam
    from tests.conductor.test_flow import make_repo

    repo = make_repo(tmp_path)
    daemon = Daemon(resolve({"home": str(tmp_path / "home"), "port": 0, "backend": "sim"}, env={}), backend=NoTeam())
    await daemon.start()
    try:
        added = await daemon.add_repo(str(repo))
        assert added.instructions == []
        (repo / "CLAUDE.md").write_text("Run the tests with unittest.\n")
        assert (await daemon.refresh_repo(added.id)).instructions == ["CLAUDE.md"]
        (repo / "AGENTS.md").write_text("Agents: keep functions small.\n")
        assert (await daemon.refresh_repo(added.id)).instructions == ["AGENTS.md"]
        assert daemon.core.repo(added.id).instructions == ["AGENTS.md"]
    finally:
        await daemon.stop()


def test_repo_instructions_for_a_task(tmp_path: Path) -> None:
    from foreman.backends.prompts import repo_instructions
    from protocol import Task

    root = tree(tmp_path, {"AGENTS.md": "Root rule.", "pocket_notes/AGENTS.md": "Package rule.", "docs/AGENTS.md": "Docs rule."})
    block = repo_instructions(root, Task(id="t1", title="Tags", description="Edit pocket_notes/notes.py"))
    assert "(AGENTS.md, pocket_notes/AGENTS.md)" in block and "Package rule." in block and "Docs rule." not in block
    assert "Package rule." not in repo_instructions(root, None) and "Root rule." in repo_instructions(root, None)
    assert repo_instructions(tmp_path / "nothing", None) == ""
