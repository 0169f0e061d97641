"""``foreman doctor``: check the environment and say what to fix.

Each check prints one line: ``[ok]``, ``[warn]`` (works, but something is worth knowing or
setting) or ``[FAIL]`` (something the chosen backend needs is missing), followed by a
``fix:`` line. Only a ``FAIL`` makes the exit code 1.

Like the rest of the CLI, this module prints; the daemon never calls it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .backends.sim.demo_repo import DEMO_AUTHOR_EMAIL, DEMO_AUTHOR_NAME
from .backends.sim.team import demo_repo_path
from .config import Settings, check_paths
from .errors import ForemanError
from .executors.doctor import ray_checks
from .flow.assemble import backend_kinds
from .runtime import RUN_FILE, port_holder, read_run_file
from .sandbox import describe

IDENTITY_GLOBAL = 'git config --global user.name "Your Name" && git config --global user.email you@example.com'
IDENTITY_FIX = IDENTITY_GLOBAL + " (or set them in each repository you register)"

Check = Callable[..., None]
"""``check(ok, what, fix="", warning=False)``: print one ``[ok]``/``[FAIL]`` line (and the fix
for a FAIL); with ``warning=True`` a failed check prints ``[warn]`` and is not a problem."""


def run_doctor(settings: Settings) -> int:
    """Run every check for ``settings`` and print the result; return 0 (all good or only
    warnings) or 1 (at least one ``FAIL``)."""
    problems = warnings = 0

    def check(ok: bool, what: str, fix: str = "", warning: bool = False) -> None:
        nonlocal problems, warnings
        mark = "ok" if ok else ("warn" if warning else "FAIL")
        print(f"[{mark}] {what}" + ("" if ok else f"\n       fix: {fix}"))
        problems += 0 if ok or warning else 1
        warnings += 1 if not ok and warning else 0

    check(sys.version_info >= (3, 11), f"Python {sys.version.split()[0]} (>= 3.11)", "install Python 3.11 or newer")
    try:
        out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout
        ver = tuple(int(x) for x in out.split()[2].split(".")[:2])
        check(ver >= (2, 38), f"{out.strip()} (>= 2.38 for merge-tree --write-tree)", "upgrade git to 2.38 or newer")
    except (OSError, subprocess.CalledProcessError, ValueError, IndexError):
        check(False, "git on PATH", "install git >= 2.38")
    doctor_identity(settings, check)
    _doctor_sandbox(settings, check)
    home = settings.home
    try:
        check_paths(settings)
        check(True, f"profile folder {settings.profile_dir} has no ':' (git can fence worktrees in)")
    except ForemanError as exc:
        check(False, exc.message, "use a --home and --profile without ':'")
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".doctor-probe"
        probe.write_text("ok")
        probe.unlink()
        check(True, f"home {home} is writable")
    except OSError as exc:
        check(False, f"home {home} is writable ({exc})", "choose another --home or fix its permissions")
    doctor_port(settings, check)

    kinds = set(backend_kinds(settings).values())  # a mixed team checks both backends
    if "claude" in kinds:
        check(importlib.util.find_spec("claude_agent_sdk") is not None, "claude-agent-sdk installed",
              "install the claude extra: pip install '.[claude]' in the Foreman checkout")
        check(bool(os.environ.get("ANTHROPIC_API_KEY")), "ANTHROPIC_API_KEY set", "export ANTHROPIC_API_KEY=... (or a cloud provider switch)")
        from .backends.claude.cliproc import cli_version  # (a backend loads only when the settings pick it)

        version = cli_version(settings.claude_cli)
        check(version is not None, f"claude CLI {version or 'not found'}", "reinstall claude-agent-sdk or pass --claude-cli PATH")
    if "local" in kinds:
        has_openai = importlib.util.find_spec("openai") is not None
        check(has_openai, "openai installed", "install the local extra: pip install '.[local]' in the Foreman checkout")
        if has_openai:
            doctor_endpoint(settings, check)
    if settings.executor == "ray":
        for one in ray_checks(settings):
            check(*one)
    if problems:
        print(f"{problems} problem(s)" + (f", {warnings} warning(s)" if warnings else ""))
    else:
        print("all good" if not warnings else f"works, with {warnings} warning(s) above")
    return 0 if not problems else 1


# ---------------------------------------------------------------- the local backend's endpoint
ENDPOINT_TIMEOUT = 5.0
"""Seconds the endpoint has to answer the doctor's ``GET {url}/models``."""


