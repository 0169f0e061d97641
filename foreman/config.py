"""Settings: the one module that reads the environment.

Every setting can come from a command-line flag, an ``AGENTCRAFT_*`` environment variable, a
key in ``<home>/<profile>/config.json`` (the profile file), a key in ``<home>/config.json``
(the home file, shared by every profile) or its default; precedence is
flag > env > profile file > home file > default. In either file, a backend section
(``"claude"``, ``"local"`` or ``"sim"``) may hold settings that apply only when that backend is
the one started, e.g. ``{"claude": {"workers": ["kit", "wren"]}}``; within one file a backend
section outranks the file's top-level keys. The merged :class:`Settings` remembers where each
value came from (``flag``, ``env``, ``file``, ``file:<backend>``, ``home-file``,
``home-file:<backend>``, ``default``), so ``foreman config --json`` can show it. Unknown keys
and bad values raise :class:`~foreman.errors.ConfigError` naming the file, the key, the key meant
when one is close, and the fix; a backend section is checked only when the team uses that backend
(:attr:`Settings.backends_in_use`), so a section kept for later stops nothing.
"""

from __future__ import annotations

import difflib
import getpass
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .config_agents import check_agents
from .config_values import auto_answer as _auto_answer
from .config_values import boolean as _bool
from .config_values import choice as _choice
from .config_values import comma_list as _list
from .config_values import number as _number
from .config_values import opt_budget as _opt_budget
from .config_values import port as _port
from .config_values import positive as _positive
from .config_values import resources as _resources
from .config_values import url as _url
from .config_values import whole as _whole
from .config_values import worker_names as _worker_names
from .config_values import workers as _workers
from .core.roster import DEFAULT_WORKER_NAMES
from .errors import ConfigError, closest

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Option:
    """One setting: its key (snake_case; camelCase in config.json), type, default and help."""

    key: str
    parse: Callable[[Any], Any]
    default: Any
    help: str
    flag: str = ""
    """The CLI flag, default ``--key-with-dashes``."""
    kind: str = "value"
    """``value`` (takes an argument), ``bool`` (``--x``/``--no-x``), ``optional`` (``--showcase [late]``)."""
    const: Any = None

    @property
    def cli(self) -> str:
        return self.flag or "--" + self.key.replace("_", "-")

    @property
    def choices(self) -> tuple[str, ...]:
        """The values the option takes when they are a fixed set (empty, meaning unset, left out), else ()."""
        return tuple(a for a in getattr(self.parse, "allowed", ()) if a)

    @property
    def env(self) -> str:
        return "AGENTCRAFT_" + self.key.upper()

    @property
    def file_key(self) -> str:
        head, *rest = self.key.split("_")
        return head + "".join(p.capitalize() for p in rest)


