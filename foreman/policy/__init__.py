"""The Foreman's permission policy: classify shell commands and tool calls as allow, ask or deny.

A pure package: no sockets, processes or clock; the only filesystem access is the injectable
``realpath`` used to follow symbolic links. See ``docs/policy.md`` for outcomes and rule keys.
"""

from .api import classify_command
from .cli import policy_main
from .tools import classify_tool
from .verdict import RuleSet, Verdict, describe_key, is_valid_key

__all__ = ["RuleSet", "Verdict", "classify_command", "classify_tool", "describe_key", "is_valid_key", "policy_main"]
