"""The sim plan's data: its shape, its special cases, and the lookup functions (pure, no git)."""

from __future__ import annotations

import itertools

import pytest

from foreman.backends.sim.demo_content import COMMITS
from foreman.backends.sim.patches import (
    MERGE_ORDER,
    TASKS,
    files_written,
    steps_for,
    task,
    variant_for_answer,
    work_steps,
)
from foreman.errors import NotFound


def test_plan_has_nine_tasks_with_known_acyclic_deps() -> None:
    assert list(TASKS) == [f"t{n}" for n in range(1, 10)]
    for content in TASKS.values():
        assert set(content.deps) <= set(TASKS) - {content.id}
        assert content.title and content.description
        assert content.default_variant in content.variants
    # MERGE_ORDER is a topological order of everything it merges
    for position, task_id in enumerate(MERGE_ORDER):
        assert set(TASKS[task_id].deps) <= set(MERGE_ORDER[:position]), task_id


def test_no_two_tasks_write_the_same_file() -> None:
    for first, second in itertools.combinations(TASKS, 2):
        assert not files_written(first) & files_written(second), (first, second)


def test_tasks_rewrite_only_files_that_exist_or_their_own_new_ones() -> None:
    base_files = {path for commit in COMMITS for path in commit.writes}
    rewritten = {path for task_id in TASKS for path in files_written(task_id)} & base_files
    # the base files the plan changes; everything else a task writes is new
    assert rewritten == {
        "pocket_notes/notes.py", "pocket_notes/store.py", "pocket_notes/commands/notes.py",
        "pocket_notes/search.py", "pocket_notes/commands/search.py", "tests/test_search.py",
        "pocket_notes/formatting.py", "tests/test_formatting.py",
        "README.md", "pyproject.toml", "pocket_notes/__init__.py",
    }


def test_t3_fails_ci_first_then_fixes_it() -> None:
    first, fix = steps_for("t3")
    assert (first.expect_tests_pass, first.trigger) == (False, "work")
    assert (fix.expect_tests_pass, fix.trigger) == (True, "ci_fix")
    assert set(fix.writes) <= set(first.writes)
    # only t3 has a failing step
    failing = [(t, s.message) for t in TASKS for v in TASKS[t].variants.values() for s in v
               if not s.expect_tests_pass]
    assert [t for t, _ in failing] == ["t3"]


def test_t4_revision_only_with_request_changes() -> None:
    assert TASKS["t4"].changes_requested
    full = steps_for("t4")
    merged_first = steps_for("t4", include_revisions=False)
    assert [s.trigger for s in full] == ["work", "revision"]
    assert merged_first == full[:1]
    assert set(full[1].writes) == set(full[0].writes)
    assert full[1].writes != full[0].writes


def test_t2_question_picks_a_variant() -> None:
    question = TASKS["t2"].question
    assert question is not None
    assert question.options == ("List tags with counts", "List tags alphabetically")
    assert variant_for_answer("t2", 1) == "counts" == TASKS["t2"].default_variant
    assert variant_for_answer("t2", 2) == "alphabetical"
    counts, alpha = steps_for("t2", "counts"), steps_for("t2", "alphabetical")
    assert steps_for("t2") == counts
    assert set(counts[0].writes) == set(alpha[0].writes)
    assert counts[0].writes != alpha[0].writes
    with pytest.raises(NotFound, match="options 1 to 2"):
        variant_for_answer("t2", 3)
    with pytest.raises(NotFound, match="asks no product question"):
        variant_for_answer("t1", 1)


def test_special_tasks() -> None:
    assert TASKS["t6"].rejection_reason
    assert TASKS["t7"].blocked_on_user and steps_for("t7") == []
    assert TASKS["t8"].stretch and steps_for("t8")
    not_merged = set(TASKS) - set(MERGE_ORDER)
    assert not_merged == {"t7", "t8"}
    # nothing the scenario may reject, block or cancel is a dependency of another task
    for content in TASKS.values():
        assert not {"t6", "t7", "t8"} & set(content.deps), content.id


def test_lookups_refuse_unknown_names() -> None:
    with pytest.raises(NotFound, match="no task 't42'"):
        steps_for("t42")
    with pytest.raises(NotFound, match="no variant 'loud'"):
        steps_for("t2", "loud")
    assert task("t5").title.startswith("Fix")


def test_steps_for_returns_a_fresh_list() -> None:
    steps = steps_for("t1")
    steps.clear()
    assert len(steps_for("t1")) == 1


def test_a_work_turn_on_a_task_that_came_back_makes_its_fix_too() -> None:
    """Found by the sim's chaos test: t3's first version fails CI and its fix was made only in a
    follow-up turn. When t3 came back on the board instead (its worker on another task when the
    CI failed or the merge test went red, or a restart cut the follow-up), the flow started a work
    turn on it, which made no fix: the same commit went round CI, merge decision and red merge
    test until the task was blocked."""
    fresh = work_steps("t3", None, came_back=False)
    again = work_steps("t3", None, came_back=True)
    assert [s.trigger for s in fresh] == ["work"] * len(fresh) and fresh
    assert again[:len(fresh)] == fresh and [s.trigger for s in again[len(fresh):]] == ["ci_fix"]
    assert again[-1].expect_tests_pass
    for tid in TASKS:  # (no other task has a fix: coming back changes nothing for them)
        if tid != "t3":
            assert work_steps(tid, None, came_back=True) == work_steps(tid, None, came_back=False), tid
