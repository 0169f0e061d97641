"""The repositories edge: registered repos, per-task worktrees, structured diffs, guarded merges,
the git safety environment and the CI runner.

Everything here calls git through async subprocesses with argument lists (``_git.git``) and
translates failures into :class:`~foreman.errors.RepoError` and its subclasses. Nothing here
knows the daemon or the core: inputs are paths, branch names and strings; outputs are small
dataclasses and protocol models.
"""

from ._git import GitFailed, GitResult, git
from .ci import CIResult, detect_ci_command, run_ci
from .diffs import diff_commits, diff_worktree
from .gitsafety import agent_identity, safety_env
from .merge import MergeResult, merge_branch
from .refs import branch_tip, is_ancestor, resolve_commit, set_branch, worktree_lacks_files
from .registry import RepoStatus, default_base_branch, repo_status, resolve_repo_root
from .worktrees import (
    Worktree,
    WorktreeBusy,
    WorktreeHasWork,
    branch_name,
    check_link,
    commit_leftovers,
    ensure_worktree,
    remove_worktree,
    worktree_path,
)

__all__ = [
    "CIResult", "GitFailed", "GitResult", "MergeResult", "RepoStatus", "Worktree", "WorktreeBusy", "WorktreeHasWork",
    "agent_identity", "branch_name", "branch_tip", "is_ancestor", "resolve_commit", "set_branch",
    "worktree_lacks_files", "check_link", "commit_leftovers", "default_base_branch", "detect_ci_command",
    "diff_commits", "diff_worktree", "ensure_worktree", "git", "merge_branch", "remove_worktree", "repo_status",
    "resolve_repo_root", "run_ci", "safety_env", "worktree_path",
]
