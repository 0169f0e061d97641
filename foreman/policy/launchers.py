"""Programs that run the command given as their arguments: schedulers (``taskset``, ``chrt``,
``at``), recorders and debuggers (``script``, ``gdb``), other users and namespaces (``su``,
``unshare``, ``nsenter``, ``chroot``, ``systemd-run``), ``parallel``, ``busybox`` and ``coproc``.
The inner command is classified like one typed directly (a push in it is refused)."""

from __future__ import annotations

from .opts import lit_text, parse_opts
from .registry import Call, dispatch, handles
from .walker import probe_text, run_text
from .words import LIT, UNKNOWN, Arg
from .wrappers import _quote, _stdin_script, _wrapped


# ---- more programs that run a command -----------------------------------------------------
def _after_options(c: Call, args: list[Arg], short_value: str, long_value=(), *, operands: int = 0):
    """The command a wrapper runs: the words after its options and ``operands`` leading operands.

    Returns None (after asking) when an option word is not a literal.
    """
    p = parse_opts(args, short_value, frozenset(long_value), stop_at_operand=True)
    if any(v is not None and v.kind != LIT for _, v in p.opts):
        c.exact(f"{c.name} gets an option from a variable")
    return p, p.rest[operands:]


@handles("taskset")
def _taskset(c: Call):
    p, rest = _after_options(c, c.args, "", operands=1)
    if p.has("-p", "--pid", "-a", "--all-tasks"):
        c.exact("taskset -p changes a running process")
        return None
    return _wrapped(c, rest)


@handles("chrt")
def _chrt(c: Call):
    p, rest = _after_options(c, c.args, "TPD", {"--sched-runtime", "--sched-period", "--sched-deadline"}, operands=1)
    c.exact("chrt changes how the system schedules a process")
    if p.has("-p", "--pid"):
        return None
    return _wrapped(c, rest)


@handles("script")
def _script(c: Call):
    p = parse_opts(c.args, "cEIOTBmo", {"--command", "--echo", "--log-in", "--log-out", "--log-timing",
                                        "--log-io", "--logging-format", "--output-limit"})
    for v in p.values("-I", "-O", "-T", "-B", "--log-in", "--log-out", "--log-timing", "--log-io"):
        c.write(v)
    for a in p.operands or [Arg.lit("typescript")]:
        c.write(a)
    cmds = p.values("-c", "--command")
    if not cmds:
        c.exact("script starts an interactive shell")
        return None
    for v in cmds:
        if v.kind != LIT:
            c.exact("script -c runs a command from a variable")
        else:
            run_text(c.ctx, v.value, c.cwds, c.stdin, "script -c")
    return None


_GDB_SHELL = ("shell ", "!", "pipe ", "| ")


@handles("gdb", "cgdb", "lldb")
def _gdb(c: Call):
    c.exact(f"{c.name} debugs a process and can run any command")
    args = list(c.args)
    for i, a in enumerate(args):
        t = lit_text(a)
        if t == "--args" or (c.name == "lldb" and t == "--"):
            c.sub(args[i + 1:], None)
            break
        if t in ("-ex", "--ex", "-iex", "--iex", "-eval-command", "--eval-command", "-o", "-O") and i + 1 < len(args):
            cmd = lit_text(args[i + 1])
            if cmd is None:
                continue
            for prefix in _GDB_SHELL:
                if cmd.startswith(prefix):
                    run_text(c.ctx, cmd[len(prefix):], c.cwds, None, f"{c.name} {t}")
        elif t in ("-x", "--command", "-s", "-source") and i + 1 < len(args):
            c.run_script(args[i + 1], "gdb")
    return None


@handles("su")
def _su(c: Call):
    c.exact("su runs a command as another user")
    p = parse_opts(c.args, "cgGsw", {"--command", "--session-command", "--group", "--supp-group", "--shell",
                                    "--whitelist-environment"})
    login = p.has("-l", "--login") or any(lit_text(a) == "-" for a in c.args)
    for v in p.values("-c", "--command", "--session-command"):
        if v.kind == LIT:
            run_text(c.ctx, v.value, None if login else c.cwds, c.stdin, "su -c")
    return None


