"""No module of foreman/ or protocol/ over 500 lines (issue 35 item 4).

A longer module is split along a seam a reader would recognise (a family of programs, a view of
the daemon, a step of a harness), not raised past the limit.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 500


def too_long(limit: int = LIMIT) -> list[str]:
    """``path: N lines`` for each module over ``limit`` lines, longest first."""
    sizes = [(len(path.read_text().splitlines()), path.relative_to(ROOT))
             for top in ("foreman", "protocol") for path in (ROOT / top).rglob("*.py")]
    return [f"{path}: {n} lines" for n, path in sorted(sizes, reverse=True) if n > limit]


def test_no_module_passes_500_lines() -> None:
    found = too_long()
    assert found == [], f"modules over {LIMIT} lines (split them): " + "; ".join(found)


def test_the_check_names_a_long_module() -> None:
    assert any(line.startswith("foreman/") and line.endswith(" lines") for line in too_long(limit=100))
