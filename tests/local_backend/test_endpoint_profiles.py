"""Preflight against real HTTP, profiles from config.json, sessions resumed across turns."""

from __future__ import annotations

import json
import math
import socket
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from foreman.backends.local.pipeline import NAMES
from foreman.backends.local.profiles import _FILE_KEYS, LocalProfile, parse_profile, profiles_from, resolve_profile
from foreman.backends.local.runner import LocalRunner
from foreman.config import resolve
from foreman.errors import BackendError, ConfigError

from .fakeserver import FakeOpenAI, text
from .helpers import FakeTools, git_repo, request, settings_for


async def test_preflight_names_a_model_the_endpoint_does_not_serve(tmp_path: Path) -> None:
    with FakeOpenAI(lambda req: text("x"), models=("qwen-coder",)) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url, model="gpt-9"))
        with pytest.raises(BackendError, match=r"does not serve model 'gpt-9' \(it serves: qwen-coder\)"):
            await runner.preflight()
        await runner.close()
        ok = LocalRunner(settings_for(tmp_path, server.url))
        await ok.preflight()
        assert ok.default_model == "qwen-coder" and "qwen-coder" in ok.status()[1]
        await ok.close()


async def test_preflight_unreachable_endpoint(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runner = LocalRunner(settings_for(tmp_path, f"http://127.0.0.1:{port}/v1"))
    with pytest.raises(BackendError, match=f"cannot reach the endpoint http://127.0.0.1:{port}/v1 \\(Connection refused\\)"):
        await runner.preflight()
    await runner.close()


def test_profiles_from_config(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profile": "small", "profiles": {
        "small": {"url": "http://127.0.0.1:9/v1", "model": "smol", "contextWindow": 4096, "maxTokens": 128,
                  "temperature": 0, "protocol": "native", "maxTurns": 6}}}}))
    settings = resolve({"home": str(home), "backend": "local"}, env={})
    p = resolve_profile(settings)
    assert p == LocalProfile(name="small", url="http://127.0.0.1:9/v1", model="smol", context_window=4096,
                             max_tokens=128, temperature=0.0, protocol="native", max_turns=6)
    flagged = resolve({"home": str(home), "backend": "local", "url": "http://h:1/v1", "model": "m2"}, env={})
    assert (resolve_profile(flagged).url, resolve_profile(flagged).model) == ("http://h:1/v1", "m2")
    env = resolve({"home": str(home), "backend": "local"}, env={"FOREMAN_URL": "http://e:2/v1"})
    assert resolve_profile(env).url == "http://e:2/v1"
    with pytest.raises(ConfigError, match="no local profile named 'big'"):
        resolve_profile(settings, "big")


@pytest.mark.parametrize("bad, match", [
    ({"profiles": {"a": {"protocl": "text"}}}, "unknown key 'protocl'"),
    ({"profiles": {"a": {"protocol": "xml"}}}, "expected one of text, native"),
    ({"profiles": {"a": {"maxTurns": 0}}}, "a.maxTurns: expected a whole number of at least 1, got 0"),
    ({"profile": "b", "profiles": {"a": {}}}, "does not define"),
    ({"profiles": {"a": {"seed": -1}}}, r"local.profiles.a.seed: expected a whole number of at least 0, got -1"),
    ({"profiles": {"a": {"seed": "7"}}}, r"a.seed: expected a whole number"),
    ({"profiles": {"a": {"seed": True}}}, r"a.seed: expected a whole number"),
    ({"profiles": {"a": {"seed": 1.5}}}, r"a.seed: expected a whole number"),
    ({"profiles": {"a": {"testOrder": "before"}}}, r'a.testOrder: expected one of first, after, got "before"'),
])
def test_bad_profiles_name_the_key(tmp_path: Path, bad: dict, match: str) -> None:
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": bad}))
    with pytest.raises(ConfigError, match=match):
        resolve_profile(resolve({"home": str(home), "backend": "local"}, env={}))


