"""Generate ``docs/protocol.md`` and ``docs/protocol.schema.json`` from the protocol models.

Both files are derived from :mod:`protocol` only (plus the server's limits; the error codes are
``protocol.errors.ERROR_CODES``),
so they cannot drift from the code: ``foreman docs`` rewrites them and ``foreman docs --check``
(run by the tests) fails when regenerating would change them. The output is deterministic:
the same models give byte-identical files.

The schema is JSON Schema 2020-12 as pydantic emits it (``TypeAdapter.json_schemas``), with
two additions for code generators: ``type`` is required in every message, and every field of
a server message is required (the daemon always sends every field, ``null`` when unset).
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

import protocol
from protocol import text as display_text
from protocol.client import CLIENT_ADAPTER
from protocol.errors import ERROR_CODES
from protocol.server import SERVER_ADAPTER

from .daemon import RING_SIZE
from .server import BACKLOG_MAX_BYTES, HELD_MAX, MAX_FRAME_BYTES, TRANSPORT_MAX_BYTES


def _default_docs_dir() -> Path:
    source = Path(__file__).resolve().parent.parent
    if (source / "pyproject.toml").exists():
        return source / "docs"  # running from a checkout (editable install)
    return Path.cwd() / "docs"  # an installed package: the checkout you run it in


DOCS_DIR = _default_docs_dir()
"""The repository's ``docs/`` folder (the default output): the source checkout's, or ``./docs``
when the Foreman is installed as a package."""
MD_NAME = "protocol.md"
SCHEMA_NAME = "protocol.schema.json"

# Sample values for the generated examples, by (model, wire field) first, then by wire field.
_SAMPLES_BY_MODEL: dict[tuple[str, str], Any] = {
    ("Hello", "capabilities"): ["batch"], ("Hello", "token"): "k3Xq...the token from foreman.json",
    ("Agent", "name"): "kit", ("Agent", "title"): "Kit", ("Agent", "activity"): "editing src/notes/tags.py",
    ("Agent", "task"): "t2", ("Agent", "worktree"): "kit-t2", ("Agent", "state"): "editing", ("Agent", "station"): "desk",
    ("Agent", "seat"): 2, ("Agent", "model"): None, ("Agent", "role"): "worker", ("DecisionAnswer", "option"): 0,
    ("Goal", "id"): "g1", ("Goal", "text"): "Add tags to pocket-notes", ("Goal", "status"): "active", ("Goal", "progress"): 40,
    ("Task", "id"): "t2", ("Task", "title"): "Tag storage", ("Task", "description"): "Store tags per note.",
    ("Task", "deps"): ["t1"], ("Task", "status"): "doing", ("Task", "goal"): "g1", ("Task", "priority"): 1,
    ("Task", "branch"): "agentcraft/kit/t2-tag-storage", ("Task", "blockedReason"): None,
    ("TaskEvent", "what"): "todo -> doing", ("TaskEvent", "who"): "kit",
    ("Decision", "id"): "d3", ("Decision", "kind"): "merge", ("Decision", "prompt"): "Merge t2 Tag storage?",
    ("Decision", "options"): ["Merge", "Request changes", "Reject"], ("Decision", "askedBy"): "marlow",
    ("Decision", "status"): "answered", ("Decision", "detail"): None,
    ("DecisionAnswer", "label"): "Merge", ("DecisionAnswer", "text"): None,
    ("Repo", "id"): "pocket-notes", ("Repo", "head"): "7da939c511abcc822ea9713c673953fdf009d886",
    ("Message", "id"): 12, ("Message", "from"): "user", ("Message", "text"): "please add a test for empty tags",
    ("FeedItem", "id"): 57, ("FeedItem", "kind"): "task", ("FeedItem", "text"): "Kit started t2 Tag storage",
    ("LogLine", "kind"): "tool", ("LogLine", "text"): "edit src/notes/tags.py",
    ("Status", "backend"): "sim", ("StatusMessage", "backend"): "sim", ("Error", "code"): "not_found",
    ("Error", "message"): "no task 't9'", ("Ack", "result"): None, ("DiffResult", "target"): "kit-t2",
    ("DiffFile", "status"): "modified", ("DiffLine", "op"): "+", ("DiffLine", "text"): "def tags(note):",
    ("DiffLine", "old"): None, ("MemoryNote", "text"): "# Plan\n\n- t1 storage\n",
    ("GoalSubmit", "text"): "Add tags to pocket-notes", ("MessageSend", "text"): "please add a test for empty tags",
    ("DecisionAnswerIntent", "text"): None, ("DecisionAnswerIntent", "option"): 0, ("RepoAdd", "path"): "/home/you/code/pocket-notes",
    ("TaskPrioritize", "priority"): 5, ("MergeTest", "behind"): None,
}
_SAMPLES: dict[str, Any] = {
    "id": 7, "seq": 42, "since": 41, "protocol": 1, "client": "minecraft-mod/1.2", "agent": "kit", "to": "kit",
    "task": "t2", "decision": "d3", "goal": "g1", "repo": "pocket-notes", "worktree": "kit-t2", "note": "shared/plan",
    "path": "/home/you/code/pocket-notes", "text": "hello", "at": 1767225600.0, "createdAt": 1767225600.0,
    "version": "0.1.0", "userName": "you", "auth": "none", "profile": "sim", "base": "main", "head": "a1b2c3d",
    "baseBranch": "main", "oldPath": None, "backend": "sim", "assignee": "kit", "by": "user", "header": "def add(note):",
}


# ---------------------------------------------------------------------------- schema
def build_schema() -> dict[str, Any]:
    """Return the protocol's JSON Schema (both unions, shared ``$defs``), ready to dump.

    Returns:
        A JSON Schema 2020-12 document whose ``$defs`` hold every message and entity, with
        ``ClientMessage`` and ``ServerMessage`` as discriminated ``oneOf`` unions on ``type``.
    """
    keys, defs = TypeAdapter.json_schemas(
        [("client", "validation", CLIENT_ADAPTER), ("server", "serialization", SERVER_ADAPTER)],
        by_alias=True,
        title="Foreman protocol v1",
        description="Messages between the Foreman daemon and its clients (WebSocket text frames, JSON).",
    )
    all_defs: dict[str, Any] = defs["$defs"]
    client = keys[("client", "validation")]
    server = keys[("server", "serialization")]
    client_defs = _reachable(client, all_defs)
    server_defs = _reachable(server, all_defs)
    for name, schema in all_defs.items():
        props = schema.get("properties", {})
        required = list(schema.get("required", []))
        if name in server_defs and name not in client_defs:
            required = list(props)  # the daemon always sends every field (null when unset)
        elif "type" in props and "const" in props["type"] and "type" not in required:
            required.insert(0, "type")
        if props:
            schema["required"] = required
    all_defs["ClientMessage"] = client
    all_defs["ServerMessage"] = server
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": defs["title"],
        "description": defs["description"],
        "x-protocol-version": protocol.PROTOCOL_VERSION,
        "anyOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": dict(sorted(all_defs.items())),
    }


def _reachable(root: Any, defs: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.rsplit("/", 1)[1]
                if name not in seen:
                    seen.add(name)
                    stack.append(defs[name])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return seen


# ---------------------------------------------------------------------------- examples
def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return defs[ref.rsplit("/", 1)[1]] if ref else schema


def _sample(model: str, field: str, schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    if (model, field) in _SAMPLES_BY_MODEL:
        return _SAMPLES_BY_MODEL[(model, field)]
    if "const" in schema:
        return schema["const"]
    if field in _SAMPLES and not _structured(schema):
        return _SAMPLES[field]
    if "$ref" in schema:
        target = schema["$ref"].rsplit("/", 1)[1]
        return _object_sample(target, defs, depth + 1)
    if "oneOf" in schema:  # a discriminated union: its first member
        return _sample(model, field, schema["oneOf"][0], defs, depth)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return _sample(model, field, options[0], defs, depth) if options else None
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return field
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return schema.get("default", False)
    if kind == "array":
        return [] if depth > 3 else [_sample(model, field, schema.get("items", {}), defs, depth)]
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return {"kit": _sample(model, field, extra, defs, depth)}
        return {}
    return None


def _structured(schema: dict[str, Any]) -> bool:
    """True when ``schema`` (or one of its ``anyOf`` branches) is an object or array."""
    branches = schema.get("anyOf", [schema])
    return any("$ref" in b or b.get("type") in ("object", "array") for b in branches)


def _object_sample(name: str, defs: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    schema = defs[name]
    return {field: _sample(name, field, sub, defs, depth) for field, sub in schema.get("properties", {}).items()}


def example(model: type[BaseModel], defs: dict[str, Any]) -> dict[str, Any]:
    """Return a valid JSON example of ``model``, validated and dumped by the model itself.

    Optional fields are included greedily as long as the model still accepts the example (so
    ``diff.request`` shows one target, not both).
    """
    schema = defs[model.__name__]
    full = _object_sample(model.__name__, defs)
    required = [f for f in schema.get("required", []) if f in full]
    chosen = {f: full[f] for f in required}
    for field, value in full.items():
        if field in chosen:
            continue
        trial = {**chosen, field: value}
        if _valid(model, trial) or not _valid(model, chosen):
            chosen = trial
    return model.model_validate(chosen).model_dump(mode="json", by_alias=True)


def _valid(model: type[BaseModel], data: dict[str, Any]) -> bool:
    try:
        model.model_validate(data)
    except ValidationError:
        return False
    return True


# ---------------------------------------------------------------------------- markdown
def _type_text(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f'`"{schema["const"]}"`'
    if "enum" in schema:
        return " \\| ".join(f'`"{v}"`' for v in schema["enum"])
    if "anyOf" in schema:
        return " \\| ".join(_type_text(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type_text(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_type_text(schema['additionalProperties'])}"
    return str(kind)


def _cell(text: str) -> str:
    return " ".join(text.replace("``", "`").replace("|", "\\|").split())


def _model_section(model: type[BaseModel], defs: dict[str, Any], level: str = "###") -> list[str]:
    name = model.__name__
    schema = defs[name]
    props = schema.get("properties", {})
    tag = props.get("type", {}).get("const")
    title = f"`{tag}`" if tag else name
    lines = [f'{level} {title}', "", f'<a id="{name.lower()}"></a>' if tag else "", ""]
    doc = _cell((model.__doc__ or "").strip().split("\n\n")[0])
    lines += [doc, "", "| Field | Type | Required | Description |", "|---|---|---|---|"]
    required = set(schema.get("required", []))
    for field, sub in props.items():
        desc = _cell(sub.get("description", "") or ("The message tag." if field == "type" else ""))
        if "default" in sub and field not in required and sub["default"] not in (None, [], {}, ""):
            desc = (desc + f" Default `{json.dumps(sub['default'])}`.").strip()
        lines.append(f"| `{field}` | {_type_text(sub)} | {'yes' if field in required else 'no'} | {desc} |")
    lines += ["", "```json", json.dumps(example(model, defs), indent=2, ensure_ascii=False), "```", ""]
    return [ln for ln in lines if ln is not None]


def _union_models(annotated: Any) -> list[type[BaseModel]]:
    union = typing.get_args(annotated)[0]  # Annotated[Union[...], Field(discriminator="type")]
    return list(typing.get_args(union))


def _error_codes() -> list[tuple[str, str]]:
    """The "Error codes" table's rows: :data:`protocol.errors.ERROR_CODES`, the one list (the
    schema's ``Error.code`` carries it too), sorted by code."""
    return sorted((code, _cell(text)) for code, text in ERROR_CODES.items())


