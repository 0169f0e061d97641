"""Word expansion and redirections for the shell walker (:mod:`.walker`).

Expands one argument node into words (quotes, escapes, ``$'...'``, braces, tilde; anything whose
value depends on run time is an unknown word), checks redirection targets and here-documents,
and classifies every command, process and backtick substitution met on the way as a command of
its own (through :func:`.walker.run_block`, the two modules calling each other as the shell's
grammar nests).
"""

from __future__ import annotations

from .context import MAX_DEPTH, Ctx, Cwds, Result
from .words import (
    FD,
    LIT,
    UNKNOWN,
    WTLIST,
    Arg,
    decode_ansi_c,
    decode_dq,
    drop_line_continuations,
    quote_escape,
    words_from_escaped,
)

REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
"""The tree-sitter-bash node types of a redirection."""
_WORD_SPECIAL = frozenset("\\*?[]{}~\n")


def text_of(node) -> str:
    """A tree-sitter node's source text (UTF-8, undecodable bytes replaced)."""
    return node.text.decode("utf-8", "replace")


def apply_redirects(ctx: Ctx, redirects, cwds: Cwds, stdin, outputs: list | None = None):
    """Check redirection targets; returns what the command reads on stdin afterwards.

    ``outputs`` (when given) receives the files the command's stdout goes to, so that a script
    written by ``echo ... > x.sh`` can be recognised when it is run later on the same line.
    """
    for r in redirects:
        t = r.type
        if t == "file_redirect":
            op = ""
            dests = []
            fd = None
            for c in r.children:
                if not c.is_named:
                    op = c.type
                elif c.type == "file_descriptor":
                    fd = text_of(c)
                else:
                    dests.append(c)
            for d in dests:
                args = eval_word(ctx, d, cwds)
                if op in (">&", "<&", ">&-", "<&-") and d.type in ("number", "word") and text_of(d).rstrip("-").isdigit():
                    continue
                if op in (">&", "<&") and text_of(d) == "-":
                    continue
                for a in args:
                    if op == "<":
                        if a.kind == FD:
                            stdin = a.data  # sh < <(echo ls): the substitution's output
                            continue
                        ctx.access(a, "r", cwds, "a < redirection reads")
                        stdin = ("path", a)
                    else:
                        ctx.access(a, "w", cwds, "a redirection writes")
                        if outputs is not None and fd in (None, "1") and op in (">", ">>", ">|", "&>", "&>>"):
                            outputs.append(a)
        elif t == "herestring_redirect":
            words = []
            for c in r.named_children:
                words.extend(eval_word(ctx, c, cwds))
            known = all(w.kind == LIT for w in words)
            stdin = ("text", " ".join(w.value for w in words)) if known else None
        elif t == "heredoc_redirect":
            stdin = _heredoc(ctx, r, cwds)
    return stdin


def _heredoc(ctx: Ctx, node, cwds: Cwds):
    start = body = None
    strip_tabs = False
    for c in node.children:
        if c.type == "heredoc_start":
            start = text_of(c)
        elif c.type == "heredoc_body":
            body = c
        elif c.type == "<<-":
            strip_tabs = True
    if body is None:
        return ("text", "")
    text = text_of(body)
    if strip_tabs:
        text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
    quoted = start is not None and any(q in start for q in "'\"\\")
    if quoted:
        return ("text", text)
    dynamic = False
    for c in body.named_children:
        if c.type in ("command_substitution", "process_substitution"):
            substitution(ctx, c, cwds)
            dynamic = True
        elif c.type in ("simple_expansion", "expansion", "arithmetic_expansion"):
            scan_substitutions(ctx, c, cwds)
            dynamic = True
    if "`" in text:
        _backticks(ctx, text, cwds)
        dynamic = True
    return ("text", text) if not dynamic else ("dyntext", text)


def _backticks(ctx: Ctx, text: str, cwds: Cwds) -> None:
    """Classify backtick substitutions in unquoted here-document text."""
    from . import walker  # (here, not at the top: walker imports this module, the shell's grammar nests)

    i = 0
    while True:
        i = text.find("`", i)
        if i < 0:
            return
        if i > 0 and text[i - 1] == "\\":
            i += 1
            continue
        j = text.find("`", i + 1)
        if j < 0:
            ctx.exact("an unclosed backtick in a here-document")
            return
        walker.run_text(ctx, text[i + 1:j], cwds, None, "a backtick substitution")
        i = j + 1


