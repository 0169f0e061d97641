"""Handlers for programs that read, list, search and change files (coreutils and friends)."""

from __future__ import annotations

import posixpath

from .context import Result, git_entry_name
from .dangers import refuse_wipe
from .opts import lit_text, parse_opts
from .registry import Call, handles
from .walker import probe_text
from .winpaths import windows_reading
from .words import LIT, WTLIST, Arg

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
        from .words import decode_ansi_c
        text = decode_ansi_c(text)
    return Result(c.cwds, ("text", text + "\n"))


@handles("printf")
def _printf(c: Call):
    args = list(c.args)
    if args and lit_text(args[0]) == "-v":
        from . import envvars
        if len(args) > 1 and lit_text(args[1]):
            envvars.check_name(c.ctx, args[1].value.split("[")[0], "statement", "printf -v sets")
        args = args[2:]
    if not args or any(a.kind != LIT for a in args):
        return Result(c.cwds, None)
    from .words import decode_ansi_c
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
    from . import envvars
    p = parse_opts(c.args, "adinNptuCcOsu")
    for a in p.operands + p.values("-a"):
        if a.kind != LIT:
            c.exact(f"{c.name} sets a variable named by a variable")
        else:
            envvars.check_name(c.ctx, a.value, "statement", f"{c.name} sets")
    return None


# ---- readers ------------------------------------------------------------------------------
def _reader(short_value: str = "", long_value=(), *, tree_flags=(), always_tree=False, directory=False,
            default_cwd=False, skip_first=False, output_opts=(), exact_opts=(), out_wtlist=False):
    long_value = frozenset(long_value)

    def handler(c: Call):
        p = parse_opts(c.args, short_value, long_value)
        for f, v in p.opts:
            if f in exact_opts:
                c.exact(f"{c.name} {f} makes it run another program")
            elif f in output_opts and v is not None:
                c.write(v)
        operands = p.operands[1:] if skip_first else p.operands
        if not operands and c.name in ("cat", "tac") and c.stdin is not None and c.stdin[0] in ("text", "dyntext"):
            return Result(c.cwds, c.stdin)
        tree = always_tree or p.has(*tree_flags)
        if not operands and default_cwd:
            operands = [Arg(LIT, ".", False, ".")]
        where = "in"
        for a in operands:
            w = c.read(a, tree=tree, directory=directory)
            if w != "in":
                where = w
        if out_wtlist and where == "in" and operands and all(a.kind in (LIT, WTLIST) for a in operands):
            return Result(c.cwds, ("wtlist",))
        return None

    return handler


for _n in ("cat", "tac", "nl", "strings", "file", "stat", "md5sum", "sha1sum", "sha224sum", "sha256sum",
           "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "base32", "paste", "comm", "cmp",
           "fold", "fmt", "expand", "unexpand", "rev", "pr", "zcat", "bzcat", "xzcat", "less", "more",
           "readlink", "realpath", "lsattr", "getfacl", "wc", "tsort", "look", "zless", "zmore"):
    handles(_n)(_reader("wsW", {"--width", "--files0-from", "--format", "--printf", "--pages",
                                "--skip-bytes", "--bytes", "--ignore-initial"}))
handles("base64")(_reader("w", {"--wrap"}))
handles("head", "tail")(_reader("ncs", {"--lines", "--bytes", "--sleep-interval", "--pid", "--max-unchanged-stats"}))
handles("cut")(_reader("bcdf", {"--bytes", "--characters", "--delimiter", "--fields", "--output-delimiter"}))
handles("join")(_reader("aejot12", {"--check-order"}))
handles("column")(_reader("csotNRlHEWdC", {"--separator", "--output-separator", "--table-columns"}))
handles("od")(_reader("AjNtw", {"--address-radix", "--skip-bytes", "--read-bytes", "--format", "--width"}))
handles("hexdump")(_reader("esnv", {"--format", "--length", "--skip"}))
handles("iconv")(_reader("fto", {"--from-code", "--to-code", "--output"}, output_opts=("-o", "--output")))
handles("ls", "dir", "vdir")(_reader("IwTL", {"--ignore", "--hide", "--width", "--tabsize", "--format",
                                             "--sort", "--time", "--time-style", "--block-size", "--quoting-style"},
                                     tree_flags=("-R", "--recursive"), directory=True, default_cwd=True))
