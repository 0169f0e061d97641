"""Table cases for the leak kinds of issue 37: commands of about 700 held back from the policy's
tests that it allowed (or only asked for) when it should have asked (or refused). Same format and
worktree as ``cases.py``; every kind has spellings the policy must refuse, ones it must ask for,
and ordinary commands of that kind that stay allowed. Each kind's rule says what it prevents
(``docs/policy.md``):

* git options that name a program to run: a git command the policy allows, or one a stored key
  covers (``Bash:git rebase``), must not run a program the policy never saw
  (``foreman/policy/gitprogs.py``);
* writes into a ``.git`` below the worktree's top: a nested repository's hooks and config run
  programs whenever git runs there, and a ``.git`` file points git at another repository
  (``Ctx.git_entry``);
* Windows-shaped paths: a drive letter, a ``%VAR%`` expansion or a backslash leads out of the
  worktree on Windows, to the user's keys or anywhere else (``foreman/policy/winpaths.py``).
"""

O = "Bash:outside:"
X = "X"
A, Q, D = "allow", "ask", "deny"

LEAK_KINDS: dict[str, list[tuple]] = {
    "git options that name a program to run": [
        # external diff programs: --ext-diff however abbreviated, on every command that takes diff options
        ('git stash show -p --ext-diff', Q, [X]),
        ('git stash show --ext-diff stash@{1}', Q, [X]),
        ('git format-patch --ext-diff -1 --stdout', Q, [X]),
        ('git show --ext HEAD', Q, [X]),
        ('git log -p --ext-d -3', Q, [X]),
        ('git diff-tree -p --ext-diff HEAD', Q, [X]),
        ('git -c diff.external=./tools/d.sh diff', Q, [X]),
        ('git -c diff.external="sh -c \'git push\'" log -p', D, []),
        ('git --config-env=diff.external=DIFFCMD diff', Q, [X]),
        ('GIT_EXTERNAL_DIFF=tools/d.sh git log -p', Q, [X]),
        ('git diff --no-ext-diff HEAD~1', A, []),
        ('git log -p --no-ext-diff', A, []),
        ('git diff --stat HEAD~3 -- src', A, []),
        # diff and merge tools: -x/--extcmd (and its abbreviations), -t/--tool, a tool's cmd
        ("git difftool --ext='git push'", D, []),
        ("git difftool -y -x 'git push origin'", D, []),
        ("git difftool -t 'git push'", D, []),
        ("git -c diff.tool=x -c difftool.x.cmd='git push' difftool", D, []),
        ('git -c difftool.x.cmd=\'cat "$LOCAL"\' difftool -t x', Q, [X]),
        ('git difftool --extcmd=cat HEAD~1', A, []),
        ("git difftool -x 'diff -u' HEAD~1", A, []),
        ("git mergetool --tool-cmd='git push'", D, []),
        ('git mergetool --tool-cmd=\'sh -c "git push"\'', D, []),
        ("git -c mergetool.kdiff.cmd='git push' mergetool --tool=kdiff", D, []),
        ("git -c mergetool.x.cmd='./resolve.sh $MERGED' mergetool -t x", Q, [X]),
        ('git mergetool --tool-cmd=./resolve.sh', Q, [X]),
        # a command for bisect to run, in the bisect of today and of git before 2.40
        ('git bisect run git push origin main', D, []),
        ("git bisect run sh -c 'make && git push'", D, []),
        ('git bisect--helper --bisect-run git push', D, []),
        ('git bisect run ./check.sh', Q, [X]),
        ("git bisect run python3 -c 'print(1)'", Q, [X]),
        ('git bisect run pytest -x tests/test_a.py', A, []),
        ('git bisect run make -j2 test', A, []),
        ('git bisect good HEAD~3', A, []),
        # rebase --exec as an abbreviation: a stored Bash:git rebase key never covers the program
        ("git rebase --exe='git push' HEAD~1", D, []),
        ("git rebase --ex 'git push' main", D, []),
        ('git rebase --exe=./x.sh HEAD~1', Q, [X, 'Bash:git rebase']),
        ("git rebase --exec='make test' HEAD~3", Q, ['Bash:git rebase']),
        # a pager for the files grep found, an upload-pack, an archive --exec, a merge-index program
        ("git grep -O'git push' TODO", D, []),
        ('git grep --open-files-in-pager=\'sh -c "git push"\' TODO', D, []),
        ('git grep --open=vim TODO', Q, [X]),
        ('git grep -n TODO src', A, []),
        ("git fetch --upl='git push' origin", D, []),
        ("git clone --upload-pack='git push' /tmp/r x", D, []),
        ('git ls-remote --upload-pack=./u.sh origin', Q, [X, 'Bash:net:git ls-remote:origin']),
        ("git archive --exe='git push' --remote=origin HEAD", D, []),
        ("git send-email --sendmail-cmd='git push' 0001.patch", D, []),
        ("git merge-index 'git push' -a", D, []),
        ('git merge-index -o git-merge-one-file -a', Q, [X]),
        # git run in other repositories, and a typo git's help.autocorrect runs as push
        ('git for-each-repo --config=maintenance.repo push', D, []),
        ('git for-each-repo --config=maintenance.repo gc', Q, [X, 'Bash:git gc']),
        ('git psuh origin main', D, []),
        ('git -c help.autocorrect=immediate pushh', D, []),
        ('git statsu', Q, [X]),
    ],
    "writes into a .git below the worktree's top": [
        # a redirect or a copy into a nested repository's .git (or a .git file there) asks for that entry
        ('echo x > sub/.git/hooks/pre-commit', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('echo x >> ./x/.git/config', Q, ['Bash:.git:/home/u/wt/x/.git']),
        ("printf '[core]\\n\\tfsmonitor = ./x\\n' >> vendor/lib/.git/config", Q, ['Bash:.git:/home/u/wt/vendor/lib/.git']),
        ('tee sub/.git/hooks/pre-commit < x', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('tee -a lib/.git/config < cfg', Q, ['Bash:.git:/home/u/wt/lib/.git']),
        ('cp hook.sh sub/.git/hooks/pre-commit', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('install -m 755 hook.sh sub/.git/hooks/pre-commit', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('cd sub && echo x > .git/hooks/pre-commit', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('cd sub/deep && echo x > ../.git/config', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ("echo 'gitdir: /home/u/repo/.git' > sub/.git", Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('ln -s /tmp/x sub/.git', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('cp -r /tmp/evil/.git sub/', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('dd of=sub/.git/config if=x', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('sed -i s/a/b/ sub/.git/config', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('echo x 2> sub/.git/config', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('echo x &> lib/.git/info/exclude', Q, ['Bash:.git:/home/u/wt/lib/.git']),
        ('echo x >| sub/.git/config', Q, ['Bash:.git:/home/u/wt/sub/.git']),
        # the same entry spelled as a case-insensitive or Windows file system reads it
        ('echo x > sub/.GIT/config', Q, ['Bash:.git:/home/u/wt/sub/.GIT']),
        ("echo x > 'sub\\.git\\hooks\\pre-commit'", Q, ['Bash:.git:/home/u/wt/sub/.git']),
        ('echo x > sub/.git./config', Q, ['Bash:.git:/home/u/wt/sub/.git.']),
        ('echo x > sub/GIT~1/config', Q, ['Bash:.git:/home/u/wt/sub/GIT~1']),
        # what is refused stays refused; reading, deleting and look-alike names keep their verdicts
        ('cp ~/.ssh/id_rsa sub/.git/', D, []),
        ("echo 'git push' > sub/.git/hooks/post-commit && sh sub/.git/hooks/post-commit", D, []),
        ('cat sub/.git/config', A, []),
        ('cat sub/.git/HEAD > head.txt', A, []),
        ('ls sub/.git/hooks', A, []),
        ('grep -r url sub/.git/config', A, []),
        ('echo x > sub/.gitignore', A, []),
        ('echo x > sub/.gitmodules', A, []),
        ('echo x > .github/workflows/ci.yml', A, []),
        ('echo x > sub/git/config', A, []),
        ('echo x > sub/.gitx/config', A, []),
        ('echo x > docs/dot.git.md', A, []),
        ('rm -rf sub/.git', Q, ['Bash:rm -r']),
    ],
    "Windows-shaped paths": [
        # drive letters: key material is refused, anything else on a drive asks for the exact command
        ("cat 'C:\\Users\\u\\.ssh\\id_rsa'", D, []),
        ('type C:\\\\Users\\\\u\\\\.ssh\\\\id_ed25519', D, []),
        ('cat C:/Users/u/.aws/credentials', D, []),
        ("cat 'D:\\home\\u\\.netrc'", D, []),
        ("base64 < 'c:\\Users\\bob\\.git-credentials'", D, []),
        ("cp 'C:\\Users\\u\\.gnupg\\private-keys-v1.d\\k.key' .", D, []),
        ("cat 'C:\\Users\\u\\.SSH\\ID_RSA'", D, []),
        ('cmd /c type C:\\\\Users\\\\u\\\\.ssh\\\\id_rsa', D, []),
        ('python3 -c "open(r\'C:\\Users\\u\\.aws\\credentials\').read()"', D, []),
        ("cat 'C:\\Users\\u\\.ssh\\id_rsa.pub'", Q, [X]),
        ('echo x > C:/x.txt', Q, [X]),
        ("echo x > 'C:\\Windows\\System32\\drivers\\etc\\hosts'", Q, [X]),
        ("cp build.zip 'D:\\backup\\'", Q, [X]),
        ('echo x > c:notes.txt', Q, [X]),
        ("ls 'C:\\Users'", Q, [X]),
        ("type 'C:\\Users\\u\\notes.txt'", Q, [X]),
        # %VAR% and $env: expansions (cmd.exe, PowerShell): the home's keys are refused, the rest asks
        ('cat %USERPROFILE%\\\\.ssh\\\\id_rsa', D, []),
        ("cat '%USERPROFILE%\\.aws\\credentials'", D, []),
        ('cat %HOMEDRIVE%%HOMEPATH%/.ssh/id_rsa', D, []),
        ("cat '%userprofile%\\.docker\\config.json'", D, []),
        ("cat '%APPDATA%\\gnupg\\secring.gpg'", D, []),
        ("cat '%APPDATA%\\GitHub CLI\\hosts.yml'", D, []),
        ("cat '$env:USERPROFILE\\.ssh\\id_rsa'", D, []),
        ('cat $env:USERPROFILE\\\\.kube\\\\config', D, []),
        ('cmd.exe /c "type %USERPROFILE%\\.ssh\\id_rsa"', D, []),
        ('powershell -c "Get-Content $env:USERPROFILE\\.ssh\\id_rsa"', D, []),
        ("echo x > '%USERPROFILE%\\Desktop\\notes.txt'", Q, [X]),
        ('echo x > %TEMP%/out.log', Q, [X]),
        ("cat '%APPDATA%\\npm\\etc\\npmrc.txt'", Q, [X]),
        # backslash paths: a separator, so .. climbs out; a path that stays inside keeps its verdict
        ("cat '..\\..\\.ssh\\id_rsa'", D, []),
        ('cat ~\\\\.ssh\\\\id_rsa', D, []),
        ("cat '\\Users\\u\\.ssh\\id_rsa'", D, []),
        ("cd 'C:\\Users\\u' && cat .ssh/id_rsa", D, []),
        ('cd %USERPROFILE%\\\\.aws && cat config', D, []),
        ("echo x > '..\\out.txt'", Q, [O + '/home/u:w:']),
        ("echo x > '\\\\server\\share\\x'", Q, [X]),
        ("cat '..\\..\\x'", Q, [O + '/home:r:']),
        ("cd '..\\..' && cat x", Q, [O + '/home:r:']),
        ("cat 'src\\main.py'", A, []),
        ("echo x > 'build\\out.txt'", A, []),
        ("cat 'src\\..\\README.md'", A, []),
        ("cd 'src\\lib' && cat a.py", A, []),
        ("echo 'a\\nb' > notes.txt", A, []),
        ("printf '%s\\n' a > out.txt", A, []),
        ('type ls', A, []),
    ],
}
