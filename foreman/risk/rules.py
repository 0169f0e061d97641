"""What a changed path, mode or added line means for a merge (pure tables and matchers).

Sources of the rules: npm's lifecycle scripts that run on ``npm install`` (``preinstall``,
``install``, ``postinstall``, ``prepare``, and ``prepublish``, docs.npmjs.com "scripts");
setuptools' ``cmdclass`` and PEP 517/518's ``[build-system]`` table (code run to build or
install a Python package); Cargo's ``build.rs``; git hooks as installed by husky, lefthook,
pre-commit and ``core.hooksPath`` folders; the CI systems' documented file locations.
"""

from __future__ import annotations

import posixpath
import re

SECRET_FILE = re.compile(
    r"(?:^|/)(?:id_(?:rsa|dsa|ecdsa|ed25519)|[^/]+\.(?:pem|key|p12|pfx|jks|keystore|ppk|asc)|\.netrc|\.git-credentials"
    r"|credentials\.json|service[-_]account[^/]*\.json)$"
)
"""Files that hold a private key or credentials by their name (critical when added or changed)."""
ENV_FILE = re.compile(r"(?:^|/)\.env(?:\.[A-Za-z0-9_-]+)?$")
ENV_TEMPLATE = re.compile(r"(?:^|/)\.env\.(?:example|sample|template|dist|defaults?)$")
PUBLIC_KEY = re.compile(r"\.pub$|(?:^|/)[^/]*public[^/]*\.(?:pem|key|asc)$")

PACKAGE_CONFIG = re.compile(r"(?:^|/)(?:\.npmrc|\.yarnrc(?:\.yml)?|\.pypirc|pip\.conf|\.pip/pip\.conf)$")
PACKAGE_CONFIG_CRITICAL = re.compile(r"(?i)_auth|token|password|registry|index-url|ignore-scripts\s*=\s*false|script-shell")

NPM_HOOK = re.compile(r'^\s*"(preinstall|install|postinstall|prepare|prepublish|preprepare|postprepare)"\s*:')
PY_BUILD_HOOK = re.compile(r"\bcmdclass\b|^\s*\[build-system\]|^\s*build-backend\s*=|^\s*requires\s*=|^\s*\[tool\.setuptools\.cmdclass\]"
                           r"|^\s*backend-path\s*=")
_GIT_HOOK_NAMES = ("applypatch-msg|pre-applypatch|post-applypatch|pre-commit|pre-merge-commit|prepare-commit-msg|commit-msg"
                   "|post-commit|pre-rebase|post-checkout|post-merge|pre-push|pre-receive|update|proc-receive|post-receive"
                   "|post-update|reference-transaction|push-to-checkout|pre-auto-gc|post-rewrite|sendemail-validate"
                   "|fsmonitor-watchman|p4-[a-z-]+")
GIT_HOOK_PATH = re.compile(r"(?:^|/)(?:\.husky|\.githooks|\.git-hooks|githooks|git-hooks)/[^/]+$"
                           rf"|(?:^|/)hooks/(?:{_GIT_HOOK_NAMES})(?:\.sh)?$")
"""A git hook script (githooks(5) names, or a hooks folder meant for ``core.hooksPath``)."""
HOOK_MANAGER_CONFIG = re.compile(r"(?:^|/)(?:\.?lefthook(?:-local)?\.ya?ml|\.pre-commit-config\.yaml|\.pre-commit-hooks\.yaml)$")
"""Hook managers' configuration (runs once the manager is installed)."""
HOOKS_PATH_SETTING = re.compile(r"core\.hooksPath|git config[^\n]*hooks", re.I)

CI_PATH = re.compile(
    r"^(?:\.github/workflows/[^/]+\.ya?ml|\.github/actions/.+|action\.ya?ml|\.gitlab-ci\.yml|\.gitlab/ci/.+|\.circleci/.+"
    r"|Jenkinsfile[^/]*|\.travis\.yml|azure-pipelines\.ya?ml|\.azure-pipelines/.+|\.drone\.yml|bitbucket-pipelines\.yml"
    r"|\.buildkite/.+|appveyor\.yml|\.appveyor\.yml|cloudbuild\.ya?ml|\.woodpecker(?:\.ya?ml|/.+)|\.ci/.+|\.github/dependabot\.yml"
    r"|\.cirrus\.yml|codefresh\.yml|\.semaphore/.+|tox\.ini|noxfile\.py|Taskfile\.ya?ml)$"
)

LOCK_FILES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "Pipfile.lock", "uv.lock",
    "pdm.lock", "Cargo.lock", "go.sum", "Gemfile.lock", "composer.lock", "mix.lock", "pubspec.lock", "Podfile.lock",
    "packages.lock.json", "gradle.lockfile", "flake.lock",
})
MANIFESTS = frozenset({
    "package.json", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "Cargo.toml", "go.mod", "Gemfile", "composer.json",
    "pom.xml", "build.gradle", "build.gradle.kts", "mix.exs", "pubspec.yaml", "Podfile", "environment.yml", "flake.nix",
})
REQUIREMENTS = re.compile(r"(?:^|/)(?:requirements[^/]*\.(?:txt|in)|constraints[^/]*\.txt)$")

