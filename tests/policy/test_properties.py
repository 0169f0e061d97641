"""Property tests: harmless prefixes never widen an outcome; analysis limits never allow."""

from __future__ import annotations

import shlex

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


# ---- wrappers and runners never hide a refused command (issue 14) ---------------------------
def _simple(cmd: str) -> bool:
    """A refused case that is one simple command (a prefix wrapper can run it as its argument)."""
    from foreman.policy.walker import parse

    root = parse(cmd).root_node
    kids = [c for c in root.named_children if c.type != "comment"]
    first = cmd.split(" ", 1)[0]
    return len(kids) == 1 and kids[0].type == "command" and "=" not in first and not root.has_error


_DENIED = [c[0] for c in CASES if c[1] == "deny" and "\n" not in c[0] and "<<" not in c[0]]
_DENIED_SIMPLE = [c for c in _DENIED if _simple(c)]
#: Programs that run the command given as their arguments.
_PREFIX_WRAPPERS = ["timeout 5 ", "timeout -k 1 60 ", "nice -n 5 ", "ionice -c 3 ", "taskset -c 0 ", "taskset 1 ",
                    "stdbuf -oL ", "chrt -f 5 ", "setsid ", "flock /tmp/l ", "strace -f -o /tmp/t ", "ltrace ",
                    "sudo ", "sudo -u bob ", "doas ", "systemd-run --user ", "unshare -r ", "nsenter -t 1 -m ",
                    "chroot / ", "busybox ", "toybox ", "env ", "command ", "exec ", "nohup ", "time ",
                    "gdb --args ", "npx ", "npm exec -- ", "npm x ", "pnpm exec ", "pnpm dlx ", "yarn exec ",
                    "yarn dlx ", "bunx ", "uvx ", "uv tool run ", "pipx run ", "coproc ", "watch ",
                    "git bisect run ", "timeout 5 nice -n 1 sudo "]
#: Programs and settings that run a command given as one string ({q}: the command, quoted).
_STRING_WRAPPERS = ["bash -c {q}", "sh -c {q}", "su -c {q}", "su bob -c {q}", "script -qc {q} /dev/null",
                    "flock -c {q} /tmp/l", "at now <<< {q}", "batch <<< {q}", "eval {q}", "watch -n 1 {q}",
                    "git bisect run sh -c {q}", "git -c core.pager={q} log", "git -c core.editor={q} commit",
                    "git -c sequence.editor={q} rebase -i HEAD~1", "git -c diff.external={q} diff",
                    "GIT_EDITOR={q} git commit", "GIT_PAGER={q} git log", "GIT_EXTERNAL_DIFF={q} git diff",
                    "GIT_SEQUENCE_EDITOR={q} git rebase -i HEAD~1", "env GIT_PAGER={q} git log",
                    "bash <(printf '%s' {q})", "source <(printf '%s' {q})", "sh < <(printf '%s' {q})",
                    "printf '%s' {q} > /tmp/w.sh && bash /tmp/w.sh", "printf '%s' {q} > w.sh; chmod +x w.sh; ./w.sh",
                    "find . -exec sh -c {q} \\;", "busybox sh -c {q}", "npx sh -c {q}", "sudo sh -c {q}",
                    "coproc bash -c {q}", "git difftool -x {q}", "parallel {q} ::: x", "zip -T -TT {q} a.zip f",
                    "gdb -batch -ex 'shell '{q}", "xargs -0 sh -c {q} < /dev/null"]


# Every pair, not a sample: the spaces are small (about 13,000 pairs each, 1-2 s), and a random
# sample let each CI run find a different counterexample (`chroot / rm -rf link/` was one).
def test_a_refused_command_run_by_a_wrapper_stays_refused() -> None:
    wrapped = [wrapper + cmd for cmd in _DENIED_SIMPLE for wrapper in _PREFIX_WRAPPERS]
    assert len(wrapped) > 10_000
    assert [w for w in wrapped if _classify(w).outcome != "deny"] == []


def test_a_refused_command_given_as_a_string_stays_refused() -> None:
    wrapped = [wrapper.format(q=shlex.quote(cmd)) for cmd in _DENIED for wrapper in _STRING_WRAPPERS]
    assert len(wrapped) > 10_000
    assert [w for w in wrapped if _classify(w).outcome != "deny"] == []


def test_one_or_two_harmless_prefixes_never_lower_a_verdict() -> None:
    """Every prefix and pair of prefixes before every guarded command (the hypothesis test above
    tries longer chains); a ``cd`` chain used to lose the working directory and ask where the
    bare command was refused."""
    import itertools

    before = {cmd: _RANK[_classify(cmd).outcome] for cmd in _GUARDED}
    lowered = [(pre, cmd) for n in (1, 2) for combo in itertools.product(_PREFIXES, repeat=n)
               for pre in ["".join(combo)] for cmd in _GUARDED
               if before[cmd] and _RANK[_classify(pre + cmd).outcome] < before[cmd]]
    assert lowered == []


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_PREFIX_WRAPPERS[:12]), st.sampled_from(["pytest -q", "npm test", "make test", "cargo test",
                                                                 "ls -la", "git status", "rg foo src"]))
def test_scheduling_wrappers_around_an_allowed_command_stay_allowed(wrapper: str, cmd: str) -> None:
    # timeout/nice/ionice/taskset/stdbuf/setsid/flock only change how the command is scheduled.
    if wrapper.startswith(("chrt", "strace", "ltrace")):
        assert _classify(wrapper + cmd).outcome == "ask"
    else:
        assert _classify(wrapper + cmd).outcome == "allow", wrapper + cmd
