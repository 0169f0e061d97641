"""Handlers for programs that change files: writers (``tee``, ``rm``, ``cp``/``mv``/``ln``, ``dd``,
``split``, ``patch``, ``mktemp`` ...) and archives (``tar``, ``zip``, ``unzip``)."""

from __future__ import annotations

import posixpath

from .context import Result, git_entry_name
from .dangers import refuse_wipe
from .opts import lit_text, parse_opts
from .registry import Call, handles
from .walker import probe_text
from .words import LIT, Arg


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
_CHMOD_MODE = frozenset("rwxXstugoa,+=01234567")


@handles("chmod")
def _chmod(c: Call):
    """chmod(1): the first operand is the mode, unless ``--reference`` gives it; GNU chmod also
    takes a symbolic mode that starts with ``-`` (``chmod -x FILE``): a word of its options holding
    a mode character is the mode, and every operand is a file. Before, ``-x`` was read as an
    option and the file as the mode, so ``chmod -x <anything>`` was allowed (found by a newcomer)."""
    mode_given = False
    files: list[Arg] = []
    tree = False
    args = c.args
    i = 0
    while i < len(args):
        a, t = args[i], lit_text(args[i])
        i += 1
        if t == "--":
            files += args[i:] if mode_given else args[i + 1:]
            break
        if t is not None and t.startswith("--"):
            name = t.partition("=")[0]
            mode_given |= name == "--reference"
            if name == "--reference" and "=" not in t:
                i += 1
            tree |= name == "--recursive"
            continue
        if t is not None and t.startswith("-") and len(t) > 1:
            if any(ch in _CHMOD_MODE for ch in t[1:]):
                mode_given = True  # a symbolic mode such as -x, -rw, -w,+r
            else:
                tree |= "R" in t
            continue
        if mode_given:
            files.append(a)
        else:
            mode_given = True
    inside = False
    for f in files:
        inside |= c.write(f, tree=tree) in ("in", "unknown")
    if inside and tree:
        c.action("chmod -R", "chmod -R changes a whole directory tree")
    return None


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
