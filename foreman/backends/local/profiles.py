"""Named local-model profiles: the ``local`` section of ``<home>/<profile>/config.json``.

Shape (keys in camelCase as in the rest of config.json; snake_case is accepted too)::

    "local": {
      "profile": "qwen",                      the profile used when none is chosen
      "profiles": {
        "qwen": {"url": "http://127.0.0.1:18081/v1", "model": "qwen-coder-0.5b",
                 "contextWindow": 4096, "maxTokens": 512, "temperature": 0.1,
                 "protocol": "text", "maxTurns": 12}
      }
    }

Precedence for the endpoint and the model: ``--url``/``FOREMAN_URL`` and ``--model`` (or
``--lead-model``/``--worker-model``) > the profile > the defaults. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

from ...errors import ConfigError, closest
from .pipeline import parse_ablate

DEFAULT_URL = "http://127.0.0.1:8790/v1"


@dataclass(frozen=True)
class LocalProfile:
    """Everything the local backend needs to talk to one endpoint.

    Attributes:
        name: the profile's name ("default" when none is configured).
        url: the OpenAI-compatible base URL (ends in ``/v1``).
        model: the model id to request; None: the first one the endpoint serves.
        context_window: the model's context in tokens (the transcript is trimmed to fit).
        max_tokens: the cap on tokens per reply.
        temperature: sampling temperature.
        seed: the sampling seed sent with every request (OpenAI's ``seed``, which llama.cpp's
            server honours): the same prompt at the same seed samples the same reply, so a run
            can be repeated and two runs differ only where their prompts do; None: the server
            picks one each request.
        protocol: "text" (actions written in the reply) or "native" (OpenAI tool calls).
        max_turns: cap on model round trips per turn; None: the conductor's cap.
        tool_choice: native only: "auto" or "required".
        api_key: sent as the bearer token (local servers ignore it).
        request_timeout: seconds before one HTTP request is abandoned.
        run_timeout: seconds before a RUN command is killed with its process tree.
        max_output: characters of a RUN command's output shown to the model (head and tail).
        wall_timeout: seconds a turn may take in total; None: the conductor's turn timeout.
        repeat_limit: identical calls (without a change in between) refused after this many.
        loop_limit: identical calls that end the turn as a loop.
        idle_limit: replies in a row without any action that end the turn.
        mode: how a worker's task turn runs: "agent" (the free agent loop), "guided" (the
            harness localizes, the model writes definitions, the tests decide; see
            :mod:`.guided`) or "auto" (guided when ``small``, else the agent loop and guided
            after it fails a turn).
        small: the model is small (a few billion parameters or less): "auto" guides it.
        attempts: guided mode's best-of-N attempts.
        repairs: guided mode's repair rounds per attempt (a placement failure or a failed check
            told back to the model).
        asked_test: guided mode asks for a test of the asked behaviour, written before the change,
            that must fail on the unchanged code and pass after it, when the task asks for no
            test (see :mod:`.asked`); False turns the step off.
        test_order: when guided mode tests a task that asks for no test: "first" (the asked test,
            before the change) or "after" (the change first, then tests of it that must fail on the
            code as it was, as a task that asks for tests gets: :mod:`.proof`, :mod:`.mutants`), so
            the two orders can be measured on the same tasks. Unused while ``asked_test`` is off.
        ablate: guided mode's named checks switched off (:data:`.pipeline.NAMES`; for measuring
            what each is worth, e.g. ``["proof"]``); empty: every check runs.
        constrained: "auto": constrain guided replies to a JSON shape when the endpoint
            accepts a ``response_format`` json_schema (checked once); "off": free text.
        price_in_per_mtok / price_out_per_mtok: USD per million input (prompt) / output
            (completion) tokens, for the turn's ``cost_usd``; 0 (the default): the turn costs 0.
    """

    name: str = "default"
    url: str = DEFAULT_URL
    model: str | None = None
    context_window: int = 8192
    max_tokens: int = 1024
    temperature: float = 0.2
    seed: int | None = None
    protocol: str = "text"
    max_turns: int | None = None
    tool_choice: str = "auto"
    api_key: str = "local"
    request_timeout: float = 300.0
    run_timeout: float = 120.0
    max_output: int = 6000
    wall_timeout: float | None = None
    repeat_limit: int = 2
    loop_limit: int = 4
    idle_limit: int = 3
    mode: str = "agent"
    small: bool = False
    attempts: int = 3
    repairs: int = 1
    asked_test: bool = True
    test_order: str = "first"
    ablate: tuple[str, ...] = ()
    constrained: str = "off"
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0


_FILE_KEYS = {f.name: f.name for f in fields(LocalProfile) if f.name != "name"}
_FILE_KEYS.update({"".join([k.split("_")[0], *(p.capitalize() for p in k.split("_")[1:])]): k
                   for k in list(_FILE_KEYS)})
_CHOICES = {"protocol": ("text", "native"), "tool_choice": ("auto", "required"), "mode": ("agent", "guided", "auto"),
            "constrained": ("auto", "off"), "test_order": ("first", "after")}


def _convert(key: str, value: Any, where: str, written: str) -> Any:
    """``value`` of the profile field ``key`` checked and converted; a bad one raises
    :class:`ConfigError` naming the key as the file wrote it (``written``: ``maxTurns``)."""
    default = getattr(LocalProfile(), key)
    try:
        if key == "ablate":
            if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, str) for v in value):
                raise ValueError(f"expected a list of check names, got {value!r}")
            return parse_ablate(value)
        if key in _CHOICES:
            if value not in _CHOICES[key]:
                raise ValueError(f"expected one of {', '.join(_CHOICES[key])}, got {value!r}")
            return str(value)
        if value is None and key in ("model", "max_turns", "wall_timeout", "seed"):
            return None
        if key == "seed":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"expected a whole number of at least 0, got {value!r}")
            return value
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValueError(f"expected true or false, got {value!r}")
            return value
        if key == "repairs" and value == 0 and not isinstance(value, bool):
            return 0
        if isinstance(default, bool) or isinstance(value, bool):
            raise ValueError(f"expected a number or text, got {value!r}")
        if isinstance(default, int) or key == "max_turns":
            number = int(value)
            if number < 1:
                raise ValueError(f"must be at least 1, got {value!r}")
            return number
        if isinstance(default, float) or key == "wall_timeout":
            amount = float(value)
            if amount < 0:
                raise ValueError(f"must not be negative, got {value!r}")
            return amount
        if not isinstance(value, str):
            raise ValueError(f"expected text, got {value!r}")
        text = value
        if not text:
            raise ValueError("must not be empty")
        return text
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}.{written}: {exc}. Fix the value or remove it.") from None


def parse_profile(name: str, data: Mapping[str, Any], *, where: str = "local.profiles") -> LocalProfile:
    """Build a profile from its config-file object.

    Raises:
        ConfigError: not an object, an unknown key, or a bad value (naming the key).
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}.{name}: a profile must be a JSON object")
    values: dict[str, Any] = {"name": name}
    for raw_key, value in data.items():
        key = _FILE_KEYS.get(raw_key)
        if key is None:
            known = sorted(k for k in _FILE_KEYS if "_" not in k)
            near = closest(str(raw_key), known)
            raise ConfigError(f"{where}.{name}: unknown key {raw_key!r}.{f' Did you mean {near!r}?' if near else ''} "
                              f"Use one of: {', '.join(known)}")
        values[key] = _convert(key, value, f"{where}.{name}", str(raw_key))
    profile = LocalProfile(**values)
    if profile.max_tokens >= profile.context_window:
        raise ConfigError(f"{where}.{name}: maxTokens ({profile.max_tokens}) must be below contextWindow "
                          f"({profile.context_window}): a reply takes room in the window beside the prompt. "
                          "Lower maxTokens or raise contextWindow.")
    return profile


