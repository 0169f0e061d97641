"""Text tools that can run code: awk programs and sed scripts (``e``, ``s///e``, ``w``)."""

from __future__ import annotations

from .opts import lit_text, parse_opts
from .progs_dev import inline_code
from .registry import Call, handles
from .walker import probe_text


@handles("awk", "gawk", "mawk", "nawk")
def _awk(c: Call):
    p = parse_opts(c.args, "fFvW", {"--file", "--field-separator", "--assign", "--include", "--load", "--source"})
    ops = p.operands
    progs = p.values("-f", "--file")
    for v in progs:
        c.run(v)
    if p.has("-i", "--include", "-l", "--load", "-E", "--exec"):
        c.exact(f"{c.name} loads extra code")
    inplace = any(lit_text(v) == "inplace" for v in p.values("-i", "--include"))
    if not progs and p.values("--source"):
        progs = p.values("--source")
        program = progs[0]
    elif not progs:
        if not ops:
            c.exact("awk without a program")
            return None
        program, ops = ops[0], ops[1:]
    else:
        program = None
    if program is not None:
        text = lit_text(program)
        if text is None:
            c.exact("awk runs a program from a variable")
        elif "system" in text or "|" in text or ">" in text or "getline" in text or "ENVIRON" in text:
            inline_code(c, program, "awk")
    for a in ops:
        t = lit_text(a)
        if t is not None and "=" in t and not t.startswith(("/", ".")):
            continue
        c.write(a) if inplace else c.read(a)
    return None


def sed_unsafe(script: str, execs: list[str] | None = None) -> bool:
    """Whether a sed script may run commands or write files (``e``, ``w``, ``r``, ``s///w|e``).

    Follows the command grammar of GNU sed(1); anything not understood counts as unsafe.
    ``execs`` (when given) receives the static command text the script runs: the text of an
    ``e command``, and the replacement of an ``s///e`` (run as a command).
    """
    i, n = 0, len(script)
    unsafe = False
    while i < n:
        ch = script[i]
        if ch in " \t\n;!{}":
            i += 1
            continue
        if ch in "0123456789$,~+":
            i += 1
            continue
        if ch == "/" or (ch == "\\" and i + 1 < n):
            delim = "/" if ch == "/" else script[i + 1]
            i = _skip_delimited(script, i + (1 if ch == "/" else 2), delim)
            if i < 0:
                return True
            while i < n and script[i] in "IM":
                i += 1
            continue
        if ch == "#" or ch in "aic":
            j = script.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if ch == "e":
            j = script.find("\n", i)
            j = n if j < 0 else j
            if execs is not None and script[i + 1:j].strip():
                execs.append(script[i + 1:j].strip())
            unsafe = True
            i = j + 1
            continue
        if ch in ":btT":
            j = i + 1
            while j < n and script[j] not in ";\n}":
                j += 1
            i = j
            continue
        if ch in "sy":
            if i + 1 >= n:
                return True
            delim = script[i + 1]
            j = _skip_delimited(script, i + 2, delim)
            if j < 0:
                return True
            k = _skip_delimited(script, j, delim)
            if k < 0:
                return True
            replacement = script[j:k - 1]
            j = k
            while j < n and script[j] not in ";\n}":
                if ch == "s" and script[j] in "we":
                    unsafe = True
                    if script[j] == "e" and execs is not None:
                        execs.append(replacement.replace("\\" + delim, delim))
                    if script[j] == "w":
                        break
                j += 1
            i = j
            if i < n and script[i] not in ";\n}":
                return True
            continue
        if ch in "=dDgGhHlnNpPqQxzF":
            i += 1
            continue
        return True  # r, R, w, W, v and anything unknown
    return unsafe


def _skip_delimited(s: str, i: int, delim: str) -> int:
    n = len(s)
    while i < n:
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == delim:
            return i + 1
        if s[i] == "\n":
            return -1
        i += 1
    return -1


@handles("sed", "gsed")
def _sed(c: Call):
    p = parse_opts(c.args, "efl", {"--expression", "--file", "--line-length"})
    scripts = p.values("-e", "--expression")
    ops = p.operands
    files = p.values("-f", "--file")
    for f in files:
        c.read(f)
    if files:
        c.exact("sed runs a script file that may write or run commands")
    if not scripts and not files:
        if not ops:
            return None
        scripts, ops = [ops[0]], ops[1:]
    for s in scripts:
        t = lit_text(s)
        execs: list[str] = []
        if t is None:
            c.exact("sed runs a script from a variable")
        elif sed_unsafe(t, execs):
            c.exact("the sed script may write files or run commands (e, w, r)")
        for text in execs:
            probe_text(c.ctx, text, c.cwds, "a command a sed script runs")
    inplace = p.has("-i", "--in-place") or any(f.startswith("-i") or f.startswith("--in-place") for f, _ in p.opts)
    for a in ops:
        c.write(a) if inplace else c.read(a)
    return None
