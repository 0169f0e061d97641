"""The git subcommands with rules of their own (checkout, reset, branch, config, fetch, ...): one
handler each, in :data:`SUBS`, called by :mod:`.gitcmd` after the global options.

Sources: each subcommand's manual page (git-checkout(1), git-reset(1), ...) and the seed's
permissions table (what is shared with the user's checkout, what is refused).
"""

from __future__ import annotations

from .context import Result
from .gitconfig import check_config, host_of, is_url
from .opts import lit_text, parse_opts
from .registry import Call
from .walker import probe_text, run_text
from .words import LIT, Arg

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
            run_text(c.ctx, v.value, c.cwds, None, "git rebase -x")
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
        return Result(c.cwds, run_text(c.ctx, " ".join(w.value for w in words), c.cwds, None, "git submodule foreach").out)
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
                run_text(c.ctx, v.value, c.cwds, None, f"git filter-branch {f}")
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
            run_text(c.ctx, v.value + " a b", c.cwds, None, "git difftool -x")
            probe_text(c.ctx, v.value, c.cwds, "git difftool -x")
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
        target = host_of(remote) if is_url(remote) else remote
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
    names = [n for r in refs if (n := lit_text(r)) is not None]
    if not names or len(names) < len(refs):
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


SUBS = {
    "checkout": _checkout, "switch": _switch, "reset": _reset, "clean": _clean, "rebase": _rebase,
    "bisect": _bisect, "branch": _branch, "tag": _tag, "stash": _stash, "config": _config,
    "worktree": _worktree, "submodule": _submodule, "filter-branch": _filter_branch, "difftool": _difftool,
    "fetch": lambda c: _network(c, "fetch"), "pull": lambda c: _network(c, "pull"),
    "ls-remote": lambda c: _network(c, "ls-remote"), "clone": lambda c: _network(c, "clone"),
    "remote": _remote, "lfs": _lfs, "subtree": _subtree, "svn": lambda c: _bridge(c, "svn"),
    "p4": lambda c: _bridge(c, "p4"), "archive": _archive, "bundle": _bundle,
    "reflog": _reflog, "symbolic-ref": _symbolic_ref, "update-ref": _update_ref, "format-patch": _format_patch, "restore": _restore,
}