def profiles_from(section: Any) -> tuple[dict[str, LocalProfile], str | None]:
    """Read the ``local`` config section: ``(profiles by name, the default profile's name)``.

    Raises:
        ConfigError: the section is malformed or names a profile it does not define.
    """
    if section in (None, {}):
        return {}, None
    if not isinstance(section, Mapping):
        raise ConfigError("config.json: the 'local' section must be a JSON object")
    unknown = set(section) - {"profile", "profiles"}
    if unknown:
        raise ConfigError(f"config.json: local: unknown key {sorted(unknown)[0]!r}. Use 'profile' and 'profiles'.")
    raw = section.get("profiles") or {}
    if not isinstance(raw, Mapping):
        raise ConfigError("config.json: local.profiles must map profile names to objects")
    profiles = {name: parse_profile(name, data) for name, data in raw.items()}
    chosen = section.get("profile")
    if chosen is not None and chosen not in profiles:
        raise ConfigError(f"config.json: local.profile names {chosen!r}, which local.profiles does not define "
                          f"(defined: {', '.join(sorted(profiles)) or 'none'})")
    return profiles, chosen


def resolve_profile(settings: Any, name: str | None = None) -> LocalProfile:
    """Return the profile a run uses, with flags and environment applied on top.

    Args:
        settings: the resolved :class:`~foreman.config.Settings` (its ``local`` section,
            ``url`` and ``model`` with their sources).
        name: a profile chosen explicitly (else ``settings.local_profile`` if the option
            exists, else the section's ``profile``, else the built-in defaults).

    Raises:
        ConfigError: a malformed section, or a profile name that is not defined.
    """
    profiles, default = profiles_from(getattr(settings, "sections", {}).get("local"))
    chosen = name or getattr(settings, "local_profile", None) or default
    if chosen and chosen not in profiles:
        raise ConfigError(f"no local profile named {chosen!r} (defined: {', '.join(sorted(profiles)) or 'none'}); "
                          "add it under local.profiles in config.json")
    profile = profiles[chosen] if chosen else LocalProfile()
    sources = getattr(settings, "sources", {})
    url = getattr(settings, "url", None)
    if url and (sources.get("url") in ("flag", "env") or not chosen):
        profile = replace(profile, url=url)
    model = getattr(settings, "model", None)
    if model:
        profile = replace(profile, model=model)
    return profile
