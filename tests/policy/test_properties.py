"""Property tests: harmless prefixes never widen an outcome; analysis limits never allow."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from foreman.policy import classify_command
from foreman.policy.api import MAX_CHARS

from .cases import CASES, WT, fake_realpath

_RANK = {"allow": 0, "ask": 1, "deny": 2}
_GUARDED = [c[0] for c in CASES if c[1] != "allow" and "\n" not in c[0] and "<<" not in c[0]]
_PREFIXES = ["true; ", "cd . && ", ":; ", "true && ", "  ", "ls >/dev/null; ", "cd src && cd .. && ", "echo ok; "]


def _classify(cmd: str):
    return classify_command(cmd, worktree=WT, tmpdir="/tmp", realpath=fake_realpath)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_GUARDED), st.lists(st.sampled_from(_PREFIXES), max_size=4), st.sampled_from(["", " ", "  ", ";"]))
def test_harmless_prefixes_never_turn_ask_or_deny_into_allow(cmd: str, prefixes: list[str], suffix: str) -> None:
    before = _classify(cmd)
    after = _classify("".join(prefixes) + cmd + suffix)
    assert _RANK[after.outcome] >= _RANK[before.outcome], (cmd, prefixes, after)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_GUARDED))
def test_extra_quotes_never_turn_ask_or_deny_into_allow(cmd: str) -> None:
    before = _classify(cmd)
    words = cmd.split(" ")
    quoted = " ".join(f"'{w}'" if w.isalnum() else w for w in words)
    after = _classify(quoted)
    assert _RANK[after.outcome] >= _RANK[before.outcome] or after.outcome != "allow", (cmd, quoted, after)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=200, max_value=3000), st.sampled_from(["true", ":", "echo x", "ls", "cd ."]),
       st.sampled_from([" && ", "; ", "\n", " || "]))
def test_long_chain_of_noops_then_push_is_denied(n: int, noop: str, sep: str) -> None:
    cmd = sep.join([noop] * n) + sep + "git push origin main"
    assert _classify(cmd).outcome == "deny"


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=4), st.sampled_from(["ls", "cat README.md", "git status"]))
def test_over_long_commands_ask_never_allow(extra: int, harmless: str) -> None:
    cmd = "; ".join([harmless] * (MAX_CHARS // len(harmless) * extra))
    v = _classify(cmd)
    assert v.outcome == "ask" and v.keys == (f"Bash:exact:{cmd.strip()}",)


def test_deep_nesting_asks_and_a_visible_push_is_still_denied() -> None:
    inner = "ls"
    pushed = "git push"
    for _ in range(12):
        inner = "bash -c " + "'" + inner.replace("'", "'\\''") + "'"
        pushed = "bash -c " + "'" + pushed.replace("'", "'\\''") + "'"
    assert _classify(inner).outcome == "ask"
    assert _classify(pushed).outcome == "deny"
    subs = "echo " + "$(" * 20 + "ls" + ")" * 20
    assert _classify(subs).outcome == "ask"


def test_many_commands_exceed_the_step_budget_but_push_still_denied() -> None:
    body = "; ".join(f"f{i}() {{ ls; }}" for i in range(400))
    assert _classify(body + "; git push").outcome == "deny"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("git push;&|$()'\"`\\{}<>\n ~./-*")), max_size=60))
def test_arbitrary_text_never_crashes_and_never_allows_a_literal_push(text: str) -> None:
    v = _classify(text)
    assert v.outcome in ("allow", "ask", "deny")
    if text.strip() == "git push":
        assert v.outcome == "deny"
