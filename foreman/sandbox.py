"""The OS sandbox: every command the Foreman runs for an agent, wrapped in bubblewrap.

The permission policy classifies what it can read; this module holds what the policy allowed.
On Linux a command's argument list is wrapped in ``bwrap`` (bubblewrap, Debian package
``bubblewrap``) so that, inside:

* the whole filesystem is mounted read-only (``--ro-bind / /``), with a fresh ``/dev``,
  ``/proc`` and a private, empty ``/tmp`` and ``/var/tmp`` (tmpfs, gone with the sandbox);
* the agent's worktree is writable;
* the user's home folder is hidden (an empty tmpfs), and so is the Foreman's profile folder,
  except the toolchain folders of :data:`HOME_CACHES` (writable) and :data:`HOME_TOOLCHAINS`
  (read-only) that exist, and the Python installation the Foreman runs from;
* git works in the worktree: the main checkout's ``.git`` is readable, and writable only in the
  worktree's own git dir (``.git/worktrees/<name>``: index, ``HEAD``, reflog), the object store
  (``.git/objects``) and the folder of the worktree's branch ref (``refs/heads/agentcraft/<agent>/``
  and its reflog folder), so a commit works but the base branch cannot be moved;
* there is no network (``--unshare-net``: only a loopback of its own, so the daemon's port is
  unreachable too) unless the caller asks for it;
* the process tree dies with the sandbox: a new pid namespace (``--unshare-pid``: when the
  command exits, the kernel kills everything left in it), ``--die-with-parent`` (killing
  ``bwrap`` kills the tree) and ``--new-session`` (no terminal injection via ``TIOCSTI``).

Availability (``bwrap`` on ``PATH`` *and* able to create its namespaces here: some containers
forbid user namespaces) is probed once per process and cached. The ``--os-sandbox`` setting
decides: ``auto`` (default) sandboxes where available and says so once at start when not;
``required`` refuses to start without it; ``off`` never sandboxes.

bubblewrap: https://github.com/containers/bubblewrap (``bwrap(1)``).
"""

from __future__ import annotations

import functools
import logging
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from .errors import ConfigError

logger = logging.getLogger(__name__)

HOME_CACHES: tuple[str, ...] = (
    ".cache/pip", ".cache/uv", ".cache/pypoetry", ".cache/pre-commit", ".npm", ".cache/yarn",
    ".yarn/berry/cache", ".local/share/pnpm/store", ".cargo/registry", ".cargo/git", ".cache/go-build",
    "go/pkg/mod", ".m2/repository", ".gradle/caches", ".gradle/wrapper", ".cache/bazel", ".ccache",
)
"""Folders under the user's home that stay visible and writable (package and build caches)."""

HOME_TOOLCHAINS: tuple[str, ...] = (
    ".cargo/bin", ".rustup", ".local/bin", ".local/lib", ".pyenv", ".nvm", ".volta", ".sdkman", ".bun",
    ".deno", "go/bin", ".gitconfig", ".config/git",
)
"""Folders and files under the user's home that stay visible, read-only (installed toolchains,
the user's git configuration so git behaves as outside)."""

MODES = ("auto", "required", "off")
"""Values of the ``--os-sandbox`` setting."""

PROBE_ARGS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net",
              "--unshare-ipc", "--die-with-parent", "--new-session", "true")


@dataclass(frozen=True)
class Availability:
    """Whether the OS sandbox can run here.

    Attributes:
        ok: ``bwrap`` exists and created its namespaces.
        detail: ``"bubblewrap 0.8.0"`` when ok, else why not (what to install or enable).
        bwrap: the path of ``bwrap`` (empty when not found).
    """

    ok: bool
    detail: str
    bwrap: str = ""


