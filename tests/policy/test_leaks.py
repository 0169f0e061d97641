"""Property tests for the leak kinds of issue 37 (table cases: ``cases_leaks.py``): every
program-naming git option, abbreviated or not, refuses a push and never rides on a stored
subcommand key."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings, strategies as st

from foreman.policy import classify_command
from foreman.policy.gitprogs import _levenshtein, autocorrects_to_push

from .cases import WT, fake_realpath


def _classify(cmd: str, granted=()):
    return classify_command(cmd, worktree=WT, tmpdir="/tmp", realpath=fake_realpath, granted=granted)


# ---- git options that name a program -----------------------------------------------------------
_PUSHES = ["git push", "git push origin main", "sh -c 'git push'", "env git push"]
_OPTIONS = ["rebase --exec={q} HEAD~1", "rebase --exe={q} HEAD~1", "rebase --ex {q} HEAD~1", "rebase -x {q} HEAD~1",
            "difftool -x {q}", "difftool --extcmd={q}", "difftool --extc {q}", "difftool -t {q}",
            "mergetool --tool={q}", "mergetool --tool-cmd={q}", "mergetool -t {q}", "grep -O{q} TODO",
            "grep --open-files-in-pager={q} TODO", "grep --open={q} TODO", "fetch --upload-pack={q} origin",
            "fetch --upl={q} origin", "clone -u {q} /tmp/r x", "ls-remote --upload-pack={q} origin",
            "archive --exec={q} --remote=x HEAD", "send-email --sendmail-cmd={q} a.patch", "merge-index {q} -a",
            "instaweb --httpd={q}", "bisect run {q}"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_OPTIONS), st.sampled_from(_PUSHES), st.sampled_from(["git ", "git -C . ", "cd src && git "]))
def test_a_push_named_by_any_program_option_is_refused(option, push, git) -> None:
    cmd = git + option.format(q=shlex.quote(push) if not option.startswith("bisect run") else push)
    assert _classify(cmd).outcome == "deny", cmd


@pytest.mark.parametrize("cmd", ["git rebase --exe=./x.sh HEAD~1", "git rebase --ex ./x.sh HEAD~1",
                                 "git rebase --exec=./x.sh main"])
def test_a_stored_rebase_key_never_covers_the_program_exec_runs(cmd) -> None:
    v = _classify(cmd, granted=["Bash:git rebase"])
    assert (v.outcome, v.keys) == ("ask", (f"Bash:exact:{cmd}",)), v


@pytest.mark.parametrize("sub", ["diff", "log -p", "show", "stash show -p", "format-patch -1", "whatchanged -p",
                                 "diff-tree -p HEAD", "diff-files -p", "diff-index -p HEAD", "range-diff a...b"])
@pytest.mark.parametrize("flag", ["--ext-diff", "--ext-dif", "--ext"])
def test_ext_diff_asks_on_every_command_taking_diff_options(sub, flag) -> None:
    cmd = f"git {sub} {flag}"
    assert _classify(cmd).keys == (f"Bash:exact:{cmd}",)
    assert _classify(f"git {sub} --no-ext-diff").outcome == "allow"


@pytest.mark.parametrize(("a", "b", "score"), [("psuh", "push", 0), ("puhs", "push", 0), ("pus", "push", 1),
                                               ("pushh", "push", 3), ("pish", "push", 2), ("st", "status", 4)])
def test_gits_weighted_distance(a, b, score) -> None:
    assert _levenshtein(a, b) == score


@pytest.mark.parametrize(("word", "runs_push"), [("psuh", True), ("puhs", True), ("pushh", True), ("pus", True),
                                                 ("puhs", True), ("st", False), ("co", False), ("statsu", False),
                                                 ("pul", False), ("lg", False)])
def test_help_autocorrect_to_push(word, runs_push) -> None:
    from foreman.policy.gitcmd import _KNOWN_SUBS

    assert autocorrects_to_push(word, _KNOWN_SUBS) == runs_push
    assert (_classify(f"git {word}").outcome == "deny") == runs_push
