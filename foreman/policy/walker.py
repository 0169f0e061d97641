"""Walks a tree-sitter-bash syntax tree and classifies every command in it.

Statements run in order with a *virtual working directory*: a set of the directories the shell
could be in (``a && cd x`` leaves either), or None when unknown. Pipeline stages and subshells
do not change it. Every command substitution, process substitution and backtick is classified
as a command of its own. Words are expanded (quotes, escapes, ``$'...'``, braces, tilde) before
the program handlers see them; anything whose value depends on run time is an unknown word.
"""

from __future__ import annotations

import threading

import tree_sitter
import tree_sitter_bash

from . import envvars, registry
from .context import MAX_DEPTH, Budget, Ctx, Cwds, Result
from .expand import REDIRECTS as _REDIRECTS
from .expand import apply_redirects, eval_children, eval_word, scan_substitutions
from .expand import text_of as _text
from .words import LIT, Arg

_LANGUAGE = tree_sitter.Language(tree_sitter_bash.language())
_local = threading.local()

_MAX_CWDS = 4


def parse(text: str) -> tree_sitter.Tree:
    """Parse shell text with the cached bash parser (one Parser per thread)."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = tree_sitter.Parser(_LANGUAGE)
        _local.parser = parser
    return parser.parse(text.encode("utf-8", "surrogatepass"))


def union(a: Cwds, b: Cwds) -> Cwds:
    """The working directories possible after either of two paths through a script."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    merged = tuple(dict.fromkeys(a + b))
    return merged if len(merged) <= _MAX_CWDS else None


# ---- nested programs ----------------------------------------------------------------------
def run_text(ctx: Ctx, text: str, cwds: Cwds, stdin=None, what: str = "a nested shell") -> Result:
    """Classify shell text run by something else (``bash -c``, ``eval``, git ``-x``).

    Args:
        ctx: the classification.
        text: the shell source.
        cwds: working directories it starts in.
        stdin: what it reads on stdin (see :class:`Result` ``out``).
        what: names the runner in reasons.

    Returns:
        The state after the text; unknown when it was too deep to analyse.
    """
    if ctx.depth >= MAX_DEPTH:
        ctx.exact(f"{what} is nested too deeply to analyse")
        fallback_scan(ctx, parse(text).root_node)
        return Result(None)
    tree = parse(text)
    root = tree.root_node
    if root.has_error:
        ctx.exact(f"{what} cannot be parsed")
        fallback_scan(ctx, root)
    ctx.depth += 1
    try:
        return run_block(ctx, root, cwds, stdin)
    finally:
        ctx.depth -= 1


def probe_text(ctx: Ctx, text: str, cwds: Cwds, what: str) -> None:
    """Classify text only to find what is refused (e.g. code in a string, a remote command)."""
    sub = Ctx(ctx.command, ctx.worktree, ctx.tmpdir, ctx.lead, ctx._realpath)
    sub.depth = ctx.depth
    sub.steps = ctx.steps
    sub.probe_only = True
    sub.written = ctx.written
    sub.aliases = ctx.aliases
    try:
        run_text(sub, text, cwds, None, what)
    except (Budget, RecursionError):
        fallback_scan(sub, parse(text).root_node)
    ctx.steps = sub.steps
    for reason in sub.denies:
        ctx.deny(f"{reason} (inside {what})")


# ---- statements ---------------------------------------------------------------------------
def run_block(ctx: Ctx, node, cwds: Cwds, stdin=None) -> Result:
    """Run the statements of a program, group or body in order."""
    res = Result(cwds)
    first = True
    for child in node.children:
        if not child.is_named or child.type in ("comment", "heredoc_body"):
            continue
        res = run_stmt(ctx, child, res.cwds, stdin if first else None)
        first = False
    return res


