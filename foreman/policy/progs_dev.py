"""Development tools, builds, dev servers and interpreters (package managers: :mod:`.progs_pkg`;
awk and sed: :mod:`.progs_text`)."""

from __future__ import annotations

from .dangers import ask_publish, code_key_material, publishing_target
from .opts import lit_text, parse_opts
from .progs_pkg import BUN_PACKAGE, bun_package, npm_like
from .registry import HANDLERS, Call, handles
from .secrets import key_material
from .walker import probe_text
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
        t = a.value
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
        elif publishing_target(t):
            ask_publish(c, c.name, t)
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
            cwds = tuple(c.ctx.resolve(x, v.value) for x in cwds)
    if p.has("--eval"):
        c.exact("make --eval runs make code given on the command line")
    for v in p.values("-f", "--file", "--makefile"):
        if c.run(v) != "in":
            c.exact("make -f runs a Makefile from outside the worktree")
    if not c.ctx.cwds_inside(cwds):
        c.exact("make runs a Makefile outside the worktree")
    c.mutate("make runs the project's build")
    runner = " ".join([c.name, *(f"-C {lit_text(v)}" for v in p.values("-C", "--directory") if lit_text(v))])
    for a in p.operands:
        t = lit_text(a)
        if t is None:
            c.exact("make gets a target or variable from a variable")
        elif "=" in t:
            name, _, val = t.partition("=")
            if name in ("SHELL", "MAKE", "CC", "CXX") or val.startswith(("/", "~", "..")):
                c.exact(f"make {name}= overrides a program or points outside")
        elif publishing_target(t):
            ask_publish(c, runner, t)
    return None


@handles("just")
def _just(c: Call):
    """just: recipes are commands the policy cannot see; a recipe named like a publish asks for
    its own key (:func:`.dangers.ask_publish`), any other call asks for the exact command."""
    p = parse_opts(c.args, "df", {"--justfile", "--working-directory", "--set", "--shell", "--shell-arg",
                                  "--dotenv-filename", "--dotenv-path", "--chooser", "--command"})
    publishing = [t for t in (lit_text(a) for a in p.operands) if t and "=" not in t and publishing_target(t)]
    for t in publishing:
        ask_publish(c, "just", t)
    if p.opts or not p.operands or len(publishing) != len(p.operands):
        c.exact("just runs recipes the policy does not know")
    c.mutate("just runs the project's recipes")
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
    """Inline code asks for the exact command; a ``git push`` visible in its strings is refused,
    and so is key material its text names (:func:`.dangers.code_key_material`) or that the
    command hands it as an argument (``python3 -c '...' ~/.ssh/id_rsa``)."""
    c.exact(f"{c.name} runs inline {lang} code that may write, spawn programs or use the network")
    c.mutate(f"{c.name} runs inline code")
    for a in c.args:
        if a is code:
            continue
        text = a.text if a.kind == LIT else a.src
        if not text or (a.kind == LIT and text.startswith("/") and c.ctx.inside(c.ctx.realpath(text))):
            continue
        secret = key_material(text)
        if secret:
            c.deny(f"{c.name} hands key material to its inline {lang} code: {secret}")
            break
    if code is not None and code.kind != LIT and code.src:
        # code the shell expands first (``"... $env:USERPROFILE\\.ssh\\id_rsa"``): its text as typed
        secret = code_key_material(code.src)
        if secret:
            c.deny(f"{c.name} code names key material: {secret}")
    if code is None or code.kind != LIT:
        return
    probe_strings(c, code.value, f"{c.name} code")
    if lang in ("cmd", "PowerShell"):  # a command line: ``cmd /c git push``, ``pwsh -c "git push"``
        probe_text(c.ctx, code.value, c.cwds, f"{c.name} code")


def probe_strings(c: Call, code: str, what: str) -> None:
    """Refuse the command if the string literals of ``code`` (any language) spell a git push,
    or if its text names key material (the paths ``cat`` is refused, :mod:`.dangers`)."""
    secret = code_key_material(code, lambda p: c.ctx.inside(c.ctx.realpath(p)))
    if secret:
        c.deny(f"{what} names key material: {secret}")
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
        return HANDLERS["pip"](Call(c.ctx, "pip", rest[1:], c.cwds, c.stdin))
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


#: File names ``bun run`` runs as a file rather than a package.json script.
_JS_FILES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")


def _interp(lang: str, eval_flags: tuple[str, ...], stdin_flag: str = "-"):
    def handler(c: Call):
        args = c.args
        sub = None
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
            if c.name == "bun" and all((lit_text(x) or "").startswith("-") for x in args[:i]):
                if t in BUN_PACKAGE:  # bun's package manager, not a script named "install"
                    return bun_package(Call(c.ctx, "bun", list(args), c.cwds, c.stdin), i)
            if c.name == "bun" and t in ("test", "run") and all((lit_text(x) or "").startswith("-") for x in args[:i]):
                if t == "test":  # the project's test runner: npm test's rule
                    c.project("bun test runs the project's tests")
                    _operand_paths(c, args[i + 1:])
                    return None
                script = lit_text(args[i + 1]) if i + 1 < len(args) else None
                if script is None or not (script.startswith("-") or "/" in script or script.endswith(_JS_FILES)):
                    # ``bun run <script>``: a package.json script, judged like ``npm run <script>``
                    return npm_like(Call(c.ctx, "bun", list(args[i:]), c.cwds, c.stdin), "bun")
            if c.name in ("deno", "bun") and t in ("eval",):
                inline_code(c, args[i + 1] if i + 1 < len(args) else None, lang)
                return None
            if c.name in ("deno", "bun") and t in ("run", "test", "fmt", "lint", "check", "x"):
                if t == "x" and c.name == "bun":
                    return HANDLERS["bunx"](Call(c.ctx, "bunx", args[i + 1:], c.cwds, c.stdin))
                if t == "x":
                    c.exact(f"{c.name} x runs a package that may be downloaded")
                    if i + 1 < len(args):
                        c.sub(args[i + 1:], c.stdin)  # the command it runs, classified too
                    return None
                c.mutate(f"{c.name} {t}")
                sub = t
                continue
            c.run(a)
            for text in c.ctx.written_texts(a, c.cwds):
                probe_strings(c, text, "a script written earlier in the command")
            c.project(f"{c.name} runs a script")
            _operand_paths(c, args[i + 1:])
            return None
        if sub is not None:
            # ``deno test``/``fmt``/``lint``/``check`` with no file: the project's own files
            c.project(f"{c.name} {sub} runs on the project")
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
handles("pwsh", "powershell", "pwsh.exe", "powershell.exe")(
    _interp("PowerShell", ("-c", "-Command", "-command", "-EncodedCommand")))


@handles("cmd", "cmd.exe")
def _cmd(c: Call):
    """``cmd /c <command line>`` (``/k``, ``/s /c``): the rest of the words is a command line for
    cmd.exe, judged as inline code (asks; a push or key material it names, Windows paths
    included, is refused)."""
    for i, a in enumerate(c.args):
        t = (lit_text(a) or "").lower()
        if t in ("/c", "/k", "/r"):
            rest = c.args[i + 1:]
            text = " ".join(x.text if x.kind == LIT and x.text is not None else x.src for x in rest)
            inline_code(c, Arg(LIT, text, False, text), "cmd")
            return None
    c.exact(f"{c.name} starts the Windows command interpreter")
    return None
handles("tclsh", "wish")(_interp("Tcl", ()))
