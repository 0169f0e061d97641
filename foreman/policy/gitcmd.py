"""The git command: subcommands, global options, ``-c`` config, aliases and commands git runs.

Sources of the rules: git(1) (global options ``-C``, ``-c``, ``--config-env``, ``--git-dir``),
git-config(1) (keys that run programs: ``core.pager``, ``core.fsmonitor``, ``core.sshCommand``,
``diff.external``, ``*.textconv``, filters, ``alias.*`` with ``!``), and the seed's permissions
table (what is shared with the user's checkout, what is refused).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .context import Result
from .opts import lit_text, parse_opts
from .registry import Call, handles
from .walker import probe_text, run_text
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

#: Config keys (lower case) that only change output or harmless defaults.
SAFE_CONFIG_PREFIXES = ("color.", "advice.", "log.", "status.", "column.", "i18n.", "grep.", "blame.",
                        "pretty.", "format.pretty", "diff.noprefix", "diff.renames", "diff.algorithm",
                        "diff.mnemonicprefix", "diff.colormoved", "diff.context", "diff.interhunkcontext",
                        "diff.statgraphwidth", "diff.indentheuristic", "diff.relative", "core.quotepath",
                        "core.autocrlf", "core.safecrlf", "core.abbrev", "core.filemode", "core.ignorecase",
                        "core.whitespace", "core.eol", "init.defaultbranch", "merge.conflictstyle", "merge.ff",
                        "pull.rebase", "pull.ff", "rebase.autosquash", "rebase.autostash", "rebase.stat",
                        "branch.sort", "tag.sort", "commit.verbose", "commit.status", "merge.stat",
                        "merge.log", "fetch.prune", "rerere.enabled", "rerere.autoupdate", "help.autocorrect",
                        "core.pager=cat", "pager.")
_SIGN_KEYS = ("commit.gpgsign", "tag.gpgsign", "rebase.gpgsign", "push.gpgsign", "tag.forcesignannotated")
_TRUE = ("true", "yes", "on", "1")


def check_config(c: Call, key: str, value: str | None, how: str, aliases: dict | None = None) -> None:
    """Record what setting config ``key`` to ``value`` needs (``value`` None: from elsewhere).

    Args:
        c: the git call.
        key: the config key as typed.
        value: its value, or None when it comes from an environment variable or a variable.
        how: ``"-c"``, ``"--config-env"`` or ``"git config"`` for reasons.
        aliases: where to record ``alias.*`` definitions for later subcommands.
    """
    low = key.lower()
    section, _, name = low.partition(".")
    if section == "alias":
        alias = key.split(".", 1)[1] if "." in key else ""
        if value is None:
            c.deny(f"{how} defines the git alias {alias!r} from a value the policy cannot see (it could push)")
            return
        if aliases is not None:
            aliases[alias] = value
        _classify_alias(c, value, [])
        return
    if section in ("protocol", "url") or low.endswith(".pushurl") or low.startswith("remote.") and low.endswith(".receivepack"):
        c.deny(f"{how} {key} changes the git safety settings for transports")
        return
    if low in _SIGN_KEYS:
        if value is None or value.lower() in _TRUE:
            c.deny(f"{how} {key} makes git sign with your key")
        return
    if section == "gpg" or low == "user.signingkey":
        c.deny(f"{how} {key} changes how git signs")
        return
    if value is not None and (low.startswith(SAFE_CONFIG_PREFIXES) and not low.startswith("pager.")):
        return
    if low == "core.pager" and value in ("cat", "less", ""):
        return
    c.exact(f"{how} {key} can make git run other programs or change shared settings")
    if value:
        # core.pager, core.editor, sequence.editor, diff.external, *.textconv, filters, helpers...:
        # the program a value names is classified, so a push in it is refused.
        probe_text(c.ctx, value.lstrip("!"), c.cwds, f"the program {how} {key} names")


def _classify_alias(c: Call, value: str, rest: list[Arg]) -> Result:
    tail = "".join(" '" + (a.text or "").replace("'", "'\\''") + "'" for a in rest if a.kind == LIT)
    if any(a.kind != LIT for a in rest):
        c.exact("a git alias is given words from a variable")
    if value.startswith("!"):
        return run_text(c.ctx, value[1:] + tail, c.cwds, None, "a git alias")
    return run_text(c.ctx, "git " + value + tail, c.cwds, None, "a git alias")


def _host(url: str) -> str | None:
    if "://" in url:
        try:
            return urlsplit(url).hostname
        except ValueError:
            return None
    if ":" in url and not url.startswith("/"):
        host = url.split(":", 1)[0]
        return host.rsplit("@", 1)[-1] or None
    return None


def _is_url(text: str) -> bool:
    return "://" in text or (":" in text and "@" in text.split(":", 1)[0]) or text.startswith("git@")


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
            elif cwds is not None or d.text.startswith("/"):
                cwds = tuple(c.ctx.resolve(x, d.text) for x in (cwds or ("/",)))
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
            v = val if eq else (lit_text(args[i + 1]) if i + 1 < len(args) else None)
            i += 1 if eq else 2
            if v is None:
                c.deny("git --config-env gets its setting from a variable")
                continue
            check_config(c, v.split("=", 1)[0], None, "git --config-env", aliases)
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
    sub = args[i].text
    rest = args[i + 1:]
    gc = Call(c.ctx, "git " + sub, rest, cwds, c.stdin)
    if sub in aliases:
        gc.name = "git"
        return _classify_alias(gc, aliases[sub], rest)
    if sub in PUSH_SUBS:
        c.deny(f"git {sub} pushes to another repository")
        return None
    if sub in SIGNING_SUBS or sub == "tag":
        _check_signing(gc, sub)
    handler = _SUBS.get(sub)
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
    c.exact(f"git {sub} is not a subcommand the policy knows (it may be an alias from your config)")
    return None


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


#: Pathspecs that name the whole worktree (discarding them discards all uncommitted work).
_ALL_PATHS = frozenset({".", "./", ":/", ":/*", "*", ":(top)", ":(glob)**"})


def _discards_all(c: Call, paths: list[Arg]) -> bool:
    """Whether pathspecs cover the whole worktree (``.`` at the top, ``:/``, ``*``) or cannot be checked."""
    for a in paths:
        t = lit_text(a)
        if t is None or t.rstrip("/") in _ALL_PATHS or t in _ALL_PATHS:
            return True
        if t.startswith(":") or a.glob:
            return True
        if c.cwds is not None and all(c.ctx.resolve(cwd, t) == c.ctx.worktree for cwd in c.cwds):
            return True
    return False


def _restore(c: Call):
    """git restore: restoring the worktree from the index or another commit discards work."""
    p = parse_opts(c.args, "sU", {"--source", "--pathspec-from-file", "--conflict", "--unified", "-U"})
    worktree = p.has("-W", "--worktree") or not p.has("-S", "--staged")
    if p.values("-s", "--source") and worktree:
        c.exact("git restore --source replaces files with another commit's version")
    elif worktree and (_discards_all(c, p.operands) or p.has("--pathspec-from-file")):
        c.action("git restore .", "restoring the whole worktree discards all uncommitted work")
    c.mutate("git restore changes the worktree")
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


def _target_key(c: Call, target: Arg | None, what: str) -> None:
    t = lit_text(target)
    if t is None:
        c.exact(f"{what} switches to a branch named by a variable")
    else:
        c.action(f"git checkout:{t}", f"{what} switches the worktree to {t}")
    c.mutate(what)


def _checkout(c: Call):
    raw = [lit_text(a) for a in c.args]
    p = parse_opts(c.args, "bBU", {"--orphan", "--conflict", "--pathspec-from-file", "-U", "--unified"})
    if p.has("--ignore-other-worktrees"):
        c.action("git checkout --ignore-other-worktrees", "--ignore-other-worktrees checks out a branch used by another worktree")
    new = p.values("-b", "-B", "--orphan")
    if p.values("-B"):
        # -B resets an existing branch: a key names that action and branch, never the base branch.
        _ref_key(c, "git checkout -B", p.values("-B")[:1], "git checkout -B resets")
        return None
    if new:
        _target_key(c, new[0], "git checkout -b")
        return None
    if "--" in raw:
        at = raw.index("--")
        before = [a for a in p.operands if a not in c.args[at + 1:]]
        if before:
            c.exact("git checkout <commit> -- <paths> replaces files with another commit's version")
        elif _discards_all(c, c.args[at + 1:]):
            c.action("git restore .", "git checkout -- . discards all uncommitted work")
        c.mutate("git checkout restores files")
        return None
    ops = p.operands
    if len(ops) == 1 and _discards_all(c, ops) and lit_text(ops[0]) is not None:
        c.action("git restore .", "git checkout . discards all uncommitted work")
        c.mutate("git checkout restores files")
    elif len(ops) >= 2:
        c.exact("git checkout <commit> <paths> may replace files with another commit's version")
        c.mutate("git checkout restores files")
    elif len(ops) == 1:
        _target_key(c, ops[0], "git checkout")
    return None


def _switch(c: Call):
    p = parse_opts(c.args, "cC", {"--create", "--force-create", "--orphan", "--conflict"})
    if p.has("--ignore-other-worktrees"):
        c.action("git checkout --ignore-other-worktrees", "--ignore-other-worktrees checks out a branch used by another worktree")
    new = p.values("-c", "-C", "--create", "--force-create", "--orphan")
    if p.values("-C", "--force-create"):
        _ref_key(c, "git checkout -B", p.values("-C", "--force-create")[:1], "git switch -C resets")
        return None
    if new:
        _target_key(c, new[0], "git switch -c")
    elif p.operands:
        _target_key(c, p.operands[0], "git switch")
    return None


def _reset(c: Call):
    p = parse_opts(c.args, "", {"--pathspec-from-file"})
    if p.has("--hard"):
        c.action("git reset --hard", "git reset --hard discards changes in the worktree")
    c.mutate("git reset")
    return None


def _clean(c: Call):
    p = parse_opts(c.args, "e", {"--exclude"})
    if p.has("-n", "--dry-run"):
        return None
    c.action("git clean", "git clean deletes untracked files")
    c.mutate("git clean")
    return None


def _rebase(c: Call):
    p = parse_opts(c.args, "xsXC", {"--exec", "--onto", "--strategy", "--strategy-option", "--whitespace", "-x"})
    for v in p.values("-x", "--exec"):
        if v.kind != LIT:
            c.exact("git rebase -x runs a command from a variable")
        else:
            run_text(c.ctx, v.text, c.cwds, None, "git rebase -x")
    if p.has("--update-refs"):
        c.action("git rebase --update-refs", "git rebase --update-refs moves other branches")
    if not p.has("--continue", "--abort", "--skip", "--quit", "--show-current-patch"):
        c.action("git rebase", "git rebase rewrites the branch onto another one")
    c.mutate("git rebase")
    return None


def _bisect(c: Call):
    if c.args and lit_text(c.args[0]) == "run":
        c.mutate("git bisect run")
        return c.sub(c.args[1:], None) if c.args[1:] else None
    if c.args and lit_text(c.args[0]) in ("log", "view", "visualize", "terms", "help"):
        if lit_text(c.args[0]) in ("view", "visualize"):
            c.exact("git bisect visualize starts gitk")
        return None
    c.mutate("git bisect checks out commits")
    return None


def _branch(c: Call):
    p = parse_opts(c.args, "u", {"--set-upstream-to", "--contains", "--no-contains", "--merged", "--no-merged",
                                      "--points-at", "--sort", "--format", "--column", "--color", "-u", "-t", "--track"})
    if p.has("-d", "-D", "--delete"):
        force = p.has("-D") or p.has("-f", "--force")
        _ref_key(c, "git branch -D" if force else "git branch -d", p.operands, "git branch deletes")
        return None
    elif p.has("-m", "-M", "--move", "-c", "-C", "--copy"):
        _ref_key(c, "git branch -m", p.operands, "git branch renames or copies")
        return None
    elif p.has("-u", "--set-upstream-to", "--unset-upstream", "-t", "--track"):
        c.action("git branch -u", "setting a branch's upstream writes the shared config")
    elif p.has("--edit-description"):
        c.exact("git branch --edit-description opens an editor")
    elif p.has("-f", "--force") and p.operands:
        _ref_key(c, "git branch -f", p.operands[:1], "git branch -f moves")
        return None
    elif p.operands and not p.has("-l", "--list", "--contains", "--merged", "--no-merged", "--points-at", "-a", "-r"):
        if c.ctx.protected_ref(lit_text(p.operands[0]) or ""):
            c.exact("git branch would create the base branch")
        c.action("git branch", "creating a branch changes the repository shared with your checkout")
    else:
        return None
    c.mutate("git branch")
    return None


def _tag(c: Call):
    p = parse_opts(c.args, "mFn", {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at",
                                   "--sort", "--format", "--column", "--color", "--file", "--message", "--cleanup"})
    for v in p.values("-F", "--file"):
        c.read(v)
    if p.has("-l", "--list", "-v", "--verify") or (not p.operands and not p.has("-d", "--delete")):
        return None
    c.action("git tag", "tags are shared with your checkout")
    c.mutate("git tag")
    return None


def _stash(c: Call):
    first = lit_text(c.args[0]) if c.args else None
    if first in ("list", "show"):
        return None
    c.action("git stash", "the stash is shared with your checkout")
    c.mutate("git stash")
    return None


def _config(c: Call):
    p = parse_opts(c.args, "f", {"--file", "--blob", "--type", "--default", "--comment", "--value", "-f"})
    scope_global = p.has("--global", "--system")
    ops = [lit_text(a) for a in p.operands]
    sub = ops[0] if ops and ops[0] in ("get", "set", "unset", "list", "edit", "rename-section", "remove-section") else None
    if sub:
        ops = ops[1:]
    write = sub in ("set", "unset", "edit", "rename-section", "remove-section") or p.has(
        "--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit") or (
        sub is None and len(ops) >= 2 and not p.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list"))
    if not write:
        return None
    if None in ops:
        c.exact("git config writes a key or value from a variable")
    if p.has("-e", "--edit") or sub == "edit":
        c.exact("git config --edit opens an editor")
    if scope_global:
        c.exact("git config --global/--system changes your own git configuration")
    for v in p.values("-f", "--file"):
        c.write(v)
    c.action("git config", "git config writes settings shared with your checkout")
    c.mutate("git config")
    if len(ops) >= 1 and ops[0] is not None and not p.has("--unset", "--unset-all") and sub != "unset":
        check_config(c, ops[0], ops[1] if len(ops) > 1 else None, "git config")
    return None


def _worktree(c: Call):
    first = lit_text(c.args[0]) if c.args else None
    if first in ("list", None):
        return None
    c.action("git worktree", "git worktree changes the worktrees of the shared repository")
    if first == "add":
        p = parse_opts(c.args[1:], "bB", {"--reason"})
        for a in p.operands[:1]:
            c.write(a, tree=True)
    c.mutate("git worktree")
    return None


def _submodule(c: Call):
    p = parse_opts(c.args, "", set(), stop_at_operand=True)
    first = lit_text(p.rest[0]) if p.rest else "status"
    if first in ("status", "summary"):
        return None
    if first == "foreach":
        q = parse_opts(p.rest[1:], "", set(), stop_at_operand=True)
        words = q.rest
        if any(w.kind != LIT for w in words):
            c.exact("git submodule foreach runs a command from a variable")
            return None
        return Result(c.cwds, run_text(c.ctx, " ".join(w.text for w in words), c.cwds, None, "git submodule foreach").out)
    c.action(f"git submodule {first}", f"git submodule {first} changes submodules shared with your checkout")
    c.mutate("git submodule")
    return None


def _filter_branch(c: Call):
    filters = {"--tree-filter", "--index-filter", "--msg-filter", "--commit-filter", "--env-filter",
               "--parent-filter", "--tag-name-filter", "--setup"}
    p = parse_opts(c.args, "d", filters | {"--subdirectory-filter", "--original", "--state-branch", "-d"})
    for f, v in p.opts:
        if f in filters:
            if v is None or v.kind != LIT:
                c.exact(f"git filter-branch {f} runs a command from a variable")
            else:
                run_text(c.ctx, v.text, c.cwds, None, f"git filter-branch {f}")
    for v in p.values("-d"):
        c.write(v, tree=True)
    c.action("git filter-branch", "git filter-branch rewrites history shared with your checkout")
    c.mutate("git filter-branch")
    return None


def _difftool(c: Call):
    p = parse_opts(c.args, "xt", {"--extcmd", "--tool", "-x", "-t"})
    cmds = p.values("-x", "--extcmd")
    for v in cmds:
        if v.kind != LIT:
            c.exact("git difftool -x runs a command from a variable")
        else:
            run_text(c.ctx, v.text + " a b", c.cwds, None, "git difftool -x")
            probe_text(c.ctx, v.text, c.cwds, "git difftool -x")
    if not cmds or p.has("-g", "--gui", "-t", "--tool"):
        c.exact("git difftool starts a configured diff program")
    return None


def _network(c: Call, sub: str, remote_index: int = 0):
    p = parse_opts(c.args, "ojub", {"--upload-pack", "--depth", "--shallow-since", "--shallow-exclude", "--jobs",
                                    "--recurse-submodules-default", "--refmap", "--server-option", "--negotiation-tip",
                                    "--filter", "--origin", "--branch", "--template", "--separate-git-dir",
                                    "--reference", "--config", "-c", "-o", "-b", "-u", "-j"})
    if p.has("--upload-pack", "-u") and sub != "pull":
        c.exact(f"git {sub} --upload-pack runs another program")
    if p.has("--template", "--separate-git-dir", "--reference"):
        c.exact(f"git {sub} uses another directory")
    for v in p.values("-c", "--config"):
        t = lit_text(v)
        if t is None:
            c.deny(f"git {sub} -c gets its setting from a variable")
        else:
            k, eq, val = t.partition("=")
            check_config(c, k, val if eq else "true", f"git {sub} -c")
    ops = p.operands
    if sub in ("fetch", "pull") and any(":" in (lit_text(a) or ":") for a in ops[remote_index + 1:]):
        c.exact(f"git {sub} with a <src>:<dst> refspec writes local refs (it could move a base branch)")
    remote = lit_text(ops[remote_index]) if len(ops) > remote_index else ("--all" if p.has("--all") else "origin")
    if remote is None:
        c.exact(f"git {sub} contacts a remote named by a variable")
    else:
        target = _host(remote) if _is_url(remote) else remote
        c.ctx.ask(f"Bash:net:git {sub}:{target or remote}", f"git {sub} uses the network ({remote})", network=True)
    if sub == "clone":
        dest = ops[1] if len(ops) > 1 else None
        if dest is not None:
            c.write(dest, tree=True)
        c.mutate("git clone")
    elif sub == "pull":
        c.mutate("git pull merges")
    return None


def _remote(c: Call):
    first = lit_text(c.args[0]) if c.args else None
    if first in (None, "-v", "--verbose", "get-url"):
        return None
    if first in ("show", "update", "prune"):
        target = lit_text(c.args[1]) if len(c.args) > 1 else "origin"
        c.ctx.ask(f"Bash:net:git remote {first}:{target}", f"git remote {first} uses the network", network=True)
        return None
    c.action("git remote", "git remote changes remotes shared with your checkout")
    c.mutate("git remote")
    return None


def _lfs(c: Call):
    first = lit_text(c.args[0]) if c.args else None
    if first == "push" or first is None and c.args:
        c.deny("git lfs push pushes to another repository")
    elif first in ("fetch", "pull", "clone"):
        c.ctx.ask(f"Bash:net:git lfs:{first}", f"git lfs {first} uses the network", network=True)
    elif first in ("ls-files", "status", "env", "version", "logs", None):
        return None
    elif first in ("track", "untrack", "checkout"):
        c.mutate(f"git lfs {first}")
    else:
        c.exact(f"git lfs {first} changes hooks, config or history")
    return None


def _subtree(c: Call):
    ops = [lit_text(a) for a in c.args if not (lit_text(a) or "").startswith("-")]
    if "push" in ops or None in ops:
        c.deny("git subtree push pushes to another repository")
        return None
    c.exact("git subtree changes history or uses the network")
    return None


#: Bridge commands that publish commits to another system's server like a push (git-svn(1):
#: ``dcommit``, ``set-tree``, ``commit-diff`` commit to SVN, ``branch``/``tag`` create them
#: there; git-p4(1): ``submit`` submits to Perforce).
_BRIDGE_PUBLISH = {"svn": frozenset({"dcommit", "set-tree", "commit-diff", "branch", "tag"}),
                   "p4": frozenset({"submit"})}


def _bridge(c: Call, sub: str):
    ops = [lit_text(a) for a in c.args if not (lit_text(a) or "").startswith("-")]
    first = ops[0] if ops else ""
    if first is None or first in _BRIDGE_PUBLISH[sub]:
        c.deny(f"git {sub} {first or '(a command from a variable)'} publishes to another repository like a push")
        return None
    c.exact(f"git {sub} starts a program, a GUI or a network service")
    return None


def _archive(c: Call):
    p = parse_opts(c.args, "o", {"--output", "--remote", "--exec", "--prefix", "--format"})
    if p.has("--remote", "--exec"):
        c.exact("git archive --remote uses the network")
    for v in p.values("-o", "--output"):
        c.write(v)
    return None


def _bundle(c: Call):
    first = lit_text(c.args[0]) if c.args else None
    if first == "create" and len(c.args) > 1:
        c.write(c.args[1])
    elif first in ("unbundle",):
        c.mutate("git bundle unbundle")
    elif first not in ("verify", "list-heads"):
        c.exact(f"git bundle {first} is not understood")
    return None


def _reflog(c: Call):
    first = lit_text(c.args[0]) if c.args else None
    if first in ("expire", "delete", "drop"):
        c.action("git reflog", "git reflog expire/delete changes the shared repository")
        c.mutate("git reflog")
    return None


def _ref_key(c: Call, action: str, refs: list[Arg], what: str) -> None:
    """Ask for ``action`` on exactly these refs: ``Bash:git update-ref -d:refs/heads/x``.

    A key never covers another ref or another action; a ref that is a protected branch (the
    base branch the Foreman merges into) or a name from a variable asks for the exact command.
    """
    names = [lit_text(r) for r in refs]
    if not names or None in names:
        c.exact(f"{what} a ref named by a variable or from its input")
    elif any(c.ctx.protected_ref(n) for n in names):
        c.exact(f"{what} the base branch, which only an approved merge may move")
    else:
        c.action(f"{action}:{' '.join(names)}", f"{what} {', '.join(names)}, shared with your checkout")
    c.mutate(action)


def _update_ref(c: Call):
    p = parse_opts(c.args, "m", set())
    if p.has("--stdin"):
        c.exact("git update-ref --stdin changes refs read from its input")
        c.mutate("git update-ref")
        return None
    delete = p.has("-d")
    _ref_key(c, "git update-ref -d" if delete else "git update-ref", p.operands[:1], "git update-ref moves")
    return None


def _symbolic_ref(c: Call):
    p = parse_opts(c.args, "m", set())
    if p.has("-d", "--delete"):
        _ref_key(c, "git symbolic-ref -d", p.operands[:1], "git symbolic-ref deletes")
    elif len(p.operands) >= 2:
        _ref_key(c, "git symbolic-ref", p.operands[:2], "git symbolic-ref points")
    return None


def _format_patch(c: Call):
    p = parse_opts(c.args, "o", {"--output-directory", "--signature-file", "--output"})
    dests = p.values("-o", "--output-directory")
    for v in dests:
        c.write(v, tree=True)
    for v in p.values("--output"):
        c.write(v)
    if not dests and not p.has("--stdout"):
        c.write(Arg.lit("."))
    return None


_SUBS = {
    "checkout": _checkout, "switch": _switch, "reset": _reset, "clean": _clean, "rebase": _rebase,
    "bisect": _bisect, "branch": _branch, "tag": _tag, "stash": _stash, "config": _config,
    "worktree": _worktree, "submodule": _submodule, "filter-branch": _filter_branch, "difftool": _difftool,
    "fetch": lambda c: _network(c, "fetch"), "pull": lambda c: _network(c, "pull"),
    "ls-remote": lambda c: _network(c, "ls-remote"), "clone": lambda c: _network(c, "clone"),
    "remote": _remote, "lfs": _lfs, "subtree": _subtree, "svn": lambda c: _bridge(c, "svn"),
    "p4": lambda c: _bridge(c, "p4"), "archive": _archive, "bundle": _bundle,
    "reflog": _reflog, "symbolic-ref": _symbolic_ref, "update-ref": _update_ref, "format-patch": _format_patch, "restore": _restore,
}


@handles("gitk", "git-gui", "git-citool")
def _gitk(c: Call):
    c.exact(f"{c.name} starts a GUI")
