"""Programs that run other programs: wrappers, ``xargs``, ``find -exec``, shells, ``eval``
(``cd`` is :mod:`.progs_cd`)."""

from __future__ import annotations

from . import envvars
from .context import Result
from .dangers import refuse_wipe
from .opts import lit_text, parse_opts
from .progs_cd import key_folder_of
from .registry import Call, dispatch, handles
from .walker import probe_text, run_text
from .words import FD, LIT, UNKNOWN, WTLIST, Arg, static_text

_SHELLS = ("bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox_sh", "fish", "tcsh", "csh")


@handles("popd")
def _popd(c: Call):
    return Result(None)


# ---- wrappers -----------------------------------------------------------------------------
def _wrapped(c: Call, rest: list[Arg]):
    if not rest:
        return None
    return c.sub(rest, c.stdin)


@handles("env")
def _env(c: Call):
    args = list(c.args)
    cwds = c.cwds
    i = 0
    while i < len(args):
        a = args[i]
        t = lit_text(a)
        if t is None:
            c.exact("env gets a word from a variable")
            res = dispatch(c.ctx, args[i:], cwds, c.stdin)
            return Result(c.cwds, res.out)
        if t in ("-i", "--ignore-environment", "-"):
            c.deny("env -i clears the git safety environment")
        elif t in ("-u", "--unset") or t.startswith("--unset=") or (t.startswith("-u") and len(t) > 2):
            name = t.split("=", 1)[1] if t.startswith("--unset=") else (t[2:] if len(t) > 2 and not t.startswith("--") else None)
            if name is None and i + 1 < len(args):
                i += 1
                name = lit_text(args[i])
            if name is None:
                c.exact("env -u gets a name from a variable")
            else:
                envvars.check_name(c.ctx, name, "unset", "env -u clears")
        elif t in ("-C", "--chdir") or t.startswith("--chdir="):
            d = Arg(LIT, t.split("=", 1)[1], False, t) if "=" in t else (args[i + 1] if i + 1 < len(args) else None)
            if "=" not in t:
                i += 1
            folder = key_folder_of(c.ctx, cwds, d) if d is not None else None
            if folder:
                c.deny(f"env -C enters {folder}: the command run there reaches the keys by relative paths")
                return None
            if d is None or d.kind != LIT:
                c.exact("env -C goes to a directory that cannot be checked")
                cwds = None
            else:
                c.ctx.access(d, "r", cwds, "env -C goes", directory=True)
                if cwds is not None:
                    cwds = tuple(c.ctx.resolve(x, d.value) for x in cwds)
                elif d.value.startswith("/"):
                    cwds = (c.ctx.realpath(d.value),)
        elif t in ("-S", "--split-string") or t.startswith("-S") and len(t) > 2:
            s = t[2:] if len(t) > 2 and not t.startswith("--") else (lit_text(args[i + 1]) if i + 1 < len(args) else None)
            rest_words = args[i + 2:] if len(t) == 2 or t.startswith("--") else args[i + 1:]
            if s is None:
                c.exact("env -S gets its command from a variable")
                return None
            text = s + "".join(" " + _quote(w) for w in rest_words if w.kind == LIT)
            return run_text(c.ctx, text, cwds, c.stdin, "env -S")
        elif t in ("-0", "--null", "-v", "--debug") or t.startswith("--default-signal") or t.startswith("--ignore-signal") or t.startswith("--block-signal"):
            pass
        elif t.startswith("-"):
            c.exact(f"env {t} is not understood")
        elif "=" in t:
            envvars.check_name(c.ctx, t.split("=", 1)[0], "prefix", "env sets", t.split("=", 1)[1], cwds)
        else:
            res = dispatch(c.ctx, args[i:], cwds, c.stdin)
            return Result(c.cwds, res.out)
        i += 1
    return None


def _quote(w: Arg) -> str:
    t = w.text or ""
    return "'" + t.replace("'", "'\\''") + "'"


def _simple_wrapper(short_value: str, long_value=(), *, skip_operands: int = 0, exact: str | None = None):
    long_value = frozenset(long_value)

    def handler(c: Call):
        p = parse_opts(c.args, short_value, long_value, stop_at_operand=True)
        if exact:
            c.exact(exact.format(name=c.name))
        rest = p.rest[skip_operands:]
        return _wrapped(c, rest)

    return handler