def _ranges(chars: list[str]) -> str:
    """``U+202A..U+202E, U+2066..U+2069, U+200E``: code points, runs of neighbours as ranges."""
    codes = sorted(ord(c) for c in chars)
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][-1] + 1:
            runs[-1].append(code)
        else:
            runs.append([code])
    return ", ".join(f"U+{r[0]:04X}" if len(r) == 1 else f"U+{r[0]:04X}..U+{r[-1]:04X}" for r in runs)


def _display_section() -> list[str]:
    """The "Display-safe text" rule, from :mod:`protocol.text` (what clients show, what is refused)."""
    bidi = _ranges(list(display_text.BIDI_CONTROLS))
    controls = _ranges([chr(i) for i in range(0x20) if display_text.unsafe(chr(i))])
    others = _ranges([chr(i) for i in range(0x7F, 0xA0)])
    fields = ", ".join(f"`{f}`" for f in display_text.TITLE_FIELDS)
    return [
        "## Display-safe text",
        "",
        "A text holding bidirectional controls or control characters can look like another text (a right-to-left",
        "override makes one option read like another; a NUL or an escape sequence cuts or recolours a line). So that",
        "every client shows the text that is stored, and all clients the same (`protocol/text.py`):",
        "",
        f"- The unsafe characters: the bidi controls {bidi}; the C0 controls {controls} (every one but tab",
        f"  U+0009 and newline U+000A); DEL and the C1 controls {others}.",
        f"- **Titles and names** ({fields}) never hold one: the daemon refuses such a text with `error` `bad_text`",
        "  naming the character and its position, and nothing changes, wherever the text comes from (a client's",
        "  `goal.submit`, an agent's task or question, the configuration). Agent names and memory note names are",
        "  ids of plain ASCII letters, digits, `.`, `-` and `_` anyway. Titles may hold newline and tab; a client",
        "  showing one on one line shows them as blanks.",
        "- **Everything else a client shows** may hold them: message bodies (messages, feed items, log lines,",
        "  decision prompts and details, answers' texts), task descriptions and blocked reasons, activity lines,",
        "  repository ids and paths (a folder name may hold any character git accepts), diffs, memory notes,",
        "  `error` messages, and titles stored before this rule. Every client shows each unsafe character",
        "  escaped as `<U+XXXX>` (the code point in upper-case hex, at least four digits: `<U+202E>`,",
        "  `<U+0000>`, `<U+001B>`), never the character itself; a CR right before a newline is part of the line",
        "  break and is not shown. The text on the wire is the stored text, unchanged: escaping is the client's",
        "  job, and a client sends ids back as it received them.",
        "- The terminal client (`foreman tui`) escapes every text it shows (`foreman/tui/views.py`, `safe`). The",
        "  Minecraft mod does the same before any text reaches a sign, a book, a chat line, a screen or a",
        "  tooltip (in Java: for each code point `c` that is one of the above, append",
        '  `String.format("<U+%04X>", c)` instead of `c`).',
        "",
    ]


