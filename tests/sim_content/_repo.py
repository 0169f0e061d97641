"""Real-git helpers for the sim content tests: commit steps on branches, merge, run tests."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from foreman.backends.sim.demo_repo import BASE_BRANCH, apply_step, demo_test_command, git_env
from foreman.backends.sim.patches import MERGE_ORDER, TASKS, steps_for

TEST_RUN_TIMEOUT = 60.0


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs git with the demo's config-free environment; fails the test on error if check."""
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=git_env(),
                          capture_output=True, text=True, timeout=30, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}:\n{done.stdout}{done.stderr}")
    return done


def run_demo_tests(cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs the demo repository's own test command in cwd."""
    return subprocess.run(demo_test_command(), cwd=cwd, capture_output=True, text=True,
                          timeout=TEST_RUN_TIMEOUT, check=False)


def tree(cwd: Path, rev: str = "HEAD") -> str:
    return git(cwd, "rev-parse", f"{rev}^{{tree}}").stdout.strip()


@dataclass
class Simulation:
    """A run of the sim plan with real branches, worktrees and merges.

    Tasks start as early as possible (a worktree off the current ``main`` as soon as their deps
    are merged), so branches overlap as much as the plan allows; merges follow ``order``.
    """

    root: Path
    variants: dict[str, str] = field(default_factory=dict)
    include_revisions: bool = True
    check_each_step: bool = False
    started: dict[str, Path] = field(default_factory=dict)
    merged: list[str] = field(default_factory=list)
    step_results: list[tuple[str, int, bool, bool]] = field(default_factory=list)

    def start_ready_tasks(self) -> None:
        for task_id, content in TASKS.items():
            steps = steps_for(task_id, self.variants.get(task_id),
                              include_revisions=self.include_revisions)
            if task_id in self.started or not steps or not set(content.deps) <= set(self.merged):
                continue
            worktree = self.root.parent / f"wt-{task_id}"
            git(self.root, "worktree", "add", "--quiet", "-b", f"agentcraft/{task_id}",
                str(worktree), BASE_BRANCH)
            for index, step in enumerate(steps):
                apply_step(worktree, step)
                git(worktree, "add", "--all")
                git(worktree, "commit", "--quiet", "-m", step.message)
                if self.check_each_step:
                    passed = run_demo_tests(worktree).returncode == 0
                    self.step_results.append((task_id, index, step.expect_tests_pass, passed))
            self.started[task_id] = worktree

    def run(self, order: tuple[str, ...] = MERGE_ORDER) -> None:
        """Starts the ready tasks, then merges ``order`` one by one with ``git merge --no-ff``."""
        self.start_ready_tasks()
        for task_id in order:
            assert task_id in self.started, f"{task_id} never started (deps not merged?)"
            done = git(self.root, "merge", "--no-ff", "-m", f"Merge {task_id}",
                       f"agentcraft/{task_id}", check=False)
            assert done.returncode == 0, f"merging {task_id} failed:\n{done.stdout}{done.stderr}"
            self.merged.append(task_id)
            self.start_ready_tasks()
