"""Development tools, package managers, interpreters, network tools, servers and system programs."""

from __future__ import annotations



from .opts import Parsed, lit_text, parse_opts
from .pkgkeys import VALUE_OPTS, package_key
from .registry import Call, handles
from .walker import probe_text, run_text
from .words import LIT, UNKNOWN, Arg

# ---- operand paths of dev tools -----------------------------------------------------------


def _operand_paths(c: Call, args: list[Arg]) -> None:
    """Check operands of a dev tool that may be paths (``pytest tests/``, ``--config=/x``)."""
    for a in args:
        if a.kind == UNKNOWN:
            c.exact(f"{c.name} gets an argument from a variable or substitution")
            continue
        if a.kind != LIT:
            c.read(a)
            continue
        t = a.text
        if t.startswith("-"):
            if "=" in t:
                val = t.split("=", 1)[1]
                if val.startswith(("/", "~", "..")):
                    c.read(Arg(LIT, val, a.glob, a.src))
            continue
        if "=" in t and not t.startswith(("/", ".")):
            val = t.split("=", 1)[1]
            if val.startswith(("/", "~", "..")):
                c.read(Arg(LIT, val, a.glob, a.src))
            continue
        if "::" in t:
            t = t.split("::", 1)[0]
        c.read(Arg(LIT, t, a.glob, a.src))


def _dev_tool(exact_flags=(), write_flags=(), serve_subs=()):
    def handler(c: Call):
        p = parse_opts(c.args, "", set(write_flags))
        for f, v in p.opts:
            if f in exact_flags:
                c.exact(f"{c.name} {f} runs another program")
            elif f in write_flags and v is not None:
                c.write(v)
        if serve_subs and (not p.operands or lit_text(p.operands[0]) in serve_subs):
            c.action(f"serve:{c.name}", f"{c.name} starts a development server")
            return None
        c.project(f"{c.name} runs project code")
        _operand_paths(c, [a for a in c.args if not (a.kind == LIT and a.text in write_flags)])
        return None
    return handler


for _n in ("pytest", "py.test", "tox", "nox", "mypy", "ruff", "black", "isort", "flake8", "pylint", "pyright",
           "coverage", "tsc", "eslint", "prettier", "vitest", "jest", "mocha", "ava", "tap", "c8", "nyc",
           "cmake", "ctest", "ninja", "meson", "rustfmt", "gofmt", "golangci-lint", "shellcheck", "shfmt",
           "clang-format", "dotnet", "swift", "rustc", "bandit", "pydocstyle",
           "pre-commit", "biome", "stylelint", "markdownlint", "yamllint", "hadolint", "pyflakes", "autopep8",
           "yapf", "ty", "pyre", "hatch", "sphinx-build", "mkdocs_build", "bats", "phpunit", "rspec"):
    handles(_n)(_dev_tool(write_flags=("-o", "--output", "--output-file", "--outFile", "--outDir", "--cov-report")))
handles("vite")(_dev_tool(serve_subs=("dev", "serve", "preview")))


#: Gradle/Maven tasks that start a server or the app (asks like ``npm start``).
_JVM_SERVE = frozenset({"bootRun", "run", "appRun", "jettyRun", "tomcatRun", "quarkusDev", "spring-boot:run",
                        "jetty:run", "tomcat7:run", "quarkus:dev", "exec:java", "exec:exec", "liberty:dev"})


@handles("gradle", "mvn")
def _jvm_build(c: Call):
    """Gradle and Maven (also ``./gradlew``/``./mvnw``): build and test tasks run the project's
    build like ``npm test``; tasks that start the app ask; init scripts from elsewhere ask."""
    p = parse_opts(c.args, "IcbfsgpPD" if c.name == "gradle" else "fsgPDTbl",
                   {"--init-script", "--settings-file", "--build-file", "--project-dir", "--gradle-user-home",
                    "--project-cache-dir", "--file", "--settings", "--global-settings", "--toolchains", "--log-file"})
    for f, v in p.opts:
        if f in ("-I", "--init-script") or (c.name == "mvn" and f in ("-s", "--settings", "-gs", "--global-settings")):
            c.exact(f"{c.name} {f} runs build code from another file")
        elif f in ("-p", "--project-dir", "-c", "--settings-file", "-b", "--build-file", "-f", "--file") and v is not None:
            c.read(v)
    for a in p.operands:
        t = lit_text(a)
        if t is None:
            c.exact(f"{c.name} gets a task from a variable")
        elif t in _JVM_SERVE or t.endswith((":bootRun", ":run", ":appRun")):
            c.action(f"serve:{c.name} {t}", f"{c.name} {t} starts the application")
    c.project(f"{c.name} runs the project's build")
    return None


