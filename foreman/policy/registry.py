"""Program handlers and the dispatch from a command's words to its handler.

A handler receives a :class:`Call` (the expanded words, working directories and stdin) and
records what the program needs through the call's helpers. It returns a :class:`Result` when
the program moves the working directory or has a known output, else None.
"""

from __future__ import annotations

import posixpath
from typing import Callable

from .context import Ctx, Cwds, Result
from .words import FD, LIT, Arg, static_text

#: Scripts and tools a project keeps in its worktree that are run like the tool they stand for
#: (the same rule as ``npm test``): build wrappers, and tools installed into the worktree.
ENTRY_WRAPPERS = {"gradlew": "gradle", "mvnw": "mvn", "manage.py": "manage.py"}
_TOOL_DIRS = ("/node_modules/.bin", "/.venv/bin", "/venv/bin")
_VENV_DIRS = ("/.venv/bin", "/venv/bin")
#: Where a virtualenv's interpreter links may lead (the system's Python), never a home or temp dir.
_SYSTEM_PREFIXES = ("/usr/", "/bin/", "/sbin/", "/lib/", "/opt/", "/nix/store/")
_IFS = ("${IFS}", "$IFS", "${IFS:0:1}", "${IFS::1}", "$'\\t'", "$'\\n'")

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

    def run_script(self, arg: Arg, lang: str = "shell") -> str:
        """A script file this program runs: the file can hold anything, so the exact command asks.

        Static text written to that file earlier on the same command line is classified too
        (a ``git push`` in it is refused): shell text as commands, other languages through
        the strings in their code.
        """
        where = self.run(arg)
        if arg.kind == FD:
            if arg.data is not None:
                self.probe_script(arg.data[1], lang, f"{self.name} runs a process substitution")
            else:
                self.exact(f"{self.name} runs a script from a process substitution that cannot be seen")
            return where
        if where in ("in", "tmp", "dev", "gitlink"):
            # (a file outside asks for its directory's key already)
            self.exact(f"{self.name} runs the file {arg.src or arg.text}, which can hold anything")
        self.mutate(f"{self.name} runs a script")
        for text in self.ctx.written_texts(arg, self.cwds):
            self.probe_script(text, lang, "a script written earlier in the command")
        return where

    def probe_script(self, text: str, lang: str, what: str) -> None:
        """Refuse the command if static script text (shell, or strings of other code) pushes."""
        from .walker import probe_text  # (walker imports this module: the shell's grammar nests)
        if lang == "shell":
            probe_text(self.ctx, text, self.cwds, what)
        else:
            from .progs_dev import probe_strings  # (progs_dev registers its handlers through this module)
            probe_strings(self, text, what)

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

    def project(self, reason: str) -> None:
        """Note that the program runs the project's code (tests, builds, installs): from a
        working directory outside the worktree that is another project, so the exact command
        asks (a key for reading that directory does not cover running its code)."""
        self.ctx.mutate(reason)
        if not self.ctx.cwds_inside(self.cwds):
            self.exact(f"{reason} in a directory outside the worktree")

    def sub(self, argv: list[Arg], stdin=None) -> Result:
        """Classify another command this one runs (wrappers, ``-exec``, ``xargs``)."""
        return dispatch(self.ctx, argv, self.cwds, stdin)


