"""The git command: global options, ``-c`` config, aliases, and the dispatch to its subcommands
(the read, write and shared ones here; those with rules of their own in :mod:`.gitsubs`; config
keys and aliases in :mod:`.gitconfig`).

Sources of the rules: git(1) (global options ``-C``, ``-c``, ``--config-env``, ``--git-dir``),
git-config(1) (keys that run programs: ``core.pager``, ``core.fsmonitor``, ``core.sshCommand``,
``diff.external``, ``*.textconv``, filters, ``alias.*`` with ``!``), and the seed's permissions
table (what is shared with the user's checkout, what is refused).
"""

from __future__ import annotations

from .context import Result
from .gitconfig import check_config, classify_alias
from .gitprogs import PROGRAM_SUBS, autocorrects_to_push, program_options, unabbreviate
from .gitsubs import SUBS
from .opts import lit_text, parse_opts
from .registry import Call, handles
from .words import LIT, Arg

READ_SUBS = frozenset({
    "status", "log", "show", "diff", "blame", "annotate", "rev-parse", "ls-files", "ls-tree", "cat-file",
    "grep", "describe", "shortlog", "show-ref", "for-each-ref", "rev-list", "merge-base", "name-rev",
    "count-objects", "cherry", "whatchanged", "range-diff", "diff-tree", "diff-files", "diff-index",
    "show-branch", "var", "version", "help", "check-ignore", "check-attr", "check-ref-format", "verify-commit",
    "verify-tag", "fsck", "get-tar-commit-id", "column", "check-mailmap", "show-index", "merge-tree",
    "hash-object", "mktree", "write-tree", "stripspace", "interpret-trailers", "patch-id", "fmt-merge-msg",
    "verify-pack", "unpack-file", "diff-pairs", "last-modified",
})
WRITE_SUBS = frozenset({"add", "rm", "mv", "apply", "am", "cherry-pick", "revert", "merge",
                        "update-index", "read-tree", "commit-tree", "commit", "rerere", "mailsplit",
                        "mailinfo", "checkout-index", "unpack-objects", "prune-packed", "init"})
SIGNING_SUBS = frozenset({"commit", "merge", "rebase", "cherry-pick", "revert", "am", "commit-tree", "pull"})
SHARED_ACTION_SUBS = frozenset({"gc", "prune", "repack", "maintenance", "pack-refs", "fast-import",
                                "replace", "sparse-checkout", "notes"})
GUI_SUBS = frozenset({"gui", "citool", "instaweb", "web--browse", "mergetool", "send-email", "imap-send",
                      "daemon", "http-backend", "upload-pack", "shell", "credential", "credential-cache",
                      "credential-store", "p4", "svn", "cvsimport", "cvsserver", "cvsexportcommit",
                      "archimport", "quiltimport", "request-pull", "fast-export", "remote-ext", "remote-fd"})
PUSH_SUBS = frozenset({"push", "send-pack", "receive-pack", "http-push"})
_KNOWN_SUBS = (READ_SUBS | WRITE_SUBS | SIGNING_SUBS | SHARED_ACTION_SUBS | GUI_SUBS | frozenset(SUBS)
               | frozenset(PROGRAM_SUBS))

