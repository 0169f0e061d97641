"""Screens of the terminal app: answering a decision, reading a diff or a note."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Label, OptionList, RichLog, Static

import protocol as p

from . import views

DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan", "#": "bold yellow"}
"""How a diff line is coloured, by its first character (see ``views.diff_lines``)."""


class AnswerScreen(ModalScreen[tuple[int, str | None] | None]):
    """Pick an option of one decision (arrows + Enter, or its number), with an optional note.

    Dismisses with ``(0-based option, text or None)``, or None when cancelled (Escape).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"), *(Binding(str(n), f"pick({n - 1})", show=False) for n in range(1, 10))
    ]
    DEFAULT_CSS = """
    AnswerScreen { align: center middle; }
    AnswerScreen > Vertical { width: 80%; height: auto; max-height: 80%; border: thick $warning; background: $surface; padding: 1 2; }
    AnswerScreen #prompt { text-style: bold; }
    AnswerScreen OptionList { height: auto; max-height: 12; margin: 1 0; }
    """

    def __init__(self, decision: p.Decision) -> None:
        super().__init__()
        self.decision = decision

    def compose(self) -> ComposeResult:
        d = self.decision
        lines = views.decision_lines(d)
        with Vertical():
            yield Label(Text(views.one_line(f"{d.id} · {d.kind} · asked by {d.asked_by}")), id="head")
            yield Static(Text(views.safe(d.prompt)), id="prompt")
            if d.detail:
                yield Static(Text(views.safe(d.detail)), id="detail")
            if d.risks:
                critical = any(r.severity == "critical" for r in d.risks)
                yield Static(Text(views.safe("merge-risk scan:\n" + "\n".join(views.risk_lines(d.risks))),
                                  style="bold red" if critical else "yellow"), id="risks")
            yield OptionList(*[views.one_line(f"{i}. {label}") for i, label in enumerate(d.options, 1)], id="options")
            yield Input(placeholder="optional note sent with the answer (Enter on an option sends)", id="note")
            yield Label(Text(views.one_line(lines[-1].strip() + "   ·   Esc cancels")), id="hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).highlighted = 0
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_pick(event.option_index)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_pick(self.query_one(OptionList).highlighted or 0)

    def action_pick(self, index: int) -> None:
        """Answer with option ``index`` (0-based) if the decision has it."""
        if 0 <= index < len(self.decision.options):
            note = self.query_one("#note", Input).value.strip() or None
            self.dismiss((index, note))

    def action_cancel(self) -> None:
        self.dismiss(None)


class TextScreen(Screen[None]):
    """A full-screen, scrollable text (a diff, a memory note); Escape or q goes back.

    Args:
        title: shown at the top.
        lines: the text lines; a diff's are coloured by their first character.
        diff: colour lines as a diff.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Back"), Binding("q", "close", "Back", show=False)]
    DEFAULT_CSS = """
    TextScreen #title { background: $primary; color: $text; padding: 0 1; text-style: bold; }
    TextScreen RichLog { height: 1fr; }
    """

    def __init__(self, title: str, lines: list[str], *, diff: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.diff = diff

    def compose(self) -> ComposeResult:
        yield Static(Text(views.one_line(self.title_text)), id="title")
        # (not auto_scroll: the lines are written before the log has its size, and it scrolled to
        # their end once laid out, past the top scroll_home asked for)
        yield RichLog(id="text", wrap=False, highlight=False, markup=False, auto_scroll=False)
        yield Footer()

    def on_mount(self) -> None:
        log = self.query_one(RichLog)
        for line in self.lines:
            style = DIFF_STYLES.get(line[:1], "") if self.diff else ""
            log.write(Text(views.safe(line), style=style))
        log.scroll_home(animate=False)
        log.focus()

    def action_close(self) -> None:
        self.dismiss(None)