handles("nohup", "time", "setsid", "caffeinate", "unbuffer", "builtin", "stdbuf")(
    _simple_wrapper("ioe", {"--input", "--output", "--error"}))
handles("nice")(_simple_wrapper("n", {"--adjustment"}))
handles("ionice")(_simple_wrapper("cnp", {"--class", "--classdata", "--pid"}))
handles("timeout")(_simple_wrapper("sk", {"--signal", "--kill-after"}, skip_operands=1))
handles("sudo", "doas", "pkexec", "run0")(
    _simple_wrapper("ugpChDrtTUR", {"--user", "--group", "--prompt", "--close-from", "--host", "--chdir",
                                    "--role", "--type", "--other-user", "--command-timeout", "--chroot"},
                    exact="{name} runs a command as another user"))
handles("strace", "ltrace", "valgrind", "perf")(
    _simple_wrapper("oepsEaSIuU", {"--output", "--user"}, exact="{name} traces or debugs a process"))


@handles("command")
def _command(c: Call):
    p = parse_opts(c.args, "", set(), stop_at_operand=True)
    if p.has("-v", "-V"):
        return None
    return _wrapped(c, p.rest)


@handles("exec")
def _exec(c: Call):
    p = parse_opts(c.args, "a", set(), stop_at_operand=True)
    return _wrapped(c, p.rest)


@handles("flock")
def _flock(c: Call):
    p = parse_opts(c.args, "wEc", {"--timeout", "--conflict-exit-code", "--command"}, stop_at_operand=True)
    rest = p.rest
    if rest:
        c.write(rest[0])
        rest = rest[1:]
    for v in p.values("-c", "--command"):
        if v.kind != LIT:
            c.exact("flock -c runs a command from a variable")
        else:
            run_text(c.ctx, v.value, c.cwds, c.stdin, "flock -c")
    return _wrapped(c, rest)


@handles("watch")
def _watch(c: Call):
    p = parse_opts(c.args, "nq", {"--interval", "--differences", "--errexit-exec"}, stop_at_operand=True)
    words = p.rest
    if any(w.kind != LIT for w in words):
        # watch joins its words and runs them with sh -c: read unknown words as written.
        c.exact("watch runs a command from a variable")
        run_text(c.ctx, " ".join(w.value if w.kind == LIT else _unquote_src(w.src) for w in words), c.cwds,
                 None, "watch")
        # as watch -x would run them (each word one argument, ``~`` expanded): refused is refused
        probe_text(c.ctx, " ".join(_quote(w) if w.kind == LIT else w.src for w in words), c.cwds, "watch")
        return None
    if any(" " in w.value or "'" in w.value or "\\" in w.value for w in words):
        # watch -x runs the words as they are: what that would refuse is refused too.
        probe_text(c.ctx, " ".join(_quote(w) for w in words), c.cwds, "watch")
    return run_text(c.ctx, " ".join(w.value for w in words), c.cwds, None, "watch")


# ---- shells and eval ----------------------------------------------------------------------
@handles(*_SHELLS)
def _shell(c: Call):
    args = list(c.args)
    i = 0
    command_text = None
    while i < len(args):
        t = lit_text(args[i])
        if t is None:
            break  # the script: a process substitution, or a path from a variable (asks)
        if t == "--":
            i += 1
            break
        if t.startswith("-") and len(t) > 1 or t.startswith("+"):
            if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                if t in ("--rcfile", "--init-file") and i + 1 < len(args):
                    c.run(args[i + 1])
                i += 2
                continue
            if "c" in t[1:] and not t.startswith("--"):
                command_text = i + 1
                i += 1
                break
            i += 1
            continue
        break
    if command_text is not None:
        if command_text >= len(args):
            c.exact(f"{c.name} -c has no command")
            return None
        src = args[command_text]
        if src.kind != LIT:
            c.exact(f"{c.name} -c runs a command from a variable, substitution or file list")
            if src.data is not None:
                run_text(c.ctx, src.data[1], c.cwds, c.stdin, f"{c.name} -c")
            elif src.src and src.src[0] in "'\"":
                # find -exec sh -c 'git push {}': the text as written, with the file names unknown.
                probe_text(c.ctx, src.src[1:-1], c.cwds, f"{c.name} -c")
            return None
        return run_text(c.ctx, src.value, c.cwds, c.stdin, f"{c.name} -c")
    if i < len(args):
        return _script_file(c, args[i], c.name)
    # The shell reads its script from stdin.
    return _stdin_script(c, c.name)