handles("du")(_reader("dBtX", {"--max-depth", "--exclude", "--block-size", "--threshold", "--exclude-from", "--time-style"},
                      always_tree=True, default_cwd=True))
handles("tree")(_reader("LIPo", {"--filelimit", "--charset", "--sort", "--timefmt"}, always_tree=True,
                        default_cwd=True, output_opts=("-o",)))
handles("diff")(_reader("CUFIXxL", {"--context", "--unified", "--label", "--exclude", "--exclude-from",
                                    "--ignore-matching-lines", "--show-function-line", "--to-file",
                                    "--from-file", "--width", "--line-format", "--tabsize", "--palette"},
                        tree_flags=("-r", "--recursive", "-N")))
handles("jq", "yq", "gojq")(_reader("fL", {"--arg", "--argjson", "--indent", "--tab", "--from-file"}, skip_first=True))
handles("tr")(lambda c: None)


@handles("uniq", "xxd")
def _in_out(c: Call):
    p = parse_opts(c.args, "fswcglos" if c.name == "xxd" else "fsw",
                   {"--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"})
    if p.operands:
        c.read(p.operands[0])
    for a in p.operands[1:2]:
        c.write(a)
    return None


@handles("shuf")
def _shuf(c: Call):
    p = parse_opts(c.args, "nioe", {"--head-count", "--input-range", "--output", "--random-source"})
    for v in p.values("-o", "--output"):
        c.write(v)
    for v in p.values("--random-source"):
        c.read(v)
    if not p.has("-e", "--echo", "-i", "--input-range"):
        for a in p.operands:
            c.read(a)
    return None


@handles("sort")
def _sort(c: Call):
    p = parse_opts(c.args, "ktoTSz", {"--key", "--field-separator", "--output", "--temporary-directory",
                                      "--buffer-size", "--parallel", "--compress-program", "--files0-from",
                                      "--random-source", "--batch-size"})
    if p.has("--compress-program"):
        c.exact("sort --compress-program runs another program")
    for v in p.values("-o", "--output"):
        c.write(v)
    for v in p.values("-T", "--temporary-directory"):
        c.write(v, tree=True)
    for v in p.values("--files0-from", "--random-source"):
        c.read(v)
    for a in p.operands:
        c.read(a)
    return None


# ---- search -------------------------------------------------------------------------------
@handles("grep", "egrep", "fgrep", "zgrep")
def _grep(c: Call):
    p = parse_opts(c.args, "efmABCdD", {"--regexp", "--file", "--max-count", "--after-context",
                                         "--before-context", "--context", "--include", "--exclude",
                                         "--exclude-dir", "--exclude-from", "--label", "--color", "--colour",
                                         "--binary-files", "--devices", "--directories", "--group-separator"})
    operands = p.operands
    if not p.has("-e", "--regexp", "-f", "--file") and operands:
        operands = operands[1:]
    for v in p.values("-f", "--file", "--exclude-from"):
        c.read(v)
    tree = p.has("-r", "-R", "--recursive", "--dereference-recursive") or \
        any(lit_text(v) == "recurse" for v in p.values("-d", "--directories"))
    if tree and not operands:
        operands = [Arg(LIT, ".", False, ".")]
    where = "in"
    for a in operands:
        w = c.read(a, tree=tree)
        where = w if w != "in" else where
    if operands and where == "in" and p.has("-l", "--files-with-matches", "-L", "--files-without-match"):
        return Result(c.cwds, ("wtlist",))
    return None


