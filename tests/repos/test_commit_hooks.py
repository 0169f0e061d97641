"""The repository's commit hooks run on the commit the Foreman makes of an agent's leftovers
(issue 37 item 4), as ``git commit`` runs them: ``pre-commit`` on exactly the index to commit,
``commit-msg`` with the message file, in the worktree, with the agent's environment and a time
limit; a refusal commits nothing. Before, the commit (``git commit-tree``) ran no hook, so a
hook that refused was bypassed silently."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from foreman.errors import RepoError
from foreman.repos.gitsafety import safety_env
from foreman.repos.hooks import CommitHooks, HookRefused
from foreman.repos.worktrees import commit_for_agent, commit_leftovers, ensure_worktree, worktree_path

from .conftest import out, sh, write

AUTHOR = "AgentCraft Kit <kit@agentcraft.invalid>"
BRANCH = "agentcraft/kit/t1"


def hook(folder: Path, name: str, body: str) -> Path:
    path = write(folder / name, "#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


async def kit_worktree(repo: Path, home_profile: Path) -> Path:
    path = worktree_path(home_profile, "repo", "kit", "t1")
    await ensure_worktree(repo, path, BRANCH, "main")
    return path


def agent_hooks(wt: Path, timeout: float = 60.0) -> CommitHooks:
    return CommitHooks(safety_env(os.environ, agent="kit", worktree=wt), timeout=timeout)


async def test_a_refusing_pre_commit_hook_commits_nothing_and_says_why(repo: Path, home_profile: Path) -> None:
    wt = await kit_worktree(repo, home_profile)
    hook(repo / ".git" / "hooks", "pre-commit",
         'if git diff --cached | grep -q TODO; then echo "no TODO in commits (src/todo.py)"; exit 1; fi\n')
    write(wt / "src" / "todo.py", "# TODO: finish\n")
    before = out(repo, "rev-parse", BRANCH)
    with pytest.raises(HookRefused) as info:
        await commit_for_agent(repo, wt, BRANCH, "t1: leftovers", AUTHOR, hooks=agent_hooks(wt))
    assert info.value.hook == "pre-commit"
    assert "no TODO in commits (src/todo.py)" in info.value.output
    assert "pre-commit hook refused" in info.value.message and "exit 1" in info.value.message
    assert out(repo, "rev-parse", BRANCH) == before  # nothing committed
    assert (wt / "src" / "todo.py").read_text() == "# TODO: finish\n"  # the work is untouched
    assert not [p.name for p in (repo / ".git" / "worktrees").rglob("agentcraft-hooks*")]  # no temporary index left
    # without hooks (a hand-off's snapshot of work in progress) the same leftovers are committed
    assert await commit_leftovers(repo, wt, BRANCH, "hand-off", AUTHOR) is not None


async def test_the_hooks_see_what_git_commit_would_show_them(repo: Path, home_profile: Path, tmp_path: Path) -> None:
    wt = await kit_worktree(repo, home_profile)
    seen = tmp_path / "seen.txt"
    hook(repo / ".git" / "hooks", "pre-commit",
         f'{{ pwd; git diff --cached --name-only; echo "author=$GIT_AUTHOR_NAME"; }} > {seen}\n')
    hook(repo / ".git" / "hooks", "commit-msg", 'printf "\\nChecked-by: commit-msg\\n" >> "$1"\n')
    write(wt / "src" / "new.py", "x = 1\n")
    sh(wt, "rm", "-q", "README.md")
    done = await commit_for_agent(repo, wt, BRANCH, "t1: leftovers", AUTHOR, hooks=agent_hooks(wt))
    assert done.commit is not None and done.hooks == ("pre-commit", "commit-msg")
    lines = seen.read_text().splitlines()
    assert Path(lines[0]).resolve() == wt.resolve()  # run at the top of the worktree
    assert sorted(lines[1:3]) == ["README.md", "src/new.py"]  # exactly the leftovers are staged
    assert lines[3].startswith("author=") and "Kit" in lines[3]  # the agent's identity, not the user's
    message = out(repo, "log", "-1", "--format=%B", BRANCH)
    assert message.startswith("t1: leftovers") and "Checked-by: commit-msg" in message
    assert out(repo, "ls-tree", "-r", "--name-only", BRANCH).splitlines() == ["src/app.py", "src/new.py"]


async def test_what_pre_commit_stages_is_committed(repo: Path, home_profile: Path) -> None:
    """A formatter hook that fixes a file and stages it: the commit holds the fixed file."""
    wt = await kit_worktree(repo, home_profile)
    hook(repo / ".git" / "hooks", "pre-commit", "sed -i 's/  *$//' src/app.py && git add src/app.py\n")
    write(wt / "src" / "app.py", "print('hi')   \n")
    done = await commit_for_agent(repo, wt, BRANCH, "t1", AUTHOR, hooks=agent_hooks(wt))
    assert done.commit is not None
    assert out(repo, "show", f"{BRANCH}:src/app.py") == "print('hi')"


async def test_a_commit_msg_hook_that_refuses(repo: Path, home_profile: Path) -> None:
    wt = await kit_worktree(repo, home_profile)
    hook(repo / ".git" / "hooks", "commit-msg",
         'grep -q "^JIRA-" "$1" || { echo "the message must start with a JIRA key" >&2; exit 3; }\n')
    write(wt / "a.txt", "a\n")
    with pytest.raises(HookRefused) as info:
        await commit_for_agent(repo, wt, BRANCH, "t1: leftovers", AUTHOR, hooks=agent_hooks(wt))
    assert info.value.hook == "commit-msg" and "JIRA key" in info.value.output and "exit 3" in info.value.message
    assert out(repo, "rev-parse", BRANCH) == out(repo, "rev-parse", "main")


async def test_a_hanging_hook_is_a_refusal_after_its_time_limit(repo: Path, home_profile: Path) -> None:
    wt = await kit_worktree(repo, home_profile)
    hook(repo / ".git" / "hooks", "pre-commit", "sleep 60\n")
    write(wt / "a.txt", "a\n")
    with pytest.raises(HookRefused) as info:
        await commit_for_agent(repo, wt, BRANCH, "t1", AUTHOR, hooks=agent_hooks(wt, timeout=1.0))
    assert info.value.timed_out and "timed out after 1 s" in info.value.message
    assert out(repo, "rev-parse", BRANCH) == out(repo, "rev-parse", "main")


async def test_hooks_of_core_hookspath_inside_the_repository(repo: Path, home_profile: Path) -> None:
    """``core.hooksPath`` (here a folder of the repository, as many projects share theirs) is
    where ``git commit`` looks, so it is where the Foreman looks."""
    hook(repo / ".githooks", "pre-commit", "echo shared hooks refuse; exit 1\n")
    sh(repo, "add", ".githooks")
    sh(repo, "commit", "-q", "--no-verify", "-m", "shared hooks")
    sh(repo, "config", "core.hooksPath", ".githooks")
    wt = await kit_worktree(repo, home_profile)
    write(wt / "a.txt", "a\n")
    with pytest.raises(HookRefused) as info:
        await commit_for_agent(repo, wt, BRANCH, "t1", AUTHOR, hooks=agent_hooks(wt))
    assert "shared hooks refuse" in info.value.output


async def test_no_hook_no_change_and_nothing_to_commit(repo: Path, home_profile: Path) -> None:
    wt = await kit_worktree(repo, home_profile)
    hook(repo / ".git" / "hooks", "pre-commit.sample", "exit 1\n")  # a sample is not a hook
    assert (await commit_for_agent(repo, wt, BRANCH, "t1", AUTHOR, hooks=agent_hooks(wt))).commit is None
    write(wt / "a.txt", "a\n")
    done = await commit_for_agent(repo, wt, BRANCH, "t1", AUTHOR, hooks=agent_hooks(wt))
    assert done.commit is not None and done.hooks == ()


async def test_a_hook_that_commits_itself_is_named_not_a_raw_git_error(repo: Path, home_profile: Path) -> None:
    """Found by a newcomer: a pre-commit hook that makes its own commit on the branch made the
    Foreman's compare-and-swap fail with git's "cannot lock ref" and no guidance."""
    wt = await kit_worktree(repo, home_profile)
    hook(repo / ".git" / "hooks", "pre-commit",
         'unset GIT_INDEX_FILE; git add -A && git -c user.name=h -c user.email=h@x commit -q --no-verify -m "by the hook"\n')
    write(wt / "a.txt", "a\n")
    with pytest.raises(RepoError) as info:
        await commit_for_agent(repo, wt, BRANCH, "t1", AUTHOR, hooks=agent_hooks(wt))
    assert "while the leftovers were committed: a commit hook of the repository" in str(info.value)
    assert out(repo, "log", "-1", "--format=%s", BRANCH) == "by the hook"  # its commit stays; nothing over it
