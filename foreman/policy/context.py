"""The state of one classification: what was found so far, and where paths lead.

:class:`Ctx` collects what a command needs while the walker goes through it: denials, asks with
their rule keys, and (for the lead) whether anything writes. Every path the command touches goes
through :meth:`Ctx.access`, which resolves it against the possible working directories with the
injected ``realpath`` (so links that lead out count as outside) and names the narrowest key.
"""

from __future__ import annotations

import os
import posixpath
from typing import Callable

from .secrets import key_material
from .verdict import exact_key, outside_key
from .winpaths import unresolvable, windows_key_material, windows_reading
from .words import FD, LIT, UNKNOWN, WTLIST, Arg, split_glob

#: Device paths any command may read or write.
DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr",
                     "/dev/tty", "/dev/random", "/dev/urandom", "/dev/full"})

#: Nested shells (``bash -c``, ``eval``, git-run commands) deeper than this ask.
MAX_DEPTH = 6
#: Simple commands analysed per classification before it gives up and asks.
MAX_STEPS = 600

#: How bad a location is, for combining readings of one path (the worse wins).
_RANK = {"in": 0, "dev": 0, "tmp": 1, "gitlink": 1, "unknown": 2, "out": 3}


def git_entry_name(name: str) -> bool:
    """Whether a path component names a ``.git`` entry on some file system: ``.git`` in any case
    (macOS and Windows ignore case), with Windows' ignored trailing dots and blanks (``.git.``),
    or its Windows short name ``GIT~1`` (git itself refuses these names in trees for that reason:
    ``core.protectHFS``/``core.protectNTFS``)."""
    low = name.lower().rstrip(". ")
    return low == ".git" or low == "git~1"


Cwds = tuple[str, ...] | None  # the possible working directories; None = unknown


class Budget(Exception):
    """Raised inside the walker when an analysis limit is reached."""


class Result:
    """What a command leaves behind for the next one.

    Attributes:
        cwds: the possible working directories afterwards.
        out: what it writes to stdout: None (unknown), ``("text", s)`` (a known string),
            ``("path", p)`` (one known path) or ``("wtlist",)`` (paths inside the worktree).
    """

    __slots__ = ("cwds", "out")

    def __init__(self, cwds: Cwds, out: tuple | None = None) -> None:
        self.cwds = cwds
        self.out = out


