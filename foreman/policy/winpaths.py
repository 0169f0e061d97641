"""Windows-shaped paths: how Windows would read a path an agent names, so it is judged by that too.

An agent's command may be written for Windows (``type C:\\Users\\u\\.ssh\\id_rsa``, ``copy x
%USERPROFILE%\\Desktop``, ``> ..\\out.txt``), run by a shell or a program that reads it as Windows
does (Git Bash, WSL interop, a cross-platform script, a Windows Foreman), or land in a file or a
tool call that later runs there. On Linux such a word is one odd file name in the working
directory; on Windows it is a path outside the worktree or a user's key. The seed's rules treat
drive letters, ``%VAR%`` expansions and backslash paths as outside the worktree, so the policy
reads every Windows-shaped path twice: as written (what Linux does) and as Windows would, and the
worse reading wins.

What counts as Windows-shaped (:func:`windows_reading`):

* a drive letter (``C:\\x``, ``c:/x``, drive-relative ``c:x``) or a UNC/device path
  (``\\\\server\\share``, ``\\\\?\\C:\\x``): absolute, outside the worktree;
* a ``%NAME%`` expansion (cmd.exe) or ``$env:NAME`` (PowerShell): ``%USERPROFILE%``, ``%HOME%``,
  ``%HOMEPATH%`` and ``%HOMEDRIVE%%HOMEPATH%`` are the home folder, ``%APPDATA%`` and
  ``%LOCALAPPDATA%`` folders in it, any other name an unknown folder: outside;
* a backslash: a separator, so ``..\\..\\x`` climbs out and ``sub\\.git\\config`` is below a
  ``.git``; a backslash path that stays inside (``src\\a.py``) keeps its verdict.

Windows names are case-insensitive, so key material is matched on the lower-cased reading, with
the Windows homes of the same secrets (``%APPDATA%\\gnupg``, ``%APPDATA%\\gcloud``,
``%APPDATA%\\GitHub CLI``) mapped to their Unix names.

Sources: Microsoft's "Naming Files, Paths, and Namespaces" (drive letters, UNC and ``\\\\?\\``
paths, ``\\`` and ``/`` as separators), cmd.exe ``set`` (``%NAME%``), PowerShell
``about_Environment_Variables`` (``$env:NAME``), and the seed's permissions table.
"""

from __future__ import annotations

import posixpath
import re

from .secrets import key_material

#: A drive letter at the start (``C:``), absolute or drive-relative.
_DRIVE = re.compile(r"^[A-Za-z]:")
#: A cmd.exe expansion ``%NAME%`` (a name starts with a letter or ``_``; ``100%`` is no name).
_VAR = re.compile(r"%([A-Za-z_][A-Za-z0-9_()#$'*+,.?@\[\]{}~-]*)%")
#: A PowerShell expansion ``$env:NAME`` or ``${env:NAME}``.
_PS_VAR = re.compile(r"\$\{?env:([A-Za-z_][A-Za-z0-9_]*)\}?", re.IGNORECASE)
#: Folders the home-folder variables stand for (lower-case names).
_HOME_VARS = {"userprofile": "~", "home": "~", "homepath": "~", "appdata": "~/AppData/Roaming",
              "localappdata": "~/AppData/Local"}
#: Windows homes of secrets the Unix rules name otherwise (lower case, below the home).
_WINDOWS_SECRETS = (("appdata/roaming/gnupg", ".gnupg"), ("appdata/roaming/gcloud", ".config/gcloud"),
                    ("appdata/roaming/github cli", ".config/gh"), ("appdata/roaming/docker", ".docker"))
#: A Windows home folder spelled out (``/c:/users/<name>``, lower case).
_USERS = re.compile(r"^/[a-z]:/users/[^/]+(?=/|$)")


def windows_shaped(text: str) -> bool:
    """Whether ``text`` reads differently on Windows: a drive letter, a ``%VAR%``/``$env:``
    expansion or a backslash."""
    return "\\" in text or bool(_DRIVE.match(text)) or bool(_VAR.search(text)) or bool(_PS_VAR.search(text))


def windows_reading(text: str) -> str | None:
    """The path ``text`` as Windows would read it, in POSIX form; None when it reads the same.

    The result is relative (``../x``, ``sub/.git/config``: to be joined to the working directory
    like any relative path), or starts with ``~`` (the home folder) or ``/`` (absolute: a drive
    ``/C:/...``, a UNC share ``//server/...``, an unknown variable's folder ``/%TEMP%/...``).
    """
    if not windows_shaped(text):
        return None
    t = _PS_VAR.sub(lambda m: f"%{m.group(1)}%", text).replace("\\", "/")
    t = re.sub(r"%homedrive%%homepath%", "%USERPROFILE%", t, flags=re.IGNORECASE)
    first = _VAR.match(t)
    if first:
        name = first.group(1).lower()
        t = _HOME_VARS.get(name, f"/%{first.group(1)}%") + t[first.end():]
    if _VAR.search(t):
        t = "/" + t.lstrip("/")  # a variable inside the path: where it leads is unknown
    drive = _DRIVE.match(t)
    if drive:
        rest = t[2:]
        t = f"/{t[0].upper()}:" + ("" if rest.startswith("/") else "/") + rest
    if t.startswith("//"):
        return "//" + posixpath.normpath("/" + t.lstrip("/")).lstrip("/")
    if t.startswith(("/", "~")):
        return posixpath.normpath(t) if t.startswith("/") else t
    return posixpath.normpath(t) if t else "."


def unresolvable(reading: str) -> bool:
    """Whether a Windows reading names a place this machine cannot resolve: a drive
    (``/C:/...``), a share or device (``//server/...``), the home folder (``~/...``) or a
    variable's folder (``/%TEMP%/...``). Such a path is outside the worktree. Any other reading
    (``../x``, ``/tmp/x``) is resolved against the working directory like any path."""
    return reading.startswith(("~", "//")) or "%" in reading or bool(re.match(r"^/[A-Za-z]:(?:/|$)", reading))


def unix_form(reading: str) -> str:
    """A Windows reading in the form the Unix key-material rules read (:mod:`.secrets`): lower
    case (Windows ignores case), a ``C:\\Users\\<name>`` home as ``~``, and the Windows homes of
    the same secrets under their Unix names (``%APPDATA%\\gnupg`` is ``~/.gnupg``)."""
    low = _USERS.sub("~", reading.lower())
    for win, unix in _WINDOWS_SECRETS:
        low = re.sub(r"(^~/|/)" + re.escape(win) + r"(?=/|$)", r"\g<1>" + unix, low)
    return low


def windows_key_material(reading: str) -> str | None:
    """What a Windows reading that cannot be resolved (:func:`unresolvable`:
    ``/C:/Users/u/.ssh/id_rsa``, ``~/.aws/credentials``, ``~/AppData/Roaming/gnupg/x``) names when
    it is key material (:func:`.secrets.key_material` of its :func:`unix_form`), else None. A
    resolvable reading is resolved against the working directory first, as any path is."""
    return key_material(unix_form(reading))