OPTIONS: tuple[Option, ...] = (
    Option("backend", _choice("sim", "claude", "local"), "sim", "which backend runs the agents"),
    Option("port", _port, 7878, "WebSocket port on 127.0.0.1, which serves the browser view too (0 picks a free one)"),
    Option("user_name", str, None, "how the agents address you (default: your OS user name)"),
    Option("repo", _list, [], "repositories to register at start, comma-separated (sim: a fresh sandbox/sim-demo)"),
    Option("goal", str, None, "submit this goal right away"),
    Option("reset", _bool, False, "wipe this profile's state first", kind="bool"),
    Option("allow_browser_origins", _bool, False, "accept WebSocket requests from browsers (development only)", kind="bool"),
    Option("web_lan", _bool, False, "listen on every interface, not only 127.0.0.1, so a phone on your network can open "
           "the browser view (`foreman web`); the token and its login are still required", kind="bool"),
    Option("auth", _bool, True, "clients must present the profile's token from foreman.json (--no-auth: any local process, an agent's included, may read and steer)", kind="bool"),
    Option("repo_poll_ms", _positive(_whole), 10_000, "how often repositories are re-checked for head/dirty changes (ms)"),
    Option("merge_style", _choice("merge", "squash"), "merge", "approved merges: a merge commit, or one squashed commit"),
    Option("sign_merges", _bool, True, "sign approved merge commits when your git config signs", kind="bool"),
    Option("keep_worktrees", _bool, False, "keep a task's worktree folder after its merge or reject (its branch is always kept)", kind="bool"),
    Option("notify", _bool, None, "desktop notification when you are needed (default: on for real backends, off for sim)", kind="bool"),
    Option("toast_silent", _bool, False, "desktop notifications without sound", kind="bool"),
    Option("max_concurrent", _positive(_whole), 3, "workers running at once"),
    Option("ci", str, None, "test command run after each task, and on each approved merge before it lands (default: detected)"),
    Option("ci_timeout", _positive(_number), 600.0, "seconds before a CI run or merge test is killed with its whole process tree"),
    Option("merge_train", _positive(_whole), 1, "merge tests run at once per base branch: 1 tests the queue's head "
           "alone; N > 1 also tests the next N-1 approved merges, each on top of the ones ahead (a merge train)"),
    Option("speed", _positive(_number), 1.0, "sim: time multiplier (higher is faster)"),
    Option("seed", _whole, 7, "sim: random seed for the ambient chatter"),
    Option("autostart", _bool, True, "sim: submit the demo goal at start", kind="bool"),
    Option("ambient", _bool, True, "sim: idle chatter between the team's actions and replies to your messages", kind="bool"),
    Option("sim_flow", _bool, True, "deprecated, no effect: the sim's team always runs through the flow every model "
           "backend runs on (accepted so that a config file holding simFlow still loads)", kind="bool"),
    Option("auto_answer", _auto_answer, [], "answer decisions of these kinds with their first option (merge,permission,question)"),
    Option("exit_on_goal_done", _bool, False, "stop the daemon (state saved, as `foreman stop` does) once every goal is "
           "finished, i.e. done or cancelled, and there is one at least (a profile whose goals are all finished stops "
           "right after its start); exit code 0 when every goal is done, 1 when one was cancelled", kind="bool"),
    Option("sandbox", str, None, "sim: folder for the demo repositories (default: the checkout's sandbox/, else <home>/sandbox)"),
    Option("showcase", _choice("", "busy", "late"), "", "sim: hold a static showcase state (busy, or late)", kind="optional", const="busy"),
    Option("workers", _workers, ["3"], "team: a size 1..100 (the first N of juniper,kit,wren,rowan,tove; "
           "beyond 5 adds workers named by --worker-names) or worker names; the others stay off shift"),
    Option("worker_names", _worker_names, list(DEFAULT_WORKER_NAMES), "names of the workers beyond the five named "
           "ones, in order; a last entry with {n} names the rest by seat (worker-{n})"),
    Option("model", str, None, "model for every agent (overrides --lead-model/--worker-model)"),
    Option("lead_model", str, None, "the lead's model (claude default: opus)"),
    Option("worker_model", str, None, "the workers' model (claude default: sonnet)"),
    Option("lead_backend", _choice("", "claude", "local"), "", "the lead's backend in a mixed team (default: --backend)"),
    Option("worker_backend", _choice("", "claude", "local"), "", "the workers' backend in a mixed team (default: --backend)"),
    Option("effort", _choice("", "low", "medium", "high", "max"), "", "claude: reasoning effort"),
    Option("max_turns", _positive(_whole), None, "cap on model round trips per turn for every agent (overrides the two below)"),
    Option("max_turns_lead", _positive(_whole), 40, "cap on model round trips per lead turn"),
    Option("max_turns_worker", _positive(_whole), 80, "cap on model round trips per worker turn"),
    Option("max_budget", _opt_budget, None, "claude: cap in USD per turn"),
    Option("budget_goal", _opt_budget, None, "cap in USD per goal: no new turn starts past it until you raise it"),
    Option("budget_task", _opt_budget, None, "cap in USD per task: no new turn starts past it until you raise it"),
    Option("budget_day", _opt_budget, None, "cap in USD per UTC day for the whole team"),
    Option("lead_review", _bool, True, "the lead reviews each task before the merge decision", kind="bool"),
    Option("turn_timeout", _positive(_number), 1800.0, "seconds before a turn is aborted and its task blocked"),
    Option("claude_cli", str, None, "claude: the CLI executable to use instead of the SDK's bundled one"),
    Option("use_claude_login", _bool, False, "claude: use your local CLI login instead of an API key (personal use)", kind="bool"),
    Option("local_profile", str, None, "local: the named profile of the config section 'local' to use"),
    Option("url", _url, "http://127.0.0.1:8790/v1", "local: the OpenAI-compatible endpoint (env FOREMAN_URL also works)"),
    Option("os_sandbox", _choice("auto", "required", "off"), "auto",
           "run agents' commands (local RUN, claude Bash, CI) in the OS sandbox (bubblewrap): auto (where available), required, off"),
    Option("executor", _choice("local", "ray"), "local",
           "where workers' task turns and CI run: local (this machine), ray (the nodes of a Ray cluster; the ray extra)"),
    Option("ray_address", str, None, "ray: the cluster to join (host:port of its head, or auto); default: start one on this machine"),
    Option("ray_resources", _resources, {}, "ray: what a node needs to host a worker, e.g. gpu_box=1,CPU=1 (custom resources from the cluster's config)"),
    Option("ray_heartbeat", _positive(_number), 5.0, "ray: seconds between a remote worker's heartbeats; three missed ones mean its node is lost"),
    Option("log_level", _choice("DEBUG", "INFO", "WARNING", "ERROR"), "INFO", "daemon log level"),
)
"""Every setting of ``foreman start``."""

