"""What a decoder returns, and the stable names it uses.

Every name here is part of the recorded trace format and of ``foreman replay``'s report:
rename one and old figures stop adding up. Add new names; never reuse an old one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .registry import ActionBase

REPAIRS: dict[str, str] = {
    # line protocol
    "crlf": "CRLF line endings read as LF",
    "think_block": "a <think> block was skipped (never actions)",
    "stray_think_close": "a </think> without its <think> was ignored",
    "action_colon": "an action word followed by a colon (READ: x)",
    "list_bullet": "an action line behind a list bullet or number (- READ x)",
    "backticked_action": "an action line wrapped in backticks",
    "quoted_argument": "an argument wrapped in backticks or quotes",
    "arrow_variant": "MOVE/COPY/RENAME with => or 'to' instead of ->",
    "path_decorated": "an edit's path line with backticks, bold, heading marks or a label",
    "path_in_fence_info": "an edit's path taken from the fence info string (```src/x.py)",
    "path_in_prose": "a block without a path line took the one path named in the prose just before it",
    "path_with_spaces": "an edit's path line holding spaces (docs/user guide.md)",
    "block_indented": "a whole edit block indented as a list item was read without that indentation",
    "json_comments": "JSON with // or /* */ comments",
    "orphan_search_block": "a block without a path line took the path of the edit before it",
    "marker_reversed": "a SEARCH/REPLACE marker written with the wrong arrow direction",
    "marker_size": "a SEARCH/REPLACE/divider marker of the wrong length",
    "marker_indent": "a SEARCH/REPLACE/divider marker indented",
    "marker_case": "a SEARCH/REPLACE marker word not in capitals",
    "missing_replace_marker": "an edit closed by the next SEARCH marker instead of REPLACE",
    "stray_marker": "a divider or REPLACE marker outside any block was ignored",
    "duplicate_action": "the same action twice in a row kept once",
    # JSON and tool-call forms in text
    "json_decision": "a bare JSON tool call in the text was used as the reply's action",
    "last_json_wins": "several JSON tool calls: the last complete one was used",
    "json_fence": "JSON inside a ``` fence",
    "trailing_comma": "JSON with trailing commas",
    "raw_control_char": "JSON strings with raw newlines or tabs",
    "python_literal": "a Python dict literal (single quotes, True/None) read as JSON",
    "router_json": 'the router form {"tool": ..., "content": ...}',
    "tool_call_xml": "a <tool_call> block",
    "function_xml": "a <function=name><parameter=x> block",
    "unclosed_tool_call": "a <tool_call> or <function=...> not closed before the reply ended",
    "tool_alias": "a known alias of a tool name (read_file, shell, ...)",
    "field_alias": "a known alias of an argument name (file_path, cmd, ...)",
    "arguments_string": "tool arguments given as a JSON string inside the JSON",
    "extra_argument": "an argument the tool does not take was ignored",
    "primary_argument": "a bare string argument filled the tool's main field",
    "empty_search_is_create": "an edit with an empty SEARCH part became a create",
    "range_fields": "line range given as a list or a 'start-end' string",
    # native
    "tool_call_in_content": "no native tool call: the message text was decoded as text",
    # whole reply
    "repetition_loop": "a repetition loop: the rest of the reply was ignored",
    "leaked_prompt": "a line of the prompt's own instructions was ignored",
}
"""Repair id -> what it means."""

DROPS: dict[str, str] = {
    "truncated_action": "an action cut off by the end of the reply",
    "unterminated_edit": "an edit block without its REPLACE marker at the end of the reply",
    "edit_without_path": "a SEARCH/REPLACE block with no path before it",
    "missing_divider": "a block with SEARCH and REPLACE markers but no ======= divider",
    "invalid_json": "a tool call whose JSON could not be read",
    "unknown_tool": "a tool name the registry does not know",
    "bad_arguments": "a known tool with missing or invalid arguments",
    "placeholder_argument": "an argument that is an instruction's placeholder (<path>, <command>): never an action",
    "not_allowed": "a tool this role may not use",
}
"""Drop id -> why something that looked like an action was not one."""

REASONS: dict[str, str] = {
    "empty": "the reply was empty",
    "only_thinking": "the reply held only a <think> block",
    "repetition_loop": "the reply was a repetition loop",
    "leaked_prompt": "the reply echoed the prompt's instructions",
    "truncated": "the reply was cut off (finish_reason length) before an action was complete",
    "malformed": "the reply tried to act but no action could be decoded (see dropped)",
    "no_action": "the reply was prose with no action in it",
}
"""No-action reason id -> meaning."""


@dataclass(frozen=True)
class DecodeResult:
    """The outcome of decoding one model reply.

    Attributes:
        actions: the decoded actions, in reply order.
        repairs: repair ids, one entry per application (so a repair can appear twice).
        dropped: drop ids, one entry per thing that looked like an action and was not.
        reason: None when there are actions; otherwise a :data:`REASONS` id.
    """

    actions: tuple[ActionBase, ...] = ()
    repairs: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    reason: str | None = None
    chatter_lines: int = field(default=0, compare=False)

    @property
    def usable(self) -> bool:
        """True when the reply became at least one action."""
        return bool(self.actions)

    def repair_counts(self) -> Counter[str]:
        """Return how often each repair was applied."""
        return Counter(self.repairs)

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"actions": [...], "repairs": [...], "dropped": [...], "reason": ...}``."""
        return {
            "actions": [action.to_dict() for action in self.actions],
            "repairs": list(self.repairs),
            "dropped": list(self.dropped),
            "reason": self.reason,
        }
