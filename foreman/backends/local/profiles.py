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

import json
import math
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


_NULLABLE = frozenset({"model", "max_turns", "wall_timeout", "seed"})
"""Keys whose ``null`` means "not set" (see :class:`LocalProfile`)."""
_AT_LEAST = {"repairs": 0, "seed": 0}
"""Whole-number keys whose least value is not 1."""
_ABOVE_ZERO = frozenset({"request_timeout", "run_timeout", "wall_timeout"})
"""Seconds that must be more than 0 (a timeout of 0 would end every request or turn at once)."""
_TEMPERATURE_MAX = 2.0
"""The OpenAI API's bound on ``temperature`` (its reference: "between 0 and 2")."""


def _shown(value: Any) -> str:
    """``value`` as the file wrote it (JSON: ``true``, ``null``, ``"12"``)."""
    try:
        return json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        return repr(value)


def _convert(key: str, value: Any, where: str, written: str) -> Any:
    """``value`` of the profile field ``key`` checked and converted (no coercion: a number given
    as text, a fraction for a count, ``NaN`` or infinity are refused, not read as something else).

    Raises:
        ConfigError: naming the key as the file wrote it (``written``: ``maxTurns``), what is
            expected, and the value as written.
    """
    default = getattr(LocalProfile(), key)
    expected = _expected(key, value, default)
    if expected:
        raise ConfigError(f"{where}.{written}: expected {expected}, got {_shown(value)}. Fix the value or remove it.")
    if key == "ablate":
        try:
            return parse_ablate(value)
        except ValueError as exc:
            raise ConfigError(f"{where}.{written}: {exc}. Fix the value or remove it.") from None
    if value is None or isinstance(value, (bool, str)):
        return value
    return int(value) if isinstance(default, int) or key in ("max_turns", "seed") else float(value)


def _expected(key: str, value: Any, default: Any) -> str:
    """What ``key`` expects when ``value`` is not it, else ""."""
    if value is None and key in _NULLABLE:
        return ""
    if key == "ablate":
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) and v.strip() for v in value)
        return "" if ok else "a list of check names"
    if key in _CHOICES:
        return "" if value in _CHOICES[key] and isinstance(value, str) else f"one of {', '.join(_CHOICES[key])}"
    if isinstance(default, bool):
        return "" if isinstance(value, bool) else "true or false"
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if isinstance(default, int) or key in ("max_turns", "seed"):
        least = _AT_LEAST.get(key, 1)
        whole = number and float(value).is_integer()
        return "" if whole and value >= least else f"a whole number of at least {least}"
    if isinstance(default, float) or key == "wall_timeout":
        if key in _ABOVE_ZERO:
            return "" if number and value > 0 else "a number of seconds above 0" + (" (or null)" if key in _NULLABLE else "")
        if key == "temperature":
            return "" if number and 0 <= value <= _TEMPERATURE_MAX else f"a number from 0 to {_TEMPERATURE_MAX:g}"
        return "" if number and value >= 0 else "a number of at least 0"
    if not isinstance(value, str) or not value.strip():
        return "text" if key not in _NULLABLE else "text (or null)"
    if key == "url" and not value.strip().startswith(("http://", "https://")):
        return "an http:// or https:// URL (the endpoint's base, ending in /v1)"
    return ""


def parse_profile(name: str, data: Mapping[str, Any], *, where: str = "local.profiles") -> LocalProfile:
    """Build a profile from its config-file object.

    Raises:
        ConfigError: not an object, an unknown key, or a bad value (naming the key).
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}.{name}: a profile must be a JSON object")
    values: dict[str, Any] = {"name": name}
    spelled: dict[str, str] = {}  # field -> the key as the file wrote it
    for raw_key, value in data.items():
        key = _FILE_KEYS.get(raw_key)
        if key is None:
            known = sorted(k for k in _FILE_KEYS if "_" not in k)
            near = closest(str(raw_key), known)
            raise ConfigError(f"{where}.{name}: unknown key {raw_key!r}.{f' Did you mean {near!r}?' if near else ''} "
                              f"Use one of: {', '.join(known)}")
        if key in spelled:
            raise ConfigError(f"{where}.{name}: {spelled[key]!r} and {raw_key!r} are the same key, given twice. "
                              "Keep one.")
        spelled[key] = str(raw_key)
        values[key] = _convert(key, value, f"{where}.{name}", str(raw_key))
    profile = LocalProfile(**values)
    if profile.max_tokens >= profile.context_window:
        tokens, window = (spelled.get(k, f"{camel} (the default)") for k, camel in (
            ("max_tokens", "maxTokens"), ("context_window", "contextWindow")))
        raise ConfigError(f"{where}.{name}: {tokens} ({profile.max_tokens}) must be below {window} "
                          f"({profile.context_window}): a reply takes room in the window beside the prompt. "
                          f"Lower {tokens.split()[0]} or raise {window.split()[0]}.")
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
    raw = section.get("profiles")
    raw = {} if raw is None else raw
    if not isinstance(raw, Mapping):
        raise ConfigError("config.json: local.profiles must map profile names to objects")
    profiles = {name: parse_profile(name, data) for name, data in raw.items()}
    chosen = section.get("profile")
    if chosen is not None and (not isinstance(chosen, str) or not chosen.strip()):
        raise ConfigError(f"config.json: local.profile must be a profile's name (text), got {_shown(chosen)}. "
                          f"Name one of local.profiles ({', '.join(sorted(profiles)) or 'none defined'}) or remove it.")
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
