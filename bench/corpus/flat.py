"""Corpus shape "flat": two modules at the top of the repository, tested with unittest.

``python flat.py DIR`` writes the repository into DIR (a git repository, one commit on main).
"""

from __future__ import annotations

from _repo import main

README = '''
# texttools

Small text and number formatting helpers shared by our scripts. No dependencies.

- `textutil.py`: slugs, title case, word counts, truncation
- `numfmt.py`: byte sizes, percentages, ordinals

Run the tests with `python -m unittest` (or `python -m pytest`).
'''

TEXTUTIL = '''
"""Text helpers: slugs, title case, word counts and truncation."""

import re
import unicodedata

SMALL_WORDS = {"a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to"}


def slugify(text):
    """A lower-case ASCII slug for text: 'Hello, World!' -> 'hello-world'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return "-".join(re.findall(r"[a-z0-9]+", ascii_text.lower()))


def word_count(text):
    """How many words text has (a word is a run of letters, digits and apostrophes)."""
    return len(re.findall(r"[\\w']+", text))


def title_case(text):
    """Capitalise each word, keeping small words ('of', 'the', ...) lower-case inside the title.

    The first and the last word are always capitalised.
    """
    words = re.findall(r"[\\w']+", text)
    out = []
    for i, word in enumerate(words):
        if 0 < i < len(words) - 1 and word.lower() in SMALL_WORDS:
            out.append(word.lower())
        else:
            out.append(word[:1].upper() + word[1:].lower())
    return " ".join(out)


def truncate(text, width, suffix="..."):
    """Shorten text to at most width characters, ending with suffix when it was cut."""
    if len(text) <= width:
        return text
    return text[:width] + suffix
'''

NUMFMT = '''
"""Number formatting: byte sizes, percentages and ordinals."""


def human_size(n):
    """A byte count as a short string: 512 -> '512 B', 1536 -> '1.5 KB'."""
    if n < 1024:
        return f"{n} B"
    elif n < 1024 ** 2:
        return f"{n / 1024:.1f} KB"
    elif n < 1024 ** 3:
        return f"{n / 1024 ** 2:.1f} MB"
    elif n < 1024 ** 4:
        return f"{n / 1024 ** 3:.1f} GB"
    return f"{n / 1024 ** 4:.1f} TB"


def percent(part, whole):
    """part of whole as a percentage with one decimal: percent(1, 4) -> '25.0%'."""
    return f"{100 * part / whole:.1f}%"


def ordinal(n):
    """1 -> '1st', 2 -> '2nd', 3 -> '3rd', 4 -> '4th'."""
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
'''

TEST_TEXTUTIL = '''
import unittest

from textutil import slugify, title_case, truncate, word_count


class SlugifyTest(unittest.TestCase):
    def test_punctuation_and_case(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_accents_are_dropped(self):
        self.assertEqual(slugify("Café crème"), "cafe-creme")


class WordsTest(unittest.TestCase):
    def test_word_count(self):
        self.assertEqual(word_count("one two  three"), 3)
        self.assertEqual(word_count("don't stop"), 2)

    def test_title_case(self):
        self.assertEqual(title_case("hello world"), "Hello World")


class TruncateTest(unittest.TestCase):
    def test_short_text_is_kept(self):
        self.assertEqual(truncate("short", 10), "short")


if __name__ == "__main__":
    unittest.main()
'''

TEST_NUMFMT = '''
import unittest

from numfmt import human_size, ordinal, percent


class HumanSizeTest(unittest.TestCase):
    def test_bytes(self):
        self.assertEqual(human_size(512), "512 B")

    def test_larger_units(self):
        self.assertEqual(human_size(1536), "1.5 KB")
        self.assertEqual(human_size(5 * 1024 ** 3), "5.0 GB")


class PercentTest(unittest.TestCase):
    def test_one_decimal(self):
        self.assertEqual(percent(1, 4), "25.0%")
        self.assertEqual(percent(1, 3), "33.3%")


class OrdinalTest(unittest.TestCase):
    def test_suffixes(self):
        self.assertEqual([ordinal(n) for n in (1, 2, 3, 4, 21)], ["1st", "2nd", "3rd", "4th", "21st"])


if __name__ == "__main__":
    unittest.main()
'''

FILES = {"README.md": README, "textutil.py": TEXTUTIL, "numfmt.py": NUMFMT,
         "test_textutil.py": TEST_TEXTUTIL, "test_numfmt.py": TEST_NUMFMT}

if __name__ == "__main__":
    main(FILES, "texttools: text and number helpers with their tests")