BINARY_EXEC = re.compile(r"\.(?:exe|dll|so|dylib|jar|war|class|pyc|pyd|whl|egg|bin|msi|deb|rpm|apk|o|a)$", re.I)

# one dependency name per added line, by manifest
_PKG_JSON_DEP = re.compile(r'^\s*"(@?[A-Za-z0-9][\w.\-/]*)"\s*:\s*"([~^<>=*]|\d|npm:|git|https?:|file:|link:|workspace:|latest|next)')
_PKG_JSON_NOT_DEP = frozenset({"name", "version", "description", "main", "module", "types", "license", "author", "homepage",
                               "type", "private", "node", "npm", "engines", "packageManager", "browser", "bin", "typings"})
_PY_REQ = re.compile(r"""^\s*["']?([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?\s*(?:[<>=!~]=?|@|;|["'],?\s*$|$)""")
_TOML_DEP = re.compile(r'^\s*([A-Za-z0-9][\w.\-]*)\s*=\s*(?:"[^"]*\d|\{)')
_GO_REQ = re.compile(r"^\s*(?:require\s+)?([a-z0-9.\-]+\.[a-z]{2,}/[^\s]+)\s+v\d")
_GEM = re.compile(r"""^\s*gem\s+["']([^"']+)["']""")
_TOML_NOT_DEP = frozenset({"name", "version", "description", "edition", "license", "readme", "authors", "requires-python",
                           "build-backend", "python", "rust-version", "homepage", "repository", "documentation"})


def basename(path: str) -> str:
    """The last path segment."""
    return path.rsplit("/", 1)[-1]


def dependency_name(path: str, text: str) -> str | None:
    """The dependency an added manifest line names, or None.

    Args:
        path: the manifest's repository-relative path.
        text: the added line.
    """
    name = basename(path)
    stripped = text.strip()
    if not stripped or stripped.startswith(("#", "//", "-", "[")):
        return None
    m = None
    if name in ("package.json", "composer.json"):
        m = _PKG_JSON_DEP.match(text)
        if m and m[1] in _PKG_JSON_NOT_DEP:
            return None
    elif REQUIREMENTS.search(path):
        m = _PY_REQ.match(text)
    elif name in ("pyproject.toml", "setup.py", "setup.cfg"):
        m = _PY_REQ.match(text) if stripped[:1] in ("'", '"') else None
        if m is None and name == "pyproject.toml":
            m = _TOML_DEP.match(text)
            if m and m[1] in _TOML_NOT_DEP:
                return None
    elif name in ("Cargo.toml", "Pipfile"):
        m = _TOML_DEP.match(text)
        if m and m[1] in _TOML_NOT_DEP:
            return None
    elif name == "go.mod":
        m = _GO_REQ.match(text)
    elif name == "Gemfile":
        m = _GEM.match(text)
    return m[1] if m else None


def is_manifest(path: str) -> bool:
    """True for a dependency manifest (``package.json``, ``requirements*.txt`` ...)."""
    return basename(path) in MANIFESTS or REQUIREMENTS.search(path) is not None


def is_lock_file(path: str) -> bool:
    """True for a dependency lock file."""
    return basename(path) in LOCK_FILES


def symlink_escapes(path: str, target: str) -> bool:
    """True when the symlink at ``path`` points outside the repository (absolute, ``~``, or
    ``..`` past the root), by lexical resolution as git stores the target."""
    if target.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", target):
        return True
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return joined == ".." or joined.startswith("../")


def in_area(path: str, area: list[str]) -> bool:
    """True when ``path`` is one of ``area`` or below one of its folders (``a/`` or ``a``)."""
    for prefix in area:
        p = prefix.strip("/")
        if not p or path == p or path.startswith(p + "/"):
            return True
    return False


_PATHISH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]*|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|rb|java|kt|c|h|cpp|md|toml|json|ya?ml|txt|cfg|ini|sh|css|html))(?![\w/])")


def area_from_text(text: str) -> list[str]:
    """The files and folders a task's title/description names (``notes/tags.py`` -> ``notes/``
    and ``notes/tags.py``); empty when it names none (then no "outside the area" finding)."""
    out: list[str] = []
    for m in _PATHISH.finditer(text):
        token = m[1].strip(".")
        if not token or "://" in text[max(0, m.start() - 3):m.start() + 3] or token.startswith("."):
            continue
        out.append(token)
        if "/" in token.rstrip("/"):
            out.append(token.rsplit("/", 1)[0] + "/")
    return sorted(set(out))
