"""Rule keys for package commands that never widen (issue 12, "Grants that never widen").

A stored "always allow" key for ``npm install`` must not cover ``npm install`` from another
registry, of a tarball URL or a git repository, or run in another directory. So the key of a
package command names everything that changes *what is installed from where*:

* ``in <dir>``: the directory it runs in, relative to the worktree (omitted at the top);
* ``registry <url>``: a registry or index option (``--registry``, ``-i``, ``--index-url``,
  ``--extra-index-url``, ``--find-links``, ``--source``, cargo ``--registry``/``--index``);
* ``source <spec>``: every source that is not a plain package name: URLs, paths, git specs
  (``git+https://...``, ``github:u/r``, ``u/r``, ``./pkg``, ``x.whl``, ``--git``, ``--path``,
  ``-e``, Go module paths), and requirement files (``-r``);
* ``option <flag>``: any option after the subcommand that is not on the tool's short list of
  options that only change how it installs (``--save-dev``, ``--no-deps``, ``--locked``...).

The key is ``Bash:<tool> <sub>`` followed by those parts, so ``Bash:npm install`` (a plain
registry install at the top of the worktree) is what it always was, and any key stays exactly
as wide as the command it was granted for.
"""

from __future__ import annotations

import posixpath

from .opts import Parsed, lit_text
from .registry import Call
from .words import Arg

#: Options of each family that take a value (so the value is not read as a package).
VALUE_OPTS = {
    "npm": {"--registry", "--prefix", "-C", "--dir", "--cwd", "--workspace", "-w", "--cache", "--userconfig",
            "--globalconfig", "--tag", "--omit", "--include", "--loglevel", "--install-strategy", "--location",
            "--filter", "-F", "--network-concurrency", "--modules-folder", "--mutex", "--reporter"},
    "pip": {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "-e", "--editable",
            "-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root", "--src",
            "--upgrade-strategy", "--only-binary", "--no-binary", "--progress-bar", "--python", "-p", "--index",
            "--default-index", "--group", "--extra", "--directory", "--project", "--platform", "--python-version",
            "--implementation", "--abi", "--report", "--root-user-action", "--no-build-package", "--package",
            "-d", "--dest", "-w", "--wheel-dir", "--cache-dir", "--log", "--proxy", "--timeout", "--retries"},
    "cargo": {"--registry", "--index", "--git", "--path", "--branch", "--tag", "--rev", "--version", "--vers",
              "--features", "-F", "--root", "--target", "--target-dir", "--profile", "-j", "--jobs", "--bin",
              "--example", "--manifest-path", "--package", "-p", "--rename", "--dev", "--build", "--config", "-Z"},
    "go": {"-C", "-modfile", "-tags", "-o", "-p", "-gcflags", "-ldflags"},
    "gem": {"-s", "--source", "-v", "--version", "-i", "--install-dir", "-n", "--bindir", "--platform", "-g",
            "--file"},
}

#: Options that select a registry or index (the key names them with their value).
REGISTRY_OPTS = {
    "npm": {"--registry"},
    "pip": {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--index",
            "--default-index", "--no-index"},
    "cargo": {"--registry", "--index"},
    "go": set(),
    "gem": {"-s", "--source", "--clear-sources"},
}

#: Options whose value is a source (a path, URL or repository).
SOURCE_OPTS = {
    "npm": set(),
    "pip": {"-e", "--editable", "-r", "--requirement", "-c", "--constraint"},
    "cargo": {"--git", "--path", "--branch", "--tag", "--rev"},
    "go": {"-modfile"},
    "gem": {"-g", "--file"},
}