#: Paths that name the shell's own stdin when given as a script.
_STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def _script_file(c: Call, script: Arg, what: str):
    """A shell runs a script file: stdin and process substitutions are read like piped text;
    any other file can hold anything (asks), and static text written to it earlier on the same
    command line is classified too (a push in it is refused)."""
    if script.kind == LIT and script.text in _STDIN_PATHS:
        return _stdin_script(c, what)
    if script.kind == FD:
        if script.data is None:
            c.exact(f"{what} runs a script from a process substitution that cannot be seen")
            return None
        return run_text(c.ctx, script.data[1], c.cwds, None, f"a script fed to {what}")
    c.run_script(script)
    return None


def _stdin_script(c: Call, what: str):
    s = c.stdin
    if s is None:
        c.exact(f"{what} reads a script from stdin that cannot be seen")
        return None
    kind = s[0]
    if kind in ("text", "dyntext"):
        if kind == "dyntext":
            c.exact(f"{what} reads a here-document with expansions")
        return run_text(c.ctx, s[1], c.cwds, None, f"a script piped into {what}")
    if kind == "path":
        c.run(s[1])
        c.mutate(f"{what} runs a script")
        return None
    c.exact(f"{what} reads a script from stdin that cannot be seen")
    return None


@handles("eval")
def _eval(c: Call):
    texts = [t for a in c.args if (t := static_text(a)) is not None]
    if len(texts) == len(c.args):
        # eval "$(echo git push)": the text is known before run time.
        return run_text(c.ctx, " ".join(texts), c.cwds, c.stdin, "eval")
    if any(a.kind != LIT for a in c.args):
        c.exact("eval runs text built from variables or substitutions")
        # Classify the text as written: its variables stay unknown words (git $x is refused).
        text = " ".join(a.value if a.kind == LIT else _unquote_src(a.src) for a in c.args)
        run_text(c.ctx, text, c.cwds, c.stdin, "eval")
        return Result(None)
    return run_text(c.ctx, " ".join(a.value for a in c.args), c.cwds, c.stdin, "eval")


def _unquote_src(src: str) -> str:
    if len(src) >= 2 and src[0] == src[-1] == '"':
        return src[1:-1]
    return src


#: Files a project sources that set up its own tools (a virtualenv's activate script).
_ACTIVATE = (".venv/bin/activate", "venv/bin/activate", ".venv/bin/activate.fish", "env/bin/activate")


@handles("source", ".")
def _source(c: Call):
    if not c.args:
        c.exact("source without a file")
        return None
    f = c.args[0]
    t = lit_text(f)
    if t is not None and t.lstrip("./").endswith(_ACTIVATE) and c.read(f) == "in" and c.ctx.cwds_inside(c.cwds):
        c.mutate("source activates the project's virtualenv")
        return Result(c.cwds)
    _script_file(c, f, c.name)
    c.mutate("source runs a script in this shell")
    return Result(None)


@handles("trap")
def _trap(c: Call):
    if c.args and c.args[0].kind == LIT and not c.args[0].value.startswith("-"):
        return Result(c.cwds, run_text(c.ctx, c.args[0].value, c.cwds, None, "trap").out)
    if c.args and c.args[0].kind != LIT:
        c.exact("trap runs a command from a variable")
    return None


@handles("alias")
def _alias(c: Call):
    for a in c.args:
        if a.kind != LIT:
            c.exact("alias gets its value from a variable")
        elif "=" in a.value:
            name, _, value = a.value.partition("=")
            c.ctx.aliases[name] = value
            run_text(c.ctx, value, c.cwds, None, "an alias")
    return None


