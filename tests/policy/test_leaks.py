"""Property tests for the leak kinds of issue 37 (table cases: ``cases_leaks.py``): every
program-naming git option, abbreviated or not, refuses a push and never rides on a stored
subcommand key; every writer into a nested ``.git`` asks for that entry alone; every Windows
spelling of key material is refused and every Windows path outside the worktree asks."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings, strategies as st

from foreman.policy import classify_command, classify_tool
from foreman.policy.gitprogs import _levenshtein, autocorrects_to_push
from foreman.policy.secrets import SECRET_DIRS, SECRET_FILES
from foreman.policy.winpaths import unresolvable, windows_reading

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


# ---- writes into a .git below the worktree's top -------------------------------------------------
_WRITERS = ["echo x > {p}", "echo x >> {p}", "printf x >| {p}", "tee {p} < a", "tee -a {p} < a", "cp a {p}",
            "install -m 755 a {p}", "sed -i s/a/b/ {p}", "dd if=a of={p}", "touch {p}", "echo x 2> {p}",
            "mv a {p}"]
_NESTED = ["sub", "vendor/lib", "a/b/c", "./x"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_WRITERS), st.sampled_from(_NESTED), st.sampled_from([".git", ".GIT", ".Git", "GIT~1"]),
       st.sampled_from(["hooks/pre-commit", "config", "info/attributes", "hooks/post-checkout", ""]))
def test_every_writer_into_a_nested_git_asks_for_that_entry(writer, folder, name, inner) -> None:
    path = f"{folder}/{name}" + (f"/{inner}" if inner else "")
    v = _classify(writer.format(p=path))
    entry = f"{WT}/{folder.removeprefix('./')}/{name}"
    assert v.outcome == "ask" and f"Bash:.git:{entry}" in v.keys, (path, v)
    granted = _classify(writer.format(p=path), granted=v.keys)
    assert granted.outcome == "allow"
    other = _classify(writer.format(p=path.replace(folder, "other", 1)), granted=v.keys)
    assert other.outcome == "ask", "a key for one nested .git never covers another"


def test_the_write_tool_asks_for_a_nested_git_and_reads_stay_allowed() -> None:
    def tool(name, path):
        return classify_tool(name, {"file_path": path}, worktree=WT, tmpdir="/tmp", realpath=fake_realpath)

    assert tool("Write", "sub/.git/hooks/pre-commit").keys == (f"Write:.git:{WT}/sub/.git/hooks/pre-commit",)
    assert tool("Edit", "lib/.git/config").outcome == "ask"
    assert tool("Read", "lib/.git/config").outcome == "allow"


# ---- Windows-shaped paths ----------------------------------------------------------------------
#: A file of key material below a home, for each folder and file the Unix rules name.
_SECRETS = [f"{d}/{'id_rsa' if d == '.ssh' else 'credentials' if d == '.aws' else 'x.key'}" for d in SECRET_DIRS] + [
    f for f in SECRET_FILES]
_WIN_HOMES = ["C:\\Users\\u", "c:\\users\\bob", "D:/Users/u", "%USERPROFILE%", "%userprofile%", "%HOME%",
              "%HOMEDRIVE%%HOMEPATH%", "$env:USERPROFILE", "\\\\?\\C:\\Users\\u"]
_READERS = ["cat {p}", "base64 < {p}", "cp {p} .", "grep -r x {p}", "tar czf /tmp/k.tgz {p}", "echo k > {p}",
            "type {p}", "cmd /c type {p}", "python3 -c \"open(r'{p}')\""]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_WIN_HOMES), st.sampled_from(_SECRETS), st.sampled_from(["\\", "/"]), st.booleans(),
       st.sampled_from(_READERS))
def test_every_windows_spelling_of_key_material_is_refused(home, secret, sep, upper, reader) -> None:
    path = home + sep + secret.replace("/", sep)
    if upper:
        path = path.upper().replace("%USERPROFILE%", "%USERPROFILE%")
    word = path if "python3" in reader else shlex.quote(path)
    v = _classify(reader.format(p=word))
    assert v.outcome == "deny", (reader, path, v)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["C:\\build", "D:/x", "c:out", "%TEMP%\\x", "%ProgramData%\\x", "\\\\srv\\share\\x",
                        "%USERPROFILE%\\Desktop", "$env:APPDATA\\x", "C:\\Users\\u\\.ssh\\known_hosts"]),
       st.sampled_from(["cat {p}", "echo x > {p}", "cp a {p}", "ls {p}", "touch {p}"]))
def test_a_windows_path_outside_the_worktree_asks_for_the_exact_command(path, cmd) -> None:
    line = cmd.format(p=shlex.quote(path))
    v = _classify(line)
    assert (v.outcome, v.keys) == ("ask", (f"Bash:exact:{line}",)), v
    assert "Windows path" in v.reason


@pytest.mark.parametrize("path", ["src\\a.py", "docs\\guide\\x.md", "src\\..\\README.md", "a\\b\\..\\c"])
def test_a_backslash_path_that_stays_inside_keeps_its_verdict(path) -> None:
    assert _classify(f"cat {shlex.quote(path)}").outcome == "allow"
    assert _classify(f"echo x > {shlex.quote(path)}").outcome == "allow"


@pytest.mark.parametrize(("text", "reading", "far"), [
    ("C:\\Users\\u\\x", "/C:/Users/u/x", True), ("c:x", "/C:/x", True), ("%USERPROFILE%\\x", "~/x", True),
    ("%APPDATA%\\gh", "~/AppData/Roaming/gh", True), ("$env:HOME/.netrc", "~/.netrc", True),
    ("\\\\server\\share\\x", "//server/share/x", True), ("%TEMP%/x", "/%TEMP%/x", True),
    ("..\\..\\x", "../../x", False), ("src\\a.py", "src/a.py", False), ("\\etc\\passwd", "/etc/passwd", False),
    ("plain/path", None, False), ("100%.txt", None, False),
])
def test_windows_reading(text, reading, far) -> None:
    assert windows_reading(text) == reading
    assert reading is None or unresolvable(reading) == far
