"""Outcomes and rule keys of the permission policy.

A :class:`Verdict` is what the policy answers for one command or tool call. An *ask* carries
the rule keys the call needs; answering "always allow for this agent" stores exactly those keys
in the agent's :class:`RuleSet`. Keys match by string equality only, and every key names its
scope exactly (one action, one directory, one host, one command), so a stored key can never
cover a wider case than the one it was granted for. The key grammar is documented in
``docs/policy.md``; :func:`describe_key` renders a key for the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Literal

Outcome = Literal["allow", "ask", "deny"]

#: Modes of ``Bash:outside:<dir>:<mode>:`` keys and what each covers.
OUTSIDE_MODES = {
    "r": "reading files directly in",
    "w": "writing files directly in",
    "x": "running programs directly in",
    "rtree": "a recursive read of",
    "wtree": "a recursive change of",
}

#: Key prefixes that a stored key may start with; anything else is ignored by RuleSet.
KEY_PREFIXES = ("Bash:", "Read:", "Grep:tree:", "Glob:tree:", "Write:", "WebFetch:", "WebSearch", "Tool:")


@dataclass(frozen=True)
class Verdict:
    """The policy's answer for one command or tool call.

    Attributes:
        outcome: ``"allow"`` (run it), ``"ask"`` (a permission decision for the user) or
            ``"deny"`` (refused whatever is stored).
        keys: the rule keys an ask needs and that are not granted yet, in the order found
            (empty for allow and deny). "Always allow for this agent" stores all of them.
        reason: one sentence for people.
        scope: what "always allow" would cover, for the prompt (``''`` when not an ask).
        network: the command needs the network (a fetch, a package install, a download): once
            it is allowed (by the policy, a stored key or the user's answer) it runs in the OS
            sandbox *with* the host's network; every other command runs with none. Always
            False for ``deny``.
    """

    outcome: Outcome
    keys: tuple[str, ...] = ()
    reason: str = ""
    scope: str = ""
    network: bool = False

    def to_dict(self) -> dict:
        """The verdict as a plain JSON-ready dict (``outcome``, ``keys``, ``reason``, ``scope``, ``network``)."""
        return {"outcome": self.outcome, "keys": list(self.keys), "reason": self.reason, "scope": self.scope,
                "network": self.network}


@dataclass(frozen=True)
class RuleSet:
    """The "always allow" keys stored for one agent: plain data the daemon persists.

    Keys are matched by exact string equality (see the module docstring); malformed keys and
    keys of older Foreman versions are kept for round-tripping but match nothing new.

    Attributes:
        keys: the stored keys, deduplicated, in grant order.
    """

    keys: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_list(cls, keys: Iterable[str]) -> "RuleSet":
        """Build a rule set from a stored list of strings (non-strings are dropped)."""
        seen: dict[str, None] = {}
        for k in keys:
            if isinstance(k, str):
                seen.setdefault(k, None)
        return cls(tuple(seen))

    def to_list(self) -> list[str]:
        """The keys as a JSON-ready list of strings."""
        return list(self.keys)

    def grant(self, keys: Iterable[str]) -> "RuleSet":
        """A new rule set that also holds ``keys`` (only well-formed keys are added)."""
        return RuleSet.from_list([*self.keys, *(k for k in keys if is_valid_key(k))])

    def revoke(self, keys: Iterable[str]) -> "RuleSet":
        """A new rule set without ``keys``."""
        drop = set(keys)
        return RuleSet(tuple(k for k in self.keys if k not in drop))

    def covers(self, key: str) -> bool:
        """Whether ``key`` was granted (exact match; never a wider case)."""
        return key in self.keys

    def __iter__(self):
        return iter(self.keys)


def is_valid_key(key: str) -> bool:
    """Whether ``key`` follows the current key grammar (see ``docs/policy.md``)."""
    if not isinstance(key, str) or not key.startswith(KEY_PREFIXES) or "\x00" in key:
        return False
    if key.startswith("Bash:outside:"):
        rest = key[len("Bash:outside:"):]
        if not rest.endswith(":"):
            return False
        head, _, mode = rest[:-1].rpartition(":")
        return mode in OUTSIDE_MODES and head.startswith("/")
    return key == "WebSearch" or (":" in key and len(key.split(":", 1)[1]) > 0)


def outside_key(directory: str, mode: str) -> str:
    """The key for ``mode`` access (see :data:`OUTSIDE_MODES`) to ``directory`` outside the worktree."""
    return f"Bash:outside:{directory}:{mode}:"


def exact_key(command: str) -> str:
    """The key that allows only this exact command string (surrounding blanks dropped)."""
    return f"Bash:exact:{command.strip()}"


def describe_key(key: str) -> str:
    """A short phrase for the prompt saying what ``key`` would allow."""
    if key.startswith("Bash:exact:"):
        return f"only the exact command `{key[len('Bash:exact:'):]}`"
    if key.startswith("Bash:outside:"):
        head, _, mode = key[len("Bash:outside:"):-1].rpartition(":")
        return f"{OUTSIDE_MODES.get(mode, mode)} {head}"
    if key.startswith("Bash:net:"):
        tool, _, target = key[len("Bash:net:"):].partition(":")
        return f"`{tool}` to {target}"
    if key.startswith("Bash:git checkout:"):
        return f"switching the worktree to exactly `{key[len('Bash:git checkout:'):]}`"
    if key.startswith(("Bash:git update-ref", "Bash:git symbolic-ref", "Bash:git branch -")) and ":" in key[5:]:
        action, _, refs = key[5:].partition(":")
        return f"`{action}` on exactly {refs}"
    if key.startswith("Bash:publish:"):
        return f"running `{key[len('Bash:publish:'):]}` (a target named like a publish or push)"
    if key.startswith("Bash:serve:"):
        return f"running the dev server `{key[len('Bash:serve:'):]}`"
    if key.startswith("Bash:.git:"):
        return f"writing, moving or deleting the .git entry {key[len('Bash:.git:'):]} (the worktree's link or a nested one)"
    if key.startswith("Bash:"):
        return f"`{key[5:]}` inside the worktree"
    if key.startswith("Read:"):
        return f"reading {key[5:]}"
    if key.startswith("Grep:tree:"):
        return f"searching the tree {key[10:]}"
    if key.startswith("Glob:tree:"):
        return f"listing the tree {key[10:]}"
    if key.startswith("Write:.git:"):
        return f"editing {key[11:]} in a .git entry (the worktree's link or a nested one)"
    if key.startswith("Write:"):
        return f"editing {key[6:]}"
    if key.startswith("WebFetch:"):
        return f"fetching pages from {key[9:]}"
    if key == "WebSearch":
        return "web searches"
    if key.startswith("Tool:"):
        return f"the tool {key[5:]}"
    return key


def describe_scope(keys: Iterable[str]) -> str:
    """The prompt's scope line: what storing all ``keys`` would cover."""
    parts = [describe_key(k) for k in keys]
    return "; ".join(parts)