def run_stmt(ctx: Ctx, node, cwds: Cwds, stdin=None) -> Result:
    """Classify one statement and return the state after it."""
    t = node.type
    if t == "command":
        return run_command(ctx, node, cwds, stdin, ())
    if t == "list":
        return _run_list(ctx, node, cwds, stdin)
    if t == "pipeline":
        return _run_pipeline(ctx, [c for c in node.children if c.is_named], cwds, stdin)
    if t == "redirected_statement":
        return _run_redirected(ctx, node, cwds, stdin)
    if t in ("program", "compound_statement", "do_group"):
        return run_block(ctx, node, cwds, stdin)
    if t == "subshell":
        res = run_block(ctx, node, cwds, stdin)
        return Result(cwds, res.out)
    if t == "negated_command":
        for c in node.named_children:
            return Result(run_stmt(ctx, c, cwds, stdin).cwds)
        return Result(cwds)
    if t in ("variable_assignment", "variable_assignments"):
        for a in ([node] if t == "variable_assignment" else node.named_children):
            assignment(ctx, a, cwds, prefix=False)
        return Result(cwds)
    if t == "declaration_command":
        _declaration(ctx, node, cwds)
        return Result(cwds)
    if t == "unset_command":
        _unset(ctx, node, cwds)
        return Result(cwds)
    if t == "if_statement":
        return Result(_run_if(ctx, node, cwds))
    if t in ("while_statement", "until_statement"):
        return Result(_run_while(ctx, node, cwds))
    if t in ("for_statement", "c_style_for_statement", "select_statement"):
        return Result(_run_for(ctx, node, cwds))
    if t == "case_statement":
        return Result(_run_case(ctx, node, cwds))
    if t == "function_definition":
        _define_function(ctx, node, cwds)
        return Result(cwds)
    if t in ("test_command", "arithmetic_expansion", "compound_statement"):
        scan_substitutions(ctx, node, cwds)
        return Result(cwds)
    if t == "comment":
        return Result(cwds)
    if t == "ERROR":
        ctx.exact("part of the command cannot be parsed")
        fallback_scan(ctx, node)
        return Result(None)
    ctx.exact(f"the shell construct {t!r} is not understood")
    scan_substitutions(ctx, node, cwds)
    return Result(None)


def _run_list(ctx: Ctx, node, cwds: Cwds, stdin, tail_redirects=()) -> Result:
    """Run ``a && b || c``; ``tail_redirects`` belong to the last command (tree-sitter hangs
    the redirections of ``a && b < f`` on the whole list, bash applies them to ``b``)."""
    rights = []
    cur = node
    while cur.type == "list":
        ch = [c for c in cur.children if c.type != "comment"]
        rights.append((ch[1].type if len(ch) == 3 else "", ch[-1]))
        cur = ch[0]
    rights.reverse()
    res = run_stmt(ctx, cur, cwds, stdin)
    ok = res.cwds  # where the list is when every part so far succeeded: what the right of && starts in
    for i, (op, right) in enumerate(rights):
        start = ok if op == "&&" else res.cwds  # (the right of || runs after a failure: anywhere so far)
        if tail_redirects and i == len(rights) - 1:
            if right.type == "command":
                nxt = run_command(ctx, right, start, None, tail_redirects)
            else:
                nxt = run_stmt(ctx, right, start, apply_redirects(ctx, tail_redirects, start, None))
        else:
            nxt = run_stmt(ctx, right, start, None)
        ok = nxt.cwds if op == "&&" else union(ok, nxt.cwds)
        res = Result(union(res.cwds, nxt.cwds), nxt.out)
    return res


def _run_pipeline(ctx: Ctx, stages, cwds: Cwds, stdin) -> Result:
    out = stdin
    for stage in stages:
        out = run_stmt(ctx, stage, cwds, out).out
    return Result(cwds, out)


def _run_redirected(ctx: Ctx, node, cwds: Cwds, stdin) -> Result:
    body = node.child_by_field_name("body")
    redirects = [c for c in node.children if c.type in _REDIRECTS]
    conts = []
    for r in redirects:
        if r.type == "heredoc_redirect":
            chs = r.children
            for i, c in enumerate(chs):
                if c.type == "pipeline":
                    conts.append(("|", [s for s in c.children if s.is_named]))
                elif c.type in ("&&", "||") and i + 1 < len(chs):
                    conts.append(("&&", [chs[i + 1]]))
    if body is None:
        stdin = apply_redirects(ctx, redirects, cwds, stdin)
        res = Result(cwds)
    elif body.type == "command":
        res = run_command(ctx, body, cwds, stdin, redirects)
    elif body.type == "list":
        res = _run_list(ctx, body, cwds, stdin, redirects)
    else:
        stdin = apply_redirects(ctx, redirects, cwds, stdin)
        res = run_stmt(ctx, body, cwds, stdin)
    for kind, stmts in conts:
        if kind == "|":
            res = Result(res.cwds, _run_pipeline(ctx, stmts, res.cwds, res.out).out)
        else:
            nxt = run_stmt(ctx, stmts[0], res.cwds, None)
            res = Result(union(res.cwds, nxt.cwds), nxt.out)
    return res


