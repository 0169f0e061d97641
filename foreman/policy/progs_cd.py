"""Changing the working directory: ``cd`` and ``pushd``, and the key folders a directory change
would lead into (``env -C`` in :mod:`.wrappers` asks the same)."""

from __future__ import annotations

import posixpath

from .context import Result
from .dangers import key_folder
from .opts import lit_text, parse_opts
from .registry import Call, handles
from .winpaths import unix_form, unresolvable, windows_reading
from .words import LIT, Arg


@handles("cd", "pushd")
def _cd(c: Call):
    p = parse_opts(c.args, "", set())
    target = [a for a in p.operands if lit_text(a) != "-"]
    if not p.operands or (p.operands and lit_text(p.operands[0]) == "-"):
        if c.name == "pushd" and not p.operands:
            return Result(None)
        c.exact(f"{c.name} goes to a directory that cannot be checked (home or the previous one)")
        return Result(None)
    arg = target[0]
    folder = key_folder_of(c.ctx, c.cwds, arg)
    if folder:
        c.deny(f"{c.name} enters {folder}: any command run there reaches the keys by relative paths")
        return Result(None)
    if arg.kind != LIT or arg.glob:
        c.ctx.access(arg, "r", c.cwds, f"{c.name} goes to", directory=True)
        return Result(None)
    if c.cwds is None and not arg.value.startswith("/"):
        c.exact(f"{c.name} from an unknown directory")
        return Result(None)
    c.ctx.access(arg, "r", c.cwds, f"{c.name} goes", directory=True)
    new = []
    for cwd in c.cwds or ("/",):
        new.append(c.ctx.resolve(cwd, arg.value))
    win = windows_reading(arg.value)
    if win is not None:  # (``cd ..\\..``: on Windows it climbs; both places are possible)
        if unresolvable(win):
            return Result(None)
        new += [c.ctx.resolve(cwd, win) for cwd in c.cwds or ("/",)]
    return Result(tuple(dict.fromkeys(new)))


def key_folder_of(ctx, cwds, arg: Arg) -> str | None:
    """The key-material folder (:func:`.dangers.key_folder`) a ``cd`` operand leads into, as
    written (``~/.ssh``, ``"$HOME/.gnupg"``) or resolved from each working directory."""
    if arg.kind != LIT or arg.text is None:
        return key_folder(arg.src) if arg.src else None
    win = windows_reading(arg.text)
    if win is not None:  # as Windows reads it: ``cd %USERPROFILE%\\.ssh``, ``cd C:\\Users\\u\\.aws``
        if unresolvable(win):
            return key_folder(unix_form(win))
        found = key_folder_of(ctx, cwds, Arg.lit(win))
        if found:
            return found
        for cwd in cwds or ():
            real = ctx.realpath(posixpath.join(cwd, win))
            found = None if ctx.inside(real) else key_folder(real.lower())
            if found:
                return found
    texts = [arg.text] if arg.text.startswith("/") else []
    if cwds is None and not arg.text.startswith("/"):
        texts.append("~/" + arg.text)  # from an unknown directory (after ``cd ~``) it may be the home's
    for cwd in cwds or ():
        joined = posixpath.join(cwd, arg.text)
        texts += [posixpath.normpath(joined), ctx.realpath(joined)]
    for text in texts:
        if text.startswith("~") or not ctx.inside(text):
            found = key_folder(text)
            if found:
                return found
    return None
