from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import foreman.repos._git as gitmod
from foreman.errors import MergeRefused, RepoError
from foreman.repos.merge import _fast_forward, build_merge, land_candidate, merge_branch

from .conftest import USER_EMAIL, USER_NAME, commit_all, out, sh, write

BRANCH = "agentcraft/kit/t1-feature"
KIT = "AgentCraft Kit <kit@agentcraft.invalid>"
WREN = "AgentCraft Wren <wren@agentcraft.invalid>"


def agent_branch(repo: Path, files: dict[str, str], *, start: str = "main") -> str:
    """Create BRANCH from ``start`` with one agent commit (without touching the user's checkout)."""
    wt = repo.parent / "agent-wt"
    sh(repo, "worktree", "add", "-q", "-b", BRANCH, str(wt), start)
    for name, text in files.items():
        write(wt / name, text)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo.parent / "home"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "AgentCraft Kit", "GIT_AUTHOR_EMAIL": "kit@agentcraft.invalid",
           "GIT_COMMITTER_NAME": "AgentCraft Kit", "GIT_COMMITTER_EMAIL": "kit@agentcraft.invalid"}
    sh(wt, "add", "-A", env=env)
    sh(wt, "commit", "-q", "--allow-empty", "-m", "agent work", env=env)
    tip = out(wt, "rev-parse", "HEAD")
    sh(repo, "worktree", "remove", str(wt))
    return tip


def snapshot_checkout(root: Path) -> tuple:
    index = root / ".git" / "index"
    return (out(root, "rev-parse", "HEAD"), out(root, "symbolic-ref", "HEAD"), index.read_bytes(), index.stat().st_mtime_ns)


async def test_merge_style_fast_forwards_the_checked_out_base(repo: Path) -> None:
    tip = agent_branch(repo, {"feature.txt": "new\n", "src/app.py": "def main():\n    return 2\n"})
    write(repo / "scratch.txt", "user's untracked file\n")
    before = out(repo, "rev-parse", "main")
    result = await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge",
                                message="Merge t1: feature", sign=True, co_authors=[KIT])
    assert result.base_before == before and result.base_after == result.commit == out(repo, "rev-parse", "main")
    assert out(repo, "rev-parse", f"{result.commit}^1", f"{result.commit}^2").splitlines() == [before, tip]
    assert out(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", result.commit) == (
        f"{USER_NAME} <{USER_EMAIL}>|{USER_NAME} <{USER_EMAIL}>|Merge t1: feature")
    assert (repo / "feature.txt").read_text() == "new\n"  # the fast-forward updated the checkout
    assert (repo / "scratch.txt").read_text() == "user's untracked file\n"
    assert out(repo, "status", "--porcelain") == "?? scratch.txt"
    assert out(repo, "rev-parse", BRANCH) == tip  # the agent's branch is kept
    assert not result.signed


async def test_squash_moves_only_the_ref_when_base_is_not_checked_out(repo: Path) -> None:
    tip = agent_branch(repo, {"feature.txt": "new\n"})
    sh(repo, "checkout", "-q", "-b", "user-topic")
    write(repo / "README.md", "user edits on another branch\n")
    checkout_before = snapshot_checkout(repo)
    files_before = (repo / "README.md").read_text()
    before = out(repo, "rev-parse", "main")
    result = await merge_branch(repo, branch=BRANCH, base_branch="main", style="squash",
                                message="t1: feature", sign=True, co_authors=[KIT, WREN, KIT])
    assert out(repo, "rev-parse", "main") == result.commit
    assert out(repo, "rev-list", "--parents", "-n1", result.commit).split() == [result.commit, before]
    assert out(repo, "rev-parse", f"{result.commit}^{{tree}}") == out(repo, "rev-parse", f"{tip}^{{tree}}")
    assert out(repo, "log", "-1", "--format=%B", result.commit) == f"t1: feature\n\nCo-authored-by: {KIT}\nCo-authored-by: {WREN}"
    assert snapshot_checkout(repo) == checkout_before
    assert (repo / "README.md").read_text() == files_before and not (repo / "feature.txt").exists()


@pytest.fixture
def ssh_signing(repo: Path, tmp_path: Path) -> Path:
    key = tmp_path / "signing_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", USER_EMAIL, "-f", str(key)], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"{USER_EMAIL} namespaces=\"git\" {key.with_suffix('.pub').read_text()}")
    for k, v in (("gpg.format", "ssh"), ("user.signingkey", str(key)), ("gpg.ssh.allowedSignersFile", str(allowed)),
                 ("commit.gpgsign", "true")):
        sh(repo, "config", k, v)
    return key