def build_markdown(schema: dict[str, Any]) -> str:
    """Return the text of ``docs/protocol.md`` for the given schema (see :func:`build_schema`)."""
    defs = schema["$defs"]
    client = _union_models(protocol.ClientMessage)
    server = _union_models(protocol.ServerMessage)
    entities: list[type[BaseModel]] = [protocol.Agent, protocol.Goal, protocol.Task, protocol.TaskEvent, protocol.Decision, protocol.DecisionAnswer,
                protocol.Repo, protocol.Message, protocol.FeedItem, protocol.LogLine, protocol.Status, protocol.Diff,
                protocol.DiffFile, protocol.DiffHunk, protocol.DiffLine, protocol.MemoryNote, protocol.Risk, protocol.Usage]
    out = [
        f"# Foreman protocol v{protocol.PROTOCOL_VERSION}",
        "",
        "<!-- Generated by `foreman docs` from the models in protocol/. Do not edit by hand. -->",
        "",
        "## Transport",
        "",
        "- WebSocket on `ws://127.0.0.1:7878` (the port is `--port`; the live one is in `<home>/<profile>/foreman.json`).",
        "  Only 127.0.0.1 is bound (every interface with `--web-lan`). Compression is off.",
        "- A request with an `Origin` header (every browser sends one), or a `Host` other than `127.0.0.1`, `localhost`",
        "  or `[::1]`, is refused with HTTP 401 unless the daemon runs with `--allow-browser-origins`, or unless it is",
        "  the daemon's own browser view: an `Origin` that is the page's own (`http://<Host>`) and a valid session cookie.",
        "- The same port serves the browser view over plain HTTP GET (the page and its files; a request that is not a",
        "  WebSocket upgrade). `foreman web` prints a one-time `/login?code=...` link that sets the session cookie",
        "  (`HttpOnly`, `SameSite=Strict`); without it every page and file is refused with 401. A WebSocket opened",
        "  with that cookie is authenticated as if it had sent the token: its `hello` needs none. With `--web-lan`",
        "  any `Host` is accepted and the token or the session is what protects (see `docs/running.md`).",
        "- Every frame is one JSON object, UTF-8 text, keys in camelCase, with a `type` tag (`noun.verb`).",
        "  Unknown fields are ignored, so additions within v1 are backward compatible.",
        f"- A client frame over {MAX_FRAME_BYTES} bytes gets an `error` with code `too_large`; over"
        f" {TRANSPORT_MAX_BYTES} bytes the WebSocket layer closes the connection (code 1009).",
        f"- Each client has a bounded backlog: {BACKLOG_MAX_BYTES} unsent bytes beyond its last catch-up. A client that",
        "  stops reading never delays the others: past the bound, state messages skip it and its replies are held;",
        "  once it reads again it gets a fresh `snapshot`, then the held replies, then live messages. A client that",
        f"  lags with more than {HELD_MAX} replies held is disconnected (close code 1013) and may reconnect.",
        "",
        "## Authentication",
        "",
        "- The daemon writes a random token (new at every start) as the `token` field of",
        "  `<home>/<profile>/foreman.json`, and of `<home>/foreman.json` when it is the first running Foreman.",
        "  Both files have mode 0600: reading them is the privilege. The token is never put in an agent's",
        "  environment, prompt, log or the feed.",
        "- A client sends it as `hello.token`, or as `Authorization: Bearer <token>` on the WebSocket upgrade",
        "  request (a wrong bearer token is refused with HTTP 401).",
        "- Until it has, the client reads nothing and changes nothing: every frame but a `hello` with the token",
        "  gets `error` `unauthorized` and no snapshot, before its details are checked (a malformed frame, an",
        "  intent, an oversized frame or a `hello` with a missing or wrong token all get `unauthorized`, never",
        "  `bad_request` or `hello_first`). It may send `hello` again with the token on the same connection.",
        "- A daemon started with `--no-auth` (insecure; it logs a warning) writes no token and accepts every",
        "  local client.",
        "",
        "## Session, `seq` and `since`",
        "",
        "1. The client sends `hello` first. Before the client has authenticated, anything else gets `error`",
        "   `unauthorized` (see Authentication); once authenticated (a bearer header, or `--no-auth`), any other",
        "   intent before `hello` gets `error` `hello_first`.",
        "2. The daemon answers `hello` with a `snapshot`, or (see `since`) with only the frames the client missed.",
        "   From then on the client receives every state message.",
        "3. State messages (`snapshot`, the `*.upsert`s, the `*.append`s and `foreman.status`) carry `seq`: one",
        "   counter of the daemon, increasing by one per state message and the same for every client. A",
        "   `snapshot` carries the `seq` of the last state message it includes. The counter survives restarts.",
        "4. `hello.since` names the last `seq` the client saw. If the daemon still holds every state message after",
        f"   it (it keeps the last {RING_SIZE} in memory; none after a restart), it sends exactly those, in order; if",
        "   `since` equals the current `seq` it sends nothing; otherwise it sends a fresh `snapshot`. A client therefore",
        "   never has to guess whether it missed something: after a `snapshot` it replaces its state, after",
        "   missed frames it applies them.",
        "5. Upserts replace an entity by its key (`name` for agents, `id` otherwise). Appends add one item.",
        "",
        "## Replies: `ack` and `error`",
        "",
        "- Every intent may carry an `id` (string or integer). The reply echoes it.",
        "- `ack` means the intent was accepted and its changes are durable: they were written to the store before",
        "  the `ack` and before any client saw them. Its state messages are sent before the `ack`, and `ack.seq` is",
        "  the daemon's `seq` after them.",
        "- `error` means nothing changed. A malformed frame never closes the connection.",
        "- `diff.request` is answered with `diff`, `memory.read` with `memory` (or `error`).",
        "- Replies carry no `seq`: they go to the requesting client only.",
        "",
        "### Error codes",
        "",
        "| Code | Meaning |",
        "|---|---|",
    ]
    out += [f"| `{code}` | {text} |" for code, text in _error_codes()]
    out += [""] + _display_section()
    out += ["## Client intents", ""]
    out += [f"- [`{m.model_fields['type'].default}`](#{m.__name__.lower()})" for m in client]
    out.append("")
    for m in client:
        out += _model_section(m, defs)
    out += ["## Server messages", ""]
    out += [f"- [`{m.model_fields['type'].default}`](#{m.__name__.lower()})" for m in server]
    out.append("")
    for m in server:
        out += _model_section(m, defs)
    out += ["## Entities", ""]
    for m in entities:
        out += _model_section(m, defs)
    text = "\n".join(out)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"


# ---------------------------------------------------------------------------- entry
def render() -> dict[str, str]:
    """Return ``{file name: text}`` of every generated file."""
    schema = build_schema()
    return {
        MD_NAME: build_markdown(schema),
        SCHEMA_NAME: json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=False) + "\n",
    }


def docs_main(check: bool, out: Path | None) -> int:
    """Regenerate (or, with ``check``, verify) the protocol docs; the ``foreman docs`` command.

    Args:
        check: compare only; do not write.
        out: the docs folder (default: the repository's ``docs/``).

    Returns:
        0 when written (or up to date); 1 with ``check`` when a file is missing or stale (its
        path and the fix are printed to stderr).
    """
    folder = Path(out) if out is not None else DOCS_DIR
    stale = []
    for name, text in render().items():
        path = folder / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if check:
            stale.append(path)
        else:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    for path in stale:
        print(f"foreman docs: {path} is stale (or missing); run `foreman docs` and commit it", file=sys.stderr)
    return 1 if stale else 0