BY_KEY = {o.key: o for o in OPTIONS}
BY_FILE_KEY = {o.file_key: o for o in OPTIONS}
DEPRECATED = {"sim_flow": "the sim's team always runs on the flow; the setting has no effect, remove it"}
"""Settings kept only so that a command line, environment or config file holding them still works:
each is read and checked as before, has no effect, and a warning says so (:func:`resolve`)."""
BACKEND_SECTIONS = ("claude", "local", "sim")
"""Config-file sections whose setting keys apply only when that backend is started."""
SECTION_EXTRAS: dict[str, frozenset[str]] = {"local": frozenset({"profile", "profiles"}), "claude": frozenset(), "sim": frozenset()}
"""Keys of a backend section that are not settings: kept in :attr:`Settings.sections` for the
backend to validate (the local backend's endpoint profiles)."""
SECTIONS = ("agents", *BACKEND_SECTIONS)
"""Config-file sections (objects) besides the top-level settings."""


@dataclass(frozen=True)
class Settings:
    """The resolved settings of one ``foreman start``.

    Attributes:
        home: the state root (``~/.agentcraft``).
        profile: the profile name; state lives in ``home / profile``.
        values: every option's value by key.
        sources: where each value came from: ``flag``, ``env``, ``file`` (the profile file),
            ``file:<backend>`` (its backend section), ``home-file``, ``home-file:<backend>`` or
            ``default``.
        sections: config-file sections for the backends to read (``agents``; the non-setting
            keys of ``local``), the profile file's keys over the home file's.
    """

    home: Path
    profile: str
    values: dict[str, Any]
    sources: dict[str, str]
    sections: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):  # (pickle looks up __setstate__ ... before ``values`` exists)
            raise AttributeError(key)
        try:
            return self.values[key]
        except KeyError:
            raise AttributeError(key) from None

    @property
    def profile_dir(self) -> Path:
        """``home / profile``."""
        return self.home / self.profile

    @property
    def backends_in_use(self) -> frozenset[str]:
        """The backends the team runs on (:func:`backends_in_use`)."""
        return backends_in_use(self.values, self.sections)

    def as_json(self) -> dict[str, Any]:
        """Return ``{key: {"value": v, "source": s}}`` for ``foreman config --json``.

        Keys are those of the config file (camelCase: ``userName``, ``maxConcurrent``; sections
        by name), besides ``home`` and ``profile``.
        """
        out: dict[str, Any] = {
            "home": {"value": str(self.home), "source": self.sources.get("home", "default")},
            "profile": {"value": self.profile, "source": self.sources.get("profile", "default")},
        }
        for key, value in self.values.items():
            out[BY_KEY[key].file_key] = {"value": value, "source": self.sources[key]}
        for name, section in self.sections.items():
            out[name] = {"value": section, "source": self.sources.get(f"section:{name}", "file")}
        return out


