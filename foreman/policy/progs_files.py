"""Handlers for programs that read, list and search files (coreutils' readers, ``sort``, ``grep``,
``rg`` and friends). The shell's builtins are in :mod:`.progs_shell`, the programs that change
files in :mod:`.progs_writes`."""

from __future__ import annotations

from .context import Result
from .opts import lit_text, parse_opts
from .registry import Call, handles
from .words import LIT, WTLIST, Arg


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