# ---- xargs --------------------------------------------------------------------------------
@handles("xargs")
def _xargs(c: Call):
    p = parse_opts(c.args, "adEILnPs", {"--arg-file", "--delimiter", "--eof", "--replace", "--max-lines",
                                             "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
                   stop_at_operand=True)
    files = p.values("-a", "--arg-file")
    for file in files:
        c.read(file)
    src = c.stdin
    if files:
        item = Arg(UNKNOWN, None, False, "xargs input")
    elif src is not None and src[0] == "wtlist":
        item = Arg(WTLIST, None, False, "xargs input")
    else:
        item = Arg(UNKNOWN, None, False, "xargs input")
    cmd = p.rest or [Arg.lit("echo")]
    if lit_text(cmd[0]) in _SHELLS:
        c.exact("xargs runs a shell on its input")
    replace = None
    for f, v in p.opts:
        if f in ("-I", "--replace"):
            replace = lit_text(v) or "{}"
        elif f == "-i":
            replace = "{}"
    if replace:
        argv = [cmd[0]] + [item if (a.kind == LIT and replace in a.value) else a for a in cmd[1:]]
    else:
        argv = list(cmd) + [item]
    before = c.ctx.writes
    c.sub(argv, None)
    if c.ctx.writes > before:
        c.exact("xargs runs a command that changes the files it reads from its input")
    return None


# ---- find ---------------------------------------------------------------------------------
_FIND_VALUE = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type",
               "-xtype", "-size", "-perm", "-user", "-group", "-uid", "-gid", "-mtime", "-mmin", "-atime", "-amin",
               "-ctime", "-cmin", "-maxdepth", "-mindepth", "-newer", "-anewer", "-cnewer", "-samefile",
               "-links", "-inum", "-printf", "-fstype", "-context", "-lname", "-ilname", "-used", "-regextype",
               "-newermt", "-newerct", "-newerat", "-files0-from"}
_FIND_WRITE = {"-fprint", "-fprint0", "-fls", "-fprintf"}
_FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}


@handles("find")
def _find(c: Call):
    args = list(c.args)
    follow = False
    i = 0
    while i < len(args) and lit_text(args[i]) in ("-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3", "-D"):
        follow = follow or args[i].text in ("-L", "-H")
        i += 2 if args[i].text == "-D" else 1
    starts = []
    while i < len(args):
        t = lit_text(args[i])
        if t is not None and (t.startswith("-") or t in ("(", "!", ")", ",")):
            break
        starts.append(args[i])
        i += 1
    if not starts:
        starts = [Arg(LIT, ".", False, ".")]
    delete = False
    wheres = []
    expr = args[i:]
    for a in starts:
        wheres.append(c.read(a, tree=True))
    all_inside = all(w == "in" for w in wheres) and not follow
    found = Arg(WTLIST if all_inside else UNKNOWN, None, False, "{}")
    j = 0
    while j < len(expr):
        t = lit_text(expr[j])
        if t in _FIND_EXEC:
            k = j + 1
            cmd = []
            while k < len(expr) and lit_text(expr[k]) not in (";", "+"):
                a = expr[k]
                if a.kind == LIT and a.text == "{}":
                    cmd.append(found)
                elif a.kind == LIT and "{}" in a.value:
                    cmd.append(Arg(found.kind, None, False, a.src))  # a file name inside a word
                else:
                    cmd.append(a)
                k += 1
            if k >= len(expr):
                c.exact("find -exec is not terminated")
            if cmd and lit_text(cmd[0]) in _SHELLS + ("env", "xargs", "eval"):
                c.exact(f"find {t} runs a shell on the files it finds")
            if cmd:
                before = c.ctx.writes
                if t in ("-execdir", "-okdir"):
                    cmd = [found if a is found else a for a in cmd]
                c.sub(cmd, None)
                if c.ctx.writes > before:
                    c.exact("find -exec runs a command that changes the files it finds")
            j = k + 1
            continue
        if t == "-delete":
            delete = True
        elif t in _FIND_WRITE and j + 1 < len(expr):
            c.write(expr[j + 1])
            j += 2
            continue
        elif t in ("-follow",):
            follow = True
        elif t in _FIND_VALUE:
            if t in ("-newer", "-anewer", "-cnewer", "-samefile", "-files0-from") and j + 1 < len(expr):
                c.read(expr[j + 1])
            j += 2
            continue
        j += 1
    if delete:
        inside = False
        for a in starts:
            if refuse_wipe(c.ctx, a, c.cwds, "find -delete"):
                continue
            if c.write(a, tree=True) == "in":
                inside = True
        if inside:
            c.action("find -delete", "find -delete deletes files in a directory tree")
    if all_inside and not follow:
        return Result(c.cwds, ("wtlist",))
    return None
