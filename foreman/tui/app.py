"""The full-screen terminal client (Textual): the world in panes, a command line, decisions.

Panes: agents (state@station, task, activity), tasks (by status, deps, assignee), open
decisions (oldest first), the activity feed, messages, and a console for command output. A
banner says when the user is needed (a decision is open: highlighted, with a bell when one
opens) and is quiet otherwise. F2 answers the oldest decision (or the one selected in the
decisions pane when it has focus), F3 shows its diff. The command line takes the same commands as the line mode, with completion.
With ``--auto-answer KINDS`` decisions of those kinds are answered with their first option, as in
line mode (:mod:`foreman.tui.autoanswer`), and call nobody.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.suggester import Suggester
from textual.widgets import DataTable, Footer, Header, Input, RichLog, Static

import protocol as p

from . import commands as c
from . import views
from .autoanswer import AutoAnswerer
from .client import Connection, ConnectionLost, RequestError
from .completion import complete
from .main import EXIT_REFUSED
from .mirror import Mirror, Outcome, id_order
from .screens import AnswerScreen, TextScreen

logger = logging.getLogger(__name__)

REFRESH_INTERVAL = 0.05
"""Seconds between a change and the redraw of the tables (bursts are drawn once)."""

_VIEWS = {
    "status": views.status_view,
    "tasks": views.tasks_view,
    "agents": views.agents_view,
    "decisions": views.decisions_view,
    "feed": views.feed_view,
    "usage": views.usage_view,
    "repos": views.repos_view,
}


def _risks_of(mirror: Mirror, target: str) -> list[p.Risk]:
    """The risk findings of a merge decision whose diff is shown (none for a worktree)."""
    d = mirror.decisions.get(target)
    return list(d.risks) if d is not None else []


class CommandSuggester(Suggester):
    """Complete agent names, task ids, decision ids and commands from the live mirror."""

    def __init__(self, mirror: Mirror) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.mirror = mirror

    async def get_suggestion(self, value: str) -> str | None:
        return complete(value, self.mirror)


def sync_table(table: DataTable, rows: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Make ``table`` show ``rows`` (``(key, cells)``, in order), changing as little as it can.

    When the keys and their order are unchanged only changed cells are updated; otherwise the
    table is refilled and the cursor stays on the same key when it is still there.
    """
    rows = [(key, [views.one_line(v) for v in cells]) for key, cells in rows]  # (display-safe text)
    keys = [key for key, _ in rows]
    current = [row.key.value for row in table.ordered_rows]
    columns = [col.key for col in table.ordered_columns]
    if keys == current:
        for key, cells in rows:
            old = table.get_row(key)
            for column, value, before in zip(columns, cells, old, strict=False):
                if str(before) != value:
                    table.update_cell(key, column, Text(value))
        return
    selected = current[table.cursor_row] if table.row_count and 0 <= table.cursor_row < len(current) else None
    table.clear()
    for key, cells in rows:
        table.add_row(*(Text(v) for v in cells), key=key)
    if selected in keys:
        table.move_cursor(row=keys.index(selected), animate=False)


