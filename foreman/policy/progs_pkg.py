"""Package managers and package runners: npm, yarn, pnpm, npx, pip, uv, poetry, uvx, pipx, gem,
cargo and go. Installs ask with keys that never widen (:mod:`.pkgkeys`); runners classify the
command they run like one typed directly."""

from __future__ import annotations

from .dangers import ask_publish, publishing_target
from .opts import Parsed, lit_text, parse_opts
from .pkgkeys import VALUE_OPTS, package_key
from .registry import Call, handles
from .walker import run_text
from .words import LIT, Arg

# ---- package managers ---------------------------------------------------------------------
_NPM_READ = frozenset({"ls", "list", "ll", "la", "version", "help", "root", "prefix", "bin", "why", "explain",
                       "config-get", "get", "query", "fund", "doctor", "-v", "--version", "pkg-get"})
_NPM_NET = frozenset({"view", "v", "info", "show", "outdated", "search", "s", "se", "audit", "publish", "unpublish",
                      "deprecate", "dist-tag", "owner", "access", "login", "logout", "adduser", "whoami", "ping",
                      "star", "stars", "team", "token", "hook", "org", "repo", "docs", "bugs", "home"})
_NPM_INSTALL = {"install": "install", "i": "install", "in": "install", "ins": "install", "inst": "install",
                "add": "install", "isntall": "install", "ci": "ci", "clean-install": "ci", "update": "update",
                "up": "update", "upgrade": "update", "uninstall": "uninstall", "remove": "uninstall",
                "rm": "uninstall", "un": "uninstall", "r": "uninstall", "link": "link", "ln": "link",
                "dedupe": "dedupe", "prune": "prune", "rebuild": "rebuild", "install-test": "install",
                "it": "install", "install-ci-test": "ci", "cit": "ci", "audit-fix": "audit fix"}
_DEV_SCRIPTS = frozenset({"dev", "start", "serve", "preview", "watch", "storybook", "server"})


def npm_like(c: Call, tool: str):
    """npm and the package managers that follow its subcommands (yarn, pnpm, bun): ``test``,
    ``build`` and ``run <script>`` run the project's scripts (allowed in the worktree),
    development servers and installs ask with their keys, unknown subcommands ask."""
    p = parse_opts(c.args, "wCF", VALUE_OPTS["npm"], stop_at_operand=True)
    sub = lit_text(p.rest[0]) if p.rest else ("install" if tool in ("yarn", "pnpm", "bun") else None)
    rest = p.rest[1:]
    if p.has("--userconfig", "--globalconfig", "--cache", "--location") or (
            p.has("--registry") and sub not in _NPM_INSTALL) or any(
            lit_text(a) in ("-g", "--global", "--location=global") for a in c.args):
        c.exact(f"{tool} is pointed at another registry, config or the global install")
    if sub is None:
        if p.rest:
            c.exact(f"{tool} runs a subcommand from a variable")
        return None
    if sub in _NPM_READ:
        return None
    if sub in ("test", "t", "tst", "run", "run-script", "rum", "urn", "build", "lint", "format", "typecheck",
               "check", "exec", "x", "dlx", "pack", "init", "create", "stop", "restart", "start"):
        if sub in ("run", "run-script", "rum", "urn"):
            script = lit_text(rest[0]) if rest else None
            if script is None:
                if rest:
                    c.exact(f"{tool} run gets the script name from a variable")
                return None
            if script in _DEV_SCRIPTS:
                c.action(f"serve:{tool} run {script}", f"{tool} run {script} starts a development server")
                return None
            if publishing_target(script):
                ask_publish(c, f"{tool} run", script)
        elif sub in ("start", "restart"):
            c.action(f"serve:{tool} start", f"{tool} start starts the app")
            return None
        elif sub in ("exec", "x", "dlx"):
            return _npx(Call(c.ctx, "npx", rest, c.cwds, c.stdin))
        elif sub in ("init", "create"):
            c.exact(f"{tool} {sub} may download a starter package")
            return None
        c.project(f"{tool} {sub} runs the project's scripts")
        return None
    if sub in _NPM_INSTALL:
        q = parse_opts(rest, "wCF", VALUE_OPTS["npm"])
        both = Parsed()
        both.opts = p.opts + q.opts
        for v in both.values("--prefix", "-C", "--dir", "--cwd", "--modules-folder"):
            c.write(v, tree=True)
        if any(lit_text(a) == "--registry" for a in c.args) and not both.values("--registry"):
            c.exact(f"{tool} --registry without a value")
        key = package_key(c, tool, _NPM_INSTALL[sub], "npm", both, q.operands)
        c.ctx.ask(key, f"{tool} {sub} installs packages from the network", network=True)
        c.project(f"{tool} {sub}")
        return None
    if sub in _NPM_NET:
        c.ctx.ask(f"Bash:net:{tool}:{sub}", f"{tool} {sub} uses the network", network=True)
        return None
    if tool in ("yarn", "pnpm", "bun") and not sub.startswith("-"):
        if sub in _DEV_SCRIPTS:
            c.action(f"serve:{tool} {sub}", f"{tool} {sub} starts a development server")
            return None
        if publishing_target(sub):
            ask_publish(c, tool, sub)
        c.project(f"{tool} {sub} runs a project script")
        return None
    c.exact(f"{tool} {sub} is not a subcommand the policy knows")
    return None