@handles("rg", "ag", "ack", "ack-grep")
def _rg(c: Call):
    p = parse_opts(c.args, "efgtTmABCjMEr", {"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not",
                                             "--max-count", "--after-context", "--before-context", "--context",
                                             "--threads", "--max-columns", "--encoding", "--replace", "--pre",
                                             "--pre-glob", "--ignore-file", "--type-add", "--type-clear",
                                             "--sort", "--sortr", "--max-depth", "--max-filesize", "--color",
                                             "--colors", "--path-separator", "--hostname-bin", "--engine",
                                             "--field-match-separator", "--field-context-separator",
                                             "--context-separator", "--dfa-size-limit", "--regex-size-limit"})
    if p.has("--pre", "--hostname-bin"):
        c.exact(f"{c.name} --pre runs another program on every file")
    for v in p.values("-f", "--file", "--ignore-file"):
        c.read(v)
    operands = p.operands
    if not p.has("-e", "--regexp", "-f", "--file", "--files", "--type-list") and operands:
        operands = operands[1:]
    if not operands:
        operands = [Arg(LIT, ".", False, ".")]
    where = "in"
    for a in operands:
        w = c.read(a, tree=True)
        where = w if w != "in" else where
    if where == "in" and p.has("-l", "--files-with-matches", "--files"):
        return Result(c.cwds, ("wtlist",))
    return None


# ---- writers ------------------------------------------------------------------------------
def _writer(short_value: str = "", long_value=(), *, skip_first=False, tree_flags=(), reads=(), action=None,
            tree_action=None):
    """A program that writes its operands. ``action``: a key (``shred``) it always asks for when
    it writes inside the worktree; ``tree_action``: a key (``chmod -R``) for a recursive change."""
    long_value = frozenset(long_value)

    def handler(c: Call):
        p = parse_opts(c.args, short_value, long_value)
        for v in p.values(*reads):
            c.read(v)
        tree = p.has(*tree_flags)
        inside = False
        for a in p.operands[1:] if skip_first else p.operands:
            inside |= c.write(a, tree=tree) in ("in", "unknown")
        if inside and action:
            c.action(action, f"{c.name} destroys file contents beyond recovery")
        if inside and tree and tree_action:
            c.action(tree_action, f"{c.name} {tree_flags[0]} changes a whole directory tree")
        return None

    return handler


handles("touch")(_writer("dtr", {"--date", "--reference", "--time"}, reads=("-r", "--reference")))
handles("mkdir")(_writer("m", {"--mode", "--context"}))
handles("rmdir", "unlink")(_writer())
handles("shred")(_writer("ns", {"--iterations", "--size", "--remove", "--random-source"}, action="shred"))
handles("truncate")(_writer("sr", {"--size", "--reference"}, reads=("-r", "--reference")))
handles("chmod")(_writer("", {"--reference"}, skip_first=True, tree_flags=("-R", "--recursive"), tree_action="chmod -R"))
handles("chown")(_writer("", {"--reference", "--from"}, skip_first=True, tree_flags=("-R", "--recursive"),
                         tree_action="chown -R"))
handles("chgrp")(_writer("", {"--reference", "--from"}, skip_first=True, tree_flags=("-R", "--recursive"),
                         tree_action="chgrp -R"))
handles("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "lz4")(
    _writer("bS", {"--suffix", "--block-size"}, tree_flags=("-r", "--recursive")))
handles("sponge")(_writer())


@handles("tee")
def _tee(c: Call):
    p = parse_opts(c.args, "", {"--output-error"})
    for a in p.operands:
        c.write(a)
        c.ctx.record_written(a, c.cwds, c.stdin)
    return Result(c.cwds, c.stdin if c.stdin is not None and c.stdin[0] in ("text", "dyntext") else None)


@handles("rm")
def _rm(c: Call):
    p = parse_opts(c.args, "", {"--interactive"})
    recursive = p.has("-r", "-R", "--recursive")
    inside = False
    for a in p.operands:
        if recursive and refuse_wipe(c.ctx, a, c.cwds, "rm -r"):
            continue
        if c.write(a, tree=recursive, delete=True) in ("in",):
            inside = True
    if recursive and inside:
        c.action("rm -r", "rm -r deletes a directory tree")
    return None