class ForemanApp(App[int]):
    """The Foreman's terminal client.

    Args:
        locator: returns the daemon's URL (see :class:`~foreman.tui.discovery.Locator`).
        client_name: sent in ``hello``.
        reconnect_interval: first reconnect delay in seconds (tests make it short).
        auto_answer: decision kinds answered with their first option as soon as they open
            (``--auto-answer``; :class:`~foreman.tui.autoanswer.AutoAnswerer`, as in line mode).
    """

    TITLE = "Foreman"
    CSS = """
    #banner { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    #banner.needed { background: $warning; color: $background; text-style: bold; }
    #main { height: 1fr; }
    #left { width: 3fr; }
    #right { width: 2fr; }
    DataTable { height: 1fr; border: round $primary-darken-2; }
    DataTable:focus { border: round $accent; }
    #agents { height: 2fr; }
    #tasks { height: 3fr; }
    #decisions { height: 2fr; }
    RichLog { border: round $primary-darken-2; }
    #feed { height: 3fr; }
    #messages { height: 2fr; }
    #console { height: 30%; min-height: 7; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "answer", "Answer decision", priority=True),
        Binding("f3", "diff", "Diff of decision", priority=True),
        Binding("f4", "focus_command", "Command line", priority=True),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, locator: Callable[[], str], client_name: str = "foreman-tui", *, reconnect_interval: float = 0.3,
                 auto_answer: Iterable[str] = ()) -> None:
        super().__init__()
        self.mirror = Mirror()
        self.conn = Connection(
            locator, self.mirror, client_name=client_name, listener=self._on_server,
            on_state=self._on_state, reconnect_interval=reconnect_interval,
        )
        self.auto = AutoAnswerer(self.conn, auto_answer, lambda text, failed: self.say(text, "red" if failed else "yellow"))
        self._dirty = False
        self._seen_open: set[str] | None = None
        self.connection_state = "connecting"

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("connecting to the Foreman ..."), id="banner")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield DataTable(id="agents", cursor_type="row", zebra_stripes=True)
                yield DataTable(id="tasks", cursor_type="row", zebra_stripes=True)
            with Vertical(id="right"):
                yield DataTable(id="decisions", cursor_type="row")
                yield RichLog(id="feed", wrap=True, markup=False, max_lines=2000, min_width=20)
                yield RichLog(id="messages", wrap=True, markup=False, max_lines=1000, min_width=20)
        yield RichLog(id="console", wrap=True, markup=False, max_lines=2000, min_width=20)
        yield Input(placeholder="a goal, @kit <message>, or /help", id="command", suggester=CommandSuggester(self.mirror))
        yield Footer()

    @property
    def _main(self) -> Screen:
        """The main screen: its panes are updated even while a dialog or the diff viewer is open
        (``App.query_one`` would search whichever screen is on top)."""
        return self.screen_stack[0]

    def on_mount(self) -> None:
        for table_id, title, columns in (
            ("agents", "Agents", (("agent", 10), ("state", 22), ("task", 5), ("activity", 52), ("cost", 9))),
            ("tasks", "Tasks", (("task", 5), ("status", 9), ("title", 40), ("deps", 10), ("assignee", 10), ("cost", 9))),
            ("decisions", "Open decisions", (("id", 4), ("kind", 10), ("from", 8), ("prompt", 48), ("options", 40))),
        ):
            table = self._main.query_one(f"#{table_id}", DataTable)
            table.border_title = title
            for column, width in columns:  # fixed widths: auto widths shrank to the labels
                table.add_column(column, key=column, width=width)
        self._main.query_one("#feed", RichLog).border_title = "Feed"
        self._main.query_one("#messages", RichLog).border_title = "Messages"
        self._main.query_one("#console", RichLog).border_title = "Console"
        self._main.query_one("#command", Input).focus()
        if self.auto.kinds:
            self.say(f"--auto-answer {','.join(sorted(self.auto.kinds))}: such decisions are answered with their first option "
                     "as they open (a merge with a critical risk finding is left to you)", "yellow")
        self._refresh_timer = self.set_interval(REFRESH_INTERVAL, self._refresh_panes)
        self.run_worker(self.conn.run(), name="connection", exit_on_error=False)

    async def on_unmount(self) -> None:
        self._refresh_timer.stop()
        await self.conn.close()

    # -- from the daemon -------------------------------------------------------------------

    def _on_state(self, state: str) -> None:
        self.connection_state = state
        self.sub_title = state if state != "connected" else self._banner_title()
        if state.startswith("disconnected"):
            self._dirty = True
        if state == "closed" and self.conn.refused:
            # a refused token is refused again on every retry: leave with the advice
            self.exit(return_code=EXIT_REFUSED, message=f"foreman tui: {views.safe(str(self.conn.refused))}")

    def _banner_title(self) -> str:
        s = self.mirror.status
        return views.one_line(f"{s.backend} · {s.profile} · foreman {s.version} · {views.usage_status_text(s)} · connected") if s else "connected"

    def _on_server(self, msg: p.ServerMessage, outcome: Outcome) -> None:
        if outcome is not Outcome.APPLIED:
            return
        self._dirty = True
        self.auto.on_message(msg, outcome)
        match msg:
            case p.Snapshot():
                if self._seen_open is None:  # open at connect: shown by the banner, no call
                    self._seen_open = {d.id for d in self.mirror.open_decisions()}
                self._load_logs()
                self.sub_title = self._banner_title()
            case p.FeedAppend(item=item):
                self._write("#feed", views.feed_line(item), item.kind)
            case p.MessageAppend(message=message):
                self._write("#messages", views.message_line(message))
            case p.StatusMessage():
                self.sub_title = self._banner_title()

    def _load_logs(self) -> None:
        feed, messages = self._main.query_one("#feed", RichLog), self._main.query_one("#messages", RichLog)
        feed.clear()
        messages.clear()
        for item in self.mirror.feed:
            self._write("#feed", views.feed_line(item), item.kind)
        for message in self.mirror.messages:
            self._write("#messages", views.message_line(message))

    def _write(self, selector: str, line: str, kind: str = "") -> None:
        style = {"error": "red", "decision": "yellow", "merge": "green", "ci": "cyan"}.get(kind, "")
        self._main.query_one(selector, RichLog).write(Text(views.safe(line), style=style))

    def _refresh_panes(self) -> None:
        if not self._dirty:
            return
        try:
            self._update_panes()
        except NoMatches:  # the app is closing and its panes are already unmounted
            return

    def _update_panes(self) -> None:
        self._dirty = False
        m = self.mirror
        agents = self._main.query_one("#agents", DataTable)
        sync_table(agents, [
            (a.name, (a.name, views.agent_state(a), a.task or "", a.activity, views.money(a.usage.cost_usd)))
            for a in views.team_order(m.agents.values())
        ])
        agents.border_title = f"Agents · {views.team_summary(m.agents.values())}" if m.agents else "Agents"
        order = {status: i for i, status in enumerate(views.TASK_STATUS_ORDER)}
        tasks = sorted(m.tasks.values(), key=lambda t: (order[t.status], id_order(t.id)))
        sync_table(self._main.query_one("#tasks", DataTable), [
            (t.id, (t.id, views.status_cell(t), t.title, ",".join(t.deps), t.assignee or "", views.money(t.usage.cost_usd))) for t in tasks
        ])
        open_ = m.open_decisions()
        if isinstance(self.screen, AnswerScreen) and self.screen.decision.id not in {d.id for d in open_}:
            self.say(f"{self.screen.decision.id} is no longer open (answered or withdrawn elsewhere)")
            self.screen.dismiss(None)
        sync_table(self._main.query_one("#decisions", DataTable), [
            (d.id, (d.id, d.kind, d.asked_by, d.prompt, views.options_text(d))) for d in open_
        ])
        self._update_banner(open_)

    def _update_banner(self, open_: list[p.Decision]) -> None:
        banner = self._main.query_one("#banner", Static)
        ids = {d.id for d in open_}
        # what opened since the last redraw (the first snapshot set what was open at connect)
        new = [d for d in open_ if self._seen_open is not None and d.id not in self._seen_open and not self.auto.handles(d)]
        if self._seen_open is not None:
            self._seen_open = ids
        if new:
            self.bell()
            for d in new:
                self.notify(views.one_line(f"{d.id} {d.kind}: {d.prompt}"), title="You are needed", severity="warning")
        if not self.conn.ready and self.connection_state.startswith("disconnected"):
            banner.set_class(False, "needed")
            banner.update(Text(f"{self.connection_state} · reconnecting ..."))
        elif open_:
            oldest = open_[0]
            more = f" (+{len(open_) - 1} more)" if len(open_) > 1 else ""
            banner.set_class(True, "needed")
            banner.update(Text(views.one_line(f"⚠ YOU ARE NEEDED: {oldest.id} {oldest.kind} — {oldest.prompt}{more}   F2 answer · F3 diff")))
        else:
            banner.set_class(False, "needed")
            banner.update(Text(views.idle_banner(self.mirror.agents.values())))

    # -- from the user ---------------------------------------------------------------------

    def say(self, lines: list[str] | str, style: str = "") -> None:
        """Write lines to the console pane."""
        log = self._main.query_one("#console", RichLog)
        for line in [lines] if isinstance(lines, str) else lines:
            log.write(Text(views.safe(line), style=style))

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "command":
            return
        line = event.value
        event.input.value = ""
        if line.strip():
            self.say(f"> {line}", "bold")
        self.run_command(line)

    def run_command(self, line: str) -> None:
        """Do what one command line says (send, show, help, quit)."""
        action = c.interpret(line, self.mirror)
        match action:
            case c.Invalid(message=message):
                self.say(message, "red")
            case c.Help():
                self.say(c.help_lines())
            case c.Show(view=view):
                self.say(_VIEWS[view](self.mirror))
            case c.Wait():
                self.say("/wait works in scripts only (foreman tui --script FILE)", "yellow")
            case c.Quit():
                self.exit(0)
            case c.Send():
                self.run_worker(self._send(action), group="send")

    async def _send(self, action: c.Send) -> None:
        try:
            reply = await self.conn.request(action.intent, 30.0)
        except RequestError as exc:
            self.say(f"refused: {exc.code}: {exc.message}", "red")
            return
        except (ConnectionLost, TimeoutError) as exc:
            self.say(f"not sent or no reply: {exc or 'timed out'}", "red")
            return
        if isinstance(reply, p.DiffResult):
            self.push_screen(TextScreen(f"diff {reply.target}", views.diff_lines(reply.target, reply.diff, _risks_of(self.mirror, reply.target)), diff=True))
        elif isinstance(reply, p.MemoryResult):
            note = action.intent.note if isinstance(action.intent, p.MemoryRead) else None
            lines = views.memory_lines(reply, note)
            if note:
                self.push_screen(TextScreen(f"memory {note}", lines))
            else:
                self.say(lines)
        else:
            self.say(c.acknowledged(action, reply.result), "green")

    def selected_decision(self) -> p.Decision | None:
        """The decision under the cursor when the decisions pane has focus, else the oldest open one."""
        table = self._main.query_one("#decisions", DataTable)
        if table.has_focus and table.row_count and 0 <= table.cursor_row < table.row_count:
            key = table.ordered_rows[table.cursor_row].key.value
            d = self.mirror.decisions.get(key) if key is not None else None
            if d is not None and d.status == "open":
                return d
        return self.mirror.oldest_open_decision()

    def action_answer(self) -> None:
        """Answer the selected (else oldest) decision in a dialog (one dialog at a time)."""
        if isinstance(self.screen, AnswerScreen):
            return
        decision = self.selected_decision()
        if decision is None:
            self.say("no decision is open")
            return

        def answered(choice: tuple[int, str | None] | None) -> None:
            if choice is None:
                return
            option, text = choice
            label = decision.options[option]
            intent = p.DecisionAnswerIntent(decision=decision.id, option=option, text=text)
            self.say(f"> answer {decision.id}: {option + 1} {label}", "bold")
            self.run_worker(self._send(c.Send(intent, f"answer {decision.id}: {option + 1} {label}")), group="send")

        self.push_screen(AnswerScreen(decision), answered)

    def action_diff(self) -> None:
        """Show the diff of the selected (else oldest) decision."""
        decision = self.selected_decision()
        if decision is None:
            self.say("no decision is open")
            return
        self.run_command(f"/diff {decision.id}")

    def action_focus_command(self) -> None:
        self._main.query_one("#command", Input).focus()