def backends_in_use(values: Mapping[str, Any], sections: Mapping[str, Any]) -> frozenset[str]:
    """The backends a team with these settings runs on: the sim alone, or ``backend`` with a mixed
    team's ``lead_backend``/``worker_backend`` and the backends the ``agents`` section names."""
    if values["backend"] == "sim":
        return frozenset({"sim"})
    agents = sections.get("agents", {})
    named = {over.get("backend") for over in agents.values() if isinstance(over, dict)}
    return frozenset({values["backend"], values["lead_backend"], values["worker_backend"], *named} - {"", None})


def default_home(env: Mapping[str, str]) -> Path:
    """Return the state root: ``AGENTCRAFT_HOME`` or ``~/.agentcraft``."""
    return Path(env.get("AGENTCRAFT_HOME") or Path.home() / ".agentcraft").expanduser()


def resolve(flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Settings:
    """Merge flags, environment, config files and defaults into :class:`Settings`.

    Args:
        flags: values given on the command line (only those the user typed), by option key,
            plus optional ``home`` and ``profile``.
        env: the environment (defaults to ``os.environ``; tests pass a dict).

    Raises:
        ConfigError: an unknown key in a config file or one of its backend sections, a bad value
            anywhere (naming where), or a config file that is not a JSON object.
    """
    env = os.environ if env is None else env
    sources: dict[str, str] = {}
    if flags.get("home"):
        home, sources["home"] = Path(flags["home"]).expanduser(), "flag"
    else:
        home, sources["home"] = default_home(env), "env" if env.get("AGENTCRAFT_HOME") else "default"
    home_file = _read_file(home / "config.json")
    backend_hint = (flags.get("backend") or env.get("AGENTCRAFT_BACKEND") or home_file.top.get("backend")
                    or BY_KEY["backend"].default)
    if flags.get("profile"):
        profile, sources["profile"] = check_profile(str(flags["profile"]), "--profile"), "flag"
    elif env.get("AGENTCRAFT_PROFILE"):
        profile, sources["profile"] = check_profile(env["AGENTCRAFT_PROFILE"], "AGENTCRAFT_PROFILE"), "env"
    else:  # the backend's name: a bad backend is refused below, before anything is created
        profile, sources["profile"] = str(backend_hint), "default"
    profile_file = _read_file(home / profile / "config.json")
    if env.get("FOREMAN_URL") and not env.get("AGENTCRAFT_URL"):
        env = {**env, "AGENTCRAFT_URL": env["FOREMAN_URL"]}  # the local backend's documented alias
    values: dict[str, Any] = {}
    backend_opt = BY_KEY["backend"]
    _pick(backend_opt, values, sources, [("flag", flags.get("backend"), backend_opt.cli), ("env", env.get(backend_opt.env), backend_opt.env),
                                         *profile_file.layers(backend_opt, None, "file"), *home_file.layers(backend_opt, None, "home-file")])
    backend = values["backend"]
    for cfg in (profile_file, home_file):  # the started backend's sections: whole, before their settings are read
        cfg.check({backend})
    for opt in OPTIONS:
        if opt.key == "backend":
            continue
        _pick(opt, values, sources, [("flag", flags.get(opt.key), opt.cli), ("env", env.get(opt.env), opt.env),
                                     *profile_file.layers(opt, backend, "file"), *home_file.layers(opt, backend, "home-file")])
    for key, why in DEPRECATED.items():
        if sources[key] != "default":
            logger.warning("%s (%s, from %s) is deprecated: %s", BY_KEY[key].cli, BY_KEY[key].file_key, sources[key], why)
    if values["user_name"] is None:
        values["user_name"] = _os_user(env)
    if values["notify"] is None:
        values["notify"] = values["backend"] != "sim"
    sections: dict[str, Any] = {}
    for name in SECTIONS:
        merged = {**home_file.sections.get(name, {}), **profile_file.sections.get(name, {})}
        if merged:
            sections[name] = merged
            in_profile, in_home = name in profile_file.sections, name in home_file.sections
            sources[f"section:{name}"] = "file" if in_profile and not in_home else (
                "home-file" if in_home and not in_profile else "file+home-file")
    settings = Settings(home=home, profile=profile, values=values, sources=sources, sections=sections)
    for cfg in (profile_file, home_file):  # a mixed team's other backend: its section must be valid too
        cfg.check(settings.backends_in_use)
    for line in unknown_env(env):
        logger.warning("%s", line)
    from .config_team import team_of  # (it reads this module's option table: imported here, not at the top)

    team_of(settings)  # --workers and --worker-names must fit together (the error names both)
    if values.get("web_lan") and not values.get("auth"):
        raise ConfigError("--web-lan needs the token: it cannot be combined with --no-auth")
    return settings


def has_desktop(env: Mapping[str, str] | None = None) -> bool:
    """True when a graphical session is there to open a browser in (``DISPLAY`` or ``WAYLAND_DISPLAY``)."""
    env = os.environ if env is None else env
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


OTHER_ENV = ("AGENTCRAFT_HOME", "AGENTCRAFT_PROFILE", "AGENTCRAFT_TURN")
"""``AGENTCRAFT_*`` variables that are not options: the home, the profile, and the marker the
Foreman sets on the processes it starts (:data:`foreman.procs.MARKER_ENV`)."""


def unknown_env(env: Mapping[str, str]) -> list[str]:
    """One line per ``AGENTCRAFT_*`` variable that no option reads (a misspelt one is otherwise
    silently ignored: ``AGENTCRAFT_WROKERS=12`` left the team at 3), naming a near miss.

    Returns:
        ``"AGENTCRAFT_WROKERS is not a Foreman setting and is ignored. Did you mean
        AGENTCRAFT_WORKERS?"``-style lines, sorted; [] when every such variable is known.
    """
    known = sorted({opt.env for opt in OPTIONS} | set(OTHER_ENV))
    out = []
    for name in sorted(k for k in env if k.startswith("AGENTCRAFT_") and k not in known):
        tails = {k[len("AGENTCRAFT_"):]: k for k in known}  # the shared prefix would make every name "close"
        close = difflib.get_close_matches(name[len("AGENTCRAFT_"):], list(tails), n=1, cutoff=0.75)
        hint = f" Did you mean {tails[close[0]]}?" if close else " `foreman start --help` names every variable."
        out.append(f"{name} is not a Foreman setting and is ignored.{hint}")
    return out


PROFILE_NAME = re.compile(r"[A-Za-z0-9_.-]+")
"""Letters, digits, ``-``, ``_`` and ``.``; ``.`` and ``..`` alone are refused (see :func:`check_profile`)."""


def check_profile(name: str, where: str) -> str:
    """Return ``name`` if it is a plain folder name for ``<home>/<name>``.

    Args:
        name: the profile as given.
        where: the flag or variable it came from, named in the error.

    Raises:
        ConfigError: for an empty name, ``.``, ``..``, a ``/`` or any other character, so a
            profile can neither leave the home (``../escape``) nor nest folders (``a/b``).
    """
    if not PROFILE_NAME.fullmatch(name) or name in (".", ".."):
        raise ConfigError(f"{where}: {name!r} is not a profile name. Use a plain name of letters, digits, "
                          "'-', '_' and '.' (not '.' or '..', no '/'), e.g. --profile work; "
                          "its state lives in <home>/<name>.")
    return name


def _pick(opt: Option, values: dict[str, Any], sources: dict[str, str],
          layers: list[tuple[str, Any, str]]) -> None:
    """Set ``values[opt.key]`` from the first layer that has a value (else the default)."""
    for source, raw, where in layers:
        if raw is None:
            continue
        values[opt.key] = _parse(opt, raw, where)
        sources[opt.key] = source
        return
    values[opt.key] = opt.default
    sources[opt.key] = "default"


def _parse(opt: Option, raw: Any, where: str) -> Any:
    try:
        return opt.parse(raw)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: {exc}. Fix the value or remove it ({opt.help}).") from None


def check_paths(settings: Settings) -> None:
    """Refuse a home whose paths git cannot fence in (``foreman start`` and ``foreman doctor``).

    An agent's git runs with ``GIT_CEILING_DIRECTORIES`` set to its worktree's parent, so it can
    never walk up into an enclosing repository; git splits that variable on ``:`` with no escape,
    so a profile folder (where worktrees live) containing ``:`` is refused
    (:func:`foreman.repos.gitsafety.check_ceiling_path`).

    Raises:
        UnsafePath: (a ConfigError) naming the folder and what to do.
    """
    # (keeps the git edge off the settings' import: every command resolves the settings)
    from .repos.gitsafety import check_ceiling_path

    check_ceiling_path(settings.profile_dir.expanduser().absolute(), what="profile folder")


def _os_user(env: Mapping[str, str]) -> str:
    try:
        return env.get("USER") or getpass.getuser()
    except (KeyError, OSError):
        return "you"


@dataclass
class _File:
    """One parsed config file: top-level settings, backend-section settings and other sections."""

    path: Path
    top: dict[str, Any] = field(default_factory=dict)
    by_backend: dict[str, dict[str, Any]] = field(default_factory=dict)
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    broken: dict[str, ConfigError] = field(default_factory=dict)
    """A backend section's first error (not an object, an unknown key), raised by :meth:`check`
    only when the team uses that backend."""

    def layers(self, opt: Option, backend: str | None, source: str) -> list[tuple[str, Any, str]]:
        """The layers this file gives ``opt``: the started backend's section, then the top level."""
        out = []
        if backend is not None and opt.file_key in self.by_backend.get(backend, {}):
            out.append((f"{source}:{backend}", self.by_backend[backend][opt.file_key], f"{self.path}: {backend}.{opt.file_key}"))
        out.append((source, self.top.get(opt.file_key), f"{self.path}: {opt.file_key}"))
        return out

    def check(self, backends: Iterable[str]) -> None:
        """Check the sections of ``backends`` (the team's; the others are not read): raise the
        first error of one, or of a value in it (naming the file, the section and the key)."""
        for backend in sorted(backends):
            if backend in self.broken:
                raise self.broken[backend]
            for key, raw in self.by_backend.get(backend, {}).items():
                if raw is not None:
                    _parse(BY_FILE_KEY[key], raw, f"{self.path}: {backend}.{key}")


def _read_file(path: Path) -> _File:
    out = _File(path)
    if not path.exists():
        return out
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}). Fix the file or delete it.") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: must hold a JSON object of settings")
    for key, value in data.items():
        if key in BACKEND_SECTIONS:
            try:
                _split_section(path, key, value, out)
            except ConfigError as exc:  # (raised when the team uses that backend: _File.check)
                out.broken[key] = exc
        elif key in SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: {key} must be a JSON object (of settings per agent)")
            check_agents(f"{path}: agents", value)
            out.sections[key] = value
        elif key in BY_FILE_KEY:
            out.top[key] = value
        else:
            known = sorted([*BY_FILE_KEY, *SECTIONS])
            raise ConfigError(f"{path}: unknown key {key!r}.{_did_you_mean(key, known)} Remove it or use one of: "
                              f"{', '.join(known)}")
    return out