#: ``bun`` subcommands that are package commands (npm's rules), not scripts to run.
BUN_PACKAGE = frozenset({"install", "i", "add", "a", "remove", "rm", "update", "upgrade", "link", "unlink", "outdated",
                         "publish", "pm", "patch", "audit", "info", "create", "init"})


def bun_package(c: Call, at: int = 0):
    """``bun install``/``add``/``remove``/``update``/``pm``/...: classified with npm's rules
    (``c.args[at]`` is the subcommand, options before it)."""
    sub = lit_text(c.args[at]) if at < len(c.args) else None
    if sub == "a":  # bun's short form of add
        c = Call(c.ctx, c.name, [*c.args[:at], Arg.lit("add"), *c.args[at + 1:]], c.cwds, c.stdin)
    if sub in ("pm", "patch"):
        c.exact(f"bun {sub} manages the package cache or patches packages")
        return None
    if sub in ("create", "init"):
        c.exact(f"bun {sub} may download a starter package")
        return None
    if sub == "audit":
        c.ctx.ask("Bash:net:bun:audit", "bun audit uses the network", network=True)
        return None
    if sub == "unlink":
        c.exact("bun unlink changes linked packages")
        return None
    return npm_like(c, "bun")


handles("npm")(lambda c: npm_like(c, "npm"))
handles("yarn")(lambda c: npm_like(c, "yarn"))
handles("pnpm")(lambda c: npm_like(c, "pnpm"))


@handles("npx", "bunx", "pnpx")
def _npx(c: Call):
    """A package runner: the command it runs is classified like one typed directly; a package
    that is not installed in the worktree's ``node_modules/.bin`` may be downloaded (asks)."""
    p = parse_opts(c.args, "pc", {"--package", "--call", "-p", "-c"}, stop_at_operand=True)
    for v in p.values("-c", "--call"):
        if v.kind != LIT:
            c.exact("npx -c runs a command from a variable")
        else:
            run_text(c.ctx, v.value, c.cwds, c.stdin, "npx -c")
    words = p.rest or p.operands
    if p.has("-p", "--package"):
        c.exact("npx --package installs a package to run")
        run_wrapped(c, words)
        return None
    if not words:
        return None
    tool = lit_text(words[0])
    if tool is None:
        c.exact("npx runs a tool named by a variable")
        c.sub(words, c.stdin)
        return None
    # A tool installed in the worktree is a link in node_modules/.bin (npm creates links there).
    if "@" not in tool[1:] and "/" not in tool and not tool.startswith(".") and c.cwds is not None and len(c.cwds) == 1 and c.ctx.inside(c.cwds[0]):
        link = f"{c.ctx.worktree}/node_modules/.bin/{tool}"
        real = c.ctx.realpath(link)
        if real != link and c.ctx.inside(real):
            return c.sub([Arg.lit(link), *words[1:]], c.stdin)
    c.ctx.ask(f"Bash:net:npx:{tool}", f"npx {tool} is not installed in the worktree and may be downloaded", network=True)
    run_wrapped(c, words)
    return None


