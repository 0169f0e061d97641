"""Git options that name a program for git to run: each is decided as that program would be, or
asks; a push in it is refused.

The failure this prevents: a git subcommand the policy allows (or one an agent holds a key for,
such as ``Bash:git rebase``) runs a program the policy never looked at, because the program is
an option's value: ``git rebase --exe='git push'`` (git's parse-options takes any unique prefix
of a long option, so ``--exe`` is ``--exec``), ``git grep --open-files-in-pager=./x``, ``git
stash show --ext-diff`` (the external diff program of the config), ``git fetch --upload-pack=...``,
``git mergetool --tool-cmd=...`` (its option loop reads any ``--tool*`` as ``--tool``), ``git
merge-index <program>``, ``git for-each-repo --config=<key> push`` (git run in other
repositories), ``git bisect--helper --bisect-run <cmd>``, or a mistyped subcommand that git's
``help.autocorrect`` runs as ``git push``.

Sources: git-rebase(1) ``--exec``, git-grep(1) ``-O``/``--open-files-in-pager``, git-diff(1)
``--ext-diff`` (and every command taking diff options: log, show, stash show, format-patch,
whatchanged, diff-tree/-files/-index, range-diff), git-difftool(1) ``-x``/``-t``,
git-mergetool(1) ``-t``/``--tool``, git-fetch(1)/git-clone(1)/git-pull(1)/git-ls-remote(1)
``--upload-pack``, git-archive(1) ``--exec``, git-send-email(1) ``--sendmail-cmd``,
``--smtp-server``, ``--to-cmd``, ``--cc-cmd``, ``--header-cmd``, git-instaweb(1) ``--httpd``,
``--browser``, git-web--browse(1) ``--browser``, git-merge-index(1), git-for-each-repo(1),
api-parse-options (abbreviated long options), help.c and levenshtein.c (``help.autocorrect``).
"""

from __future__ import annotations

from .opts import lit_text
from .registry import Call
from .walker import probe_text, run_text
from .words import LIT, Arg

#: Options whose value names a program: subcommand -> long option -> (short letter, how):
#: ``shell`` a command line git runs with the shell, ``tool`` the name of a tool whose command
#: comes from the config, ``own`` an option the subcommand's own rule classifies
#: (:mod:`.gitsubs`: ``rebase -x``, ``difftool -x``), listed here for its abbreviations.
PROGRAM_OPTIONS: dict[str, dict[str, tuple[str, str]]] = {
    "rebase": {"--exec": ("x", "own")},
    "difftool": {"--extcmd": ("x", "own"), "--tool": ("t", "tool")},
    "mergetool": {"--tool": ("t", "tool")},
    "grep": {"--open-files-in-pager": ("O", "shell")},
    "fetch": {"--upload-pack": ("", "shell")},
    "pull": {"--upload-pack": ("", "shell")},
    "clone": {"--upload-pack": ("u", "shell")},
    "ls-remote": {"--upload-pack": ("", "shell"), "--exec": ("", "shell")},
    "fetch-pack": {"--upload-pack": ("", "shell"), "--exec": ("", "shell")},
    "archive": {"--exec": ("", "shell")},
    "send-email": {"--sendmail-cmd": ("", "shell"), "--smtp-server": ("", "shell"), "--to-cmd": ("", "shell"),
                   "--cc-cmd": ("", "shell"), "--header-cmd": ("", "shell")},
    "instaweb": {"--httpd": ("d", "shell"), "--browser": ("b", "shell")},
    "web--browse": {"--browser": ("b", "shell"), "--cmd": ("", "shell")},
}

#: Options that take their value only when attached (``-O<pager>``, ``--open-files-in-pager=<pager>``).
_OPTIONAL_VALUE = frozenset({"--open-files-in-pager"})

#: The diff option that runs the external diff program (``diff.external``, a driver's ``command``).
EXT_DIFF = "--ext-diff"
#: Subcommands that take diff options, ``--ext-diff`` among them.
DIFF_SUBS = frozenset({"diff", "log", "show", "whatchanged", "stash", "format-patch", "diff-tree", "diff-files",
                       "diff-index", "range-diff", "cherry-pick", "revert", "am", "rebase", "add", "checkout",
                       "reset", "restore", "commit", "grep", "blame", "shortlog", "rev-list", "notes"})