class Ctx:
    """Findings and settings of one classification.

    Args:
        command: the top-level command (named by ``Bash:exact:`` keys).
        worktree: the agent's worktree, already resolved with ``realpath``.
        tmpdir: the scratch directory, already resolved.
        lead: the caller is the lead working in the user's checkout.
        realpath: resolves links (injectable for tests).
    """

    def __init__(self, command: str, worktree: str, tmpdir: str, lead: bool,
                 realpath: Callable[[str], str]) -> None:
        self.command = command
        self.worktree = worktree
        self.wt_prefix = worktree.rstrip("/") + "/"
        self.gitlink = posixpath.join(worktree, ".git")
        self.tmpdir = tmpdir
        self.tmp_prefix = tmpdir.rstrip("/") + "/"
        # A worktree that itself lives in the scratch directory (a home under /tmp, as in tests)
        # must not make its neighbours scratch: the folder of the scratch dir holding it (the
        # Foreman's home, other worktrees, the state database) is never scratch space.
        self.tmp_exclude: str | None = None
        if worktree.startswith(self.tmp_prefix):
            self.tmp_exclude = self.tmp_prefix + worktree[len(self.tmp_prefix):].split("/", 1)[0]
        self.lead = lead
        self._realpath = realpath
        self._rp_cache: dict[str, str] = {}
        self.denies: list[str] = []
        self.asks: dict[str, str] = {}
        self.network: list[str] = []  # keys of asks whose part needs the network
        self.writes = 0
        self.mutations: list[str] = []
        self.depth = 0
        self.steps = 0
        self.functions: dict[str, object] = {}
        self.aliases: dict[str, str] = {}  # alias name -> value, defined earlier on the line
        self.probe_only = False
        self.scratch = False  # a path in the scratch directory was touched (for the reason)
        # Static text written to files earlier on this command line (resolved path -> texts),
        # so ``echo 'git push' > x.sh && sh x.sh`` can be seen through.
        self.written: dict[str, list[str]] = {}
        # Branches only an approved merge may move (the base branches), by short name.
        self.protected: frozenset[str] = frozenset()

    def protected_ref(self, ref: str) -> bool:
        """Whether ``ref`` (``main``, ``refs/heads/main``, ``heads/main``) names a protected branch."""
        for prefix in ("refs/heads/", "heads/"):
            if ref.startswith(prefix):
                ref = ref[len(prefix):]
                break
        return ref in self.protected

    # ---- findings -------------------------------------------------------------------------
    def deny(self, reason: str) -> None:
        """Record a reason the command is refused whatever is stored."""
        self.denies.append(reason)

    def ask(self, key: str, reason: str, *, network: bool = False) -> None:
        """Record a rule key the command needs (first reason per key wins); ``network``: the
        part it names needs the network (a fetch, a package install), so once allowed the
        command runs with the network in the OS sandbox."""
        self.asks.setdefault(key, reason)
        if network and key not in self.network:
            self.network.append(key)

    def exact(self, reason: str) -> None:
        """Record that only this exact command can be allowed (its arguments cannot be checked)."""
        self.ask(exact_key(self.command), reason)

    def mutate(self, reason: str) -> None:
        """Record that the command changes files or runs project code (matters for the lead)."""
        self.writes += 1
        if len(self.mutations) < 4:
            self.mutations.append(reason)

    def step(self) -> None:
        """Count one analysed command; raises Budget past MAX_STEPS."""
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Budget("too many commands to analyse")

    # ---- files written on this command line --------------------------------------------
    def record_written(self, arg: Arg, cwds: Cwds, out) -> None:
        """Remember the static text (``out`` is a :class:`Result` ``out``) written to ``arg``."""
        if arg.kind != LIT or arg.glob or out is None or out[0] not in ("text", "dyntext"):
            return
        keys = [self.resolve(cwd, arg.value) for cwd in cwds or ("/",)] if arg.value.startswith("/") or cwds else []
        if not arg.value.startswith("/"):
            keys.append("\0" + posixpath.normpath(arg.value))  # also by name: the directory may be unknown later
        for key in keys:
            texts = self.written.setdefault(key, [])
            if len(texts) < 8:
                texts.append(out[1])

    def written_texts(self, arg: Arg, cwds: Cwds) -> list[str]:
        """Texts written earlier on this command line to the file ``arg`` (may be empty)."""
        if not self.written or arg.kind != LIT or arg.glob:
            return []
        out: list[str] = []
        if arg.value.startswith("/") or cwds:
            for cwd in cwds or ("/",):
                out.extend(self.written.get(self.resolve(cwd, arg.value), ()))
        if not arg.value.startswith("/"):
            out.extend(t for t in self.written.get("\0" + posixpath.normpath(arg.value), ()) if t not in out)
        return out

    # ---- paths ----------------------------------------------------------------------------
    def realpath(self, path: str) -> str:
        """``realpath`` with a per-classification cache."""
        r = self._rp_cache.get(path)
        if r is None:
            r = self._realpath(path)
            self._rp_cache[path] = r
        return r

    def inside(self, real: str) -> bool:
        """Whether a resolved path is the worktree or below it (``<wt>-evil`` is not)."""
        return real == self.worktree or real.startswith(self.wt_prefix)

    def in_tmp(self, real: str) -> bool:
        """Whether a resolved path is strictly below the scratch directory (and not beside a
        worktree that lives there)."""
        if not real.startswith(self.tmp_prefix):
            return False
        ex = self.tmp_exclude
        return ex is None or not (real == ex or real.startswith(ex + "/"))

    def resolve(self, cwd: str, text: str) -> str:
        """The resolved absolute path of ``text`` seen from ``cwd``."""
        joined = text if text.startswith("/") else posixpath.join(cwd, text)
        return self.realpath(joined)

    def git_entry(self, real: str) -> str | None:
        """The ``.git`` entry a resolved path inside the worktree is or lies in (the worktree's own
        link :attr:`gitlink`, or a ``.git`` below the top, any spelling of :func:`git_entry_name`),
        else None."""
        if real == self.gitlink or real.startswith(self.gitlink + "/"):
            return self.gitlink
        parts = real[len(self.wt_prefix):].split("/") if real.startswith(self.wt_prefix) else []
        for i, part in enumerate(parts):
            if git_entry_name(part):
                return self.wt_prefix + "/".join(parts[:i + 1])
        return None

    def cwds_inside(self, cwds: Cwds) -> bool:
        """Whether every possible working directory is inside the worktree."""
        return cwds is not None and all(self.inside(c) for c in cwds)

    def access(self, arg: Arg, mode: str, cwds: Cwds, what: str, *, directory: bool = False,
               delete: bool = False) -> str:
        """Check one path a command touches and record what it needs.

        A Windows-shaped path (a drive letter, ``%VAR%``, a backslash: :mod:`.winpaths`) is
        judged twice, as written and as Windows reads it, and the worse reading wins; the
        arguments and the result are those of :meth:`_access`.
        """
        where = self._access(arg, mode, cwds, what, directory=directory, delete=delete)
        src = arg.text if arg.kind == LIT else (_shell_unquote(arg.src) if arg.kind == UNKNOWN else None)
        win = windows_reading(src) if src else None
        if win is None:
            return where
        other = self._windows(arg, win, mode, cwds, what, directory, delete)
        return other if _RANK.get(other, 0) > _RANK.get(where, 0) else where

    def _windows(self, arg: Arg, win: str, mode: str, cwds: Cwds, what: str, directory: bool, delete: bool) -> str:
        """A path as Windows reads it (``win``, from :func:`.winpaths.windows_reading`).

        The seed's rules treat drive letters, ``%VAR%`` expansions and backslash paths as outside
        the worktree: a reading this machine cannot resolve (a drive, a share, the home, a
        variable's folder) is refused when it is key material and otherwise asks for the exact
        command (no ``Bash:outside:`` key: the folder cannot be resolved here); any other reading
        (``..\\out.txt``, ``sub\\.git\\config``, ``\\Users\\u``) is resolved like any path.
        """
        writes = mode in ("w", "wtree")
        reads = mode == "rtree" or (mode == "r" and not directory)
        shown = arg.text if arg.text is not None else arg.src
        if unresolvable(win):
            secret = windows_key_material(win) if (reads or writes) else None
            if secret:
                self.deny(f"{what} key material in a Windows path: {shown} is {secret}")
                return "out"
            if arg.kind != UNKNOWN:  # (an unknown word asked for the exact command already)
                self.exact(f"{what} {shown}, a Windows path outside the worktree (drive letters, %VAR% "
                           "and backslash paths lead out of it on Windows)")
            if writes:
                self.mutate(f"{what} {shown}")
            return "out"
        if arg.kind == UNKNOWN:
            return "unknown"
        where = self._access(Arg(LIT, win, arg.glob, arg.src), mode, cwds, what, directory=directory, delete=delete)
        if (reads or writes) and cwds is not None:
            for cwd in cwds:  # Windows ignores case: ``..\\..\\.SSH\\ID_RSA`` is the key too
                real = self.resolve(cwd, win)
                secret = None if self.inside(real) else key_material(real.lower())
                if secret:
                    self.deny(f"{what} key material in a Windows path: {shown} is {secret}")
                    return "out"
        return where

    def _access(self, arg: Arg, mode: str, cwds: Cwds, what: str, *, directory: bool = False,
                delete: bool = False) -> str:
        """Check one path a command touches (as Linux reads it) and record what it needs.

        Args:
            arg: the path word.
            mode: ``r``, ``w``, ``x`` (run), ``rtree`` or ``wtree`` (recursive read/change).
            cwds: the possible working directories.
            what: a few words for the reason (``"cat reads"``).
            directory: the path is a directory whose entries are used (``ls``, ``cd``), so an
                outside key names the path itself, not its parent.
            delete: the path is deleted or moved away (deleting the worktree itself also
                deletes its ``.git`` link).

        Returns:
            ``"in"``, ``"gitlink"``, ``"tmp"``, ``"dev"``, ``"out"`` or ``"unknown"`` (the worst
            location seen).
        """
        writes = mode in ("w", "wtree")
        if arg.kind == FD:
            return "dev"
        if arg.kind == WTLIST:
            if writes:
                self.mutate(f"{what} files inside the worktree")
            return "in"
        reads = mode == "rtree" or (mode == "r" and not directory)
        if arg.kind == UNKNOWN or arg.text is None:
            secret = key_material(arg.src) if (reads or writes) and arg.src else None
            if secret:
                self.deny(f"{what} key material: {secret}")
                return "out"
            self.exact(f"{what} a path from a variable, substitution or ~ that cannot be checked")
            return "unknown"
        text = arg.text
        if text == "":
            return "in"
        if text.endswith("/") and len(text) > 1:
            directory = True
        if arg.glob:
            split = split_glob(text)
            if split is None:
                self.exact(f"{what} a glob that may climb out through a link")
                return "unknown"
            text, tree, _ = split
            if tree:
                mode = "wtree" if writes else ("rtree" if mode in ("r", "rtree") else mode)
            directory = True
        if not text.startswith("/") and cwds is None:
            # From an unknown directory (``cd ~ && cat .ssh/id_rsa``) a path below a key
            # folder may be the home's own: refused like the same path written from ``~``.
            secret = key_material("~/" + text) if (reads or writes) and "/" in text.strip("/") else None
            if secret:
                self.deny(f"{what} key material from an unknown directory: {secret}")
                return "out"
            self.exact(f"{what} a relative path from an unknown working directory")
            return "unknown"
        worst = "in"
        for cwd in cwds or ("/",):
            lex = text if text.startswith("/") else posixpath.join(cwd, text)
            norm = posixpath.normpath(lex)
            if norm in DEVICES or norm.startswith("/dev/fd/") or norm.startswith("/proc/self/fd/"):
                worst = worst if worst != "in" else "dev"
                continue
            real = self.realpath(lex)
            where = self._check(real, mode, what, directory, delete)
            if where == "out" or (where in ("tmp", "gitlink") and worst in ("in", "dev")):
                worst = where
        return worst

    def _check(self, real: str, mode: str, what: str, directory: bool, delete: bool) -> str:
        writes = mode in ("w", "wtree")
        if self.inside(real):
            entry = self.git_entry(real)
            if entry == self.gitlink:
                if writes:
                    self.ask(f"Bash:.git:{self.gitlink}", f"{what} the worktree's .git link to the repository")
                return "gitlink"
            if entry is not None:
                # A .git below the top is a nested repository's (hooks and config that run
                # programs whenever git runs there) or a link pointing git at another repository:
                # writing into it asks (deleting it only deletes; ``rm -r`` asks as usual).
                if writes and not delete:
                    self.ask(f"Bash:.git:{entry}", f"{what} {entry}, a .git below the worktree's top (a nested "
                             "repository's hooks and config run programs, a .git file points git elsewhere)")
                    self.mutate(f"{what} {real}")
                    return "gitlink"
            if delete and mode == "wtree" and real == self.worktree:
                self.ask(f"Bash:.git:{self.gitlink}", f"{what} the whole worktree, including its .git link")
            if writes:
                self.mutate(f"{what} {real}")
            return "in"
        # Key material is refused wherever it lies outside the worktree, the scratch directory
        # included (a home under /tmp); listing a folder (``ls``) is not reading it.
        if not (mode == "r" and directory):
            secret = key_material(real)
            if secret:
                self.deny(f"{what} key material: {secret}")
                return "out"
        if self.in_tmp(real) or (real == self.tmpdir and not writes and mode != "rtree"):
            self.scratch = True
            return "tmp"
        if mode in ("rtree", "wtree") or directory:
            target = real
        else:
            target = posixpath.dirname(real) or "/"
        verb = {"r": "reads", "w": "writes", "x": "runs", "rtree": "reads the tree", "wtree": "changes the tree"}[mode]
        self.ask(outside_key(target, mode), f"{what} outside the worktree ({verb} {real})")
        if writes:
            self.mutate(f"{what} {real}")
        return "out"


def default_tmpdir() -> str:
    """The scratch directory used when the caller passes none (``/tmp`` on POSIX)."""
    return "/tmp" if os.sep == "/" else os.path.normpath(os.environ.get("TEMP", "C:/Temp"))


def _shell_unquote(src: str) -> str:
    """A word's source text without shell quotes, ``\\\\`` read as one backslash (for the Windows
    reading of a word the shell would expand: ``$env:USERPROFILE\\\\.ssh``, ``~\\\\.aws``)."""
    return src.replace('"', "").replace("'", "").replace("\\\\", "\\")


def lit(arg: Arg) -> str | None:
    """The literal text of a word, or None if it is not a plain literal."""
    return arg.text if arg.kind == LIT and not arg.glob else None