@handles("parallel", "sem")
def _parallel(c: Call):
    """GNU parallel: the command template runs (through a shell) once per argument."""
    c.exact(f"{c.name} runs commands in parallel (and can run them on other hosts)")
    p = parse_opts(c.args, "ajJSXdEIjkmnNPsv", {"--arg-file", "--jobs", "--sshlogin", "--colsep", "--delimiter",
                                               "--eof", "--replace", "--max-args", "--max-chars", "--basefile",
                                               "--workdir", "--tmpdir", "--results", "--joblog", "--shebang",
                                               "--tag-string", "--timeout", "--retries"}, stop_at_operand=True)
    words = list(p.rest)
    seps = [i for i, w in enumerate(words) if lit_text(w) in (":::", "::::", ":::+", "::::+")]
    template = words[:seps[0]] if seps else words
    values: list[Arg] = []
    if seps:
        end = seps[1] if len(seps) > 1 else len(words)
        values = words[seps[0] + 1:end][:8]
    if not template:
        template = [Arg(UNKNOWN, None, False, "parallel input")]
    base = " ".join(w.value if w.kind == LIT else '"$PARALLEL_INPUT"' for w in template)
    probe_text(c.ctx, base.replace("{}", '"$PARALLEL_INPUT"'), c.cwds, c.name)
    for v in values or [Arg(UNKNOWN, None, False, "parallel input")]:
        item = _quote(v) if v.kind == LIT else '"$PARALLEL_INPUT"'
        text = base.replace("{}", item) if "{}" in base else base + " " + item
        run_text(c.ctx, text, c.cwds, None, c.name)
    return None


@handles("at", "batch")
def _at(c: Call):
    p = parse_opts(c.args, "fqtM", {"--file"})
    if p.has("-l", "-r", "-d", "-c"):
        c.exact(f"{c.name} lists or changes scheduled jobs")
        return None
    c.exact(f"{c.name} schedules commands to run later, outside this session")
    files = p.values("-f", "--file")
    for f in files:
        c.run_script(f)
    if not files:
        _stdin_script(c, c.name)
    return None


@handles("systemd-run")
def _systemd_run(c: Call):
    c.exact("systemd-run starts a command as a system or user service")
    _, rest = _after_options(c, c.args, "pEMHu", {"--property", "--setenv", "--machine", "--host", "--unit",
                                                  "--description", "--slice", "--uid", "--gid", "--nice",
                                                  "--working-directory", "--on-active", "--on-boot",
                                                  "--on-startup", "--on-unit-active", "--on-unit-inactive",
                                                  "--on-calendar", "--timer-property", "--path-property",
                                                  "--socket-property", "--service-type", "--expand-environment"})
    return _wrapped(c, rest)


@handles("busybox", "toybox")
def _busybox(c: Call):
    if not c.args or (lit_text(c.args[0]) or "").startswith("-"):
        return None
    return c.sub(list(c.args), c.stdin)


@handles("unshare", "nsenter")
def _namespaces(c: Call):
    c.exact(f"{c.name} runs a command in other namespaces (other users, mounts or network)")
    _, rest = _after_options(c, c.args, "tSGRwelp" if c.name == "nsenter" else "SGRwl",
                             {"--target", "--setuid", "--setgid", "--root", "--wd", "--propagation", "--setgroups",
                              "--map-user", "--map-group", "--map-users", "--map-groups", "--env"})
    return _wrapped(c, rest)


@handles("chroot")
def _chroot(c: Call):
    c.exact("chroot runs a command under another root directory")
    _, rest = _after_options(c, c.args, "", {"--userspec", "--groups"}, operands=1)
    if rest:
        # Paths inside are relative to the new root: only what is refused is taken from them.
        dispatch(c.ctx, rest, None, c.stdin)
        # and as if nothing moved (the new root may be this one): a refusal there stands too, so a
        # wrapper never lowers a verdict (`chroot / rm -rf link/` refused like `rm -rf link/`)
        dispatch(c.ctx, rest, c.cwds, c.stdin)
    return None


@handles("coproc")
def _coproc(c: Call):
    """``coproc [NAME] command``: bash runs the command in the background."""
    words = list(c.args)
    for i, w in enumerate(words[:2]):
        if lit_text(w) in ("{", "("):
            inner = [x.value if x.kind == LIT else x.src for x in words[i + 1:]]
            c.exact("coproc runs a compound command")
            run_text(c.ctx, " ".join(inner).rstrip("})"), c.cwds, None, "coproc")
            return None
    return _wrapped(c, words)