def _run_if(ctx: Ctx, node, cwds: Cwds) -> Cwds:
    def clause(children, cur, has_cond):
        phase_body = not has_cond
        body = cur
        for ch in children:
            if ch.type == "then":
                phase_body, body = True, cur
                continue
            if not ch.is_named or ch.type in ("elif_clause", "else_clause", "comment"):
                continue
            if phase_body:
                body = run_stmt(ctx, ch, body).cwds
            else:
                cur = run_stmt(ctx, ch, cur).cwds
        return cur, body

    cur, body = clause(node.children, cwds, True)
    ends = [body]
    has_else = False
    for ch in node.children:
        if ch.type == "elif_clause":
            cur, body = clause(ch.children, cur, True)
            ends.append(body)
        elif ch.type == "else_clause":
            has_else = True
            ends.append(clause(ch.children, cur, False)[1])
    if not has_else:
        ends.append(cur)
    out = ends[0]
    for e in ends[1:]:
        out = union(out, e)
    return out


def _loop(ctx: Ctx, body, cwds: Cwds) -> Cwds:
    if body is None:
        return cwds
    after = run_stmt(ctx, body, cwds).cwds
    if after == cwds:
        return cwds
    # A body that moves the working directory runs from anywhere on the next pass.
    run_stmt(ctx, body, None)
    return None


def _run_while(ctx: Ctx, node, cwds: Cwds) -> Cwds:
    cur = cwds
    for c in node.children_by_field_name("condition"):
        if c.is_named:
            cur = run_stmt(ctx, c, cur).cwds
    return union(cwds, _loop(ctx, node.child_by_field_name("body"), cur))


def _run_for(ctx: Ctx, node, cwds: Cwds) -> Cwds:
    body = node.child_by_field_name("body")
    var = node.child_by_field_name("variable")
    if var is not None:
        envvars.check_name(ctx, _text(var), "statement", "a for loop sets")
    for c in node.children:
        if c is body or c is var or not c.is_named:
            continue
        if node.type == "for_statement" or node.type == "select_statement":
            eval_word(ctx, c, cwds)
        else:
            scan_substitutions(ctx, c, cwds)
    return union(cwds, _loop(ctx, body, cwds))


def _run_case(ctx: Ctx, node, cwds: Cwds) -> Cwds:
    value = node.child_by_field_name("value")
    if value is not None:
        eval_word(ctx, value, cwds)
    out = cwds
    for item in node.named_children:
        if item.type != "case_item":
            continue
        cur = cwds
        for c in item.children:
            if not c.is_named:
                continue
            if item.field_name_for_child(list(item.children).index(c)) == "value":
                eval_word(ctx, c, cwds)
            else:
                cur = run_stmt(ctx, c, cur).cwds
        out = union(out, cur)
    return out


def _define_function(ctx: Ctx, node, cwds: Cwds) -> None:
    name = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    if name is None or body is None:
        ctx.exact("a function definition is not understood")
        return
    ctx.functions[_text(name)] = body
    # Classify the body where it is defined too: a refused command in it is refused.
    ctx.depth += 1
    try:
        if ctx.depth < MAX_DEPTH:
            run_stmt(ctx, body, cwds)
    finally:
        ctx.depth -= 1


def call_function(ctx: Ctx, name: str, cwds: Cwds, stdin) -> Result:
    """Run a function defined earlier in the command line at its call site."""
    if ctx.depth >= MAX_DEPTH:
        ctx.exact(f"the function {name} calls itself too deeply to analyse")
        return Result(None)
    ctx.depth += 1
    try:
        return run_stmt(ctx, ctx.functions[name], cwds, stdin)
    finally:
        ctx.depth -= 1


# ---- assignments --------------------------------------------------------------------------
def assignment(ctx: Ctx, node, cwds: Cwds, prefix: bool) -> None:
    """Check one ``NAME=value`` (a command prefix when ``prefix``, else a statement)."""
    name_node = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    name = _text(name_node) if name_node is not None else ""
    if "[" in name:
        name = name.split("[", 1)[0]
    words = eval_word(ctx, value, cwds) if value is not None else []
    static = " ".join(w.value for w in words) if words and all(w.kind == LIT for w in words) else None
    envvars.check_name(ctx, name, "prefix" if prefix else "statement", "the command sets", static, cwds)


