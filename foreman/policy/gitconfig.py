"""Git configuration as the policy sees it: ``-c``/``--config-env``/``git config`` keys (which are
harmless, which sign, which run programs) and aliases, whose command is classified in turn.

Sources: git-config(1) (keys that run programs: ``core.pager``, ``core.fsmonitor``,
``core.sshCommand``, ``diff.external``, ``*.textconv``, filters, ``alias.*`` with ``!``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .context import Result
from .registry import Call
from .walker import probe_text, run_text
from .words import LIT, Arg

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
        classify_alias(c, value, [])
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


def classify_alias(c: Call, value: str, rest: list[Arg]) -> Result:
    """Classify a git alias's expansion with the words after it: ``!cmd`` as a shell command, else
    as ``git <value>`` (git-config(1), ``alias.*``)."""
    tail = "".join(" '" + (a.text or "").replace("'", "'\\''") + "'" for a in rest if a.kind == LIT)
    if any(a.kind != LIT for a in rest):
        c.exact("a git alias is given words from a variable")
    if value.startswith("!"):
        return run_text(c.ctx, value[1:] + tail, c.cwds, None, "a git alias")
    return run_text(c.ctx, "git " + value + tail, c.cwds, None, "a git alias")


def host_of(url: str) -> str | None:
    """The host of a remote URL (``https://h/x``, ``user@h:x``), or None for a local path."""
    if "://" in url:
        try:
            return urlsplit(url).hostname
        except ValueError:
            return None
    if ":" in url and not url.startswith("/"):
        host = url.split(":", 1)[0]
        return host.rsplit("@", 1)[-1] or None
    return None


def is_url(text: str) -> bool:
    """Whether a remote argument is a URL (``scheme://``, ``user@host:path``) rather than a remote's name."""
    return "://" in text or (":" in text and "@" in text.split(":", 1)[0]) or text.startswith("git@")
