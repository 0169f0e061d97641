"""Commands refused outright because of *where* they act, not what they run.

Three rules, all pure text and path checks (no I/O beyond the injected ``realpath``):

* :func:`wipe_target`: a recursive delete (``rm -r``, ``find -delete``) of the filesystem root,
  a top-level system folder (``/usr``, ``/etc``...) or a home folder (``~``, ``$HOME``,
  ``/home/<user>``) is never what an agent's task needs, and no stored key may cover it.
* :func:`key_folder`: a ``cd``/``pushd`` into a folder of key material (``~/.ssh``,
  ``~/.gnupg``... as :mod:`.secrets` defines it): whatever runs there reaches the keys through
  relative paths the policy cannot tie to that folder, so the move itself is refused.
* :func:`code_key_material`: inline code (``python -c``, ``node -e``...) that names key material
  in its text (``open('/root/.ssh/id_rsa')``, ``HOME+'/.ssh/id_rsa'``, ``'.aws/credentials'``):
  the same paths ``cat`` is refused are refused when a program's code spells them.
"""

from __future__ import annotations

import posixpath
import re

from .secrets import SECRET_DIRS, SECRET_FILES, key_material
from .winpaths import unix_form, unresolvable, windows_key_material, windows_reading, windows_shaped

#: Top-level folders a recursive delete may never take (FHS 3.0 top-level hierarchy, plus
#: ``/lib32``, ``/lib64``, ``/libx32`` and macOS's ``/System``, ``/Users``, ``/Library``).
SYSTEM_DIRS = frozenset({"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var",
                         "/home", "/boot", "/opt", "/root", "/srv", "/sys", "/proc", "/dev", "/System",
                         "/Users", "/Library", "/Applications", "/private"})

#: A home folder as written (``~``, ``~user``, ``$HOME``, ``${HOME}``), with an optional ``/``,
#: ``/.`` or ``/*`` after it (all of it, or all its entries).
_HOME_WORD = re.compile(r"^(?:~[A-Za-z0-9_.-]*|\$HOME|\$\{HOME(?::?[-?=+][^}]*)?\})(?:/+(?:\.|\*)?)?/*$")
#: A resolved home folder: ``/root``, ``/home/<user>``, ``/Users/<user>``.
_HOME_PATH = re.compile(r"^(?:/root|/home/[^/]+|/Users/[^/]+)$")


def _unquote(text: str) -> str:
    return text.replace('"', "").replace("'", "").replace("\\", "")


def wipe_target(path: str) -> str | None:
    """What a recursive delete of ``path`` would wipe, when it is refused outright; else None.

    Args:
        path: the operand as written (``~``, ``"$HOME"/``, ``/*``) or as resolved
            (``/usr``, ``/home/u``): quotes are ignored, ``.``/``..`` are folded, and a trailing
            ``/*`` or ``/.`` counts as the folder itself (all its entries).

    Returns:
        A phrase for the reason (``"the filesystem root /"``, ``"the system folder /usr"``,
        ``"the home folder ~"``), or None for any other path.
    """
    text = _unquote(path.strip())
    if not text:
        return None
    if _HOME_WORD.match(text):
        return f"the home folder {text}"
    if not text.startswith("/"):
        return None
    while text.endswith(("/*", "/.")) and len(text) > 2:
        text = text[:-2]
    norm = posixpath.normpath(text)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if norm in ("/", "/*", "/."):
        return "the filesystem root /"
    if norm in SYSTEM_DIRS:
        return f"the system folder {norm}"
    if _HOME_PATH.match(norm):
        return f"the home folder {norm}"
    return None


def key_folder(path: str) -> str | None:
    """Whether ``path`` (as written or resolved) is a key-material folder or lies inside one.

    Returns:
        The folder's description from :func:`.secrets.key_material` (``"~/.ssh (keys or
        credentials in a .ssh folder)"``), or None. Files that are key material but no folder
        (``~/.netrc``) and public files (``~/.ssh/config``) are not folders to enter: None.
    """
    text = _unquote(path.strip())
    if not text:
        return None
    found = key_material(text.rstrip("/") or text)
    if found is None or "folder)" not in found:
        return None
    return found