def _bin_name(tool: str) -> str:
    """The program a package spec runs: ``create-x@latest`` -> ``create-x``, ``@s/pkg`` -> ``pkg``."""
    name = tool.rsplit("@", 1)[0] if "@" in tool[1:] else tool
    name = name.split("==", 1)[0].split("[", 1)[0]
    return name.rsplit("/", 1)[-1] or tool


def run_wrapped(c: Call, words: list[Arg]) -> None:
    """Classify the command a package runner runs as if it were typed directly."""
    if not words:
        return
    tool = lit_text(words[0])
    if tool is None:
        c.exact(f"{c.name} runs a tool named by a variable")
        c.sub(words, c.stdin)
        return
    c.sub([Arg.lit(_bin_name(tool)), *words[1:]], c.stdin)


@handles("pip", "pip3")
def _pip(c: Call):
    p = parse_opts(c.args, "rceit", {"--requirement", "--constraint", "--editable", "--index-url",
                                     "--extra-index-url", "--target", "--prefix", "--root", "--src"},
                   stop_at_operand=True)
    sub = lit_text(p.rest[0]) if p.rest else None
    if sub in (None, "list", "show", "freeze", "check", "help", "--version", "-V", "debug", "inspect", "hash"):
        return None
    if sub in ("install", "uninstall", "download", "wheel"):
        q = parse_opts(p.rest[1:], "rceitfpdw", VALUE_OPTS["pip"])
        both = Parsed()
        both.opts = p.opts + q.opts
        for v in both.values("-r", "--requirement", "-c", "--constraint"):
            c.read(v)
        for v in both.values("-t", "--target", "--prefix", "--root", "-d", "--dest", "-w", "--wheel-dir", "--src"):
            c.write(v, tree=True)
        if both.has("--user", "--break-system-packages"):
            c.exact(f"pip {sub} changes your own Python installation")
        c.ctx.ask(package_key(c, "pip", sub, "pip", both, q.operands), f"pip {sub} installs packages from the network", network=True)
        c.project(f"pip {sub}")
        return None
    c.exact(f"pip {sub} is not a subcommand the policy knows")
    return None