#: Shortest abbreviation of a long option taken as one (``--e`` would be ``--exec`` of rebase).
_MIN_ABBREV = 3


def _expand(sub: str, name: str) -> str | None:
    """The program-naming long option ``name`` stands for in ``git <sub>``, else None."""
    longs = PROGRAM_OPTIONS.get(sub, {})
    if name in longs or name == EXT_DIFF and sub in DIFF_SUBS:
        return name
    if name.startswith("--no-") or len(name) < _MIN_ABBREV:
        return None
    if sub == "mergetool" and name.startswith("--tool") and not name.startswith("--tool-help"):
        return "--tool"  # (git-mergetool's option loop: ``-t|--tool*)``)
    for full in longs:
        if full.startswith(name):
            return full
    if sub in DIFF_SUBS and len(name) >= len("--ext") and EXT_DIFF.startswith(name):
        return EXT_DIFF
    return None


def unabbreviate(sub: str, args: list[Arg]) -> list[Arg]:
    """``args`` of ``git <sub>`` with abbreviated program-naming long options written out
    (``--exe=x`` -> ``--exec=x``), up to ``--``; the subcommand's rules then see them whole."""
    out: list[Arg] = []
    for i, a in enumerate(args):
        t = lit_text(a)
        if t == "--":
            out.extend(args[i:])
            break
        if t is not None and t.startswith("--"):
            name, eq, val = t.partition("=")
            full = _expand(sub, name)
            if full is not None and full != name:
                a = Arg(LIT, full + eq + val, a.glob, a.src)
        out.append(a)
    return out


def program_options(c: Call, sub: str) -> None:
    """Judge the options of ``git <sub>`` (``c``) that name a program (:data:`PROGRAM_OPTIONS`,
    ``--ext-diff``): each program is classified as if typed (a push is refused), and what the
    policy cannot see through asks for the exact command."""
    longs = PROGRAM_OPTIONS.get(sub, {})
    shorts = {short: long for long, (short, _) in longs.items() if short}
    args = c.args
    i = 0
    while i < len(args):
        t = lit_text(args[i])
        i += 1
        if t is None or t == "--":
            if t == "--":
                break
            continue
        if t.startswith("--"):
            name, eq, val = t.partition("=")
            if name == EXT_DIFF and sub in DIFF_SUBS:
                c.exact(f"git {sub} --ext-diff runs the external diff program the config names (diff.external or "
                        "a diff driver's command)")
                continue
            if name not in longs:
                continue
            value: Arg | None = Arg(LIT, val, args[i - 1].glob, args[i - 1].src) if eq else None
            if not eq and name not in _OPTIONAL_VALUE and i < len(args):
                value = args[i]
                i += 1
            _judge(c, sub, name, value)
        elif t.startswith("-") and len(t) > 1 and shorts:
            for j, letter in enumerate(t[1:], start=1):
                if letter not in shorts:
                    continue
                name = shorts[letter]
                if j + 1 < len(t):
                    value = Arg(LIT, t[j + 1:], args[i - 1].glob, args[i - 1].src)
                elif name in _OPTIONAL_VALUE:
                    value = None
                elif i < len(args):
                    value = args[i]
                    i += 1
                else:
                    value = None
                _judge(c, sub, name, value)
                break


def _judge(c: Call, sub: str, name: str, value: Arg | None) -> None:
    how = PROGRAM_OPTIONS[sub][name][1]
    if how == "own":
        return
    what = f"git {sub} {name}"
    if value is None:
        c.exact(f"{what} runs the program the config names")
        return
    text = lit_text(value)
    if text is None:
        c.exact(f"{what} runs a program named by a variable")
        return
    if how == "tool":
        c.exact(f"{what} runs the tool {text!r}, whose command comes from the config")
        probe_text(c.ctx, text, c.cwds, what)
        return
    c.exact(f"{what} runs {text!r}")
    probe_text(c.ctx, text, c.cwds, what)