def _git_entry_into(c: Call, src: Arg, targets: list[Arg]) -> None:
    """A source named ``.git`` copied, moved or linked into a folder lands as ``<folder>/.git``:
    that write is checked too (a ``.git`` below the worktree's top asks, see :meth:`Ctx._check`).
    The worktree's own link renamed (``mv .git git.bak``) asks for that link alone."""
    name = lit_text(src)
    base = posixpath.basename(name.rstrip("/")) if name else ""
    if not name or not git_entry_name(base):
        return
    if c.cwds is not None and any(c.ctx.resolve(cwd, name) == c.ctx.gitlink for cwd in c.cwds):
        return
    for t in targets:
        folder = lit_text(t)
        if folder is not None:
            c.write(Arg(LIT, f"{folder.rstrip('/') or '/'}/{base}", False, t.src))


@handles("cp", "mv", "install", "ln")
def _copy(c: Call):
    p = parse_opts(c.args, "tSmogTb" if c.name == "install" else "tSb",
                   {"--target-directory", "--suffix", "--backup", "--mode", "--owner", "--group",
                    "--reflink", "--sparse", "--preserve", "--no-preserve", "--context"})
    recursive = c.name == "mv" or p.has("-r", "-R", "-a", "--recursive", "--archive")
    targets = p.values("-t", "--target-directory")
    ops = list(p.operands)
    if c.name == "install" and p.has("-d", "--directory"):
        for a in ops:
            c.write(a)
        return None
    if not targets and ops:
        if len(ops) == 1 and c.name == "ln":
            targets = [Arg(LIT, ".", False, ".")]
        else:
            targets = [ops.pop()]
    for t in targets:
        c.write(t, tree=recursive and c.name not in ("ln", "mv"))
    for src in ops:
        _git_entry_into(c, src, targets)
        if c.name == "mv":
            c.write(src, tree=True, delete=True)
        elif c.name == "ln":
            if p.has("-s", "--symbolic") and src.kind == LIT and not src.value.startswith("/"):
                # A relative link target is resolved from the link's directory.
                base = lit_text(targets[0]) if targets else "."
                if base and not base.endswith("/") and len(targets) == 1 and len(ops) == 1:
                    base = base.rsplit("/", 1)[0] if "/" in base else "."
                if base is None:
                    c.exact("ln makes a link whose target cannot be checked")
                    continue
                src = Arg(LIT, f"{base.rstrip('/') or '/'}/{src.text}", src.glob, src.src)
            if p.has("-s", "--symbolic"):
                c.read(src)
            else:
                c.write(src)  # a hard link shares the file: writes through it change the original
        else:
            c.read(src, tree=recursive)
    return None


@handles("dd")
def _dd(c: Call):
    for a in c.args:
        t = lit_text(a)
        if t is None:
            c.exact("dd gets an operand from a variable")
            continue
        key, eq, val = t.partition("=")
        if key == "if" and eq:
            c.read(Arg(LIT, val, a.glob, a.src))
        elif key == "of" and eq:
            c.write(Arg(LIT, val, a.glob, a.src))
    return None


@handles("split", "csplit")
def _split(c: Call):
    p = parse_opts(c.args, "abCdlnLtf", {"--suffix-length", "--bytes", "--line-bytes", "--lines", "--number",
                                         "--additional-suffix", "--prefix", "--separator", "--filter"})
    if p.has("--filter"):
        c.exact("split --filter runs a shell command")
    if p.operands:
        c.read(p.operands[0])
    prefix = p.values("-f", "--prefix") or p.operands[1:2] or [Arg(LIT, "x", False, "x")]
    for a in prefix:
        c.write(a)
    return None