def _did_you_mean(key: str, known: list[str]) -> str:
    """`` Did you mean 'userName'?`` for a near miss (snake_case or another case, with a word on
    camelCase; a typo: :func:`~foreman.errors.closest`), else ``""``."""
    camel = re.sub(r"[_-]([a-z0-9])", lambda m: m.group(1).upper(), key)
    exact = next((k for k in known if k.lower() == camel.lower()), None)
    if exact:
        return f" Did you mean {exact!r}? (config files use camelCase keys)"
    near = closest(camel, known)
    return f" Did you mean {near!r}?" if near else ""


def _split_section(path: Path, name: str, section: Any, out: _File) -> None:
    """Put a backend section's settings in ``out.by_backend`` and its other keys in ``out.sections``.

    Raises:
        ConfigError: the section is not an object, chooses the backend, or has an unknown key.
    """
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: {name} must be a JSON object (of settings for that backend)")
    settings: dict[str, Any] = {}
    extras: dict[str, Any] = {}
    for key, value in section.items():
        if key in SECTION_EXTRAS[name]:
            extras[key] = value
        elif key == "backend":
            raise ConfigError(f"{path}: {name}.backend: a backend section cannot choose the backend; "
                              "set 'backend' at the top level of the file")
        elif key in BY_FILE_KEY:
            settings[key] = value
        else:
            known = sorted([*(k for k in BY_FILE_KEY if k != "backend"), *SECTION_EXTRAS[name]])
            raise ConfigError(f"{path}: unknown key {key!r} in the {name!r} section.{_did_you_mean(key, known)} "
                              f"Remove it or use one of: {', '.join(known)}")
    out.by_backend[name] = settings
    if extras:
        out.sections[name] = extras
