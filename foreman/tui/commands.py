"""The command line of the terminal client, the line mode and the mod's console.

``parse`` reads the words of one line into a command (syntax only); ``resolve`` checks it
against the mirror and turns it into an intent to send or a local action; ``interpret`` does
both. Nothing here raises on user input: a mistyped line becomes :class:`Invalid` with a
one-line explanation. The words follow the Foreman's documented console (issue 5):

    plain text            a new goal for the lead
    @kit <text>           message an agent (@all: everyone)
    /answer [dN] [n] [text]   answer a decision (default: the oldest open one, option 1)
    ...                   (see HELP)

Users count options from 1; the wire counts from 0 (``DecisionAnswerIntent.option``).
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

import protocol as p

from .mirror import Mirror

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
"""An agent name: lower-case letters, digits, ``_ . -``."""
DECISION_ID = re.compile(r"^d\d+$")
GOAL_ID = re.compile(r"^g\d+$")
MEANT_AS_DECISION_ID = re.compile(r"^d(?:\w?|(?=.*\d)[\w-]*)$")
"""A lower-cased word ``/answer`` takes for a mistyped decision id rather than an option label when
no option has it: ``d`` and at most one more letter or digit (``dx``), or ``d`` then letters, digits,
``_ -`` with a digit among them (``d1x``, ``d-3``). ``defer`` stays a label."""
TASK_STATUSES: tuple[str, ...] = ("todo", "doing", "review", "done", "blocked", "cancelled")
VIEWS: tuple[str, ...] = ("status", "tasks", "agents", "decisions", "feed", "usage")

HELP: tuple[tuple[str, str], ...] = (
    ("<text>", "a new goal for the lead"),
    ("@kit <text>", "message an agent (@all: everyone)"),
    ("/answer [d3] [n] [text]", "answer a decision: default the oldest open one, option 1"),
    ("/diff kit-t2 | d3 | kit", "show a worktree's or a merge decision's diff"),
    ("/repo [add <path>]", "the repositories and their agent instructions / register one (its top-level folder)"),
    ("/pause @kit  /resume @kit", "abort an agent's turn, keeping its task / continue"),
    ("/stop @kit  /spawn @tove [t3]", "take an agent off shift / bring one on (with a task)"),
    ("/task t3 cancel|retry|prioritize [n]|reassign @wren", "steer a task"),
    ("/status /tasks /agents /decisions /feed", "views of the world"),
    ("/usage", "tokens and cost per agent, goal and task; session and today"),
    ("/memory [note]", "list memory notes, or read one (shared/plan)"),
    ("/wait d3 | decision | goal [g1] done | t3 <status> | <seconds>", "scripts: wait for something"),
    ("/help  /quit", "this help / leave the client"),
)
"""Every command with a one-line description, for ``/help``."""

COMMAND_NAMES: tuple[str, ...] = (
    "answer", "diff", "repo", "pause", "resume", "stop", "spawn", "task", "status", "tasks", "agents",
    "decisions", "memory", "feed", "help", "wait", "quit", "usage",
)


@dataclass(frozen=True)
class Send:
    """Send ``intent`` to the daemon; ``summary`` says what it does, for people."""

    intent: p.Intent
    summary: str


def acknowledged(action: Send, result: str | None) -> str:
    """What the client says when the daemon acknowledged ``action``, in words: ``ok: new goal g2:
    Add tags``, ``ok: sent to kit: hello`` (a message's id is of no use to anyone), ``ok: added
    repository r1: /src/app``; else ``ok: <summary>``."""
    match action.intent:
        case p.GoalSubmit(text=text) if result:
            return f"ok: new goal {result}: {text}"
        case p.MessageSend(to=to, text=text):
            return f"ok: sent to {to}: {text}"
        case p.RepoAdd(path=path) if result:
            return f"ok: added repository {result}: {path}"
    return f"ok: {action.summary}" + (f" ({result})" if result else "")


@dataclass(frozen=True)
class Answer:
    """``/answer`` before it is checked against the open decisions.

    ``decision`` None means the oldest open one; ``option`` is 0-based (None: by ``label`` or
    the first option).
    """

    decision: str | None = None
    option: int | None = None
    label: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class ShowDiff:
    """``/diff``: a decision id, a worktree id, an agent name, or None (the oldest open merge)."""

    target: str | None


@dataclass(frozen=True)
class AddRepo:
    """``/repo add <path>`` before the path is made absolute."""

    path: str


@dataclass(frozen=True)
class Show:
    """Print a view (one of VIEWS) from the mirror."""

    view: str


@dataclass(frozen=True)
class Wait:
    """A script's ``/wait``.

    ``what`` is ``seconds`` (``seconds`` set), ``decision`` (``target`` a decision id, or None:
    any open decision), ``goal`` (``target`` a goal id or None: the goals of this session, else
    the latest) or ``task`` (``target`` a task id, ``status`` the status to reach).
    """

    what: Literal["seconds", "decision", "goal", "task"]
    target: str | None = None
    seconds: float = 0.0
    status: str | None = None


@dataclass(frozen=True)
class Help:
    """Print the help."""


@dataclass(frozen=True)
class Quit:
    """Leave the client."""


@dataclass(frozen=True)
class Empty:
    """A blank line: nothing to do."""


@dataclass(frozen=True)
class Invalid:
    """A line that is not a command; ``message`` explains in one line what to type instead."""

    message: str


Parsed = Send | Answer | ShowDiff | AddRepo | Show | Wait | Help | Quit | Empty | Invalid
Resolved = Send | Show | Wait | Help | Quit | Empty | Invalid


def _agent(word: str, usage: str) -> str | Invalid:
    name = word.removeprefix("@")
    name = name.lower()
    if not NAME.match(name):
        return Invalid(f"{word!r} is not an agent name; usage: {usage}")
    return name


def parse(line: str) -> Parsed:
    """Read one command line (syntax only; see :func:`resolve` for the checks against the world).

    Args:
        line: what the user typed, one line.

    Returns:
        The command; :class:`Invalid` with a one-line explanation when the line is mistyped.
    """
    try:
        return _parse(line.strip())
    except ValidationError as exc:  # a field the protocol refuses (defensive: checked above)
        return Invalid(f"not a valid command: {exc.errors()[0]['msg']}")


def _parse(text: str) -> Parsed:
    if not text:
        return Empty()
    if text.startswith("@"):
        return _parse_message(text)
    if not text.startswith("/"):
        return Send(p.GoalSubmit(text=text), f"new goal: {text}")
    head, _, rest = text[1:].partition(" ")
    name = head.lower()
    rest = rest.strip()
    words = rest.split()
    handler = _HANDLERS.get(name)
    if handler is None:
        close = [c for c in COMMAND_NAMES if name and c.startswith(name)]
        close = close or difflib.get_close_matches(name, COMMAND_NAMES, n=1, cutoff=0.6)
        hint = f" (did you mean /{close[0]}?)" if close else ""
        return Invalid(f"unknown command /{head}{hint}; /help lists the commands")
    return handler(words, rest)


def _parse_message(text: str) -> Parsed:
    target, _, body = text.partition(" ")
    usage = "@kit <text> (or @all <text>)"
    to = _agent(target, usage)
    if isinstance(to, Invalid):
        return to
    body = body.strip()
    if not body:
        return Invalid(f"nothing to say to {to}; usage: {usage}")
    return Send(p.MessageSend(to=to, text=body), f"message to {to}: {body}")


def _parse_answer(words: list[str], rest: str) -> Parsed:
    decision = None
    if words and DECISION_ID.match(words[0].lower()):
        decision = words.pop(0).lower()
    option = None
    if words and re.fullmatch(r"-?\d+", words[0]):
        n = int(words.pop(0))
        if n < 1:
            return Invalid(f"options count from 1, not {n}; usage: /answer [d3] [option] [text]")
        option = n - 1
    text = " ".join(words) or None
    if option is None and text is not None:
        # Without a number the words must name an option ("/answer d3 reject"); free text
        # alone could silently pick the first option, which is never what was meant.
        return Answer(decision, None, text, None)
    return Answer(decision, option, None, text)


def _parse_diff(words: list[str], rest: str) -> Parsed:
    if len(words) > 1:
        return Invalid("usage: /diff <worktree|decision|agent>, e.g. /diff kit-t2 or /diff d3")
    return ShowDiff(words[0].lower().lstrip("@") if words else None)


def _parse_repo(words: list[str], rest: str) -> Parsed:
    if not words:
        return Show("repos")
    if words[0].lower() != "add" or len(words) < 2:
        return Invalid("usage: /repo add <path to the repository's top-level folder>, or /repo to list them")
    path = rest[len(words[0]):].strip()
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'":
        path = path[1:-1]
    return AddRepo(path)


def _agent_command(name: str, model: type[p.Intent], verb: str):
    def handler(words: list[str], rest: str) -> Parsed:
        usage = f"/{name} @kit"
        if len(words) != 1:
            return Invalid(f"usage: {usage}")
        agent = _agent(words[0], usage)
        if isinstance(agent, Invalid):
            return agent
        return Send(model(agent=agent), f"{verb} {agent}")

    return handler


def _parse_spawn(words: list[str], rest: str) -> Parsed:
    usage = "/spawn @tove [t3]"
    if not 1 <= len(words) <= 2:
        return Invalid(f"usage: {usage}")
    agent = _agent(words[0], usage)
    if isinstance(agent, Invalid):
        return agent
    task = words[1].lower() if len(words) == 2 else None
    summary = f"spawn {agent}" + (f" on {task}" if task else "")
    return Send(p.AgentSpawn(agent=agent, task=task), summary)


def _parse_task(words: list[str], rest: str) -> Parsed:
    usage = "/task t3 cancel|retry|prioritize [n]|reassign @wren"
    if len(words) < 2:
        return Invalid(f"usage: {usage}")
    task, action, args = words[0].lower(), words[1].lower(), words[2:]
    if action in ("cancel", "retry") and not args:
        model = p.TaskCancel if action == "cancel" else p.TaskRetry
        return Send(model(task=task), f"{action} {task}")
    if action == "prioritize" and len(args) <= 1:
        if args and not re.fullmatch(r"-?\d+", args[0]):
            return Invalid(f"priority must be a whole number, not {args[0]!r}; usage: {usage}")
        priority = int(args[0]) if args else None
        return Send(p.TaskPrioritize(task=task, priority=priority), f"prioritize {task}" + (f" to {priority}" if args else ""))
    if action == "reassign" and len(args) == 1:
        agent = _agent(args[0], usage)
        if isinstance(agent, Invalid):
            return agent
        return Send(p.TaskReassign(task=task, agent=agent), f"reassign {task} to {agent}")
    return Invalid(f"/task {task} {' '.join(words[1:])}: usage: {usage}")


def _view(name: str):
    def handler(words: list[str], rest: str) -> Parsed:
        if words:
            return Invalid(f"/{name} takes no arguments")
        return Show(name)

    return handler


def _parse_memory(words: list[str], rest: str) -> Parsed:
    if len(words) > 1:
        return Invalid("usage: /memory [note], e.g. /memory shared/plan")
    note = words[0] if words else None
    return Send(p.MemoryRead(note=note), f"read memory {note}" if note else "list memory notes")


def _parse_wait(words: list[str], rest: str) -> Parsed:
    usage = "/wait d3 | decision | goal [g1] done | t3 <status> | <seconds>"
    low = [w.lower() for w in words]
    if len(low) == 1 and re.fullmatch(r"\d+(\.\d+)?", low[0]):
        return Wait("seconds", seconds=float(low[0]))
    if len(low) == 1 and DECISION_ID.match(low[0]):
        return Wait("decision", target=low[0])
    if low == ["decision"]:
        return Wait("decision")
    if low[:1] == ["goal"] and low[-1:] == ["done"] and len(low) in (2, 3):
        goal = low[1] if len(low) == 3 else None
        if goal is not None and not GOAL_ID.match(goal):
            return Invalid(f"{words[1]!r} is not a goal id; usage: {usage}")
        return Wait("goal", target=goal)
    if len(low) == 2 and low[1] in TASK_STATUSES:
        return Wait("task", target=low[0], status=low[1])
    return Invalid(f"usage: {usage}")


def _no_args(command: Parsed, name: str):
    def handler(words: list[str], rest: str) -> Parsed:
        return command if not words or name == "help" else Invalid(f"/{name} takes no arguments")

    return handler


_HANDLERS = {
    "answer": _parse_answer,
    "diff": _parse_diff,
    "repo": _parse_repo,
    "pause": _agent_command("pause", p.AgentPause, "pause"),
    "resume": _agent_command("resume", p.AgentResume, "resume"),
    "stop": _agent_command("stop", p.AgentStop, "stop"),
    "spawn": _parse_spawn,
    "task": _parse_task,
    "memory": _parse_memory,
    "wait": _parse_wait,
    "help": _no_args(Help(), "help"),
    "quit": _no_args(Quit(), "quit"),
    **{view: _view(view) for view in VIEWS},
}


def resolve(cmd: Parsed, mirror: Mirror, cwd: str | None = None) -> Resolved:
    """Check a parsed command against the world and turn it into what to do.

    Args:
        cmd: the result of :func:`parse`.
        mirror: the client's mirror (for the open decisions, agents and worktrees).
        cwd: the folder a relative ``/repo add`` path is relative to; None keeps it as typed.

    Returns:
        A :class:`Send` with the intent, a local action, or :class:`Invalid`. Stopping or pausing
        the lead keeps its intent; its summary warns that new goals and reviews wait until
        ``/spawn`` (``/resume``) brings it back.
    """
    match cmd:
        case Answer():
            return _resolve_answer(cmd, mirror)
        case ShowDiff(target=target):
            return _resolve_diff(target, mirror)
        case AddRepo(path=path):
            path = os.path.expanduser(path)
            if cwd is not None and not os.path.isabs(path):
                path = os.path.normpath(os.path.join(cwd, path))
            return Send(p.RepoAdd(path=path), f"add repository {path}")
        case Send(intent=p.AgentStop(agent=name)) if (agent := mirror.agents.get(name)) is not None and agent.role == "lead":
            return Send(cmd.intent, f"{cmd.summary}; {name} is the lead: new goals will not be planned (nor "
                                    f"reviews run) until you start it again with /spawn @{name}")
        case Send(intent=p.AgentPause(agent=name)) if (agent := mirror.agents.get(name)) is not None and agent.role == "lead":
            return Send(cmd.intent, f"{cmd.summary}; {name} is the lead: new goals will not be planned (nor "
                                    f"reviews run) until you /resume @{name}")
    return cmd


def interpret(line: str, mirror: Mirror, cwd: str | None = None) -> Resolved:
    """Parse and resolve one line: ``resolve(parse(line), mirror, cwd)``."""
    return resolve(parse(line), mirror, cwd)


def _resolve_answer(cmd: Answer, mirror: Mirror) -> Resolved:
    meant = _meant_as_id(cmd.label)
    if cmd.decision is None:
        decision = mirror.oldest_open_decision()
        if decision is None:
            return Invalid(f"{meant} is not an open decision; none is open" if meant else "no decision is open")
    else:
        decision = mirror.decisions.get(cmd.decision)
        if decision is None:
            return Invalid(f"there is no decision {cmd.decision}; open: {_open_ids(mirror)}")
        if decision.status != "open":
            return Invalid(f"{decision.id} is already {decision.status}; open: {_open_ids(mirror)}")
    option = cmd.option
    if cmd.label is not None:
        labels = [o.casefold() for o in decision.options]
        if cmd.label.casefold() not in labels:
            if meant:
                return Invalid(f"{meant} is not an open decision; open: {_open_ids(mirror)}")
            return Invalid(
                f"{decision.id}: give the option's number first ({_numbered(decision)}), "
                f"e.g. /answer {decision.id} 1 {cmd.label}"
            )
        option = labels.index(cmd.label.casefold())
    option = option or 0
    if option >= len(decision.options):
        return Invalid(f"{decision.id} has {len(decision.options)} options: {_numbered(decision)}")
    label = decision.options[option]
    intent = p.DecisionAnswerIntent(decision=decision.id, option=option, text=cmd.text)
    extra = f' "{cmd.text}"' if cmd.text else ""
    return Send(intent, f"answer {decision.id}: {option + 1} {label}{extra}")


def _resolve_diff(target: str | None, mirror: Mirror) -> Resolved:
    if target is None:
        merges = [d for d in mirror.open_decisions() if d.kind == "merge"]
        if not merges:
            return Invalid("no merge decision is open; usage: /diff <worktree|decision|agent>")
        target = merges[0].id
    if DECISION_ID.match(target):
        return Send(p.DiffRequest(decision=target), f"diff of {target}")
    agent = mirror.agents.get(target)
    if agent is not None:
        if not agent.worktree:
            return Invalid(f"{target} has no worktree now; worktrees: {', '.join(mirror.worktrees()) or 'none'}")
        target = agent.worktree
    return Send(p.DiffRequest(worktree=target), f"diff of {target}")


def _meant_as_id(label: str | None) -> str | None:
    """The first word of ``label`` when it looks like a decision id (:data:`MEANT_AS_DECISION_ID`), else None."""
    word = (label or "").split(maxsplit=1)[0:1]
    return word[0] if word and MEANT_AS_DECISION_ID.match(word[0].lower()) else None


def _open_ids(mirror: Mirror) -> str:
    return ", ".join(d.id for d in mirror.open_decisions()) or "none"


def _numbered(decision: p.Decision) -> str:
    return ", ".join(f"{i} {label}" for i, label in enumerate(decision.options, 1))


def help_lines() -> list[str]:
    """Return the ``/help`` text, one command per line."""
    width = max(len(usage) for usage, _ in HELP)
    return [f"{usage:<{width}}  {what}" for usage, what in HELP]