#: PowerShell's ``$env:NAME`` in code (read as cmd.exe's ``%NAME%``, which :mod:`.winpaths` reads).
_PS_ENV = re.compile(r"\$\{?env:([A-Za-z_][A-Za-z0-9_]*)\}?", re.IGNORECASE)

#: A path on a Windows drive inside code (the token split below would cut it at the colon).
_CODE_DRIVE_PATH = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]:[\\/][^\s'\"`(),;<>|&]*")

#: Where a key-material name may start inside code: after a path separator or at a token's start.
_CODE_TOKEN = re.compile(r"[^\s'\"`(),;+\[\]<>|&=:!?*]+")
_COMPONENTS = tuple(sorted({d.split("/")[0] for d in SECRET_DIRS} | {f.split("/")[0] for f in SECRET_FILES},
                           key=len, reverse=True))


#: Key-material folders no project keeps in its tree: named relatively in code (``.aws/credentials``)
#: they still count; ``.docker``, ``.kube`` and credential files (``.npmrc``) often are a project's own.
_HOME_ONLY = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".password-store", ".config"})


def code_key_material(code: str, inside=None) -> str | None:
    """The first key-material path that inline code names literally, or None.

    Looks at every path-like token of the code (strings or not, any language): an absolute or
    home path (``/root/.ssh/id_rsa``, ``~/.aws/credentials``, ``/etc/shadow``) is checked as
    :func:`.secrets.key_material` checks ``cat``'s operands; a token that starts with a
    key-material component (``/.ssh/id_rsa`` after ``HOME +``, ``$ENV{HOME}/.netrc``,
    ``.aws/credentials``, ``.gnupg/``) is checked as if it were below a home folder. Relative
    names that a project may well hold itself (a bare ``.npmrc``, ``.docker/...``, ``.kube/...``)
    do not count, nor do public files (``.ssh/known_hosts``, ``*.pub``).

    Args:
        code: the code's text.
        inside: a predicate telling whether an absolute path lies in the worktree (such paths
            are the project's own and never key material); None: no path is inside.
    """
    low = code.lower()  # (Windows paths name key material in any case: ``C:\\USERS\\U\\.SSH``)
    if not any(comp in low for comp in _COMPONENTS) and not any(w in low for w in ("/etc/", "id_", "_key")):
        return None
    for drive_path in _CODE_DRIVE_PATH.findall(code):  # ``D:/Users/u/.ssh/id_rsa``, in any case
        reading = windows_reading(drive_path.replace("\\\\", "\\"))
        found = windows_key_material(reading) if reading else None
        if found:
            return found
    for token in _CODE_TOKEN.findall(_PS_ENV.sub(r"%\1%", code)):
        if windows_shaped(token):
            # a Windows path (``C:\\Users\\u\\.ssh\\id_rsa`` splits at the colon, so its drive
            # is dropped; ``%USERPROFILE%\\.aws\\credentials``; ``'..\\.netrc'`` in a string)
            reading = windows_reading(token.replace("\\\\", "\\")) or token
            if unresolvable(reading):
                found = windows_key_material(reading)
                if found:
                    return found
                continue
            token = unix_form(reading)
        if "/" not in token and not token.startswith("."):
            continue
        token = token.rstrip(".")  # a sentence's full stop, or ``path.`` before a method call
        own = inside is not None and token.startswith("/") and inside(posixpath.normpath(token))
        if token.startswith(("/", "~", "$")) and not token.startswith("/.") and not own:
            found = key_material(token)
            if found:
                return found
        found = _home_relative(token)
        if found:
            return found
    return None


def _home_relative(token: str) -> str | None:
    """A token holding ``<something>/.ssh/...`` or starting with ``.aws/...``, read below a home."""
    for comp in _COMPONENTS:
        at = token.find(comp)
        while at > 0 and token[at - 1] != "/":
            at = token.find(comp, at + 1)
        if at < 0:
            continue
        end = at + len(comp)
        if end < len(token) and token[end] != "/":
            continue
        prefix = token[:at].rstrip("/")
        rest = token[at:]
        if prefix and not _dynamic_or_home(prefix):
            continue
        if not prefix and not token.startswith("/") and (comp not in _HOME_ONLY or (
                "/" not in rest.rstrip("/") and rest.rstrip("/") not in SECRET_DIRS)):
            continue  # a bare ``.npmrc`` or ``.docker/x``: may well be the project's own
        found = key_material("~/" + rest)
        if found:
            return found
    return None


