"""Secrets in added lines, found with Yelp's ``detect-secrets`` plugins (pure, no I/O).

Why ``detect-secrets``: it is the well-kept, widely used scanner whose plugins know the shapes of
the common keys and tokens (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, npm, PyPI, SendGrid,
Twilio, JWTs, private-key armour, basic-auth URLs ...), measures Shannon entropy of quoted
strings (base64 over 4.5 bits, hex over 3.0 bits per character) and finds ``password = "..."``
style assignments in many languages; its heuristic filters drop UUIDs, sequential strings,
templated values and indirect references. The plugins are called line by line
(``BasePlugin.analyze_line``); nothing is verified over the network (the verification filter is
not enabled) and ``IPPublicDetector`` is left out (an address is not a credential).

Calling every plugin on every line costs about 0.4 ms a line (the keyword detector alone
0.17 ms), too slow for a 5,000-file diff, so each plugin group runs only on lines that pass a
cheap gate:

* the keyword detector: a keyword (``key``, ``pass``, ``pwd``, ``secret``) and ``=`` or ``:``,
  plus a quote in the languages where the detector itself requires a quoted value;
* the known shapes and the entropy plugins: a token-like run of 20 or more characters that holds
  a digit and is not a plain ``snake_case``/``dotted.name``/``lower/case/path`` identifier, or one of the literal
  markers ``BEGIN``, ``PuTTY``, ``://user:pass@``, ``AccountKey=``, ``AKC``/``AP`` (Artifactory's
  shorter keys).

Every shape in the set (AWS 20 characters, GitHub 40, Slack, Stripe, JWT, Twilio 34 ...) is a
run of at least 20 such characters with a digit; a base64 string needs 23 characters to pass the
4.5-bit entropy limit. A hex string of 9 to 19 characters can pass the 3.0-bit hex limit and is
the one shape the gate skips (such short hex strings are ids far more often than keys).

Values that are placeholders (``example``, ``placeholder``, ``changeme``, ``<your-key>``,
``${VAR}``, ``xxxx`` ...) are not reported, nor is AWS's documented example key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

from protocol.risk import RiskSeverity

_KEYWORDS = re.compile("key|pass|pwd|secret|contras")
"""The keyword detector's keywords, searched in lower-cased text (faster than ``(?i)``)."""
_UNQUOTED_TYPES = re.compile(r"(?:^|/)(?:\.[^/]*|[^/.]+|[^/]*\.(?:ya?ml|ini|cfg|conf|properties|env|toml|txt|sh|bash|zsh|ps1|tf|tfvars))$")
_RUN = re.compile(r"[A-Za-z0-9+/=_\-.]{20,}")
_DIGIT = re.compile(r"\d")
_IDENTIFIER = re.compile(r"[a-z0-9]+(?:[_./][a-z0-9]+)+|[A-Z0-9]+(?:_[A-Z0-9]+)+|[A-Za-z][a-z0-9]*(?:[._][A-Za-z][a-z0-9]*)+")
_BASIC_AUTH = re.compile(r"://[^\s/:@]+:[^\s/@]+@")
_ARTIFACTORY = re.compile(r"\bA(?:KC|P[\dA-F])[a-zA-Z0-9]{8,}")
_PLACEHOLDER = re.compile(
    r"(?i)example|placeholder|dummy|changeme|change[_-]me|redacted|sample|your[_-]?(?:api|secret|token|key|pass)"
    r"|^(?:pass|password|passwd|pwd|secret|token|key|apikey|api_key|changeit|hunter2|admin|root|user)$"
    r"|^<.*>$|^\$\{.*\}$|^\{\{.*\}\}$|^%\(.*\)s$|xxxx|\*\*\*\*|^fake|[_-]fake|not[_-]?a[_-]?real|^test[_-]?(?:key|secret|token|password)"
)
_NO_ENTROPY_FILES = re.compile(
    r"(?:^|/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Pipfile\.lock|uv\.lock"
    r"|Cargo\.lock|go\.sum|Gemfile\.lock|composer\.lock|[^/]*\.min\.(?:js|css)|[^/]*\.svg)$"
)

KNOWN_SHAPE_TYPES = frozenset({
    "Artifactory Credentials", "AWS Access Key", "Azure Storage Account access key", "Basic Auth Credentials",
    "Cloudant Credentials", "Discord Bot Token", "GitHub Token", "GitLab Token", "IBM Cloud IAM Key",
    "IBM COS HMAC Credentials", "JSON Web Token", "Mailchimp Access Key", "NPM tokens", "OpenAI Token",
    "Private Key", "PyPI upload token", "SendGrid API Key", "Slack Token", "SoftLayer Credentials",
    "Square OAuth Secret", "Stripe Access Key", "Telegram Bot Token", "Twilio API Key",
})
"""detect-secrets types that are a well-known credential shape (critical)."""


