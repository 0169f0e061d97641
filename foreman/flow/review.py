"""Review: the lead reads a task's diff and CI result, then requests the merge (a decision for
the user, :mod:`.merge`) or changes (a follow-up turn for the worker)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..backends import prompts
from . import merge, turn
from .team import LEAD

if TYPE_CHECKING:
    from .conductor import Conductor
    from .tools import DaemonTools


def start(c: Conductor, task_id: str, diff: Any, ci_text: str, claims: str, risks: list[Any] | None = None,
          note: str = "") -> None:
    """Start the lead's review turn of ``task_id`` (``diff``: its :class:`~foreman.repos.diffs` diff;
    ``risks``: the merge-risk scan of its branch, put in the prompt; ``note``: added at the end)."""
    d = c.d
    task = d.core.task(task_id)
    summary = "\n".join(f"{f.status} {f.path} (+{f.additions} -{f.deletions})" for f in diff.files)
    history = "\n".join(f"- {e.who}: {e.what}" for e in task.history[-15:])
    answered = [x for x in d.core.world.decisions.values() if x.task == task_id and x.kind == "question"
                and x.status == "answered"]
    turn.launch(c, LEAD, "review", f"{LEAD}:{task_id}", task_id=task_id,
                prompt=prompts.review_prompt(task, diff_summary=summary, ci=ci_text, history=history,
                                             answered=answered, claims=claims[:1500], risks=risks)
                + (f"\n\n{note}" if note else ""))


async def ended(c: Conductor, task_id: str, tools: DaemonTools) -> None:
    """A review turn ended: without a verdict the merge decision opens anyway; requested
    changes start the worker's follow-up, unless the note the lead sent with them already
    started one (a turn on the task running or queued) or it already ended (the task is back
    in review): one request for changes, one worker turn."""
    task = c.d.core.task(task_id)
    if task.status == "review" and not tools.merge_requested and not tools.changes_requested:
        await merge.request(c, task_id, "the lead ended the review without a verdict")
    elif tools.changes_requested and task.assignee and task.status == "doing" \
            and not turn.busy_on(c, task.assignee, task_id):  # (the lead's note may have started it already)
        turn.launch(c, task.assignee, "followup", f"{task.assignee}:{task_id}", task_id=task_id,
                    prompt=f"The lead asked for changes on {task_id}; see your messages. Then update_task review.")
