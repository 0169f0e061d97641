"""The terminal client shows where an approved merge is (issue 36 item 6): its place in the merge
queue and its last merge test, in the tasks table and in ``/tasks``; a task without the new fields
(an older daemon's) shows as before."""

import protocol as p
from foreman.tui import views
from foreman.tui.app import ForemanApp

from .test_app import cells, until


def test_task_lines_say_where_the_merge_is() -> None:
    t = p.Task(id="t3", title="Shout", status="review", assignee="wren")
    assert views.task_line(t) == "t3 [review] Shout (wren)" and views.status_cell(t) == "review"
    testing = p.MergeTest(state="testing", base="b" * 40, commit="c" * 40, verdict="main at bbb: running pytest")
    head = t.model_copy(update={"merge_queue": 1, "merge_test": testing})
    assert views.task_line(head).endswith("merge: testing") and views.status_cell(head) == "merging"
    second = t.model_copy(update={"merge_queue": 2})
    assert views.task_line(second).endswith("merge: queued, 2nd") and views.status_cell(second) == "queued 2"
    red = t.model_copy(update={"status": "doing", "merge_test": testing.model_copy(
        update={"state": "failed", "verdict": "FAILED (exit 1)"})})
    assert views.task_line(red).endswith("merge test FAILED (exit 1)") and views.status_cell(red) == "doing"
    untested = t.model_copy(update={"status": "done", "merge_test": testing.model_copy(
        update={"state": "untested", "verdict": "no CI command for the repository: nothing was tested"})})
    assert views.task_line(untested).endswith("merged untested")
    train = t.model_copy(update={"merge_queue": 2, "merge_test": testing.model_copy(update={"behind": "t1"})})
    assert views.task_line(train).endswith("merge: queued, 2nd, testing behind t1")  # a merge train (--merge-train 2)
    assert views.status_cell(train) == "merging 2"
    waits = train.model_copy(update={"merge_test": train.merge_test.model_copy(update={"state": "passed"})})  # type: ignore[union-attr]
    assert views.task_line(waits).endswith("merge: queued, 2nd, passed behind t1") and views.status_cell(waits) == "queued 2"
    old = p.Task.model_validate({"id": "t1", "title": "Old", "status": "done"})  # an older daemon's task
    assert old.merge_queue is None and old.merge_test is None and views.task_line(old) == "t1 [done] Old"


async def test_the_tasks_table_shows_the_queue_place(daemon) -> None:
    app = ForemanApp(lambda: daemon.url, reconnect_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: "t3" in cells(app, "tasks"))
        t3 = daemon.mirror.tasks["t3"].model_copy(update={"status": "review", "merge_queue": 2})
        await daemon.push(p.TaskUpsert(seq=0, task=t3))
        await until(pilot, lambda: cells(app, "tasks")["t3"][1] == "queued 2")