#: Options that only change how a tool installs, not what or from where (left out of the key).
PLAIN_OPTS = {
    "npm": {"-D", "--save-dev", "-S", "--save", "-E", "--save-exact", "-O", "--save-optional", "-P", "--save-prod",
            "--save-peer", "--no-save", "--frozen-lockfile", "--immutable", "--prefer-offline", "--offline",
            "--no-audit", "--no-fund", "--ignore-scripts", "--legacy-peer-deps", "--strict-peer-deps",
            "--production", "--prod", "--dev", "-q", "--quiet", "--silent", "--loglevel", "--omit", "--include",
            "--no-optional", "--workspace", "-w", "--workspaces", "--ws", "--include-workspace-root", "--exact",
            "--tilde", "--pure-lockfile", "--check-files", "--no-package-lock", "--package-lock-only",
            "--lockfile-only", "--verbose", "-d", "--foreground-scripts", "--no-progress", "--color", "--no-color",
            "--dry-run", "--prefer-frozen-lockfile", "--no-frozen-lockfile", "-y", "--yes", "--filter", "-F",
            "--reporter", "--network-concurrency"},
    "pip": {"-U", "--upgrade", "-q", "--quiet", "-v", "--verbose", "--no-deps", "--pre", "--no-cache-dir",
            "--upgrade-strategy", "--force-reinstall", "--no-build-isolation", "--require-hashes", "--only-binary",
            "--no-binary", "--prefer-binary", "--disable-pip-version-check", "--no-warn-script-location",
            "--progress-bar", "--dry-run", "-y", "--yes", "--no-input", "--no-color", "--root-user-action",
            "--compile", "--no-compile", "--use-pep517", "--ignore-installed", "-I", "--dev", "--frozen",
            "--locked", "--no-sync", "--all-extras", "--extra", "--group", "--no-dev", "--upgrade-package", "-P",
            "--no-install-project", "--inexact", "--exact", "--optional", "--script", "--strict", "--no-root",
            "--sync", "--only", "--with", "--without", "--all-groups", "--no-cache", "--python", "-p", "--package",
            "--no-build-package", "--no-progress", "--offline", "--quiet-exit"},
    "cargo": {"--locked", "--frozen", "--offline", "-q", "--quiet", "-v", "--verbose", "--features", "-F",
              "--all-features", "--no-default-features", "--force", "-f", "--version", "--vers", "--bin",
              "--example", "--dev", "--build", "--optional", "--no-optional", "--dry-run", "--package", "-p",
              "--rename", "--default-features", "--profile", "--debug", "-j", "--jobs", "--color", "--target-dir"},
    "go": {"-u", "-t", "-v", "-x", "-d", "-mod", "-tags", "-race", "-trimpath", "-a", "-n", "-p", "-gcflags",
           "-ldflags", "-buildvcs"},
    "gem": {"--no-document", "-N", "--no-doc", "--conservative", "--minimal-deps", "--force", "-f", "-q", "--quiet",
            "-V", "--verbose", "-v", "--version", "--pre", "--prerelease", "--user-install", "--platform",
            "--no-user-install", "--development", "--ignore-dependencies", "--both", "-l", "--local", "-r", "--remote"},
}


def _is_source(family: str, spec: str) -> bool:
    """Whether a package operand names a source other than the registry (URL, path, git spec)."""
    if "://" in spec or spec.startswith(("git+", "git:", "git@", "file:", "link:", "portal:", "github:", "gitlab:",
                                         "bitbucket:", "gist:", "hg+", "svn+", "bzr+", "http:", "https:")):
        return True
    if spec.startswith((".", "/", "~")) or spec.endswith((".tgz", ".tar.gz", ".whl", ".zip", ".gem", ".crate")):
        return True
    if family == "npm":
        # name[@range], @scope/name[@range]: from the registry; u/r is a GitHub repository,
        # alias@npm:x and other protocols name another source.
        name = ("@" + spec[1:].split("@", 1)[0]) if spec.startswith("@") else spec.split("@", 1)[0]
        return ":" in spec or name.count("/") > (1 if spec.startswith("@") else 0)
    if family == "go":
        return True  # a module path names the repository it comes from
    return "/" in spec or ("@" in spec and family == "pip")


def package_key(c: Call, tool: str, sub: str, family: str, opts: Parsed, operands: list[Arg]) -> str:
    """The key for one package command (see the module docstring); asks for anything unknown.

    Args:
        c: the call (its working directories give ``in <dir>``).
        tool: the tool as the key names it (``npm``, ``pip``, ``uv pip``, ``cargo``...).
        sub: the canonical subcommand (``install``, ``add``, ``get``...).
        family: which option tables apply (``npm``, ``pip``, ``cargo``, ``go``, ``gem``).
        opts: every option given, before and after the subcommand.
        operands: the package operands.

    Returns:
        The key. A word from a variable or several possible directories make the exact command
        ask instead (recorded on the call), and the plain key is returned for the prompt.
    """
    parts: list[str] = []
    cwds = c.cwds
    if cwds is not None and all(c.ctx.inside(d) for d in cwds):
        rels = {posixpath.relpath(d, c.ctx.worktree) for d in cwds}
        if len(rels) > 1:
            c.exact(f"{tool} {sub} may run in one of several directories")
        elif rels != {"."}:
            parts.append(f"in {rels.pop()}")
    plain = PLAIN_OPTS[family]
    for flag, value in opts.opts:
        v = lit_text(value) if value is not None else ""
        if value is not None and v is None:
            c.exact(f"{tool} {sub} {flag} gets its value from a variable")
            continue
        if flag in REGISTRY_OPTS[family]:
            parts.append(f"registry {flag} {v}".rstrip())
        elif flag in SOURCE_OPTS[family]:
            parts.append(f"source {flag} {v}".rstrip())
        elif flag not in plain:
            parts.append(f"option {flag}" + (f"={v}" if value is not None else ""))
    for a in operands:
        t = lit_text(a)
        if t is None:
            c.exact(f"{tool} {sub} installs a package named by a variable")
        elif _is_source(family, t):
            parts.append(f"source {t}")
    return f"Bash:{tool} {sub}" + "".join(" " + p for p in parts)
