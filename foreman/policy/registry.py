"""Program handlers and the dispatch from a command's words to its handler.

A handler receives a :class:`Call` (the expanded words, working directories and stdin) and
records what the program needs through the call's helpers. It returns a :class:`Result` when
the program moves the working directory or has a known output, else None.
"""

from __future__ import annotations

import posixpath
from typing import Callable

from .context import Ctx, Cwds, Result
from .words import LIT, Arg

Handler = Callable[["Call"], "Result | None"]
HANDLERS: dict[str, Handler] = {}

#: Programs named by these directories are judged by their base name (``/usr/bin/git``).
SYSTEM_BIN = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/lib/git-core",
                        "/usr/libexec/git-core", "/opt/homebrew/bin"})


def handles(*names: str) -> Callable[[Handler], Handler]:
    """Register a handler for program names."""
    def deco(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco


class Call:
    """One program invocation as a handler sees it.

    Attributes:
        ctx: the classification.
        name: the program's base name.
        args: the words after the program name.
        cwds: the possible working directories.
        stdin: what the program reads on stdin (None = unknown or inherited).
    """

    __slots__ = ("ctx", "name", "args", "cwds", "stdin")

    def __init__(self, ctx: Ctx, name: str, args: list[Arg], cwds: Cwds, stdin) -> None:
        self.ctx = ctx
        self.name = name
        self.args = args
        self.cwds = cwds
        self.stdin = stdin

    # helpers
    def read(self, arg: Arg, *, tree: bool = False, directory: bool = False) -> str:
        """Check a path the program reads (``tree``: recursively)."""
        return self.ctx.access(arg, "rtree" if tree else "r", self.cwds, f"{self.name} reads", directory=directory)

    def write(self, arg: Arg, *, tree: bool = False, delete: bool = False) -> str:
        """Check a path the program writes, creates or deletes (``tree``: recursively)."""
        return self.ctx.access(arg, "wtree" if tree else "w", self.cwds, f"{self.name} writes", delete=delete)

    def run(self, arg: Arg) -> str:
        """Check a program or script file the program runs."""
        return self.ctx.access(arg, "x", self.cwds, f"{self.name} runs")

    def action(self, key: str, reason: str) -> None:
        """Ask for an action key (``Bash:rm -r``) inside the worktree."""
        self.ctx.ask(f"Bash:{key}", reason)

    def exact(self, reason: str) -> None:
        """Ask for the exact command."""
        self.ctx.exact(reason)

    def deny(self, reason: str) -> None:
        """Refuse the command."""
        self.ctx.deny(reason)

    def mutate(self, reason: str) -> None:
        """Note that the program changes files or runs project code."""
        self.ctx.mutate(reason)

    def sub(self, argv: list[Arg], stdin=None) -> Result:
        """Classify another command this one runs (wrappers, ``-exec``, ``xargs``)."""
        return dispatch(self.ctx, argv, self.cwds, stdin)


def dispatch(ctx: Ctx, argv: list[Arg], cwds: Cwds, stdin) -> Result:
    """Classify the command ``argv`` (program first) and return the state after it."""
    if not argv:
        return Result(cwds)
    prog = argv[0]
    if prog.kind != LIT or prog.glob:
        if any(a.kind == LIT and a.text in ("push", "send-pack") for a in argv[1:]):
            ctx.deny("a program named by a variable or substitution is given 'push'")
        ctx.exact("the program name comes from a variable or substitution")
        return Result(cwds)
    name = prog.text
    if "/" in name:
        directory, base = posixpath.split(name)
        if directory in SYSTEM_BIN and base:
            name = base
        else:
            ctx.access(prog, "x", cwds, f"running {name}")
            ctx.mutate(f"runs the program {name}")
            if base.startswith("git-"):
                return dispatch(ctx, [Arg.lit("git"), Arg.lit(base[4:]), *argv[1:]], cwds, stdin)
            return Result(cwds)
    if name in ctx.functions:
        from .walker import call_function
        return call_function(ctx, name, cwds, stdin)
    handler = HANDLERS.get(name)
    if handler is None and name.startswith("git-") and len(name) > 4:
        return dispatch(ctx, [Arg.lit("git"), Arg.lit(name[4:]), *argv[1:]], cwds, stdin)
    if handler is None:
        base = name.split(".")[0]
        if name.startswith("python") and base[6:].replace(".", "").isdigit():
            handler = HANDLERS["python"]
        else:
            ctx.exact(f"{name} is a program the policy does not know")
            return Result(cwds)
    res = handler(Call(ctx, name, argv[1:], cwds, stdin))
    return res if res is not None else Result(cwds)