def _declaration(ctx: Ctx, node, cwds: Cwds) -> None:
    keyword = node.children[0].type if node.children else "declare"
    flags = ""
    for c in node.named_children:
        if c.type == "variable_assignment":
            assignment(ctx, c, cwds, prefix=keyword == "export" or "x" in flags)
        elif c.type == "variable_name":
            envvars.check_name(ctx, _text(c), "export" if keyword == "export" else "statement", f"{keyword} changes")
        else:
            for a in eval_word(ctx, c, cwds):
                if a.kind != LIT:
                    ctx.exact(f"{keyword} gets a name from a variable")
                elif a.value.startswith(("-", "+")):
                    flags += a.value
                    if keyword == "export" and "n" in a.value:
                        flags += "N"
                else:
                    envvars.check_name(ctx, a.value.split("=", 1)[0], "export", f"{keyword} changes")
    if "N" in flags or ("+x" in flags):
        # export -n / declare +x remove a variable from the environment.
        for c in node.named_children:
            if c.type == "variable_name":
                envvars.check_name(ctx, _text(c), "unset", f"{keyword} unexports")


def _unset(ctx: Ctx, node, cwds: Cwds) -> None:
    for c in node.named_children:
        if c.type == "variable_name":
            envvars.check_name(ctx, _text(c), "unset", "unset clears")
            continue
        for a in eval_word(ctx, c, cwds):
            if a.kind != LIT:
                ctx.exact("unset gets a name from a variable")
            elif not a.value.startswith("-"):
                envvars.check_name(ctx, a.value, "unset", "unset clears")


# ---- simple commands ----------------------------------------------------------------------
def run_command(ctx: Ctx, node, cwds: Cwds, stdin, redirects) -> Result:
    """Classify one simple command: prefix assignments, words, redirections, the program."""
    ctx.step()
    name = None
    args_nodes = []
    redirs = list(redirects)
    assigns = []
    for c in node.children:
        t = c.type
        if t == "variable_assignment":
            assigns.append(c)
        elif t == "command_name":
            name = c
        elif t in _REDIRECTS:
            redirs.append(c)
        elif t == "comment":
            continue
        else:
            args_nodes.append(c)
    argv: list[Arg] = []
    if name is not None:
        argv.extend(eval_children(ctx, name, cwds))
    for a in args_nodes:
        argv.extend(eval_word(ctx, a, cwds))
    outputs: list[Arg] = []
    stdin = apply_redirects(ctx, redirs, cwds, stdin, outputs)
    for a in assigns:
        assignment(ctx, a, cwds, prefix=bool(argv))
    if not argv:
        return Result(cwds)
    res = registry.dispatch(ctx, argv, cwds, stdin)
    for a in outputs:
        ctx.record_written(a, cwds, res.out)
    return res


# ---- last resort --------------------------------------------------------------------------
def fallback_scan(ctx: Ctx, node) -> None:
    """Deny a visible ``git push`` in a tree that could not be analysed (too long, unparseable).

    Looks at every command and every piece of text without following the shell's meaning, so
    it errs on the side of refusing.
    """
    stack = [node]
    seen = 0
    while stack:
        n = stack.pop()
        seen += 1
        t = n.type
        if t == "command":
            words = [_text(c).strip("'\"$") for c in n.named_children]
            if _push_in(words):
                ctx.deny("the command runs git push")
                return
        elif t in ("string", "raw_string", "ansi_c_string", "heredoc_body", "string_content", "word", "ERROR"):
            text = _text(n)
            if "push" in text and ("git" in text or "send-pack" in text):
                ctx.deny("the command holds a git push")
                return
        stack.extend(n.children)


def _push_in(words: list[str]) -> bool:
    git_at = -1
    for i, w in enumerate(words):
        base = w.rsplit("/", 1)[-1]
        if base in ("git-push", "git-send-pack", "git-receive-pack"):
            return True
        if base == "git" or base.endswith("git"):
            git_at = i
        elif git_at >= 0 and ("push" in w or "send-pack" in w):
            return True
    return False
