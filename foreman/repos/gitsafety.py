"""The git safety environment for every process an agent can influence.

The permission policy judges the commands it can see; a push can still hide in a test script
or a program the agent wrote. So the agent's CLI process, every command it runs and the
daemon's CI runs get an environment in which git itself refuses:

* every transport: ``GIT_ALLOW_PROTOCOL`` names a protocol that does not exist. git-config(1)
  (``protocol.allow``) and git(1) (``GIT_ALLOW_PROTOCOL``): when set, only the listed
  protocols are allowed, *overriding any configuration* - so push, send-pack, fetch, clone and
  ``ls-remote`` fail for local paths, ``file://``, ssh, http(s), ``ext::`` alike, even with an
  explicit ``pushurl`` or ``-c protocol.file.allow=always``. Env-scoped config adds
  ``protocol.allow=never`` (also per protocol) and rewrites every URL to a second protocol
  that is not allowed either (``url.<x>.insteadOf``/``pushInsteadOf`` with an empty prefix),
  so no remote helper is ever looked up;
* signing with the user's key: ``commit.gpgsign``/``tag.gpgsign`` are off and
  ``gpg.program``/``gpg.ssh.program``/``gpg.x509.program`` name a program that does not exist,
  so an explicit ``-S`` fails instead of signing; ``SSH_AUTH_SOCK``/``GPG_AGENT_INFO`` are
  dropped so no key agent is reachable;
* walking out of the worktree: ``GIT_CEILING_DIRECTORIES`` is the worktree's parent, so a
  worktree whose ``.git`` link was deleted stops working instead of reaching an enclosing
  repository. That variable is a *colon-separated* list (git(1)), so a path containing ``:``
  cannot be expressed in it: :func:`check_ceiling_path` refuses such a home or worktree path
  (the daemon calls it at start), and :func:`safety_env` refuses to build an environment for one;
* other repositories: every inherited ``GIT_*`` variable is removed (``GIT_DIR``,
  ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``, ``GIT_COMMON_DIR``, ``GIT_CONFIG_*`` ...).

Env-scoped config (``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, git >= 2.31)
outranks the repository's ``.git/config`` and the user's global config. The agent's own identity
(``AgentCraft <Name> <agent@agentcraft.invalid>``) is set, never the user's.

This is not a sandbox: a program can rebuild its environment from nothing. The permission
policy refuses the commands it can see doing that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from foreman.errors import RepoError

BLOCKED_PROTOCOL = "agentcraft-none"
"""A protocol name no git helper implements; the only one ``GIT_ALLOW_PROTOCOL`` allows."""

REWRITE_PROTOCOL = "agentcraft-blocked"
"""Every URL is rewritten to this protocol, which is *not* allowed either: git stops at its
protocol check and never looks for a ``git-remote-<protocol>`` helper."""

NO_SIGNING_PROGRAM = "agentcraft-signing-disabled"
"""A program name that does not exist, used for every signing program."""

_DROPPED = frozenset({"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "EMAIL"})

_CONFIG: tuple[tuple[str, str], ...] = (
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in ("file", "git", "ssh", "http", "https", "ext")),
    (f"url.{REWRITE_PROTOCOL}://blocked/.insteadOf", ""),
    (f"url.{REWRITE_PROTOCOL}://blocked/.pushInsteadOf", ""),
    ("credential.helper", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("gpg.program", NO_SIGNING_PROGRAM),
    ("gpg.openpgp.program", NO_SIGNING_PROGRAM),
    ("gpg.ssh.program", NO_SIGNING_PROGRAM),
    ("gpg.x509.program", NO_SIGNING_PROGRAM),
    ("gpg.ssh.defaultKeyCommand", NO_SIGNING_PROGRAM),
    ("user.signingKey", ""),
)


class UnsafePath(RepoError):
    """A home or worktree path that git's ``GIT_CEILING_DIRECTORIES`` cannot express."""


def check_ceiling_path(path: str | os.PathLike[str], *, what: str = "path") -> Path:
    """Refuse a path that cannot be a ``GIT_CEILING_DIRECTORIES`` entry.

    git(1) reads ``GIT_CEILING_DIRECTORIES`` as a colon-separated list of absolute paths, so a
    ``:`` in a folder name splits it into two meaningless entries and the ceiling silently stops
    working: an agent's git in a worktree whose ``.git`` link is gone would walk up into an
    enclosing repository. Both the path as given and its resolved form (symlinks followed) are
    checked.

    Args:
        path: the Foreman home, profile folder, or a worktree (or its parent).
        what: how the message names it (``"home"``, ``"worktree"`` ...).

    Returns:
        The resolved path.

    Raises:
        UnsafePath: the path (or what it resolves to) contains ``:``, or a newline.
    """
    given = os.fspath(path)
    resolved = Path(given).resolve()
    for text in (given, str(resolved)):
        if ":" in text or "\n" in text:
            bad = "':'" if ":" in text else "a newline"
            raise UnsafePath(
                f"the {what} {text!r} contains {bad}: git cannot use it in GIT_CEILING_DIRECTORIES (a "
                "colon-separated list), so it could not keep agents' git inside their worktrees. Choose a "
                f"{what} whose path has no ':' (e.g. with --home).")
    return resolved


def agent_identity(agent: str) -> tuple[str, str]:
    """Return the agent's git identity ``(name, email)``.

    Example: ``"kit"`` -> ``("AgentCraft Kit", "kit@agentcraft.invalid")`` (``.invalid`` is
    reserved by RFC 2606, so the address can never reach anyone).
    """
    local = re.sub(r"[^a-z0-9._-]+", "-", agent.lower()).strip("-.") or "agent"
    return f"AgentCraft {agent[:1].upper()}{agent[1:]}", f"{local}@agentcraft.invalid"


def safety_env(base_env: Mapping[str, str], *, agent: str, worktree: str | os.PathLike[str]) -> dict[str, str]:
    """Build the environment for a process an agent can influence.

    Args:
        base_env: the environment to start from (e.g. ``os.environ``); not modified.
        agent: the agent's id (``"kit"``): sets ``GIT_AUTHOR_*``/``GIT_COMMITTER_*``.
        worktree: the agent's worktree; its parent becomes ``GIT_CEILING_DIRECTORIES``.

    Returns:
        A new dict: ``base_env`` without any ``GIT_*`` variable nor key-agent sockets, plus the
        safety variables described in the module docstring.

    Raises:
        UnsafePath: the worktree's parent contains ``:`` (see :func:`check_ceiling_path`).
    """
    ceiling = check_ceiling_path(Path(worktree).resolve().parent, what="worktree folder")
    env = {k: v for k, v in base_env.items() if not k.startswith("GIT_") and k not in _DROPPED}
    name, email = agent_identity(agent)
    env.update(
        GIT_ALLOW_PROTOCOL=BLOCKED_PROTOCOL,
        GIT_CEILING_DIRECTORIES=str(ceiling),
        GIT_TERMINAL_PROMPT="0",
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
        GIT_CONFIG_COUNT=str(len(_CONFIG)),
    )
    for i, (key, value) in enumerate(_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env