@pytest.mark.parametrize("key", sorted(k for k in _FILE_KEYS if "_" not in k and k != "ablate"))
def test_a_bad_value_names_the_key_as_the_file_wrote_it(tmp_path: Path, key: str) -> None:
    """Every key of a profile, given a value of no use (a list), is named in the error as written
    (``maxTurns``, not the field's ``max_turns``: a user searching the file for it finds it)."""
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profiles": {"a": {key: [[1]]}}}}))
    with pytest.raises(ConfigError) as raised:
        resolve_profile(resolve({"home": str(home), "backend": "local"}, env={}))
    assert f"local.profiles.a.{key}: " in str(raised.value), str(raised.value)


async def test_a_profile_seed_goes_with_every_request_and_no_seed_sends_none(tmp_path: Path) -> None:
    """The seed makes a run repeatable: every chat request of a turn carries it (OpenAI's
    ``seed`` field, which llama.cpp's server honours); a profile without one sends no seed."""
    repo = git_repo(tmp_path / "wt", {"a.txt": "alpha\n"})
    for seed in (0, 41, None):
        replies = [text("READ a.txt"), text("FINAL a.txt holds alpha")]
        with FakeOpenAI(lambda req: replies.pop(0)) as server:
            runner = LocalRunner(settings_for(tmp_path / str(seed), server.url))
            runner.profile = replace(runner.profile, seed=seed)
            result = await runner.run_turn(request(repo, job="followup", task=None), FakeTools(repo))
            await runner.close()
        chats = [r for r in server.requests if "messages" in r]
        assert result.ok and len(chats) == 2
        assert [r.get("seed", "absent") for r in chats] == [seed if seed is not None else "absent"] * 2
    home = tmp_path / "home"
    (home / "local").mkdir(parents=True)
    (home / "local" / "config.json").write_text(json.dumps({"local": {"profiles": {"a": {"seed": 3}}}}))
    assert resolve_profile(resolve({"home": str(home), "backend": "local"}, env={}), "a").seed == 3


async def test_session_resumes_the_conversation(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "wt", {"a.txt": "alpha\n"})
    replies = [text("READ a.txt"), text("FINAL a.txt holds alpha"), text("FINAL still alpha")]
    with FakeOpenAI(lambda req: replies.pop(0)) as server:
        runner = LocalRunner(settings_for(tmp_path, server.url))
        tools = FakeTools(repo)
        first = await runner.run_turn(request(repo, job="followup", task=None), tools)
        assert first.ok and first.session_id and tools.sessions == [first.session_id]
        second = await runner.run_turn(request(repo, "Any news?", job="followup", task=None,
                                               session_id=first.session_id), FakeTools(repo))
        await runner.close()
    assert second.ok and second.session_id == first.session_id
    resumed = server.requests[-1]["messages"]
    assert [m["role"] for m in resumed] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert resumed[-1]["content"] == "Any news?" and "alpha" in resumed[3]["content"]
    assert (runner.traces_dir / f"{first.session_id}.jsonl").exists()


async def test_mixed_team_preflight_checks_only_the_local_roles(tmp_path: Path) -> None:
    with FakeOpenAI(lambda req: text("x"), models=("fake-coder",)) as server:
        mixed = settings_for(tmp_path, server.url, lead_backend="claude", worker_backend="local",
                             lead_model="opus", worker_model="fake-coder")
        runner = LocalRunner(mixed)
        assert runner._wanted_models() == ["fake-coder"]
        await runner.preflight()  # "opus" belongs to the claude lead: not asked of this endpoint
        await runner.close()
        all_local = settings_for(tmp_path, server.url, lead_model="opus")
        with pytest.raises(BackendError, match="does not serve model 'opus'"):
            await LocalRunner(all_local).preflight()


def test_make_backend_gives_every_agent_the_local_runner(tmp_path: Path) -> None:
    from foreman.flow.assemble import make_backend

    conductor = make_backend(settings_for(tmp_path, "http://127.0.0.1:9/v1"))
    runners = set(map(id, conductor.runners.values()))
    assert len(runners) == 1 and isinstance(next(iter(conductor.runners.values())), LocalRunner)
    assert conductor.name == "local"


