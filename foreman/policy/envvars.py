"""Environment variables a command sets, exports or clears.

Three kinds matter (the git safety environment is described in the seed's "git safety" part):

* **safety** variables that carry the git safety environment (no transport, no signing, no
  walking up): changing or clearing them is refused.
* **repository** variables that point git at another repository (``GIT_DIR`` and siblings):
  the exact command asks, in any form (prefix, ``export``, ``env``, ``read``, ``for``).
* **code** variables that make a program run something (pagers, editors, ``LD_PRELOAD``,
  ``NODE_OPTIONS``, ``PATH``...): the exact command asks.

Any other variable set *for a command* (``FOO=1 make``) asks too unless it is on the short list
of harmless ones: nothing is allowed by default. Plain shell variables (``x=1``) are fine.
"""

from __future__ import annotations

from .context import Ctx

SAFETY = frozenset({
    "GIT_ALLOW_PROTOCOL", "GIT_CEILING_DIRECTORIES", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG",
    "GIT_PROTOCOL_FROM_USER", "GIT_NO_REPLACE_OBJECTS",
})
SAFETY_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")

REPOSITORY = frozenset({
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_SHALLOW_FILE", "GIT_GRAFT_FILE", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
})

CODE = frozenset({
    "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR", "GIT_PROXY_COMMAND", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE",
    "NODE_OPTIONS", "NODE_PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PERL5OPT",
    "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS",
    "BASHOPTS", "IFS", "PATH", "CDPATH", "GLOBIGNORE", "HOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS", "GOFLAGS", "RUSTC_WRAPPER", "RUSTC", "CARGO_BUILD_RUSTC_WRAPPER", "CC", "CXX",
    "MAKEFLAGS", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "SHELL", "BROWSER", "TMPDIR", "XDG_CONFIG_HOME",
})
CODE_PREFIXES = ("npm_config_", "NPM_CONFIG_", "PIP_", "LD_", "DYLD_", "BASH_FUNC_", "UV_", "POETRY_")

#: Code variables whose value is not a command line (paths, options, names).
_NOT_PROGRAMS = frozenset({"PATH", "CDPATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "PYTHONPATH", "PYTHONHOME",
                           "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH",
                           "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                           "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "GIT_TEMPLATE_DIR", "GIT_EXEC_PATH", "IFS",
                           "GLOBIGNORE", "SHELLOPTS", "BASHOPTS"})

#: Variables that may be set for a command without asking.
HARMLESS = frozenset({
    "CI", "NODE_ENV", "DEBUG", "LANG", "LANGUAGE", "TZ", "FORCE_COLOR", "NO_COLOR", "COLUMNS", "LINES",
    "TERM", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONHASHSEED", "PYTHONWARNINGS",
    "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONFAULTHANDLER", "RUST_BACKTRACE", "RUST_LOG",
    "CARGO_TERM_COLOR", "GOOS", "GOARCH", "CGO_ENABLED", "GIT_TRACE", "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_MERGE_AUTOEDIT", "VERBOSE", "HYPOTHESIS_PROFILE",
    "TEST", "TESTS", "ENVIRONMENT", "LOG_LEVEL", "JEST_WORKER_ID", "VITEST", "NODE_NO_WARNINGS",
})


def kind_of(name: str) -> str:
    """``"safety"``, ``"repository"``, ``"code"``, ``"harmless"`` or ``"other"``."""
    if name in SAFETY or name.startswith(SAFETY_PREFIXES):
        return "safety"
    if name in REPOSITORY:
        return "repository"
    if name in CODE or name.startswith(CODE_PREFIXES):
        return "code"
    if name in HARMLESS or name.startswith("LC_"):
        return "harmless"
    return "other"


def check_name(ctx: Ctx, name: str, how: str, what: str, value: str | None = None, cwds=None) -> None:
    """Record what setting, exporting or clearing variable ``name`` needs.

    Args:
        ctx: the classification.
        name: the variable.
        how: ``"prefix"`` (set for a command, or set and exported), ``"export"`` (exported),
            ``"statement"`` (a plain shell assignment), ``"unset"`` (cleared).
        what: words for the reason (``"unset clears"``).
        value: the static value set, when known: for a variable that names a program
            (``GIT_PAGER='git push'``) that program is classified too, so a push is refused.
        cwds: the working directories that program would start in (None: unknown).
    """
    kind = kind_of(name)
    if kind == "safety":
        ctx.deny(f"{what} {name}, part of the git safety environment")
        return
    if how == "unset":
        if name.startswith("GIT_"):
            ctx.deny(f"{what} {name}; git variables are part of the safety environment")
        return
    if kind == "repository":
        ctx.exact(f"{what} {name}, which points git at another repository")
    elif kind == "code":
        ctx.exact(f"{what} {name}, which can make a program run other code")
        if value and name not in _NOT_PROGRAMS:
            from .walker import probe_text  # (walker imports this module: the shell's grammar nests)
            probe_text(ctx, value, cwds, f"the program {name} names")
    elif kind == "other" and how in ("prefix",):
        ctx.exact(f"{what} the environment variable {name}, which the policy does not know")
