"""The ``foreman`` command's argument parsers: a usage error is one line that points to ``--help``.

argparse prints a command's whole usage before its error (34 lines for ``foreman start``, which
hid the one line that mattered); :class:`Parser` prints the error alone, with the closest known
flag or subcommand for a misspelt one, and the ``--help`` that shows the rest.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, NoReturn, Sequence

from .errors import closest


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are one line: ``foreman start: error:
    unrecognized arguments: --prot 3 (did you mean --port?); see `foreman start --help```, exit
    code 2 as argparse's. Its subcommands' parsers are of this class too (argparse makes them of
    their parent's class), and an unknown flag after a subcommand is reported by that subcommand."""

    commands: Any = None
    """The subcommands' action (:meth:`add_subparsers`), when there are subcommands."""

    def add_subparsers(self, **kwargs: Any) -> Any:
        """As argparse's; remembered, so an unknown flag is reported by the subcommand it follows."""
        self.commands = super().add_subparsers(**kwargs)
        return self.commands

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """As argparse's, but arguments no parser knows are reported by the subcommand given."""
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            owner = self
            if self.commands is not None:
                owner = self.commands.choices.get(getattr(parsed, self.commands.dest, None), self)
            owner.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed

    def error(self, message: str) -> NoReturn:
        """Print ``<prog>: error: <message>`` with a suggestion and the pointer to ``--help``, then exit 2."""
        self.exit(2, f"{self.prog}: error: {message}{self._suggestion(message)}; see `{self.prog} --help`\n")

    def _suggestion(self, message: str) -> str:
        """`` (did you mean --port?)`` for a misspelt flag or subcommand, else ``""``."""
        if message.startswith("unrecognized arguments: "):
            flags = [s for s in self._option_string_actions if s.startswith("--")]
            for word in message.removeprefix("unrecognized arguments: ").split():
                if word.startswith("--") and (near := closest(word.split("=", 1)[0], flags)):
                    return f" (did you mean {near}?)"
            return ""
        wrong = re.search(r"invalid choice: '([^']*)'", message)
        if wrong and self.commands is not None and (near := closest(wrong.group(1), list(self.commands.choices))):
            return f" (did you mean {near}?)"
        return ""
