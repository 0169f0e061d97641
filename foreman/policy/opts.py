"""Splitting a program's words into options and operands (POSIX/GNU conventions)."""

from __future__ import annotations

from .words import LIT, Arg


class Parsed:
    """Options and operands of one command.

    Attributes:
        opts: ``(flag, value)`` pairs in order; ``flag`` is ``-x`` or ``--long``; ``value``
            is the option's argument (an :class:`Arg`) or None.
        operands: the remaining words.
        rest: words after the first operand when parsing stopped there (wrappers), else [].
    """

    __slots__ = ("opts", "operands", "rest")

    def __init__(self) -> None:
        self.opts: list[tuple[str, Arg | None]] = []
        self.operands: list[Arg] = []
        self.rest: list[Arg] = []

    def has(self, *flags: str) -> bool:
        """Whether any of ``flags`` was given (``-r`` also matches inside ``-rf``)."""
        return any(f in flags for f, _ in self.opts)

    def values(self, *flags: str) -> list[Arg]:
        """The values given to any of ``flags``, in order."""
        return [v for f, v in self.opts if f in flags and v is not None]


def parse_opts(args: list[Arg], short_value: str = "", long_value: frozenset[str] | set[str] = frozenset(),
               *, stop_at_operand: bool = False, long_single_dash: bool = False) -> Parsed:
    """Split ``args`` into options and operands.

    Args:
        args: the words after the program name.
        short_value: letters of short options that take a value (``-n 5`` / ``-n5``).
        long_value: long option names (with ``--``) that take a value (``--out f`` / ``--out=f``).
        stop_at_operand: stop at the first operand and keep the rest untouched (for programs that
            run another command: ``timeout 5 cmd -x``).
        long_single_dash: single-dash words are long options (``find -name``), not clusters.

    Returns:
        The :class:`Parsed` words. A word that is not a literal is always an operand.
    """
    p = Parsed()
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        t = a.text if a.kind == LIT else None
        if t == "--":
            p.operands.extend(args[i + 1:])
            break
        if t is None or not t.startswith("-") or t == "-":
            if stop_at_operand:
                p.rest = args[i:]
                break
            p.operands.append(a)
            i += 1
            continue
        if t.startswith("--") or long_single_dash:
            name, eq, val = t.partition("=")
            if eq:
                p.opts.append((name, Arg(LIT, val, a.glob, a.src)))
            elif name in long_value and i + 1 < n:
                p.opts.append((name, args[i + 1]))
                i += 1
            else:
                p.opts.append((name, None))
            i += 1
            continue
        j = 1
        while j < len(t):
            c = t[j]
            if c in short_value:
                if j + 1 < len(t):
                    p.opts.append(("-" + c, Arg(LIT, t[j + 1:], a.glob, a.src)))
                elif i + 1 < n:
                    p.opts.append(("-" + c, args[i + 1]))
                    i += 1
                else:
                    p.opts.append(("-" + c, None))
                break
            p.opts.append(("-" + c, None))
            j += 1
        i += 1
    return p


def lit_text(arg: Arg | None) -> str | None:
    """The literal text of a word (None for unknown words)."""
    return arg.text if arg is not None and arg.kind == LIT else None