def doctor_endpoint(settings: Settings, check: Check, timeout: float = ENDPOINT_TIMEOUT) -> None:
    """Ask the local backend's OpenAI-compatible endpoint what it serves: one ``GET {url}/models``
    (the chosen local profile's url and api key, as ``foreman start`` uses them; ``timeout`` in
    seconds) through the backend's own client. OK names the model ids it lists; a failure names
    the URL and the error (connection refused, an HTTP status, a timeout, no model served).

    Raises:
        ConfigError: a malformed ``local`` section or an unknown local profile (the CLI checks
        both before the doctor runs).
    """
    from .backends.local.endpoint import Endpoint  # (a backend loads only when the settings pick it)
    from .backends.local.profiles import resolve_profile  # (a backend loads only when the settings pick it)

    profile = resolve_profile(settings)
    url = profile.url

    async def served() -> list[str]:
        endpoint = Endpoint(url, api_key=profile.api_key, request_timeout=timeout)
        try:
            return await endpoint.models()
        finally:
            await endpoint.close()

    fix = (f"start the model server at {url}, or set the url in the config (--url, FOREMAN_URL, "
           "or the local profile's url in config.json)")
    try:
        models = asyncio.run(served())
    except ForemanError as exc:
        check(False, f"the endpoint {url} does not answer GET {url.rstrip('/')}/models: {exc.message}", fix)
        return
    if not models:
        check(False, f"the endpoint {url} answers, but it serves no model", f"load a model in the server at {url}")
        return
    check(True, f"the endpoint {url} answers: it serves {', '.join(models)}")


# ---------------------------------------------------------------- the port
def doctor_port(settings: Settings, check: Check) -> None:
    """Say whether ``settings.port`` is free and, when it is not, who holds it.

    A running Foreman records itself in ``<home>/<profile>/foreman.json`` (:mod:`foreman.runtime`,
    checked against its pid and start time). The port held by this profile's own running Foreman
    is fine (clients connect to it); held by another profile's Foreman or another program, the
    fix is another ``--port`` (``0`` lets the OS pick one). This profile's Foreman running on
    another port is named too.
    """
    port = settings.port
    mine = read_run_file(settings.profile_dir / RUN_FILE)
    running = f"this profile's ({settings.profile}) running Foreman, pid {mine['pid']}" if mine else ""
    if _port_free(port):
        elsewhere = f"; {running} listens on port {mine.get('port')}" if mine and port != mine.get("port") else ""
        check(True, f"port {port} is free{elsewhere}")
        return
    if mine is not None and mine.get("port") == port:
        check(True, f"port {port} is held by {running}: that is fine, `foreman tui --profile {settings.profile}` "
                    "connects to it (a second `foreman start` of this profile would be refused)")
        return
    holder, other = port_holder(settings.home, port)
    holder = holder or "another program"
    if other is not None:
        fix = f"start this profile on another port (--port N, or --port 0 to let the OS pick one), or stop {holder}"
    else:
        fix = f"start on another port (--port N, or --port 0 to let the OS pick one), or stop {holder}"
    check(False, f"port {port} is in use by {holder}" + (f"; {running} listens on port {mine.get('port')}" if mine else ""),
          fix)


def _port_free(port: int) -> bool:
    """Whether ``foreman start`` could listen on ``port``: bound the way its server binds, with
    SO_REUSEADDR (asyncio's ``create_server`` sets it on POSIX), so the TIME_WAIT connections a
    stopped daemon leaves do not count as the port being in use (they did right after `foreman stop`)."""
    with socket.socket() as s:
        if os.name == "posix":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# ---------------------------------------------------------------- git identity
def git_identity(cwd: Path | None = None) -> tuple[str | None, str]:
    """Ask git who commits: ``(identity, "")``, or ``(None, reason)`` when git does not know.

    Uses ``git var GIT_COMMITTER_IDENT``, which applies git's own strict rules (config, then
    ``GIT_COMMITTER_*``/``EMAIL``, then refuses an address it would have to guess); an approved
    merge commit is made with exactly that identity.

    Args:
        cwd: a repository whose local config counts too (default: a folder outside any repository).
    """
    try:
        done = subprocess.run(["git", "var", "GIT_COMMITTER_IDENT"], capture_output=True, text=True, timeout=20,
                              cwd=cwd or tempfile.gettempdir())
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"git could not run ({exc})"
    if done.returncode == 0:
        return done.stdout.rsplit(">", 1)[0] + ">", ""
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("fatal:")]
    return None, (lines[-1] if lines else done.stderr.strip() or f"git var exited {done.returncode}")