@handles("javac")
def _javac(c: Call):
    """javac: annotation processors and plugins are code the compiler runs (asks)."""
    p = parse_opts(c.args, "dsh", {"-d", "-s", "-h", "-cp", "-classpath", "--class-path", "-sourcepath",
                                   "--source-path", "-encoding", "--release", "-source", "-target", "--module-path",
                                   "-p", "-processor", "-processorpath", "--processor-path", "--processor-module-path",
                                   "--module", "-m", "--add-modules"}, long_single_dash=True)
    for f, v in p.opts:
        if f in ("-processor", "-processorpath", "--processor-path", "--processor-module-path") or f.startswith(
                ("-Xplugin", "-J", "--plugin")):
            c.exact(f"javac {f} runs an annotation processor or compiler plugin")
        elif f in ("-d", "-s", "-h") and v is not None:
            c.write(v, tree=True)
    for a in p.operands:
        c.read(a)
    c.project("javac compiles")
    return None


@handles("webpack", "webpack-cli")
def _webpack(c: Call):
    if c.args and lit_text(c.args[0]) in ("serve", "server") or any(lit_text(a) == "--watch" for a in c.args):
        c.action(f"serve:{c.name}", f"{c.name} serve starts a development server")
        return None
    c.mutate("webpack builds")
    _operand_paths(c, c.args)
    return None


for _n in ("webpack-dev-server", "http-server", "serve", "live-server", "nodemon", "uvicorn", "gunicorn",
           "hypercorn", "flask_run", "next", "nuxt", "react-scripts", "parcel", "astro", "remix", "ng",
           "jekyll", "hugo", "browser-sync", "json-server"):
    def _server(c: Call):
        first = lit_text(c.args[0]) if c.args else None
        if c.name in ("next", "nuxt", "astro", "remix", "ng", "jekyll", "hugo", "parcel", "react-scripts") and first in (
                "build", "lint", "test", "check", "export", "generate", "typegen"):
            c.mutate(f"{c.name} {first}")
            return None
        c.action(f"serve:{c.name}", f"{c.name} starts a development server")
        return None
    handles(_n)(_server)


@handles("flask", "rails")
def _web_framework(c: Call):
    """``flask run``, ``rails s``/``server``: development servers (ask); other subcommands run
    code the policy does not know (ask for the exact command)."""
    first = lit_text(c.args[0]) if c.args else None
    if first in ("run", "s", "server"):
        c.action(f"serve:{c.name} {first}", f"{c.name} {first} starts a development server")
        return None
    c.exact(f"{c.name} {first or ''} runs application code the policy does not know".replace("  ", " "))
    return None


@handles("gcc", "cc", "clang", "g++", "c++", "clang++", "ld")
def _cc(c: Call):
    p = parse_opts(c.args, "oIlLDUWfmxO", {"-o"})
    for v in p.values("-o"):
        c.write(v)
    for a in p.operands:
        c.read(a)
    c.mutate(f"{c.name} compiles")
    return None


@handles("make", "gmake")
def _make(c: Call):
    p = parse_opts(c.args, "CfIjlOoW", {"--directory", "--file", "--makefile", "--include-dir", "--jobs",
                                        "--load-average", "--old-file", "--what-if", "--eval"})
    cwds = c.cwds
    for v in p.values("-C", "--directory"):
        c.ctx.access(v, "r", cwds, "make -C goes", directory=True)
        if lit_text(v) is None or cwds is None:
            cwds = None
        else:
            cwds = tuple(c.ctx.resolve(x, v.text) for x in cwds)
    if p.has("--eval"):
        c.exact("make --eval runs make code given on the command line")
    for v in p.values("-f", "--file", "--makefile"):
        if c.run(v) != "in":
            c.exact("make -f runs a Makefile from outside the worktree")
    if not c.ctx.cwds_inside(cwds):
        c.exact("make runs a Makefile outside the worktree")
    c.mutate("make runs the project's build")
    for a in p.operands:
        t = lit_text(a)
        if t is None:
            c.exact("make gets a target or variable from a variable")
        elif "=" in t:
            name, _, val = t.partition("=")
            if name in ("SHELL", "MAKE", "CC", "CXX") or val.startswith(("/", "~", "..")):
                c.exact(f"make {name}= overrides a program or points outside")
    return None