@handles("git")
def _git(c: Call):
    args = c.args
    aliases: dict[str, str] = {}
    cwds = c.cwds
    other_repo = False
    i = 0
    while i < len(args):
        a = args[i]
        t = lit_text(a)
        if t is None or a.glob:
            c.deny("git runs a subcommand from a variable or substitution (it could be push)")
            return None
        if not t.startswith("-"):
            break
        name, eq, val = t.partition("=")
        if t == "-C" or (t.startswith("-C") and len(t) > 2):
            d = Arg(LIT, t[2:], False, t) if len(t) > 2 else (args[i + 1] if i + 1 < len(args) else None)
            i += 1 if len(t) > 2 else 2
            if d is None or d.kind != LIT:
                c.exact("git -C goes to a directory that cannot be checked")
                cwds = None
            elif cwds is not None or d.value.startswith("/"):
                cwds = tuple(c.ctx.resolve(x, d.value) for x in (cwds or ("/",)))
            continue
        if t == "-c" or (t.startswith("-c") and len(t) > 2):
            v = Arg(LIT, t[2:], False, t) if len(t) > 2 else (args[i + 1] if i + 1 < len(args) else None)
            i += 1 if len(t) > 2 else 2
            vt = lit_text(v)
            if vt is None:
                c.deny("git -c gets its setting from a variable (it could define a push alias)")
                continue
            key, eq2, value = vt.partition("=")
            check_config(c, key, value if eq2 else "true", "git -c", aliases)
            continue
        if name == "--config-env":
            setting = val if eq else (lit_text(args[i + 1]) if i + 1 < len(args) else None)
            i += 1 if eq else 2
            if setting is None:
                c.deny("git --config-env gets its setting from a variable")
                continue
            check_config(c, setting.split("=", 1)[0], None, "git --config-env", aliases)
            continue
        if name in ("--git-dir", "--work-tree", "--namespace", "--super-prefix", "--attr-source"):
            other_repo = True
            c.exact(f"git {name} points git at another repository")
            i += 1 if eq else 2
            continue
        if name == "--exec-path" and eq:
            c.exact("git --exec-path runs git programs from another directory")
        elif name in ("--bare",):
            other_repo = True
            c.exact("git --bare works on a repository directly")
        elif name in ("--help", "-h", "--version", "--html-path", "--man-path", "--info-path", "--list-cmds"):
            return None
        i += 1
    if i >= len(args):
        return None
    if not other_repo and not c.ctx.cwds_inside(cwds):
        c.exact("git runs outside the worktree, on another repository")
    sub = args[i].value
    rest = unabbreviate(sub, args[i + 1:])
    gc = Call(c.ctx, "git " + sub, rest, cwds, c.stdin)
    if sub in aliases:
        gc.name = "git"
        return classify_alias(gc, aliases[sub], rest)
    if sub in PUSH_SUBS:
        c.deny(f"git {sub} pushes to another repository")
        return None
    program_options(gc, sub)
    if sub in SKIPS_HOOKS:
        _check_no_verify(gc, sub)
    if sub in SIGNING_SUBS or sub == "tag":
        _check_signing(gc, sub)
    handler = SUBS.get(sub) or PROGRAM_SUBS.get(sub)
    if handler is not None:
        return handler(gc)
    if sub in READ_SUBS:
        return _read_sub(gc, sub)
    if sub in WRITE_SUBS:
        return _write_sub(gc, sub)
    if sub in SHARED_ACTION_SUBS:
        return _shared(gc, sub)
    if sub in GUI_SUBS:
        c.exact(f"git {sub} starts a program, a GUI or a network service")
        return None
    if autocorrects_to_push(sub, _KNOWN_SUBS):
        c.deny(f"git {sub} is not a git command, and git's help.autocorrect would run it as git push")
        return None
    c.exact(f"git {sub} is not a subcommand the policy knows (it may be an alias from your config)")
    return None


SKIPS_HOOKS = {
    "commit": "pre-commit and commit-msg", "merge": "pre-merge-commit and commit-msg", "pull": "pre-merge-commit",
    "am": "applypatch-msg and pre-applypatch", "rebase": "pre-rebase",
}
"""Subcommands whose ``--no-verify`` skips repository hooks (git-commit(1), git-merge(1),
git-pull(1), git-am(1), git-rebase(1)), and the hooks it skips."""

_VALUE_SHORT = {"commit": "mFtcCuS"}
_VALUE_LONG = {"commit": {"--message", "--file", "--template", "--reuse-message", "--reedit-message", "--fixup",
                          "--squash", "--author", "--date", "--cleanup", "--pathspec-from-file", "--trailer"},
               "merge": {"--message", "--file", "--strategy", "--strategy-option", "--cleanup", "--into-name"},
               "pull": {"--strategy", "--strategy-option", "--depth", "--shallow-since", "--shallow-exclude",
                        "--upload-pack", "--cleanup"}}


def _check_no_verify(c: Call, sub: str) -> None:
    """Ask before a command that skips the repository's hooks: a hook that refuses is the user's
    rule for what may be committed, and the Foreman's own commits for agents run them too. git
    takes a long option by any unambiguous prefix (gitcli(7)), so ``--no-ver`` counts; only
    ``git commit`` has the short ``-n``."""
    if not any(_may_skip_hooks(lit_text(a), sub) for a in c.args):  # (most commands: no parse needed)
        return
    p = parse_opts(c.args, _VALUE_SHORT.get(sub, ""), _VALUE_LONG.get(sub, set()))
    if any(a.kind != LIT for a in p.operands):  # ("X=--no-verify; git commit $X": only option values may vary)
        c.exact(f"git {sub} takes a word from a variable or substitution, which could be --no-verify")
        return
    for flag, _ in p.opts:
        if (flag.startswith("--no-v") and "--no-verify".startswith(flag)) or (sub == "commit" and flag == "-n"):
            c.exact(f"git {sub} --no-verify skips the repository's hooks ({SKIPS_HOOKS[sub]})")
            return