def _dynamic_or_home(prefix: str) -> bool:
    """Whether a path prefix in code stands for a home folder or is computed (``$ENV{HOME}``)."""
    return bool(re.match(r"^~[A-Za-z0-9_.-]*$", prefix) or _HOME_PATH.match(prefix)) or any(
        ch in prefix for ch in "${}%") or prefix.upper().endswith("HOME")


def refuse_wipe(ctx, arg, cwds, what: str) -> bool:
    """Refuse (``ctx.deny``) a recursive delete of ``arg`` when :func:`wipe_target` names it.

    The operand is checked as written (``~``, ``"$HOME"``, ``/*``), joined to each possible
    working directory (``cd / && rm -rf usr``), and resolved through links.

    Args:
        ctx: the classification (:class:`~foreman.policy.context.Ctx`).
        arg: the operand (:class:`~foreman.policy.words.Arg`).
        cwds: the possible working directories (None: unknown).
        what: the program, for the reason (``"rm -r"``).

    Returns:
        Whether the command was refused.
    """
    if arg.kind not in ("lit", "unknown"):
        return False
    if cwds is None and arg.kind == "lit" and arg.text and _only_parents(arg.text):
        # from an unknown directory, ``..`` may be a home folder or ``/``: a harmless prefix that
        # makes the directory unknown must not turn the refusal of ``rm -rf ..`` into an ask
        ctx.deny(f"{what} would delete {arg.text}, a parent of an unknown working directory "
                 "(it may be a home folder or /), and everything in it")
        return True
    texts = [arg.src] if arg.kind == "unknown" or arg.text is None else [arg.text]
    if arg.kind == "lit" and arg.text:
        for cwd in (cwds or ()) if not arg.text.startswith("/") else ("/",):
            joined = posixpath.join(cwd, arg.text)
            texts.append(joined)
            if not arg.glob:
                texts.append(_physical(ctx, joined))
    for text in texts:
        found = wipe_target(text) if text else None
        if found:
            ctx.deny(f"{what} would delete {found} and everything in it")
            return True
    return False


def _only_parents(path: str) -> bool:
    """``..``, ``../..``, ``./../`` ...: a relative path made only of parent steps."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return not path.startswith("/") and bool(parts) and all(p == ".." for p in parts)


def _physical(ctx, path: str) -> str:
    """The path ``rm`` deletes: links in its folders resolved, a last component that is a link
    kept as it is (``rm -r link`` deletes the link, ``rm -r link/`` what it leads to)."""
    head, base = posixpath.split(path)
    if base in ("", ".", ".."):
        return ctx.realpath(path)
    return posixpath.join(ctx.realpath(head or "/"), base)


#: Words in a build target's or script's name that say it publishes or pushes something.
PUBLISH_WORDS = frozenset({"push", "deploy", "release", "publish", "upload"})
_NAME_PARTS = re.compile(r"[-_:./+@]+")


def publishing_target(name: str) -> bool:
    """Whether a build target or package script's name suggests it publishes or pushes.

    The name is split on ``-``, ``_``, ``:``, ``.``, ``/``: ``deploy``, ``docker-push``,
    ``release:patch`` and ``publish_docs`` count; ``pusher`` or ``prerelease-notes`` do not.
    """
    return any(part.lower() in PUBLISH_WORDS for part in _NAME_PARTS.split(name))


def ask_publish(c, runner: str, target: str) -> None:
    """Ask for running one target whose name publishes (:func:`publishing_target`).

    The key is ``Bash:publish:<runner> <target>`` (``Bash:publish:make deploy``,
    ``Bash:publish:npm run release``): one per target, so storing it never covers another.

    Args:
        c: the program's :class:`~foreman.policy.registry.Call`.
        runner: the command as the key names it, up to the target (``make``, ``make -C docs``,
            ``npm run``, ``yarn``).
        target: the target or script name.
    """
    c.ctx.ask(f"Bash:publish:{runner} {target}",
              f"{runner} {target}: the target's name suggests it publishes or pushes, and the policy "
              "cannot see what its recipe runs")