@dataclass(frozen=True)
class SecretHit:
    """One secret found in one added line."""

    line: int
    """The line number in the new file."""
    kind: str
    """The detect-secrets type (``AWS Access Key``, ``Secret Keyword`` ...)."""
    severity: RiskSeverity
    prefix: str
    """At most the first 4 characters of the value (never the value)."""


@lru_cache(maxsize=1)
def _plugins() -> tuple[list, list, list]:
    """(keyword plugins, entropy plugins, shape plugins), built once."""
    # (detect-secrets takes ~0.15 s to import: loaded at the first scan, not at start)
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import BasePlugin

    mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    keyword, entropy, shapes = [], [], []
    for secret_type, cls in sorted(mapping.items()):
        if cls.__name__ == "IPPublicDetector":
            continue
        plugin = cls()
        if cls.__name__ == "KeywordDetector":
            keyword.append(plugin)
        elif "High Entropy" in secret_type:
            entropy.append(plugin)
        else:
            shapes.append(plugin)
    return keyword, entropy, shapes


@lru_cache(maxsize=1)
def _filters() -> ModuleType:
    from detect_secrets.filters import heuristic as h  # (detect-secrets: loaded at the first scan, as above)

    return h


def _filtered(value: str, line: str, plugin: object) -> bool:
    """True when ``value`` is not worth reporting (placeholder, UUID, template, reference ...)."""
    h = _filters()
    if _PLACEHOLDER.search(value) or "AKIAIOSFODNN7EXAMPLE" in value:
        return True
    if len(value) >= 8 and len(set(value)) <= 3:  # "aaaaaaaa", "0000-0000"
        return True
    return bool(
        h.is_sequential_string(value) or h.is_potential_uuid(value) or h.is_templated_secret(value)
        or h.is_prefixed_with_dollar_sign(value) or h.is_indirect_reference(line) or h.is_likely_id_string(value, line, plugin)
    )


def _token_gate(text: str) -> bool:
    if "BEGIN" in text or "PuTTY" in text or "AccountKey=" in text or (("AKC" in text or "AP" in text) and _ARTIFACTORY.search(text)):
        return True
    if "@" in text and "://" in text and _BASIC_AUTH.search(text):
        return True
    for m in _RUN.finditer(text):
        run = m.group().strip(".-=/")
        if len(run) >= 20 and _DIGIT.search(run) and not _IDENTIFIER.fullmatch(run):
            return True
    return False


def scan_lines(path: str, lines: Iterable[tuple[int, str]]) -> Iterator[SecretHit]:
    """Yield the secrets in ``lines`` (``(line number, text)`` pairs) of the file ``path``.

    At most one hit per line (the most severe). Severity: a well-known key or token shape is
    ``critical``, a ``password = "..."``-style assignment is ``critical`` (a credential), a
    high-entropy string alone is ``high``.
    """
    keyword, entropy, shapes = _plugins()
    entropy_ok = _NO_ENTROPY_FILES.search(path) is None
    quotes = _UNQUOTED_TYPES.search(path) is None
    lines = [(n, t if len(t) <= 4000 else t[:4000]) for n, t in lines]  # minified/generated: cut
    whole = "\n".join(t for _, t in lines)  # the gates first run once on the file's added text
    low_whole = whole.lower()
    maybe_token = _token_gate(whole)
    maybe_keyword = _KEYWORDS.search(low_whole) is not None
    if not maybe_token and not maybe_keyword:
        return
    for number, text in lines:
        token = maybe_token and _token_gate(text)
        best: SecretHit | None = None
        groups = []
        if token:
            groups.append(shapes)
        if maybe_keyword and _KEYWORDS.search(text.lower()) and ("=" in text or ":" in text or "<-" in text) \
                and (not quotes or "'" in text or '"' in text or "`" in text):
            groups.append(keyword)
        if token and entropy_ok:
            groups.append(entropy)
        for group in groups:
            for plugin in group:
                for found in plugin.analyze_line(filename=path, line=text, line_number=number):
                    value = found.secret_value or ""
                    if found.type != "Private Key" and _filtered(value, text, plugin):
                        continue
                    severity: RiskSeverity = "critical" if (found.type in KNOWN_SHAPE_TYPES or found.type == "Secret Keyword") else "high"
                    if best is None or (severity == "critical" and best.severity != "critical"):
                        best = SecretHit(number, found.type, severity, value[:4])
            if best is not None and best.severity == "critical":
                break
        if best is not None:
            yield best