@functools.lru_cache(maxsize=None)
def availability(bwrap: str | None = None) -> Availability:
    """Probe bubblewrap once (per path) and cache the answer.

    Runs ``bwrap`` with the namespaces a sandboxed command uses around ``true``.

    Args:
        bwrap: the executable to try (default: ``bwrap`` on ``PATH``).
    """
    exe = bwrap or shutil.which("bwrap") or ""
    if not exe:
        return Availability(False, "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        probe = subprocess.run([exe, *PROBE_ARGS], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(False, f"{exe} could not run ({exc})", exe)
    if probe.returncode != 0:
        why = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else f"exit {probe.returncode}"
        return Availability(False, f"{exe} cannot create namespaces here ({why}); enable unprivileged user "
                                   "namespaces (sysctl kernel.unprivileged_userns_clone=1) or run outside this container", exe)
    return Availability(True, version or "bubblewrap", exe)


def _user_homes(env: Mapping[str, str]) -> list[Path]:
    homes = []
    if env.get("HOME"):
        homes.append(Path(env["HOME"]))
    try:
        homes.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    except KeyError:
        pass
    out: list[Path] = []
    for home in homes:
        real = home.resolve()
        if real != Path("/") and real not in out:
            out.append(real)
    return out


@dataclass(frozen=True)
class GitLayout:
    """Where git writes for one worktree (read from its ``.git`` link, no git process).

    Attributes:
        common: the repository's ``.git`` (objects, refs, config).
        gitdir: the worktree's own git dir (``<common>/worktrees/<name>``), or ``common`` for a
            main checkout.
        ref_dirs: folders that must be writable for the checked-out branch's ref and reflog.
    """

    common: Path
    gitdir: Path
    ref_dirs: tuple[Path, ...] = ()


def git_layout(worktree: Path) -> GitLayout | None:
    """Return the git folders of ``worktree``, or None when it is not a git checkout."""
    link = worktree / ".git"
    if link.is_dir():
        return GitLayout(link.resolve(), link.resolve())
    try:
        text = link.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = (worktree / text[len("gitdir:"):].strip()).resolve()
    try:
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        common = gitdir
    dirs: list[Path] = []
    try:
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        head = ""
    if head.startswith("ref: refs/heads/"):
        ref = head[len("ref: "):]
        parent = Path(ref).parent  # refs/heads/agentcraft/kit: the ref's lock file is made beside it
        if parent != Path("refs/heads"):  # never the folder that holds the base branch
            for base in (common, common / "logs"):
                folder = base / parent
                try:
                    folder.mkdir(parents=True, exist_ok=True)
                except OSError:
                    continue
                dirs.append(folder)
    return GitLayout(common, gitdir, tuple(dirs))


PRIVATE_TMP: tuple[Path, ...] = (Path("/tmp"), Path("/var/tmp"))
"""Folders replaced by a private, empty tmpfs in the sandbox (what the command writes there is
its own); the Python installation is bound back when it lives there."""


@dataclass(frozen=True)
class Sandbox:
    """A bubblewrap policy: :meth:`wrap` turns a command into its sandboxed command.

    Args:
        bwrap: the ``bwrap`` executable.
        hide: more folders to hide (the Foreman's home and profile folders).
        read_only: more folders to keep visible read-only (default: the Python installation the
            Foreman runs from, which may live in the home folder).
        network: commands wrapped by this sandbox keep the host's network (default: none). The
            Foreman sets it, through :meth:`with_network`, only for a command whose policy
            verdict says it needs the network (:attr:`foreman.policy.Verdict.network`) and that
            was allowed.
    """

    bwrap: str
    hide: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = field(default_factory=lambda: tuple(
        {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}))
    network: bool = False

    def with_network(self, network: bool = True) -> "Sandbox":
        """The same sandbox whose commands keep (``network=True``) or lose the host's network."""
        return replace(self, network=network)

    def explain(self, output: str, *, home: str | None = None) -> str | None:
        """The sandbox rule a failed command's ``output`` points at (:func:`explain`), knowing
        whether this sandbox had the network (a refused connection then is not the sandbox's)."""
        return explain(output, home=home, network=self.network)

    def wrap(self, argv: Sequence[str], *, worktree: str | os.PathLike[str], env: Mapping[str, str],
             network: bool = False, writable: bool = True) -> list[str]:
        """Return ``argv`` wrapped in ``bwrap`` for a command of the agent whose worktree is ``worktree``.

        Args:
            argv: the command (e.g. ``["/bin/sh", "-c", "pytest -q"]``).
            worktree: the writable folder; the command's working directory must be inside it.
            env: the environment the command gets (its ``HOME`` is hidden too).
            network: keep the host's network (default: none, unless the sandbox has
                :attr:`network`).
            writable: False keeps ``worktree`` (and its git folders) read-only too: the lead,
                whose working directory is the user's own checkout, reads there and never writes.
        """
        wt = Path(worktree).resolve()
        network = network or self.network
        args = [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                *(a for tmp in PRIVATE_TMP for a in ("--tmpfs", str(tmp))),
                "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session"]
        if not network:
            args.append("--unshare-net")
        for hidden in (*_user_homes(env), *(h.resolve() for h in self.hide)):
            args += ["--tmpfs", str(hidden)]
        homes = _user_homes(env)
        for home in homes:
            for rel in HOME_TOOLCHAINS:
                args += ["--ro-bind-try", str(home / rel), str(home / rel)]
            for rel in HOME_CACHES:
                args += ["--bind-try", str(home / rel), str(home / rel)]
        hidden_roots = (*homes, *self.hide, *PRIVATE_TMP)
        for keep in self.read_only:  # e.g. a virtualenv under the home or under /tmp
            if any(keep.is_relative_to(h) for h in hidden_roots):
                args += ["--ro-bind-try", str(keep), str(keep)]
        if not writable:  # seen again (it may sit in the hidden home), read-only
            args += ["--ro-bind", str(wt), str(wt)]
        else:
            args += ["--bind", str(wt), str(wt)]
            layout = git_layout(wt)
            if layout is not None and layout.gitdir != wt / ".git":
                args += ["--ro-bind", str(layout.common), str(layout.common)]
                for folder in (layout.gitdir, layout.common / "objects", *layout.ref_dirs):
                    args += ["--bind-try", str(folder), str(folder)]
        args += ["--setenv", "TMPDIR", "/tmp", "--chdir", str(wt), "--", *argv]
        return args

    def wrap_shell(self, command: str, *, worktree: str | os.PathLike[str], env: Mapping[str, str],
                   network: bool = False, writable: bool = True) -> str:
        """Return the shell command line that runs ``command`` (shell text) in this sandbox.

        For a tool that takes shell text rather than an argument list (the claude CLI's Bash tool):
        ``bwrap ... -- <bash> -c <command>``, every word quoted (:func:`shlex.join`), so the
        calling shell passes ``command`` to the sandboxed shell as one argument, unexpanded. The
        ``bwrap`` path is absolute (a name with a slash never resolves to a shell function or
        alias). Arguments as :meth:`wrap`.
        """
        shell = shutil.which("bash", path=env.get("PATH")) or shutil.which("bash") or "/bin/sh"
        return shlex.join(self.wrap([shell, "-c", command], worktree=worktree, env=env, network=network,
                                    writable=writable))


def from_settings(settings: Any) -> Sandbox | None:
    """Return the sandbox the settings ask for, or None (``--os-sandbox off``, or ``auto`` where
    bubblewrap cannot run here).

    Raises:
        SandboxUnavailable: ``--os-sandbox required`` and bubblewrap cannot run here.
    """
    mode = getattr(settings, "os_sandbox", "auto")
    if mode == "off":
        return None
    found = availability()
    if not found.ok:
        if mode == "required":
            raise SandboxUnavailable(f"--os-sandbox required, but the OS sandbox cannot run: {found.detail}")
        return None
    home = Path(settings.home)
    return Sandbox(found.bwrap, hide=(home, Path(settings.profile_dir)))


def describe(settings: Any) -> tuple[bool, str]:
    """Return ``(sandboxed, one line)`` for ``foreman doctor``, ``foreman policy`` and the start banner."""
    mode = getattr(settings, "os_sandbox", "auto")
    if mode == "off":
        return False, "OS sandbox off (--os-sandbox off): agents' commands run unsandboxed"
    found = availability()
    if found.ok:
        return True, f"OS sandbox on ({found.detail}): agents' commands (local RUN, claude Bash, CI) write only in their worktree, no network"
    return False, f"OS sandbox unavailable, agents' commands run unsandboxed: {found.detail}"


class SandboxUnavailable(ConfigError):
    """``--os-sandbox required`` on a machine where bubblewrap cannot run."""

    code = "sandbox_unavailable"


_READ_ONLY = (re.compile(r"read-only file system", re.I),
              "read-only file system: outside the worktree (the OS sandbox lets a command write only in its worktree and /tmp)")
_NO_NETWORK = (re.compile(r"network is unreachable|temporary failure in name resolution|could not resolve host|"
                          r"name or service not known|nodename nor servname|getaddrinfo|no address associated|"
                          r"failed to establish a new connection|connection refused|network is off", re.I),
               "network is off for this command (the OS sandbox gives a command the network only when the "
               "policy says it needs it, e.g. an allowed package install)")

RULE_PREFIX = "[os sandbox] "
"""How :func:`foreman.repos.ci.run_ci` marks the hint line it appends to a sandboxed command's output."""


def explain(output: str, *, home: str | None = None, network: bool = False) -> str | None:
    """Turn a sandboxed command's failure output into a hint naming the sandbox rule, or None.

    Args:
        output: the command's merged output.
        home: the user's home folder: a "No such file or directory" (or a shell's "not found") under
            it means it was hidden.
        network: the command had the network (then a failed connection is not the sandbox's).

    Returns:
        e.g. ``"read-only file system: outside the worktree (...)"``; several hints joined by
        ``"; "``; None when nothing in the output points at the sandbox.
    """
    hints = [text for pattern, text in ((_READ_ONLY,) if network else (_READ_ONLY, _NO_NETWORK)) if pattern.search(output)]
    if home and re.search(re.escape(home.rstrip("/")) + r"/\S*: (?:No such file or directory|not found)|"
                          r"No such file or directory[^\n]*" + re.escape(home.rstrip("/")) + "/", output):
        hints.append(f"the home folder {home} is hidden in the OS sandbox except toolchain caches (pip, npm, cargo, ...)")
    return "; ".join(hints) or None


def rule_of(output: str) -> str | None:
    """The sandbox rule named in a command's output (the line :func:`explain` gave, after
    :data:`RULE_PREFIX`), or None: what the feed and the agent's log show."""
    for line in reversed(output.splitlines()):
        if line.startswith(RULE_PREFIX):
            return line[len(RULE_PREFIX):].strip() or None
    return None


def policy_note(mode: str | None = None, *, network: bool = False) -> tuple[bool, str]:
    """Return ``(sandboxed, line)`` for ``foreman policy``: would an allowed command run sandboxed?

    Args:
        mode: ``auto``/``required``/``off``; default: the resolved ``--os-sandbox`` setting
            (environment and config files, as ``foreman start`` would see them).
        network: the policy's verdict says the command needs the network
            (:attr:`foreman.policy.Verdict.network`): once allowed it gets the network.
    """
    if mode is None:
        from .config import resolve  # (the settings sit above this module: pyproject's one contract exception)

        try:
            mode = resolve({}).os_sandbox
        except ConfigError:
            mode = "auto"

    class _Mode:
        os_sandbox = mode

    on, line = describe(_Mode())
    if on and network:
        line = line.replace(", no network", "; once allowed, this command gets the network (its verdict says it needs it)")
    return on, ("runs in the OS sandbox: " if on else "runs unsandboxed: ") + line
