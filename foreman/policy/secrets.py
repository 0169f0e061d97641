"""Key material: files whose reading the policy refuses outright (``deny``, not ``ask``).

Private keys and stored credentials in the user's home are never something an agent needs to
read: ``cat ~/.ssh/id_rsa``, ``base64 < ~/.aws/credentials``, ``tar c ~/.gnupg`` and ``cp
~/.netrc .`` are refused whatever is stored, however the home folder is spelled (``~``,
``$HOME``, ``${HOME}``, ``/home/<user>``, ``/root``). Listing such a folder (``ls ~/.ssh``) and
reading its public parts (``*.pub``, ``known_hosts``, ``config``) still ask like any other path
outside the worktree. The check is on the path's text as written and on the resolved path (a
link into ``~/.ssh`` is the same file); paths inside the worktree are never key material.

Sources of the names: OpenSSH ``ssh(1)`` FILES, GnuPG's home layout, the AWS CLI, Docker,
kubectl, gcloud, Azure CLI, GitHub CLI, ``netrc(5)``, git's ``credential-store``, PostgreSQL's
``.pgpass``, pip's ``.pypirc``, npm's ``.npmrc``, Cargo's ``credentials(.toml)``.
"""

from __future__ import annotations

import posixpath
import re

#: Folders whose whole contents are key material (except :data:`_PUBLIC` names in ``.ssh``).
SECRET_DIRS: tuple[str, ...] = (".ssh", ".gnupg", ".aws", ".config/gcloud", ".azure", ".password-store",
                                ".kube", ".docker", ".config/gh")

#: Files (relative to a home folder) holding credentials.
SECRET_FILES: tuple[str, ...] = (".netrc", "_netrc", ".git-credentials", ".config/git/credentials", ".pgpass",
                                 ".pypirc", ".npmrc", ".cargo/credentials", ".cargo/credentials.toml",
                                 ".vault-token", ".config/hub", ".terraform.d/credentials.tfrc.json")

#: Names in a secret folder that are public or harmless (reading them asks as usual), per folder.
_PUBLIC: dict[str, re.Pattern[str]] = {
    ".ssh": re.compile(r"^(?:.*\.pub|known_hosts(?:\.old)?|config|authorized_keys|environment)$"),
    ".gnupg": re.compile(r"^(?:pubring\.kbx|trustdb\.gpg|gpg\.conf|gpg-agent\.conf|dirmngr\.conf)$"),
    ".aws": re.compile(r"^config$"),
}

#: Private key file names wherever they are (outside the worktree).
_KEY_NAMES = re.compile(r"^(?:id_(?:rsa|dsa|ecdsa|ed25519|xmss)(?:_sk)?|ssh_host_\w+_key)$")

#: Key and keystore files in a home folder (elsewhere ``.pem`` is usually a public certificate).
_HOME_KEY_NAMES = re.compile(r"^.*\.(?:pem|key|p12|pfx|ppk|jks|keystore)$")

#: System files holding secrets.
_SYSTEM = frozenset({"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers"})

#: How a home folder may be spelled at the start of a path.
_HOME = re.compile(r"^(?:~[A-Za-z0-9_.-]*|\$HOME|\$\{HOME\}|/root|/home/[^/]+|/Users/[^/]+)(?=/|$)")


#: First components of the folders and files above: a path naming one may be key material.
_FIRST = frozenset(p.split("/", 1)[0] for p in SECRET_DIRS + SECRET_FILES + (".agentcraft",))
_TAIL_HINT = re.compile(r"(?:^|/)(?:" + "|".join(re.escape(p) for p in sorted(_FIRST)) + r")(?:/|$)")

#: The Foreman's own client token file, below its state root (``~/.agentcraft/**/foreman.json``).
_FOREMAN_TOKEN = re.compile(r"^\.agentcraft/(?:.+/)?foreman\.json$")


def _below_home(norm: str, rel: str, name: str | None) -> str | None:
    """What ``rel`` (a normalised path relative to a home folder) is when it is key material.

    Args:
        norm: the whole path, for the description.
        rel: the part below the home (``.ssh/id_rsa``; ``""`` for the home itself).
        name: the last component when ``.pem``/``.key`` files count (a real home), else None.
    """
    for folder in SECRET_DIRS:
        if rel == folder or rel.startswith(folder + "/"):
            inner = rel[len(folder) + 1:]
            public = _PUBLIC.get(folder)
            if public and inner and "/" not in inner and "*" not in inner and public.match(inner):
                return None
            return f"{norm} (keys or credentials in a {folder} folder)"
    if rel in SECRET_FILES:
        return f"{norm} (stored credentials)"
    if _FOREMAN_TOKEN.match(rel):
        return f"{norm} (the Foreman's client token)"
    if name is not None and _HOME_KEY_NAMES.match(name):
        return f"{norm} (a key file in a home folder)"
    return None


def _unquote(text: str) -> str:
    return text.replace('"', "").replace("'", "").replace("\\", "")


def key_material(path: str) -> str | None:
    """Return what ``path`` is when it is key material (``"an SSH private key"``), else None.

    Args:
        path: a path as written (``~/.ssh/id_rsa``, ``"$HOME"/.netrc``) or resolved
            (``/home/u/.aws/credentials``); quotes are ignored.
    """
    text = _unquote(path.strip())
    if not text:
        return None
    norm = posixpath.normpath(text) if text.startswith("/") else text.rstrip("/")
    if norm in _SYSTEM:
        return f"{norm} (system password hashes or sudo rules)"
    name = norm.rsplit("/", 1)[-1]
    match = _HOME.match(norm)
    if match:
        rel = norm[match.end():].lstrip("/")
        found = _below_home(norm, posixpath.normpath(rel) if rel else "", name)
        if found:
            return found
    if _TAIL_HINT.search(norm):
        # Wherever the folder is (a home the policy cannot know, ``/tmp/h/.ssh``, ``x/.aws``, a
        # path with ``..``): its tail from a key-material component on is checked as if it were
        # below a home. Only the tail names count here (``.pem`` files are a home's alone).
        parts = posixpath.normpath(norm).split("/")
        for i, part in enumerate(parts):
            if part in _FIRST:
                found = _below_home(norm, "/".join(parts[i:]), None)
                if found:
                    return found
    if "/" in norm and norm.startswith(("/", "~", "$")) and _KEY_NAMES.match(name) and not name.endswith(".pub"):
        return f"{norm} (a private key)"
    return None