# ---- interpreters -------------------------------------------------------------------------
_STR_QUOTES = "'\"`"


def _string_literals(code: str) -> list[str]:
    """String literals in code (any language with ', " or ` quotes), escapes dropped."""
    out = []
    i, n = 0, len(code)
    while i < n:
        q = code[i]
        if q in _STR_QUOTES:
            j = i + 1
            buf = []
            while j < n and code[j] != q:
                if code[j] == "\\" and j + 1 < n:
                    buf.append(code[j + 1])
                    j += 2
                    continue
                buf.append(code[j])
                j += 1
            out.append("".join(buf))
            i = j + 1
        else:
            i += 1
    return out


def inline_code(c: Call, code: Arg | None, lang: str) -> None:
    """Inline code asks for the exact command; a ``git push`` visible in its strings is refused."""
    c.exact(f"{c.name} runs inline {lang} code that may write, spawn programs or use the network")
    c.mutate(f"{c.name} runs inline code")
    if code is None or code.kind != LIT:
        return
    probe_strings(c, code.text, f"{c.name} code")


def probe_strings(c: Call, code: str, what: str) -> None:
    """Refuse the command if the string literals of ``code`` (any language) spell a git push."""
    lits = _string_literals(code)
    for s in lits:
        if "push" in s or "git" in s:
            probe_text(c.ctx, s, c.cwds, f"a string in {what}")
    if any("push" in s for s in lits):
        for i, s in enumerate(lits):
            if s == "git" or s.endswith("/git"):
                probe_text(c.ctx, " ".join(lits[i:i + 8]), c.cwds, f"strings in {what}")


def _stdin_code(c: Call, lang: str) -> None:
    s = c.stdin
    inline_code(c, Arg(LIT, s[1], False, "") if s is not None and s[0] in ("text", "dyntext") else None, lang)


@handles("python", "python3", "python2", "pypy", "pypy3", "py")
def _python(c: Call):
    args = c.args
    i = 0
    while i < len(args):
        t = lit_text(args[i])
        if t is None:
            c.exact(f"{c.name} gets an argument from a variable")
            return None
        if t == "-c":
            inline_code(c, args[i + 1] if i + 1 < len(args) else None, "Python")
            return None
        if t.startswith("-c") and not t.startswith("--"):
            inline_code(c, Arg(LIT, t[2:], False, t), "Python")
            return None
        if t == "-m":
            return _python_module(c, args[i + 1:])
        if t.startswith("-m") and len(t) > 2:
            return _python_module(c, [Arg.lit(t[2:]), *args[i + 1:]])
        if t in ("-W", "-X", "--check-hash-based-pycs"):
            i += 2
            continue
        if t == "-":
            _stdin_code(c, "Python")
            return None
        if t.startswith("-"):
            i += 1
            continue
        nxt = lit_text(args[i + 1]) if i + 1 < len(args) else None
        if t.rsplit("/", 1)[-1] == "manage.py" and nxt in ("runserver", "runserver_plus", "testserver", "runfcgi"):
            c.action(f"serve:manage.py {nxt}", f"manage.py {nxt} starts a development server")
            return None
        c.run(args[i])
        for text in c.ctx.written_texts(args[i], c.cwds):
            probe_strings(c, text, "a script written earlier in the command")
        c.project(f"{c.name} runs a script")
        _operand_paths(c, args[i + 1:])
        return None
    if c.stdin is None and not args:
        c.exact(f"{c.name} without a script reads code from stdin")
        return None
    if not any(lit_text(a) in ("-V", "--version", "-h", "--help") for a in args):
        _stdin_code(c, "Python")
    return None