def _may_skip_hooks(t: str | None, sub: str) -> bool:
    """Whether a word could make ``git <sub>`` skip the hooks, before options are told from their
    values: any word that is not a literal, ``--no-v...``, or (commit) a short cluster with ``n``."""
    return t is None or t.startswith("--no-v") or (sub == "commit" and t[:1] == "-" and t[1:2] != "-" and "n" in t)


def _check_signing(c: Call, sub: str) -> None:
    for a in c.args:
        t = lit_text(a)
        if t is None:
            continue
        if t == "--":
            break
        if sub == "tag":
            if t in ("-s", "--sign", "-u", "--local-user") or t.startswith(("--local-user=", "-u")) or (
                    t.startswith("-") and not t.startswith("--") and ("s" in t[1:] or "u" in t[1:]) and len(t) <= 4):
                c.deny("git tag -s/-u signs with your key")
                return
        elif t == "-S" or t.startswith("-S") or t.startswith("--gpg-sign"):
            c.deny(f"git {sub} -S signs with your key")
            return


def _out_opts(c: Call) -> None:
    p = parse_opts(c.args, "O", {"--output", "--output-directory", "-o"})
    for f, v in p.opts:
        if f in ("--output",) and v is not None:
            c.write(v)
        elif f in ("--ext-diff", "--open-files-in-pager", "-O") and c.name in ("git grep",) + (("git diff", "git log", "git show") if f == "--ext-diff" else ()):
            c.exact(f"{c.name} {f} runs another program")
        elif f == "--ext-diff":
            c.exact(f"{c.name} --ext-diff runs an external diff program")


def _read_sub(c: Call, sub: str):
    _out_opts(c)
    p = parse_opts(c.args, "", {"--output"})
    if sub == "diff" and p.has("--no-index"):
        for a in p.operands:
            c.read(a)
    if sub == "grep":
        for v in parse_opts(c.args, "fefABC", {"--file"}).values("-f", "--file"):
            c.read(v)
    if sub == "rev-parse" and p.has("--show-toplevel") and c.ctx.cwds_inside(c.cwds):
        return Result(c.cwds, ("path", c.ctx.worktree))
    if c.ctx.cwds_inside(c.cwds) and (sub == "ls-files" or (sub in ("diff", "grep", "log", "show") and p.has(
            "--name-only", "-l", "--files-with-matches", "--name-status") and sub != "log")):
        return Result(c.cwds, ("wtlist",))
    if sub == "hash-object" and p.has("-w"):
        c.mutate("git hash-object -w writes objects")
    if sub == "help" and p.has("-w", "--web", "-i", "--info"):
        c.exact("git help --web/--info opens a browser or another program")
    return None


def _write_sub(c: Call, sub: str):
    p = parse_opts(c.args, "Ftm" if sub == "commit" else "", {"--file", "--template", "--pathspec-from-file"})
    for v in p.values("-F", "--file", "-t", "--template", "--pathspec-from-file"):
        c.read(v)
    if sub in ("apply", "am"):
        if p.has("--unsafe-paths"):
            c.exact("git apply --unsafe-paths writes outside the worktree")
        for a in p.operands:
            c.read(a)
    if sub == "init":
        if p.has("--template", "--separate-git-dir"):
            c.exact("git init --template/--separate-git-dir uses another directory")
        for a in p.operands or [Arg.lit(".")]:
            if c.write(a) == "in":
                c.action("git init", "git init inside the worktree makes a nested repository")
    c.mutate(f"git {sub} changes the worktree")
    return None


def _shared(c: Call, sub: str):
    p = parse_opts(c.args, "", set())
    if sub == "notes" and (not p.operands or lit_text(p.operands[0]) in ("list", "show")):
        return None
    if sub == "replace" and p.has("-l", "--list"):
        return None
    if sub == "sparse-checkout" and p.operands and lit_text(p.operands[0]) == "list":
        return None
    c.action(f"git {sub}", f"git {sub} changes the repository shared with your checkout")
    c.mutate(f"git {sub}")
    return None


@handles("gitk", "git-gui", "git-citool")
def _gitk(c: Call):
    c.exact(f"{c.name} starts a GUI")
