"""Every code an ``error`` reply can carry, with its meaning: the one list.

``docs/protocol.md`` ("Error codes") and the schema's ``Error.code`` (``x-error-codes``) are
generated from :data:`ERROR_CODES` by ``foreman docs``; ``tests/core/test_error_codes.py`` finds
every code the daemon can send (the ``code`` of every ``ForemanError`` subclass, the codes the
server and the decoder write themselves) and checks that each is here and in the doc. A new code
goes here first; within v1 codes are only added, and a client treats a code it does not know as a
refusal whose ``message`` says why.
"""

from __future__ import annotations

ERROR_CODES: dict[str, str] = {
    # -- a frame or a session the server refuses (foreman/server.py, protocol/codec.py)
    "unauthorized": "The client has not presented the profile's token (see Authentication): any frame but a `hello` "
                    "with the token, before its details are checked; no snapshot, nothing changed.",
    "hello_first": "An intent arrived before the connection's `hello` (on an authenticated connection; else "
                   "`unauthorized`).",
    "protocol": "The `hello` names a protocol version this daemon does not speak.",
    "bad_json": "The frame is not valid JSON (or not UTF-8).",
    "bad_request": "The frame is not a JSON object, has no `type`, or a field is missing or has the wrong type.",
    "unknown_type": "The `type` names no client intent of this protocol version.",
    "too_large": "A client frame is larger than the server accepts.",
    "internal": "The daemon failed to handle the intent (a bug; see its log). Nothing is assumed changed.",
    # -- an intent the daemon refuses (foreman/errors.py and the errors of its edges)
    "illegal": "The core refused an input; the state is unchanged.",
    "not_found": "An input names an entity (agent, task, decision, repo, note) that does not exist.",
    "conflict": "An input is not allowed in the entity's current status (see the transition tables).",
    "bad_text": "A title or name (a task title, a goal's text, an agent's title, a decision option) holds a "
                "bidirectional control or a control character other than newline and tab (see Display-safe text).",
    "config": "A setting is unknown or has a bad value; the message names the key and the fix.",
    "profile_in_use": "Another live Foreman runs this profile.",
    "sandbox_unavailable": "`--os-sandbox required` on a machine where bubblewrap cannot run.",
    "repo": "A git operation failed or was refused.",
    "not_repo_root": "A path given as a repository is not a repository's top-level folder.",
    "merge_refused": "A merge was not made (dirty base checkout, conflict, signing failure); nothing changed.",
    "worktree_unsafe": "A worktree's `.git` link no longer leads to this repository's entry for it.",
    "backend": "A backend (model service, CLI) failed a turn.",
    "policy": "The permission policy refused a command or file access.",
    "store": "The state database cannot be opened, cannot be written, or is from a newer Foreman.",
}
"""Error code -> what it means, for people (one sentence or two)."""