_PY_DEV_MODULES = frozenset({"pytest", "unittest", "mypy", "black", "isort", "ruff", "flake8", "pylint", "coverage",
                             "doctest", "compileall", "py_compile", "tox", "nox", "pyright", "build", "pydoc",
                             "json.tool", "timeit", "cProfile", "trace", "tabnanny", "pyflakes", "bandit", "sphinx"})


def _python_module(c: Call, rest: list[Arg]):
    mod = lit_text(rest[0]) if rest else None
    if mod is None:
        c.exact("python -m runs a module named by a variable")
        return None
    if mod in ("pip", "pip3"):
        return _pip(Call(c.ctx, "pip", rest[1:], c.cwds, c.stdin))
    if mod in ("http.server", "SimpleHTTPServer", "flask", "uvicorn", "gunicorn", "django", "smtpd", "aiohttp.web"):
        if mod == "django" and len(rest) > 1 and lit_text(rest[1]) != "runserver":
            c.mutate("django management command")
            return None
        c.action(f"serve:python -m {mod}", f"python -m {mod} starts a server")
        return None
    if mod == "venv" or mod == "virtualenv":
        for a in parse_opts(rest[1:], "", {"--prompt"}).operands:
            c.write(a, tree=True)
        return None
    if mod in _PY_DEV_MODULES or mod.startswith("pytest"):
        c.mutate(f"python -m {mod}")
        _operand_paths(c, rest[1:])
        return None
    if mod.startswith(("foreman", "protocol", "tests", "src", "scripts", "bench")):
        c.mutate(f"python -m {mod} runs project code")
        _operand_paths(c, rest[1:])
        return None
    c.exact(f"python -m {mod} runs a module the policy does not know")
    return None


def _interp(lang: str, eval_flags: tuple[str, ...], stdin_flag: str = "-"):
    def handler(c: Call):
        args = c.args
        for i, a in enumerate(args):
            t = lit_text(a)
            if t is None:
                c.exact(f"{c.name} gets an argument from a variable")
                return None
            if t in eval_flags:
                inline_code(c, args[i + 1] if i + 1 < len(args) else None, lang)
                return None
            name, eq, val = t.partition("=")
            if eq and name in eval_flags:
                inline_code(c, Arg(LIT, val, False, t), lang)
                return None
            if t == stdin_flag:
                _stdin_code(c, lang)
                return None
            if c.name == "php" and (t == "-S" or t.startswith("-S")):
                c.action("serve:php -S", "php -S starts a development server")
                return None
            if t in ("--version", "-v", "-V", "--help", "-h") and len(args) == 1:
                return None
            if t.startswith("-"):
                if t in ("-r", "--require", "--import", "--loader", "-I", "-M", "-l") and i + 1 < len(args):
                    c.exact(f"{c.name} {t} loads extra code")
                continue
            if c.name in ("deno", "bun") and t in ("eval",):
                inline_code(c, args[i + 1] if i + 1 < len(args) else None, lang)
                return None
            if c.name in ("deno", "bun") and t in ("run", "test", "fmt", "lint", "check", "x"):
                if t == "x":
                    c.exact(f"{c.name} x runs a package that may be downloaded")
                    return None
                c.mutate(f"{c.name} {t}")
                continue
            c.run(a)
            for text in c.ctx.written_texts(a, c.cwds):
                probe_strings(c, text, "a script written earlier in the command")
            c.project(f"{c.name} runs a script")
            _operand_paths(c, args[i + 1:])
            return None
        _stdin_code(c, lang)
        return None
    return handler


handles("node", "nodejs")(_interp("JavaScript", ("-e", "--eval", "-p", "--print")))
handles("deno", "bun")(_interp("JavaScript", ("-e", "--eval")))
handles("perl")(_interp("Perl", ("-e", "-E")))
handles("ruby")(_interp("Ruby", ("-e",)))
handles("php")(_interp("PHP", ("-r", "--run")))
handles("lua", "luajit")(_interp("Lua", ("-e",)))
handles("Rscript")(_interp("R", ("-e", "--expr")))
handles("osascript")(_interp("AppleScript", ("-e",)))
handles("pwsh", "powershell")(_interp("PowerShell", ("-c", "-Command", "-command", "-EncodedCommand")))
handles("tclsh", "wish")(_interp("Tcl", ()))