_KEYS = sorted(k for k in _FILE_KEYS if "_" not in k)
_JSON = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.floats(min_value=-5, max_value=5),
                  st.text(max_size=8), st.integers().map(str), st.lists(st.text(max_size=3), max_size=2),
                  st.dictionaries(st.text(max_size=3), st.integers(), max_size=1))
"""Any JSON value a config file may hold (numbers of every size, fractions, NaN and infinity,
numbers written as text, lists, objects)."""


@settings(max_examples=400, deadline=None)
@given(key=st.sampled_from(_KEYS), value=_JSON)
@example(key="contextWindow", value=1.0)  # refused by the window's rule, which names the key too
@example(key="maxTurns", value=float("inf"))
def test_any_value_of_any_key_is_taken_as_written_or_refused_by_its_name(key: str, value) -> None:
    """A config file can hold any JSON value under any key: the profile either takes it as it is
    (never coerced: no fraction cut to a count, no text read as a number, no NaN) or refuses it
    with a :class:`ConfigError` naming the key as written, never another exception (a number too
    large, 1e400, once ended the CLI in an OverflowError traceback)."""
    try:
        profile = parse_profile("p", {key: value})
    except ConfigError as exc:
        message = str(exc)  # the key's own error, or the window's naming it (maxTokens must be below contextWindow)
        assert message.startswith(f"local.profiles.p.{key}: ") or (
            message.startswith("local.profiles.p: ") and f"{key} (" in message), message
        return
    got = getattr(profile, _FILE_KEYS[key])
    if key == "ablate":
        assert set(got) <= set(NAMES)
        return
    assert got == value, (got, value)
    default = getattr(LocalProfile(), _FILE_KEYS[key])
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # a count stays whole, an amount finite
        assert type(got) is (float if isinstance(default, float) or key == "wallTimeout" else int), (key, got)
        assert math.isfinite(got)
    if isinstance(got, str):
        assert got.strip()


@pytest.mark.parametrize("section, match", [
    ({"profiles": {"p": {"maxTurns": float("inf")}}}, r"p\.maxTurns: expected a whole number of at least 1, got Infinity"),
    ({"profiles": {"p": {"maxTurns": 1.5}}}, r"p\.maxTurns: expected a whole number of at least 1, got 1\.5"),
    ({"profiles": {"p": {"maxTurns": "12"}}}, r"p\.maxTurns: expected a whole number of at least 1, got \"12\""),
    ({"profiles": {"p": {"repairs": -1}}}, r"p\.repairs: expected a whole number of at least 0, got -1"),
    ({"profiles": {"p": {"temperature": float("nan")}}}, r"p\.temperature: expected a number from 0 to 2, got NaN"),
    ({"profiles": {"p": {"temperature": 50}}}, r"p\.temperature: expected a number from 0 to 2, got 50"),
    ({"profiles": {"p": {"requestTimeout": 0}}}, r"p\.requestTimeout: expected a number of seconds above 0, got 0"),
    ({"profiles": {"p": {"url": "not a url"}}}, r"p\.url: expected an http:// or https:// URL"),
    ({"profiles": {"p": {"ablate": [""]}}}, r"p\.ablate: expected a list of check names, got \[\"\"\]"),
    ({"profiles": {"p": {"maxTurns": 5, "max_turns": 9}}}, r"p: 'maxTurns' and 'max_turns' are the same key"),
    ({"profiles": {"p": {"max_tokens": 4096, "context_window": 2048}}},
     r"p: max_tokens \(4096\) must be below context_window \(2048\).*Lower max_tokens or raise context_window"),
    ({"profiles": {"p": {"contextWindow": 512}}}, r"p: maxTokens \(the default\) \(1024\) must be below contextWindow"),
    ({"profile": ["p"], "profiles": {"p": {}}}, r"local\.profile must be a profile's name \(text\), got \[\"p\"\]"),
    ({"profile": "", "profiles": {"": {}}}, r"local\.profile must be a profile's name"),
    ({"profiles": []}, r"local\.profiles must map profile names to objects"),
])
def test_the_values_a_newcomer_tried_are_refused_with_what_is_expected(section: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        profiles_from(section)