@handles("patch")
def _patch(c: Call):
    p = parse_opts(c.args, "ipdDoBrVYzFgx", {"--input", "--strip", "--directory", "--output", "--reject-file",
                                              "--prefix", "--suffix", "--backup-if-mismatch", "--quoting-style"})
    for v in p.values("-i", "--input"):
        c.read(v)
    for v in p.values("-o", "--output", "-r", "--reject-file"):
        c.write(v)
    for v in p.values("-d", "--directory"):
        c.write(v, tree=True)
    for a in p.operands:
        c.write(a)
    if not p.operands:
        c.write(Arg(LIT, ".", False, "."), tree=True)
    return None


@handles("mktemp")
def _mktemp(c: Call):
    p = parse_opts(c.args, "p", {"--tmpdir", "--suffix"})
    for v in p.values("-p", "--tmpdir"):
        c.write(v)
    if p.has("-t") or p.has("--tmpdir") and not p.values("--tmpdir"):
        return None
    for a in p.operands:
        if lit_text(a) and "/" in a.value:
            c.write(a)
    return None


# ---- archives -----------------------------------------------------------------------------
_TAR_EXACT = ("--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script",
              "-F", "--new-volume-script", "--rsh-command", "--rmt-command", "-P", "--absolute-names")


@handles("tar")
def _tar(c: Call):
    args = list(c.args)
    if args and lit_text(args[0]) and not args[0].value.startswith("-"):
        args[0] = Arg(LIT, "-" + args[0].value, False, args[0].src)
    p = parse_opts(args, "fCIFTXbHKNgV", {"--file", "--directory", "--use-compress-program", "--to-command",
                                          "--checkpoint-action", "--info-script", "--new-volume-script",
                                          "--rsh-command", "--rmt-command", "--files-from", "--exclude-from",
                                          "--exclude", "--transform", "--xform", "--owner", "--group", "--mode",
                                          "--format", "--newer", "--after-date", "--label", "--suffix", "--strip-components"})
    if p.has(*_TAR_EXACT) or any((lit_text(v) or "").startswith("exec") for v in p.values("--checkpoint-action")):
        c.exact("tar is given an option that runs a program or writes by absolute path")
    create = p.has("-c", "--create", "-r", "--append", "-u", "--update")
    extract = p.has("-x", "--extract", "--get")
    for v in p.values("-T", "--files-from", "-X", "--exclude-from"):
        c.read(v)
    for v in p.values("-f", "--file"):
        c.write(v) if create else c.read(v)
    if extract:
        dests = p.values("-C", "--directory") or [Arg(LIT, ".", False, ".")]
        for d in dests:
            c.write(d, tree=True)
    elif create:
        for a in p.operands:
            c.read(a, tree=True)
    return None


@handles("zip")
def _zip(c: Call):
    args = list(c.args)
    for i, a in enumerate(c.args):
        t = lit_text(a) or ""
        if t in ("-TT", "--unzip-command") or t.startswith(("-TT=", "--unzip-command=")):
            c.exact("zip -TT runs another program to test the archive")
            cmd = t.split("=", 1)[1] if "=" in t else lit_text(c.args[i + 1]) if i + 1 < len(c.args) else None
            if cmd:
                probe_text(c.ctx, cmd, c.cwds, "the program zip -TT runs")
            args = c.args[:i] + c.args[i + (1 if "=" in t else 2):]
            break
    p = parse_opts(args, "bnxitOP", {"--temp-path", "--output-file", "--exclude", "--include"})
    ops = p.operands
    if ops:
        c.write(ops[0])
    for a in ops[1:]:
        c.read(a, tree=p.has("-r", "--recurse-paths"))
    return None


@handles("unzip")
def _unzip(c: Call):
    p = parse_opts(c.args, "dxP", set())
    if p.operands:
        c.read(p.operands[0])
    if not p.has("-l", "-t", "-Z", "-v", "-p", "-c"):
        for d in p.values("-d") or [Arg(LIT, ".", False, ".")]:
            c.write(d, tree=True)
    return None
