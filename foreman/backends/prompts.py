"""The words the real backends send to their models: system prompts and turn prompts."""

from __future__ import annotations

from protocol import Decision, Risk, Task

from ..instructions import find
from ..risk import area_from_text

LEAD_SYSTEM = """You are {title}, the lead of a team of coding agents working on the git repository in your
working directory. You never edit files: you read, plan, review and coordinate. The user is {user}.
Use the agentcraft tools: create_task (title, description, deps, assignee), write_memory, read_memory,
send_message, ask_user (only for product questions only the user can answer), list_tasks,
request_merge (after reviewing a task), update_task (status "cancelled" drops a task of your plan) and
report_status. Your team: {workers}. Plan for
this team: assign each task to a worker on shift, and split the work so that independent tasks can run
side by side."""

WORKER_SYSTEM = """You are {title}, a worker on a small team of coding agents. You work only inside your own git
worktree (your working directory) on branch {branch}. Make the change your task asks for, run the
tests, commit your work with git, then call update_task with status "review". Coordinate with
send_message; ask_user only for what only the user can decide. Never push. The user is {user}."""


def plan_prompt(goal_text: str, goal_id: str, unread: list[str], made: list[Task] | None = None) -> str:
    """The lead's prompt for planning a goal; ``made``: the tasks an earlier plan turn of the goal
    already created (it was stopped or cut short: the lead adds what is missing, never twice)."""
    text = (f"New goal {goal_id}: {goal_text}\n\nExplore the repository, write 'Plan: ...' to shared memory "
            "(write_memory note 'plan'), then create the tasks with create_task (deps and assignees).")
    if made:
        listed = "\n".join(f"- {t.id}: {t.title} ({t.assignee or 'unassigned'})" for t in made)
        text += ("\n\nYour plan of this goal was cut short. These tasks exist already: do not create them again; "
                 f"create only what the plan still lacks.\n{listed}")
    return text + unread_block(unread)


def work_prompt(task: Task, *, takeover_from: str | None, answered: list[Decision], unread: list[str],
                base: str = "") -> str:
    """A worker's prompt for a task (with hand-off context, the base it starts from and questions
    already answered)."""
    parts = [f"Your task {task.id}: {task.title}\n\n{task.description}".rstrip()]
    if base:
        parts.append(base)
    if takeover_from:
        parts.append(f"You take over {task.id} from {takeover_from}: their work so far is committed on your branch.")
    if answered:
        qa = "\n".join(f"- {d.prompt} -> {d.answer.label if d.answer else '?'}"
                       + (f" ({d.answer.text})" if d.answer and d.answer.text else "") for d in answered)
        parts.append("The user already answered these questions on this task (do not ask again):\n" + qa)
    parts.append('When the change is done and tested, commit it and call update_task with status "review".')
    return "\n\n".join(parts) + unread_block(unread)


def review_prompt(task: Task, *, diff_summary: str, ci: str, history: str, answered: list[Decision], claims: str = "",
                  risks: list[Risk] | None = None) -> str:
    """The lead's prompt for reviewing a task's work (with the merge-risk scan when given)."""
    qa = "\n".join(f"- {d.prompt} -> {d.answer.label if d.answer else '?'}" for d in answered) or "- none"
    return (f"Review task {task.id}: {task.title}\n\nDiff:\n{diff_summary}\n\nCI: {ci}\n\nHistory:\n{history}\n\n"
            + (risk_block(risks) + "\n\n" if risks is not None else "")
            + (f"The worker says: {claims}\n\n" if claims else "")
            + f"Questions the user answered:\n{qa}\n\n"
            f"If it is right, call request_merge with task {task.id}. Otherwise call update_task with status "
            '"doing" and a note saying what to change.')


def unread_block(unread: list[str]) -> str:
    """``"\n\nUnread messages:\n<line>..."`` to append to a prompt or a tool result, or ``""``."""
    return ("\n\nUnread messages:\n" + "\n".join(unread)) if unread else ""


def instructions_block(files: list[str], text: str) -> str:
    """The repository's own instructions for agents (``AGENTS.md``/``CLAUDE.md``, see
    :mod:`foreman.instructions`), to put at the start of a turn prompt or in a system prompt;
    empty when the repository has none."""
    if not text.strip():
        return ""
    return (f"The repository's instructions for agents ({', '.join(files)}); follow them unless the user or the "
            f"lead says otherwise:\n\n{text}")


def with_instructions(prompt: str, files: list[str], text: str) -> str:
    """``prompt`` preceded by the repository's instructions (unchanged when there are none)."""
    block = instructions_block(files, text)
    return f"{block}\n\n---\n\n{prompt}" if block else prompt


def risk_block(risks: list[Risk], limit: int = 30) -> str:
    """The merge-risk scan for the lead's review: one line per finding, most severe first."""
    if not risks:
        return "Merge-risk scan: nothing found."
    lines = [f"- {r.severity.upper()} {r.kind}" + (f" {r.path}" + (f":{r.line}" if r.line else "") if r.path else "")
             + f": {r.message}" for r in risks[:limit]]
    if len(risks) > limit:
        lines.append(f"- ... and {len(risks) - limit} more")
    critical = any(r.severity == "critical" for r in risks)
    return ("Merge-risk scan of the commit to merge:\n" + "\n".join(lines)
            + ("\nA critical finding must be removed or explained before a merge." if critical else ""))


def repo_instructions(cwd: object, task: Task | None) -> str:
    """The instructions block for an agent working in ``cwd`` (its worktree, or the repository
    for the lead) on ``task``: the root's ``AGENTS.md``/``CLAUDE.md`` and those of the folders
    the task names (see :mod:`foreman.instructions`); empty when there are none."""
    area = area_from_text(f"{task.title}\n{task.description}") if task is not None else []
    found = find(str(cwd), area)
    return instructions_block(found.files, found.text)
