"""Line endings and indentation of source text (pure): what :mod:`.placement` keeps of a file."""

from __future__ import annotations


def newline_of(text: str) -> str:
    """Return ``"\\r\\n"`` when most of ``text``'s line ends are CRLF, else ``"\\n"``."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def with_newline(text: str, newline: str) -> str:
    """Return ``text`` with every line end (LF or CRLF) written as ``newline``."""
    plain = text.replace("\r\n", "\n")
    return plain.replace("\n", newline) if newline != "\n" else plain


def indent_unit(lines: list[str]) -> str:
    """The file's indentation unit: a tab, or the smallest run of leading spaces (default 4)."""
    widths = []
    for line in lines:
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#") or len(stripped) == len(line):
            continue
        lead = line[:len(line) - len(stripped)]
        if lead.startswith("\t"):
            return "\t"
        widths.append(len(lead))
    return " " * (min(widths) if widths else 4)


def reindent(lines: list[str], src: str, dst: str, prefix: str) -> list[str]:
    """Re-indent ``lines`` from unit ``src`` to unit ``dst`` and put ``prefix`` before each."""
    out = []
    for line in lines:
        stripped = line.lstrip()
        if not stripped:
            out.append("")
            continue
        lead = line[:len(line) - len(stripped)]
        if src != dst and src:
            width = len(lead.replace("\t", src)) if src != "\t" else lead.count("\t")
            levels, rest = divmod(width, len(src)) if src != "\t" else (width, 0)
            lead = dst * levels + " " * rest
        out.append(prefix + lead + stripped)
    return out
