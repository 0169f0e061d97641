"""The repositories edge: registered repos, per-task worktrees, structured diffs, guarded merges,
the git safety environment and the CI runner.

Everything here calls git through async subprocesses with argument lists (``_git.git``) and
translates failures into :class:`~foreman.errors.RepoError` and its subclasses. Nothing here
knows the daemon or the core: inputs are paths, branch names and strings; outputs are small
dataclasses and protocol models.
"""

from ._git import HOOK_TIMEOUT, GitFailed, GitResult, GitTimeout, StrPath, git, rev_parse
from ._objects import pure_git
from .ci import CIResult, detect_ci_command, run_ci
from .diffs import diff_commits, diff_range, diff_worktree
from .gitsafety import UnsafePath, agent_identity, check_ceiling_path, safety_env
from .lifecycle import Cleaned, clean_stale_worktrees, retire_worktree
from .merge import MergeResult, base_checkout, contains, merge_branch
from .refs import branch_tip, is_ancestor, resolve_commit, set_branch, worktree_lacks_files
from .registry import RepoStatus, check_repo_ready, default_base_branch, repo_status, resolve_repo_root
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
    "HOOK_TIMEOUT", "CIResult", "Cleaned", "GitFailed", "GitResult", "GitTimeout", "MergeResult", "RepoStatus",
    "StrPath", "rev_parse",
    "UnsafePath", "Worktree", "WorktreeBusy", "WorktreeHasWork",
    "agent_identity", "base_checkout", "branch_name", "branch_tip", "check_ceiling_path", "check_link",
    "check_repo_ready", "clean_stale_worktrees", "commit_leftovers", "contains", "default_base_branch",
    "detect_ci_command", "diff_commits", "diff_range", "diff_worktree", "ensure_worktree", "git", "is_ancestor",
    "merge_branch", "pure_git", "remove_worktree", "repo_status", "resolve_commit", "retire_worktree", "set_branch",
    "worktree_lacks_files",
    "resolve_repo_root", "run_ci", "safety_env", "worktree_path",
]