@handles("uv", "poetry", "pipenv", "pdm", "rye", "hatch_env")
def _py_manager(c: Call):
    p = parse_opts(c.args, "", {"--directory", "--project", "--with", "--python", "-p"}, stop_at_operand=True)
    sub = lit_text(p.rest[0]) if p.rest else None
    rest = p.rest[1:]
    if sub == "run":
        q = parse_opts(rest, "", {"--with", "--python", "-p", "--env-file", "--extra", "--group", "--package"},
                       stop_at_operand=True)
        if q.has("--with"):
            c.exact(f"{c.name} run --with installs extra packages")
        c.mutate(f"{c.name} run")
        return c.sub(q.rest, c.stdin) if q.rest else None
    if sub == "pip":
        return _pip(Call(c.ctx, "pip", rest, c.cwds, c.stdin))
    if sub in ("--version", "version", "show", "check", "tree", "list", "help", "env", "info", None):
        return None
    if sub in ("build", "fmt", "format"):
        c.mutate(f"{c.name} {sub}")
        return None
    if c.name == "uv" and sub == "tool" and rest and lit_text(rest[0]) == "run":
        return _uvx(Call(c.ctx, "uvx", rest[1:], c.cwds, c.stdin))
    if sub in ("tool", "x", "exec") or c.name == "uv" and sub == "tool":
        c.exact(f"{c.name} {sub} runs a tool that may be downloaded")
        return None
    if sub in ("install", "add", "remove", "sync", "lock", "update", "upgrade", "uninstall", "venv", "init", "new"):
        q = parse_opts(rest, "rceitfpdw", VALUE_OPTS["pip"])
        both = Parsed()
        both.opts = p.opts + q.opts
        for v in both.values("--directory", "--project"):
            c.read(v, directory=True)
        ops = q.operands if sub not in ("venv", "init", "new") else []
        for a in q.operands if sub in ("venv", "init", "new") else ():
            c.write(a, tree=True)
        c.ctx.ask(package_key(c, c.name, sub, "pip", both, ops), f"{c.name} {sub} installs or changes packages", network=True)
        c.project(f"{c.name} {sub}")
        return None
    if sub in ("publish", "upload"):
        c.ctx.ask(f"Bash:net:{c.name}:{sub}", f"{c.name} {sub} uploads a package", network=True)
        return None
    c.exact(f"{c.name} {sub} is not a subcommand the policy knows")
    return None


_UVX_VALUE = {"--from", "--with", "--with-editable", "--with-requirements", "--python", "-p", "--index",
              "--index-url", "--extra-index-url", "--default-index", "-i", "--spec", "--pip-args", "--directory",
              "--project", "--constraints", "--overrides", "--env-file", "-w"}


@handles("uvx", "pipx")
def _uvx(c: Call):
    """``uvx tool ...``, ``pipx run tool ...``: the tool may be downloaded (asks for it by name)
    and the command it runs is classified like one typed directly."""
    args = list(c.args)
    runner = c.name
    if c.name == "pipx":
        p = parse_opts(args, "", _UVX_VALUE, stop_at_operand=True)
        sub = lit_text(p.rest[0]) if p.rest else None
        if sub in (None, "list", "--version", "environment", "completions"):
            return None
        if sub != "run":
            c.action(f"pipx {sub}", f"pipx {sub} installs or changes tools in your home")
            return None
        args = p.rest[1:]
    p = parse_opts(args, "pwi", _UVX_VALUE, stop_at_operand=True)
    words = p.rest or p.operands
    if any(f in ("--index", "--index-url", "--extra-index-url", "--default-index", "-i", "--from", "--spec")
           for f, _ in p.opts):
        c.exact(f"{runner} takes the tool from another index or source")
    tool = lit_text(words[0]) if words else None
    if tool is None:
        c.exact(f"{runner} runs a tool named by a variable")
        run_wrapped(c, words)
        return None
    c.ctx.ask(f"Bash:net:{runner}:{tool}", f"{runner} runs a tool that may be downloaded", network=True)
    run_wrapped(c, words)
    return None


_CARGO_OK = frozenset({"build", "b", "check", "c", "test", "t", "run", "r", "clippy", "fmt", "doc", "d", "bench",
                       "tree", "metadata", "clean", "new", "init", "version", "--version", "help", "locate-project",
                       "pkgid", "verify-project", "read-manifest", "nextest", "expand", "llvm-cov"})


@handles("gem")
def _gem(c: Call):
    """RubyGems: installs name what comes from where like npm and pip (see :mod:`.pkgkeys`)."""
    sub = lit_text(c.args[0]) if c.args else None
    if sub in (None, "list", "help", "env", "--version", "-v", "which", "contents", "specification", "spec"):
        return None
    if sub in ("install", "i", "uninstall", "update"):
        q = parse_opts(c.args[1:], "svinpg", VALUE_OPTS["gem"])
        for v in q.values("-i", "--install-dir", "-n", "--bindir"):
            c.write(v, tree=True)
        canon = "install" if sub == "i" else sub
        c.ctx.ask(package_key(c, "gem", canon, "gem", q, q.operands), f"gem {canon} installs gems from the network", network=True)
        c.project(f"gem {canon}")
        return None
    if sub in ("search", "query", "fetch", "push", "owner", "yank", "signin", "signout", "sources"):
        c.ctx.ask(f"Bash:net:gem:{sub}", f"gem {sub} uses the network", network=True)
        return None
    c.exact(f"gem {sub} is not a subcommand the policy knows")
    return None