def dispatch(ctx: Ctx, argv: list[Arg], cwds: Cwds, stdin) -> Result:
    """Classify the command ``argv`` (program first) and return the state after it."""
    if not argv:
        return Result(cwds)
    prog = argv[0]
    if prog.kind != LIT or prog.glob:
        _disguised(ctx, argv, cwds)
        ctx.exact("the program name comes from a variable or substitution")
        return Result(cwds)
    name = prog.value
    if "/" in name:
        directory, base = posixpath.split(name)
        if directory in SYSTEM_BIN and base:
            name = base
        else:
            tool = _entry_point(ctx, name, cwds)
            if tool is not None:
                if tool == "manage.py":
                    return dispatch(ctx, [Arg.lit("python"), prog, *argv[1:]], cwds, stdin)
                if tool in HANDLERS:
                    return HANDLERS[tool](Call(ctx, tool, argv[1:], cwds, stdin)) or Result(cwds)
                ctx.mutate(f"runs the project's tool {name}")
                return Result(cwds)
            Call(ctx, name, argv[1:], cwds, stdin).run_script(prog)
            if base.startswith("git-"):
                return dispatch(ctx, [Arg.lit("git"), Arg.lit(base[4:]), *argv[1:]], cwds, stdin)
            if base in HANDLERS:
                # A copy of a known program (./git, /tmp/x/git): what that program would refuse
                # (a push) is refused here too.
                from .walker import probe_text  # (walker imports this module: the shell's grammar nests)
                words = [base] + ["'" + a.value.replace("'", "'\\''") + "'" if a.kind == LIT else '"$x"'
                                  for a in argv[1:]]
                probe_text(ctx, " ".join(words), cwds, f"the program {name}")
            return Result(cwds)
    if name in ctx.aliases:
        # An alias defined earlier on the line (bash expands them only when expand_aliases is
        # on): what the expansion would refuse is refused.
        from .walker import probe_text  # (walker imports this module: the shell's grammar nests)
        rest = " ".join("'" + a.value.replace("'", "'\\''") + "'" if a.kind == LIT else '"$x"' for a in argv[1:])
        probe_text(ctx, ctx.aliases[name] + " " + rest, cwds, f"the alias {name}")
    if name in ctx.functions:
        from .walker import call_function  # (walker imports this module: the shell's grammar nests)
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


def _entry_point(ctx: Ctx, path: str, cwds: Cwds) -> str | None:
    """The tool a path in the worktree stands for (``./gradlew`` -> gradle), or None.

    Only wrappers in :data:`ENTRY_WRAPPERS` and tools in the worktree's ``node_modules/.bin``
    or virtualenv ``bin`` count, and only when the path and what it resolves to stay inside the
    worktree (a virtualenv's ``python`` may link to the system's interpreter); any other program
    named by a path asks.
    """
    if cwds is None:
        return None
    found = set()
    for cwd in cwds:
        lex = posixpath.normpath(path if path.startswith("/") else posixpath.join(cwd, path))
        if not ctx.inside(lex):
            return None
        directory, base = posixpath.split(lex)
        real = ctx.realpath(lex)
        if not ctx.inside(real) and not (directory.endswith(_VENV_DIRS) and real.startswith(_SYSTEM_PREFIXES)):
            return None
        if base in ENTRY_WRAPPERS:
            found.add(ENTRY_WRAPPERS[base])
        elif directory.endswith(_TOOL_DIRS) and base:
            found.add(base)
        else:
            return None
    return found.pop() if len(found) == 1 else None


def _disguised(ctx: Ctx, argv: list[Arg], cwds: Cwds) -> None:
    """Refuse a push spelled through a program word the shell builds at run time.

    ``$(echo git) push``, ``"$(git --exec-path)"/git-push``, ``git${IFS}push``, ``$"git" push``:
    a known substitution output is classified as the command it spells; otherwise the source
    text is read without the shell's meaning (errs on the side of refusing).
    """
    from .walker import _push_in, probe_text  # (walker imports this module: the shell's grammar nests)
    if any(a.kind == LIT and a.text in ("push", "send-pack") for a in argv[1:]):
        ctx.deny("a program named by a variable or substitution is given 'push'")
        return
    prog = argv[0]
    prog_text = static_text(prog)  # (not None when it has data: the known output of a substitution)
    if prog.data is not None and prog_text is not None:
        rest = " ".join("'" + a.value.replace("'", "'\\''") + "'" if a.kind == LIT else static_text(a) or '"$x"'
                        for a in argv[1:])
        probe_text(ctx, prog_text + " " + rest, cwds, "a program name built by a substitution")
    text = " ".join(a.src for a in argv)
    for ifs in _IFS:
        text = text.replace(ifs, " ")
    words = [w.strip("'\"$") for w in text.replace("'", " ").replace('"', " ").split()]
    name = prog.src.replace("'", "").replace('"', "").rstrip("/").rsplit("/", 1)[-1]
    if _push_in(words) or name in ("git-push", "git-send-pack", "git-receive-pack"):
        ctx.deny("a program name built at run time spells git push")
