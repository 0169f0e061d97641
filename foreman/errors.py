"""The Foreman's error tree.

Every error the daemon raises on purpose derives from :class:`ForemanError` and carries a
stable wire ``code`` (sent to clients in ``error`` replies)::

    ForemanError                  code
    ├── ConfigError               config            bad setting: names the key and the fix
    ├── ProtocolError             bad_request       malformed frame, unknown type, missing field
    │   └── MessageTooLarge       too_large
    ├── StateError                illegal           an input the core refuses; state unchanged
    │   ├── NotFound              not_found         unknown agent, task, decision, repo ...
    │   ├── Conflict              conflict          illegal transition, already answered ...
    │   └── BadText               bad_text          a title or name holds a bidi or control character
    ├── RepoError                 repo              git refused or failed (edges map git errors here)
    │   ├── NotARepoRoot          not_repo_root
    │   ├── MergeRefused          merge_refused     dirty base checkout, conflict, signing failed
    │   └── WorktreeUnsafe        worktree_unsafe   a worktree's .git link no longer leads home
    ├── BackendError              backend           a model service or CLI failed
    └── PolicyError               policy            a command was refused by the permission policy

Library exceptions (git, SDK, HTTP) are translated at the edge that calls them; nothing above
an edge sees a third-party exception.

Every ``code`` (these, and those of subclasses elsewhere: ``store``, ``profile_in_use``,
``sandbox_unavailable``) is listed in ``protocol.errors.ERROR_CODES``, the one list the protocol
doc and schema are generated from; ``tests/core/test_error_codes.py`` checks that no code is
missing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ForemanError(Exception):
    """Base of every deliberate Foreman error.

    Args:
        message: a sentence a person can act on.
    """

    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(ForemanError):
    """A setting is unknown or has a bad value; the message names the key and the fix."""

    code = "config"


class ProtocolError(ForemanError):
    """A client frame could not be understood (bad JSON, unknown type, missing field)."""

    code = "bad_request"


class MessageTooLarge(ProtocolError):
    """A client frame is larger than the server accepts."""

    code = "too_large"


class StateError(ForemanError):
    """The core refused an input; the state is unchanged."""

    code = "illegal"


class NotFound(StateError):
    """An input names an entity (agent, task, decision, repo, note) that does not exist."""

    code = "not_found"


class Conflict(StateError):
    """An input is not allowed in the entity's current status (see the transition tables)."""

    code = "conflict"


class BadText(StateError):
    """A title or name (a task title, a goal's text, an agent's title, a decision option) holds a
    bidirectional control or a control character other than newline and tab (``protocol.text``)."""

    code = "bad_text"


class RepoError(ForemanError):
    """A git operation failed or was refused.

    Args:
        message: what happened and what to do.
        permanent: retrying cannot help until someone acts (a folder or branch held elsewhere, a
            missing commit or tool): the caller stops retrying and says so at once. False: it may
            pass (a lock, a busy folder, a timeout).
    """

    code = "repo"
    permanent = False

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent or type(self).permanent


class NotARepoRoot(RepoError):
    """A path given as a repository is not a repository's top-level folder."""

    code = "not_repo_root"


class MergeRefused(RepoError):
    """A merge was not made (dirty base checkout, conflict, signing failure); nothing changed."""

    code = "merge_refused"

    def __init__(self, message: str, *, reason: str = "refused", files: list[str] | None = None) -> None:
        super().__init__(message, permanent=False)
        self.reason = reason
        self.files = list(files or [])


class WorktreeUnsafe(RepoError):
    """A worktree's ``.git`` link no longer leads to this repository's entry for it (left for the
    user to inspect: permanent)."""

    code = "worktree_unsafe"
    permanent = True


class BackendError(ForemanError):
    """A backend (model service, CLI) failed a turn."""

    code = "backend"


class PolicyError(ForemanError):
    """The permission policy refused a command or file access."""

    code = "policy"


def closest(word: str, known: Iterable[str]) -> str | None:
    """The entry of ``known`` nearest to ``word`` (:func:`difflib.get_close_matches`, its default
    cutoff), or None: what a message suggests for a misspelt key, flag or command."""
    found = difflib.get_close_matches(word, list(known), n=1)
    return found[0] if found else None