@handles("cargo")
def _cargo(c: Call):
    p = parse_opts(c.args, "", {"--manifest-path", "--config", "-Z"}, stop_at_operand=True)
    if p.has("--config", "-Z"):
        c.exact("cargo --config/-Z changes how cargo runs programs")
    sub = lit_text(p.rest[0]) if p.rest else None
    if sub is None:
        return None
    if sub in _CARGO_OK:
        c.project(f"cargo {sub}")
        if any(lit_text(a) == "--config" for a in p.rest):
            c.exact("cargo --config changes how cargo runs programs")
        return None
    if sub in ("install", "add", "remove", "rm", "update", "fetch", "vendor", "generate-lockfile", "uninstall"):
        q = parse_opts(p.rest[1:], "Fpj", VALUE_OPTS["cargo"])
        both = Parsed()
        both.opts = p.opts + q.opts
        for v in both.values("--root", "--target-dir"):
            c.write(v, tree=True)
        for v in both.values("--path", "--manifest-path"):
            c.read(v)
        c.ctx.ask(package_key(c, "cargo", sub, "cargo", both, q.operands),
                  f"cargo {sub} changes or downloads dependencies", network=sub != "remove" and sub != "rm" and sub != "uninstall")
        c.project(f"cargo {sub}")
        return None
    if sub in ("publish", "login", "logout", "owner", "yank", "search", "info"):
        c.ctx.ask(f"Bash:net:cargo:{sub}", f"cargo {sub} uses the network", network=True)
        return None
    c.exact(f"cargo {sub} is not a subcommand the policy knows")
    return None


@handles("go")
def _go(c: Call):
    sub = lit_text(c.args[0]) if c.args else None
    rest = c.args[1:]
    if sub in (None, "version", "help", "doc", "list"):
        return None
    if sub == "env":
        if any(lit_text(a) in ("-w", "-u") for a in rest):
            c.exact("go env -w changes your Go configuration")
        return None
    for a in rest:
        t = lit_text(a) or ""
        if t in ("-exec", "-toolexec", "--exec") or t.startswith(("-exec=", "-toolexec=")):
            c.exact(f"go {sub} -exec runs another program")
        if t == "-o" or t.startswith("-o="):
            pass
    p = parse_opts(rest, "o", {"-o"}, long_single_dash=True)
    for v in p.values("-o"):
        c.write(v)
    if sub in ("build", "test", "vet", "fmt", "run", "generate", "clean", "fix"):
        c.project(f"go {sub}")
        return None
    if sub == "mod":
        what = lit_text(rest[0]) if rest else None
        if what in ("graph", "why", "verify", "edit"):
            if what == "edit":
                c.mutate("go mod edit")
            return None
        c.ctx.ask(f"Bash:go mod {what}", f"go mod {what} downloads or changes dependencies", network=True)
        c.mutate("go mod")
        return None
    if sub in ("get", "install"):
        q = parse_opts(rest, "", VALUE_OPTS["go"], long_single_dash=True)
        c.ctx.ask(package_key(c, "go", sub, "go", q, q.operands), f"go {sub} downloads or installs packages", network=True)
        c.project(f"go {sub}")
        return None
    if sub == "work":
        c.action(f"go {sub}", f"go {sub} changes the workspace file")
        c.project(f"go {sub}")
        return None
    c.exact(f"go {sub} is not a subcommand the policy knows")
    return None