# ---- words --------------------------------------------------------------------------------
def eval_word(ctx: Ctx, node, cwds: Cwds) -> list[Arg]:
    """Expand one argument node into words, classifying any substitutions in it."""
    t = node.type
    if t == "word":
        raw = text_of(node)
        if not any(c in _WORD_SPECIAL for c in raw):
            return [Arg(LIT, raw, False, raw)]
    elif t == "command_substitution" or (t == "string" and node.named_child_count == 1
                                          and node.named_children[0].type == "command_substitution"):
        sub = node if t == "command_substitution" else node.named_children[0]
        val = substitution(ctx, sub, cwds)
        if val is not None and val[0] == "wtlist":
            return [Arg(WTLIST, None, False, text_of(node))]
        if val is not None and val[0] == "path":
            return [Arg(LIT, val[1], False, text_of(node))]
        return [Arg(UNKNOWN, None, False, text_of(node), val if val is not None and val[0] == "text" else None)]
    elif t == "process_substitution":
        val = substitution(ctx, node, cwds)
        return [Arg(FD, "/dev/fd/63", False, text_of(node), val if val is not None and val[0] == "text" else None)]
    parts: list[str] = []
    dynamic = _collect(ctx, node, cwds, parts)
    src = text_of(node)
    if dynamic:
        return [Arg(UNKNOWN, None, False, src)]
    return words_from_escaped("".join(parts), src)


def eval_children(ctx: Ctx, node, cwds: Cwds) -> list[Arg]:
    out: list[Arg] = []
    for c in node.named_children:
        out.extend(eval_word(ctx, c, cwds))
    return out


def _collect(ctx: Ctx, node, cwds: Cwds, parts: list[str]) -> bool:
    """Append the escaped form of ``node`` to ``parts``; True if its value is unknown."""
    t = node.type
    if t in ("word", "number", "variable_name", "brace_expression", "special_variable_name", "test_operator"):
        parts.append(drop_line_continuations(text_of(node)))
        return False
    if t == "raw_string":
        parts.append(quote_escape(text_of(node)[1:-1]))
        return False
    if t == "ansi_c_string":
        parts.append(quote_escape(decode_ansi_c(text_of(node)[2:-1])))
        return False
    if t in ("string", "translated_string"):
        dynamic = False
        for i, c in enumerate(node.children):
            ct = c.type
            if t == "translated_string" and i == 0 and ct == "$":
                continue  # $"..." is a locale-translated string: the $ is not part of the text
            if ct == "string_content":
                parts.append(quote_escape(decode_dq(text_of(c))))
            elif ct == '"':
                continue
            elif ct == "$" and not c.is_named:
                parts.append("$")
            else:
                dynamic |= _collect(ctx, c, cwds, parts)
        return dynamic
    if t == "concatenation":
        dynamic = False
        for c in node.children:
            dynamic |= _collect(ctx, c, cwds, parts)
        return dynamic
    if t == "simple_expansion" or t == "expansion":
        names = [c for c in node.named_children if c.type == "variable_name"]
        if t == "simple_expansion" and names and text_of(names[0]) == "PWD" and cwds is not None and len(cwds) == 1:
            parts.append(quote_escape(cwds[0]))
            return False
        scan_substitutions(ctx, node, cwds)
        return True
    if t == "command_substitution":
        val = substitution(ctx, node, cwds)
        if val is not None and val[0] == "path":
            parts.append(quote_escape(val[1]))
            return False
        return True
    if t == "process_substitution":
        substitution(ctx, node, cwds)
        parts.append("/dev/fd/63")
        return False
    if t == "arithmetic_expansion":
        scan_substitutions(ctx, node, cwds)
        parts.append("0")
        return False
    scan_substitutions(ctx, node, cwds)
    return True


def substitution(ctx: Ctx, node, cwds: Cwds):
    """Classify a ``$(...)``, backtick or ``<(...)`` as its own command; returns a known output.

    Returns:
        The substitution's known output (see :class:`Result` ``out``): ``("path", p)`` for
        ``$(pwd)``-like output, ``("wtlist",)`` for lists of worktree paths, ``("text", s)``
        for static text (``$(echo git push)``), else None (unknown output).
    """
    from . import walker  # (here, not at the top: walker imports this module, the shell's grammar nests)

    res = Result(cwds)
    ctx.depth += 1
    try:
        if ctx.depth > MAX_DEPTH:
            ctx.exact("substitutions are nested too deeply to analyse")
            walker.fallback_scan(ctx, node)
            return None
        res = walker.run_block(ctx, node, cwds, None)
    finally:
        ctx.depth -= 1
    return res.out


def scan_substitutions(ctx: Ctx, node, cwds: Cwds) -> None:
    """Classify every substitution anywhere below ``node`` (arithmetic, ``[[ ]]``, ``${x:-...}``)."""
    stack = list(node.children)
    while stack:
        c = stack.pop()
        if c.type in ("command_substitution", "process_substitution"):
            substitution(ctx, c, cwds)
        else:
            stack.extend(c.children)

