"""Handlers for programs that name no files: shell builtins and informational commands (``set``,
``hash``, ``date``, ``echo``, ``printf``, ``pwd``, ``test``, ``read`` ...); what ``echo`` and ``printf``
print is known text for the commands it feeds."""

from __future__ import annotations

from . import envvars
from .context import Result
from .opts import lit_text, parse_opts
from .registry import Call, handles
from .winpaths import windows_reading
from .words import LIT, decode_ansi_c

# ---- programs without path operands -------------------------------------------------------
_NO_PATHS = ("true", "false", ":", "seq", "sleep", "yes", "whoami", "id", "uname", "arch", "nproc", "tty",
             "expr", "basename", "dirname", "printenv", "which", "getconf", "locale", "tput", "clear",
             "wait", "jobs", "shift", "shopt", "umask", "ulimit", "history", "break", "continue", "return",
             "exit", "let", "getopts", "cal", "df", "free", "uptime", "ps", "pgrep", "w", "who", "groups",
             "logname", "users", "dirs", "times", "caller", "help", "compgen", "bind")


@handles(*_NO_PATHS)
def _no_paths(c: Call):
    return None


@handles("type")
def _type(c: Call):
    """bash's ``type`` names commands and reads nothing; a Windows-shaped operand (``type
    C:\\Users\\u\\.ssh\\id_rsa``, ``type %USERPROFILE%\\.netrc``) is cmd.exe's ``type``, which
    prints the file: read as such (:mod:`.winpaths`)."""
    for a in c.args:
        t = lit_text(a)
        if t is not None and windows_reading(t) is not None:
            c.read(a)
    return None


@handles("set")
def _set(c: Call):
    for a in c.args:
        t = lit_text(a)
        if t in ("-a", "-o") or (t and t.startswith("-") and "a" in t[1:] and not t.startswith("--")):
            c.exact("set -a exports every later variable")
    return None


@handles("hash")
def _hash(c: Call):
    p = parse_opts(c.args, "pt")
    if p.has("-p"):
        c.exact("hash -p maps a command name to another program")
    return None


@handles("enable")
def _enable(c: Call):
    c.exact("enable loads or switches shell builtins")


@handles("date")
def _date(c: Call):
    p = parse_opts(c.args, "dfrI", {"--date", "--file", "--reference", "--set"})
    if p.has("-s", "--set"):
        c.exact("date --set changes the system clock")
    for v in p.values("-f", "--file", "-r", "--reference"):
        c.read(v)
    return None


@handles("hostname")
def _hostname(c: Call):
    if any(not (lit_text(a) or "").startswith("-") for a in c.args):
        c.exact("hostname with a name changes the system's host name")


@handles("echo")
def _echo(c: Call):
    words = []
    interpret = False
    args = list(c.args)
    while args and lit_text(args[0]) in ("-n", "-e", "-E", "-ne", "-en"):
        interpret = "e" in args.pop(0).value or interpret
    for a in args:
        if a.kind != LIT:
            return Result(c.cwds, None)
        words.append(a.value)
    text = " ".join(words)
    if interpret:
        text = decode_ansi_c(text)
    return Result(c.cwds, ("text", text + "\n"))


@handles("printf")
def _printf(c: Call):
    args = list(c.args)
    if args and lit_text(args[0]) == "-v":
        if len(args) > 1 and lit_text(args[1]):
            envvars.check_name(c.ctx, args[1].value.split("[")[0], "statement", "printf -v sets")
        args = args[2:]
    if not args or any(a.kind != LIT for a in args):
        return Result(c.cwds, None)
    fmt = decode_ansi_c(args[0].value)
    rest = [a.value for a in args[1:]]
    if "%" not in fmt:
        return Result(c.cwds, ("text", fmt))
    text = fmt
    for r in rest:
        for spec in ("%s", "%b", "%q"):
            if spec in text:
                text = text.replace(spec, r, 1)
                break
        else:
            text += " " + r
    return Result(c.cwds, ("text", text))


@handles("pwd")
def _pwd(c: Call):
    if c.cwds is not None and len(c.cwds) == 1:
        return Result(c.cwds, ("path", c.cwds[0]))
    return None


@handles("test", "[", "[[")
def _test(c: Call):
    file_ops = {"-e", "-f", "-d", "-r", "-w", "-x", "-s", "-L", "-h", "-b", "-c", "-p", "-S", "-g", "-u", "-k",
                "-O", "-G", "-N", "-a"}
    args = c.args
    for i, a in enumerate(args[:-1]):
        if lit_text(a) in file_ops:
            c.read(args[i + 1], directory=True)
    return None


@handles("read", "mapfile", "readarray")
def _read(c: Call):
    p = parse_opts(c.args, "adinNptuCcOsu")
    for a in p.operands + p.values("-a"):
        if a.kind != LIT:
            c.exact(f"{c.name} sets a variable named by a variable")
        else:
            envvars.check_name(c.ctx, a.value, "statement", f"{c.name} sets")
    return None