def identity_origin(cwd: Path | None = None) -> str:
    """Where git takes the committer's name and email from, for people:
    ``user.name and user.email from /home/me/.gitconfig``, ``GIT_COMMITTER_NAME (environment)`` ...

    Follows git's order for a committer (``git var``): ``GIT_COMMITTER_NAME``/``_EMAIL``, then
    ``user.name``/``user.email`` from the most specific config file (``git config --show-origin``),
    then ``EMAIL`` for the address. Empty when git knows neither.

    Args:
        cwd: the repository whose local config counts (default: a folder outside any repository).
    """
    found: list[tuple[str, str]] = []  # (key, origin)
    for key, env in (("name", "GIT_COMMITTER_NAME"), ("email", "GIT_COMMITTER_EMAIL")):
        if os.environ.get(env):
            found.append((env, "the environment"))
            continue
        try:
            done = subprocess.run(["git", "config", "--show-origin", "--get", f"user.{key}"], capture_output=True,
                                  text=True, timeout=20, cwd=cwd or tempfile.gettempdir())
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and "\t" in done.stdout:
            found.append((f"user.{key}", done.stdout.split("\t", 1)[0].removeprefix("file:")))
        elif key == "email" and os.environ.get("EMAIL"):
            found.append(("EMAIL", "the environment"))
    if len(found) == 2 and found[0][1] == found[1][1]:
        return f"{found[0][0]} and {found[1][0]} from {found[0][1]}"
    return ", ".join(f"{key} from {origin}" for key, origin in found)


def identity_places(settings: Settings) -> list[Path | None]:
    """The repositories whose merges carry the user's identity (``--repo``), or ``[None]``:
    git's identity outside any repository."""
    return [Path(r).expanduser() for r in settings.repo if Path(r).expanduser().is_dir()] or [None]


def doctor_identity(settings: Settings, check: Check) -> None:
    """Say which identity approved merges will carry, where it comes from and how to set it.

    The sim merges only in its demo repository, which gets an identity of its own in its local
    config at start (:func:`foreman.backends.sim.team.ensure_identity`): a missing global
    identity is a warning there. A real backend merges in the user's repositories with the
    identity git finds in each (its local config, the global one, ``GIT_COMMITTER_*``): missing,
    it is a FAIL, since approved merges would be refused.
    """
    if settings.backend == "sim":
        _sim_identity(settings, check)
        return
    for place in identity_places(settings):
        who, why = git_identity(place)
        where = f" in {place}" if place else ""
        if who is not None:
            scope = "" if place else " unless a repository's own config says otherwise"
            check(True, f"git knows who you are{where}: approved merges will be committed as {who}{scope} "
                        f"({identity_origin(place)})")
        else:
            fix = (IDENTITY_GLOBAL + f' (or for this repository only: git -C {place} config user.name "Your Name" && '
                   f"git -C {place} config user.email you@example.com)") if place else IDENTITY_FIX
            check(False, f"git does not know who you are{where}, so approved merges would be refused: {why}", fix)


def _sim_identity(settings: Settings, check: Check) -> None:
    demo = demo_repo_path(settings)
    merges_as = git_identity(demo)[0] if (demo / ".git").is_dir() else None
    where = f"its {demo / '.git' / 'config'}" if merges_as else "its own config, written at start"
    merges_as = merges_as or f"{DEMO_AUTHOR_NAME} <{DEMO_AUTHOR_EMAIL}>"
    sim = f"the sim's merges carry its demo repository's own identity, {merges_as} (from {where})"
    who, why = git_identity(None)
    if who is not None:
        check(True, f"git knows who you are: {who} ({identity_origin(None)}); {sim}")
    else:
        check(False, f"git does not know who you are: {why}; the sim does not need it: {sim}; the claude and local "
              "backends need it: their approved merges would be refused without it", IDENTITY_FIX, warning=True)


def _doctor_sandbox(settings: Settings, check: Check) -> None:
    on, line = describe(settings)
    if on:
        check(True, line)
    elif settings.os_sandbox == "off":  # the user's choice, still worth a warning (docs/policy.md)
        check(False, line, "--os-sandbox auto: without it a script the policy allows runs as you and can read "
                           "the client token", warning=True)
    elif settings.os_sandbox == "required":
        check(False, line, "install bubblewrap (apt-get install bubblewrap) where it can create namespaces, or --os-sandbox auto")
    else:
        check(False, line, "install bubblewrap (apt-get install bubblewrap) to sandbox agents' commands", warning=True)