async def test_signed_merge_verifies(repo: Path, ssh_signing: Path) -> None:
    agent_branch(repo, {"feature.txt": "new\n"})
    result = await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="Merge t1",
                                sign=True, co_authors=[])
    assert result.signed
    verify = sh(repo, "verify-commit", result.commit, check=False)
    assert verify.returncode == 0, verify.stderr
    assert "Good \"git\" signature" in verify.stderr


async def test_no_sign_merges_overrides_config(repo: Path, ssh_signing: Path) -> None:
    agent_branch(repo, {"feature.txt": "new\n"})
    result = await merge_branch(repo, branch=BRANCH, base_branch="main", style="squash", message="t1",
                                sign=False, co_authors=[])
    assert not result.signed and sh(repo, "verify-commit", result.commit, check=False).returncode != 0


async def test_signing_failure_refuses_and_changes_nothing(repo: Path, ssh_signing: Path, tmp_path: Path) -> None:
    agent_branch(repo, {"feature.txt": "new\n"})
    sh(repo, "config", "user.signingkey", str(tmp_path / "missing_key"))
    refs_before, checkout_before = out(repo, "for-each-ref"), snapshot_checkout(repo)
    with pytest.raises(MergeRefused) as info:
        await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=True, co_authors=[])
    assert info.value.reason == "signing" and info.value.code == "merge_refused" and "Merge again" in str(info.value)
    assert out(repo, "for-each-ref") == refs_before and snapshot_checkout(repo) == checkout_before
    assert not (repo / "feature.txt").exists()


async def test_dirty_base_checkout_is_refused(repo: Path, tmp_path: Path) -> None:
    agent_branch(repo, {"feature.txt": "new\n"})
    write(repo / "README.md", "uncommitted\n")
    before = out(repo, "rev-parse", "main")
    with pytest.raises(MergeRefused) as info:
        await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False, co_authors=[])
    assert info.value.reason == "dirty" and out(repo, "rev-parse", "main") == before
    # the base checked out in a linked worktree counts the same
    sh(repo, "checkout", "-q", "README.md")
    sh(repo, "checkout", "-q", "-b", "elsewhere")
    sh(repo, "worktree", "add", "-q", str(tmp_path / "main-wt"), "main")
    write(tmp_path / "main-wt" / "src" / "app.py", "dirty\n")
    with pytest.raises(MergeRefused, match="main-wt"):
        await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False, co_authors=[])


async def test_conflict_is_refused_naming_the_files(repo: Path) -> None:
    agent_branch(repo, {"src/app.py": "def main():\n    return 'agent'\n", "README.md": "# agent\n", "clean.txt": "ok\n"})
    write(repo / "src" / "app.py", "def main():\n    return 'user'\n")
    write(repo / "README.md", "# user\n")
    commit_all(repo, "user change")
    before = out(repo, "rev-parse", "main")
    with pytest.raises(MergeRefused) as info:
        await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False, co_authors=[])
    assert info.value.reason == "conflict" and sorted(info.value.files) == ["README.md", "src/app.py"]
    assert out(repo, "rev-parse", "main") == before and out(repo, "status", "--porcelain") == ""


async def test_branch_without_changes_has_nothing_to_merge(repo: Path) -> None:
    sh(repo, "branch", BRANCH)
    before = out(repo, "rev-parse", "main")
    result = await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False, co_authors=[])
    assert (result.commit, result.base_before, result.base_after) == (None, before, before)
    sh(repo, "branch", "-D", BRANCH)
    agent_branch(repo, {"README.md": "# demo\n"})  # a commit whose tree equals main's
    result = await merge_branch(repo, branch=BRANCH, base_branch="main", style="squash", message="m", sign=False, co_authors=[])
    assert result.commit is None and out(repo, "rev-parse", "main") == before


async def test_unknown_identity_is_refused(repo: Path, git_home: Path) -> None:
    agent_branch(repo, {"feature.txt": "x\n"})
    (git_home / ".gitconfig").write_text("[user]\n\tuseConfigOnly = true\n")
    with pytest.raises(MergeRefused) as info:
        await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False, co_authors=[])
    assert info.value.reason == "identity" and "user.email" in str(info.value) and "Merge again" in str(info.value)


async def test_compare_and_swap_refuses_a_moved_base(repo: Path) -> None:
    sh(repo, "checkout", "-q", "-b", "elsewhere")
    main = out(repo, "rev-parse", "main")
    with pytest.raises(MergeRefused) as info:
        await _fast_forward(repo, "main", "0" * 39 + "1", main)
    assert info.value.reason == "base_moved" and out(repo, "rev-parse", "main") == main