@handles("awk", "gawk", "mawk", "nawk")
def _awk(c: Call):
    p = parse_opts(c.args, "fFvW", {"--file", "--field-separator", "--assign", "--include", "--load", "--source"})
    ops = p.operands
    progs = p.values("-f", "--file")
    for v in progs:
        c.run(v)
    if p.has("-i", "--include", "-l", "--load", "-E", "--exec"):
        c.exact(f"{c.name} loads extra code")
    inplace = any(lit_text(v) == "inplace" for v in p.values("-i", "--include"))
    if not progs and p.values("--source"):
        progs = p.values("--source")
        program = progs[0]
    elif not progs:
        if not ops:
            c.exact("awk without a program")
            return None
        program, ops = ops[0], ops[1:]
    else:
        program = None
    if program is not None:
        text = lit_text(program)
        if text is None:
            c.exact("awk runs a program from a variable")
        elif "system" in text or "|" in text or ">" in text or "getline" in text or "ENVIRON" in text:
            inline_code(c, program, "awk")
    for a in ops:
        t = lit_text(a)
        if t is not None and "=" in t and not t.startswith(("/", ".")):
            continue
        c.write(a) if inplace else c.read(a)
    return None


def sed_unsafe(script: str, execs: list[str] | None = None) -> bool:
    """Whether a sed script may run commands or write files (``e``, ``w``, ``r``, ``s///w|e``).

    Follows the command grammar of GNU sed(1); anything not understood counts as unsafe.
    ``execs`` (when given) receives the static command text the script runs: the text of an
    ``e command``, and the replacement of an ``s///e`` (run as a command).
    """
    i, n = 0, len(script)
    unsafe = False
    while i < n:
        ch = script[i]
        if ch in " \t\n;!{}":
            i += 1
            continue
        if ch in "0123456789$,~+":
            i += 1
            continue
        if ch == "/" or (ch == "\\" and i + 1 < n):
            delim = "/" if ch == "/" else script[i + 1]
            i = _skip_delimited(script, i + (1 if ch == "/" else 2), delim)
            if i < 0:
                return True
            while i < n and script[i] in "IM":
                i += 1
            continue
        if ch == "#" or ch in "aic":
            j = script.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if ch == "e":
            j = script.find("\n", i)
            j = n if j < 0 else j
            if execs is not None and script[i + 1:j].strip():
                execs.append(script[i + 1:j].strip())
            unsafe = True
            i = j + 1
            continue
        if ch in ":btT":
            j = i + 1
            while j < n and script[j] not in ";\n}":
                j += 1
            i = j
            continue
        if ch in "sy":
            if i + 1 >= n:
                return True
            delim = script[i + 1]
            j = _skip_delimited(script, i + 2, delim)
            if j < 0:
                return True
            k = _skip_delimited(script, j, delim)
            if k < 0:
                return True
            replacement = script[j:k - 1]
            j = k
            while j < n and script[j] not in ";\n}":
                if ch == "s" and script[j] in "we":
                    unsafe = True
                    if script[j] == "e" and execs is not None:
                        execs.append(replacement.replace("\\" + delim, delim))
                    if script[j] == "w":
                        break
                j += 1
            i = j
            if i < n and script[i] not in ";\n}":
                return True
            continue
        if ch in "=dDgGhHlnNpPqQxzF":
            i += 1
            continue
        return True  # r, R, w, W, v and anything unknown
    return unsafe


def _skip_delimited(s: str, i: int, delim: str) -> int:
    n = len(s)
    while i < n:
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == delim:
            return i + 1
        if s[i] == "\n":
            return -1
        i += 1
    return -1