# ---- subcommands that run a program named by an operand ---------------------------------------
def merge_index(c: Call):
    """``git merge-index [-o] [-q] <merge-program> ...``: git runs the program for each unmerged file."""
    ops = [a for a in c.args if lit_text(a) not in ("-o", "-q")]
    program = lit_text(ops[0]) if ops else None
    if program is None:
        c.exact("git merge-index runs a program named by a variable")
    else:
        c.exact(f"git merge-index runs {program!r}")
        probe_text(c.ctx, program, c.cwds, "git merge-index")
    c.mutate("git merge-index")
    return None


def for_each_repo(c: Call):
    """``git for-each-repo --config=<key> [--] <args>``: ``git <args>`` in every repository a
    config key lists (other repositories than the worktree): classified as that git command run
    somewhere unknown, so a push is refused and anything else asks."""
    args = list(c.args)
    while args and (lit_text(args[0]) or "").startswith("--") and lit_text(args[0]) != "--":
        head = lit_text(args.pop(0)) or ""
        if head == "--config" and args:
            args.pop(0)
    if args and lit_text(args[0]) == "--":
        args.pop(0)
    c.exact("git for-each-repo runs git in the repositories a config key lists")
    if any(a.kind != LIT for a in args):
        c.exact("git for-each-repo runs a git command from a variable")
        probe_text(c.ctx, "git " + " ".join(a.src for a in args), None, "git for-each-repo")
        return None
    line = "git " + " ".join("'" + a.value.replace("'", "'\\''") + "'" for a in args)
    run_text(c.ctx, line, None, None, "git for-each-repo")
    return None


def bisect_helper(c: Call):
    """``git bisect--helper --bisect-run <cmd>...`` (git before 2.40): the command bisect runs."""
    for k, a in enumerate(c.args):
        if lit_text(a) in ("--bisect-run", "bisect-run"):
            c.mutate("git bisect run")
            return c.sub(c.args[k + 1:], None) if c.args[k + 1:] else None
    c.mutate("git bisect checks out commits")
    return None


# ---- help.autocorrect ------------------------------------------------------------------------
def _levenshtein(a: str, b: str, swap: int = 0, sub: int = 2, add: int = 1, delete: int = 3) -> int:
    """git's weighted Damerau-Levenshtein distance (levenshtein.c), with help.c's weights."""
    row0 = [0] * (len(b) + 1)
    row1 = [j * add for j in range(len(b) + 1)]
    for i in range(len(a)):
        row2 = [(i + 1) * delete] + [0] * len(b)
        for j in range(len(b)):
            row2[j + 1] = row1[j] + sub * (a[i] != b[j])
            if i > 0 and j > 0 and a[i - 1] == b[j] and a[i] == b[j - 1] and row2[j + 1] > row0[j - 1] + swap:
                row2[j + 1] = row0[j - 1] + swap
            row2[j + 1] = min(row2[j + 1], row1[j + 1] + delete, row2[j] + add)
        row0, row1 = row1, row2
    return row1[len(b)]


#: help.c: a candidate is similar enough below this score (the distance + 1; 0 for a prefix).
_SIMILARITY_FLOOR = 7


def autocorrects_to_push(word: str, known: frozenset[str] = frozenset()) -> bool:
    """Whether git's ``help.autocorrect`` (when the user's config sets it) could run the unknown
    subcommand ``word`` as ``git push``: ``psuh``, ``puhs``, ``pus``, ``pushh``. ``known``: other
    subcommands that score better or as well (then git does not choose push)."""
    word = word.lower()
    if len(word) < 2 or word == "push":
        return False
    score = 0 if "push".startswith(word) else _levenshtein(word, "push") + 1
    if score >= _SIMILARITY_FLOOR:
        return False
    return all((0 if other.startswith(word) else _levenshtein(word, other) + 1) > score
               for other in known if other != "push")


#: The subcommands of this module, for :mod:`.gitcmd`'s dispatch.
PROGRAM_SUBS = {"merge-index": merge_index, "for-each-repo": for_each_repo, "bisect--helper": bisect_helper}