async def test_fast_forward_in_the_checkout_refuses_a_moved_base(repo: Path) -> None:
    old = out(repo, "rev-parse", "main")
    ours = out(repo, "commit-tree", "-p", old, "-m", "prepared merge", f"{old}^{{tree}}")
    write(repo / "user.txt", "the user committed meanwhile\n")
    moved = commit_all(repo, "user")
    with pytest.raises(MergeRefused) as info:
        await _fast_forward(repo, "main", old, ours)
    assert info.value.reason == "base_moved" and out(repo, "rev-parse", "main") == moved


async def test_merge_of_an_exact_commit_refuses_a_moved_branch(repo: Path, tmp_path: Path) -> None:
    """The decision is the merge: ``commit=`` merges exactly the reviewed commit, or nothing."""
    shown = agent_branch(repo, {"feature.txt": "reviewed\n"})
    wt = tmp_path / "later"
    sh(repo, "worktree", "add", "-q", str(wt), BRANCH)
    write(wt / "feature.txt", "changed after review\n")
    commit_all(wt, "later work")
    sh(repo, "worktree", "remove", str(wt))
    refs_before = out(repo, "for-each-ref")
    with pytest.raises(MergeRefused) as info:
        await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False,
                           co_authors=[], commit=shown)
    assert info.value.reason == "moved" and "moved" in str(info.value) and "decide again" in str(info.value)
    assert out(repo, "for-each-ref") == refs_before and not (repo / "feature.txt").exists()
    tip = out(repo, "rev-parse", BRANCH)
    result = await merge_branch(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False,
                                co_authors=[], commit=tip[:10])
    assert result.merged == tip and out(repo, "rev-parse", f"{result.commit}^2") == tip
    assert sh(repo, "merge-base", "--is-ancestor", tip, "main", check=False).returncode == 0
    assert (repo / "feature.txt").read_text() == "changed after review\n"


async def test_merge_of_a_commit_that_does_not_exist_is_an_error(repo: Path) -> None:
    agent_branch(repo, {"feature.txt": "x\n"})
    with pytest.raises(RepoError, match="names no commit"):
        await merge_branch(repo, branch=BRANCH, base_branch="main", style="squash", message="m", sign=False,
                           co_authors=[], commit="f" * 40)


@pytest.mark.parametrize("what", ["dirty", "busy", "base_moved", "lands"])
async def test_landing_judges_the_checkout_once_just_before_the_fast_forward(
        what: str, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A built (and tested) merge lands only if the base is still where it was built, the user's
    checkout of the base is clean and no operation of theirs is under way there, read once under
    the repository lock just before the fast-forward (the landing read the checkout a second time
    before it: ``worktree list``, ``status``, the git directories and the base's ref each twice)."""
    agent_branch(repo, {"feature.txt": "new\n"})
    before = out(repo, "rev-parse", "main")
    candidate = await build_merge(repo, branch=BRANCH, base_branch="main", style="merge", message="m", sign=False,
                                  co_authors=[])
    if what == "dirty":  # the user edits a tracked file while the merge is tested
        write(repo / "README.md", "the user's edit\n")
    elif what == "busy":  # the user starts a merge of their own that stops for them
        (repo / ".git" / "MERGE_HEAD").write_text(before + "\n")
    elif what == "base_moved":  # the user commits on the base while the merge is tested
        write(repo / "user.txt", "the user's commit\n")
        before = commit_all(repo, "user")
    seen: list[str] = []
    call = gitmod.GitProcess.call

    async def counted(self: gitmod.GitProcess, *args: object, **kw: object) -> object:
        seen.append(" ".join([a for a in self.argv if not a.startswith("-") and "=" not in a][:2]))
        return await call(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitmod.GitProcess, "call", counted)
    if what == "lands":
        landed = await land_candidate(repo, branch=BRANCH, base_branch="main", candidate=candidate)
        assert landed.commit == candidate.commit == out(repo, "rev-parse", "main")
    else:
        with pytest.raises(MergeRefused) as info:
            await land_candidate(repo, branch=BRANCH, base_branch="main", candidate=candidate)
        assert info.value.reason == what and out(repo, "rev-parse", "main") == before
    assert seen.count("worktree list") == 1, seen  # (it names the checkout and the base's tip, its HEAD)
    if what == "base_moved":
        assert len(seen) == 1, seen  # nothing else is read
        return
    assert seen.count("status") == 1 and seen.count("rev-parse refs/heads/main^{commit}") == 1, seen
    assert seen.count("rev-parse") == 0, seen  # (a main checkout's git directories are its .git folder)