@handles("sed", "gsed")
def _sed(c: Call):
    p = parse_opts(c.args, "efl", {"--expression", "--file", "--line-length"})
    scripts = p.values("-e", "--expression")
    ops = p.operands
    files = p.values("-f", "--file")
    for f in files:
        c.read(f)
    if files:
        c.exact("sed runs a script file that may write or run commands")
    if not scripts and not files:
        if not ops:
            return None
        scripts, ops = [ops[0]], ops[1:]
    for s in scripts:
        t = lit_text(s)
        execs: list[str] = []
        if t is None:
            c.exact("sed runs a script from a variable")
        elif sed_unsafe(t, execs):
            c.exact("the sed script may write files or run commands (e, w, r)")
        for text in execs:
            probe_text(c.ctx, text, c.cwds, "a command a sed script runs")
    inplace = p.has("-i", "--in-place") or any(f.startswith("-i") or f.startswith("--in-place") for f, _ in p.opts)
    for a in ops:
        c.write(a) if inplace else c.read(a)
    return None


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


def _npm_like(c: Call, tool: str):
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
        c.ctx.ask(key, f"{tool} {sub} installs packages from the network")
        c.project(f"{tool} {sub}")
        return None
    if sub in _NPM_NET:
        c.ctx.ask(f"Bash:net:{tool}:{sub}", f"{tool} {sub} uses the network")
        return None
    if tool in ("yarn", "pnpm", "bun") and not sub.startswith("-"):
        if sub in _DEV_SCRIPTS:
            c.action(f"serve:{tool} {sub}", f"{tool} {sub} starts a development server")
            return None
        c.project(f"{tool} {sub} runs a project script")
        return None
    c.exact(f"{tool} {sub} is not a subcommand the policy knows")
    return None


handles("npm")(lambda c: _npm_like(c, "npm"))
handles("yarn")(lambda c: _npm_like(c, "yarn"))
handles("pnpm")(lambda c: _npm_like(c, "pnpm"))


@handles("npx", "bunx", "pnpx")
def _npx(c: Call):
    """A package runner: the command it runs is classified like one typed directly; a package
    that is not installed in the worktree's ``node_modules/.bin`` may be downloaded (asks)."""
    p = parse_opts(c.args, "pc", {"--package", "--call", "-p", "-c"}, stop_at_operand=True)
    for v in p.values("-c", "--call"):
        if v.kind != LIT:
            c.exact("npx -c runs a command from a variable")
        else:
            run_text(c.ctx, v.text, c.cwds, c.stdin, "npx -c")
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
    c.ctx.ask(f"Bash:net:npx:{tool}", f"npx {tool} is not installed in the worktree and may be downloaded")
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
        c.ctx.ask(package_key(c, "pip", sub, "pip", both, q.operands), f"pip {sub} installs packages from the network")
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
        c.ctx.ask(package_key(c, c.name, sub, "pip", both, ops), f"{c.name} {sub} installs or changes packages")
        c.project(f"{c.name} {sub}")
        return None
    if sub in ("publish", "upload"):
        c.ctx.ask(f"Bash:net:{c.name}:{sub}", f"{c.name} {sub} uploads a package")
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
    c.ctx.ask(f"Bash:net:{runner}:{tool}", f"{runner} runs a tool that may be downloaded")
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
        c.ctx.ask(package_key(c, "gem", canon, "gem", q, q.operands), f"gem {canon} installs gems from the network")
        c.project(f"gem {canon}")
        return None
    if sub in ("search", "query", "fetch", "push", "owner", "yank", "signin", "signout", "sources"):
        c.ctx.ask(f"Bash:net:gem:{sub}", f"gem {sub} uses the network")
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
                  f"cargo {sub} changes or downloads dependencies")
        c.project(f"cargo {sub}")
        return None
    if sub in ("publish", "login", "logout", "owner", "yank", "search", "info"):
        c.ctx.ask(f"Bash:net:cargo:{sub}", f"cargo {sub} uses the network")
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
        c.action(f"go mod {what}", f"go mod {what} downloads or changes dependencies")
        c.mutate("go mod")
        return None
    if sub in ("get", "install"):
        q = parse_opts(rest, "", VALUE_OPTS["go"], long_single_dash=True)
        c.ctx.ask(package_key(c, "go", sub, "go", q, q.operands), f"go {sub} downloads or installs packages")
        c.project(f"go {sub}")
        return None
    if sub == "work":
        c.action(f"go {sub}", f"go {sub} changes the workspace file")
        c.project(f"go {sub}")
        return None
    c.exact(f"go {sub} is not a subcommand the policy knows")
    return None
