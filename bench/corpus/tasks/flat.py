"""Tasks on the "flat" shape (flat.py): textutil.py and numfmt.py, tested with unittest."""

from _spec import append, edit, mutant, variant, write

SHAPE = "flat"
REPO = "flat.py"

TASKS = [
    {
        "id": "flat-initials", "split": "dev", "kind": "add-function",
        "goal": """
            Please add a function `initials(name)` to textutil.py that returns the upper-case initials of a
            person's name: one letter per word, words separated by spaces or hyphens.
            For example "Ada Lovelace" gives "AL", "Jean-Luc Picard" gives "JLP", and an empty string gives "".
        """,
        "check": """
            from textutil import initials
            for name, want in [("Ada Lovelace", "AL"), ("grace  brewster hopper", "GBH"), ("Jean-Luc Picard", "JLP"),
                               ("", ""), ("cher", "C")]:
                assert initials(name) == want, (name, initials(name), want)
        """,
        "solution": [edit("textutil.py", '''
            def truncate(text, width, suffix="..."):''', '''
            def initials(name):
                """Upper-case initials of a name: 'Jean-Luc Picard' -> 'JLP'."""
                return "".join(part[0].upper() for part in re.split(r"[\\s-]+", name) if part)


            def truncate(text, width, suffix="..."):''')],
    },
    {
        "id": "flat-format-duration", "split": "holdout", "kind": "add-function",
        "goal": """
            We print durations in seconds all over the place. Add `format_duration(seconds)` to numfmt.py: it
            takes a whole number of seconds and returns hours, minutes and seconds like "1h 2m 5s". Parts that
            are zero are left out ("1h 5s", "2m"), hours are the largest unit (90000 seconds is "25h"), and 0
            gives "0s".
        """,
        "check": """
            from numfmt import format_duration as f
            for secs, want in [(3725, "1h 2m 5s"), (59, "59s"), (60, "1m"), (3600, "1h"), (3605, "1h 5s"),
                               (61, "1m 1s"), (0, "0s"), (90000, "25h")]:
                assert f(secs) == want, (secs, f(secs), want)
        """,
        "solution": [edit("numfmt.py", '''
            def ordinal(n):''', '''
            def format_duration(seconds):
                """Seconds as hours, minutes and seconds: 3725 -> '1h 2m 5s', 0 -> '0s'."""
                hours, rest = divmod(seconds, 3600)
                minutes, secs = divmod(rest, 60)
                parts = [f"{v}{u}" for v, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if v]
                return " ".join(parts) or "0s"


            def ordinal(n):''')],
    },
    {
        "id": "flat-ordinal-teens", "split": "dev", "kind": "fix-bug",
        "goal": """
            Bug: ordinal() gets the teens wrong. Our leaderboard shows "11st place", "12nd place" and
            "13rd place":

                >>> numfmt.ordinal(11), numfmt.ordinal(12), numfmt.ordinal(113)
                ('11st', '12nd', '113rd')

            These should be "11th", "12th" and "113th". 1st, 2nd, 3rd, 21st, 22nd etc. are right and must stay so.
        """,
        "check": """
            from numfmt import ordinal
            want = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 10: "10th", 11: "11th", 12: "12th", 13: "13th", 14: "14th",
                    21: "21st", 22: "22nd", 23: "23rd", 101: "101st", 111: "111th", 112: "112th", 113: "113th", 1012: "1012th"}
            for n, w in want.items():
                assert ordinal(n) == w, (n, ordinal(n), w)
        """,
        "solution": [edit("numfmt.py", '''
                suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")''', '''
                suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")''')],
    },
    {
        "id": "flat-truncate-width", "split": "holdout", "kind": "fix-bug",
        "goal": """
            truncate() returns strings longer than the width it is given, which breaks our fixed-width table:

                >>> textutil.truncate("hello world", 8)
                'hello wo...'

            That is 11 characters. The result, suffix included, must never be longer than width: as much of the
            text as fits, then the suffix, so this call should give 'hello...'. Text that already fits must still
            come back unchanged.
        """,
        "check": """
            from textutil import truncate
            assert truncate("hello world", 8) == "hello...", truncate("hello world", 8)
            assert truncate("abcdefghij", 6) == "abc...", truncate("abcdefghij", 6)
            assert truncate("abcdefghij", 7, suffix="~") == "abcdef~", truncate("abcdefghij", 7, suffix="~")
            assert truncate("short", 10) == "short" and truncate("exactly10!", 10) == "exactly10!"
        """,
        "solution": [edit("textutil.py", '''
                return text[:width] + suffix''', '''
                return text[:width - len(suffix)] + suffix''')],
    },
    {
        "id": "flat-slug-separator", "split": "dev", "kind": "add-parameter",
        "goal": """
            slugify() always joins words with "-". For file names we need "_" instead. Please add a `separator`
            parameter to slugify (default "-", so existing callers don't change), e.g.
            slugify("Hello, World!", separator="_") == "hello_world".
        """,
        "check": """
            from textutil import slugify
            assert slugify("Hello, World!", separator="_") == "hello_world", slugify("Hello, World!", separator="_")
            assert slugify("Café crème brûlée", separator=".") == "cafe.creme.brulee"
            assert slugify("Hello, World!") == "hello-world" and slugify("one") == "one"
        """,
        "solution": [
            edit("textutil.py", "def slugify(text):", 'def slugify(text, separator="-"):'),
            edit("textutil.py", '''    return "-".join(re.findall''', '''    return separator.join(re.findall'''),
        ],
    },
    {
        "id": "flat-size-precision", "split": "holdout", "kind": "add-parameter",
        "goal": """
            human_size() always shows one decimal ("1.5 KB"). Some reports need more or fewer. Add a
            `precision` parameter (number of decimals, default 1 so nothing changes for current callers):
            human_size(1536, precision=2) should be "1.50 KB" and precision=0 gives "2 KB".
            Plain byte counts below 1 KB stay whole numbers ("100 B") whatever the precision.
        """,
        "check": """
            from numfmt import human_size as h
            cases = [((1536,), {"precision": 2}, "1.50 KB"), ((1536,), {"precision": 0}, "2 KB"), ((1536,), {}, "1.5 KB"),
                     ((100,), {"precision": 2}, "100 B"), ((5 * 1024 ** 3,), {"precision": 3}, "5.000 GB"),
                     ((3 * 1024 ** 4,), {}, "3.0 TB")]
            for args, kw, want in cases:
                assert h(*args, **kw) == want, (args, kw, h(*args, **kw), want)
        """,
        "solution": [
            edit("numfmt.py", "def human_size(n):", "def human_size(n, precision=1):"),
            edit("numfmt.py", '''
                    elif n < 1024 ** 2:
                        return f"{n / 1024:.1f} KB"
                    elif n < 1024 ** 3:
                        return f"{n / 1024 ** 2:.1f} MB"
                    elif n < 1024 ** 4:
                        return f"{n / 1024 ** 3:.1f} GB"
                    return f"{n / 1024 ** 4:.1f} TB"''', '''
                    elif n < 1024 ** 2:
                        return f"{n / 1024:.{precision}f} KB"
                    elif n < 1024 ** 3:
                        return f"{n / 1024 ** 2:.{precision}f} MB"
                    elif n < 1024 ** 4:
                        return f"{n / 1024 ** 3:.{precision}f} GB"
                    return f"{n / 1024 ** 4:.{precision}f} TB"''', indent=4),
        ],
    },
    {
        "id": "flat-size-negative", "split": "dev", "kind": "raise-error",
        "goal": """
            human_size(-5) returns "-5 B", which hides bugs in the code that computed the size. A negative
            size should raise ValueError instead. Zero and positive sizes work as before.
        """,
        "check": """
            from numfmt import human_size
            for bad in (-1, -5, -2048):
                try:
                    human_size(bad)
                except ValueError:
                    pass
                else:
                    raise AssertionError(f"human_size({bad}) raised nothing")
            assert human_size(0) == "0 B" and human_size(1536) == "1.5 KB"
        """,
        "solution": [edit("numfmt.py", '''
                    if n < 1024:
                        return f"{n} B"''', '''
                    if n < 0:
                        raise ValueError(f"size must not be negative: {n}")
                    if n < 1024:
                        return f"{n} B"''', indent=4)],
    },
    {
        "id": "flat-percent-zero", "split": "holdout", "kind": "raise-error",
        "goal": """
            percent(3, 0) blows up with a bare ZeroDivisionError deep in a report. Make percent raise a
            ValueError with a message that mentions the whole being zero (e.g. "whole must not be zero")
            when whole is 0. Other calls keep working as today.
        """,
        "check": """
            from numfmt import percent
            try:
                percent(3, 0)
            except ZeroDivisionError:
                raise AssertionError("still a ZeroDivisionError")
            except ValueError as exc:
                assert "zero" in str(exc).lower() or "0" in str(exc), str(exc)
            else:
                raise AssertionError("percent(3, 0) raised nothing")
            assert percent(1, 4) == "25.0%" and percent(0, 5) == "0.0%"
        """,
        "solution": [edit("numfmt.py", '''
                return f"{100 * part / whole:.1f}%"''', '''
                if whole == 0:
                    raise ValueError("whole must not be zero")
                return f"{100 * part / whole:.1f}%"''', indent=4)],
    },
    {
        "id": "flat-words-helper", "split": "dev", "kind": "refactor",
        "goal": """
            word_count() and title_case() in textutil.py each carry their own copy of the regular expression that
            splits text into words. Please pull it out into one public function `words(text)` that returns the
            list of words (e.g. words("Don't panic, it's 42!") == ["Don't", "panic", "it's", "42"]) and make both
            functions use it. Their behaviour must not change.
        """,
        "check": """
            import textutil
            assert textutil.words("Don't panic, it's 42!") == ["Don't", "panic", "it's", "42"], textutil.words("Don't panic, it's 42!")
            assert textutil.words("") == []
            samples = {"hello world": ("Hello World", 2), "the lord of the rings": ("The Lord of the Rings", 5),
                       "  a tale   of two cities ": ("A Tale of Two Cities", 5), "café au lait": ("Café Au Lait", 3),
                       "rock'n'roll is here to stay": ("Rock'n'roll Is Here to Stay", 5), "": ("", 0)}
            for text, (title, count) in samples.items():
                assert textutil.title_case(text) == title, (text, textutil.title_case(text))
                assert textutil.word_count(text) == count, (text, textutil.word_count(text))
            real = textutil.words
            textutil.words = lambda text: ["x", "y", "z"]
            try:
                assert textutil.word_count("one") == 3, "word_count does not use words()"
                assert textutil.title_case("one") == "X Y Z", "title_case does not use words()"
            finally:
                textutil.words = real
        """,
        "solution": [
            edit("textutil.py", '''
                def word_count(text):
                    """How many words text has (a word is a run of letters, digits and apostrophes)."""
                    return len(re.findall(r"[\\w']+", text))''', '''
                def words(text):
                    """The words of text: runs of letters, digits and apostrophes."""
                    return re.findall(r"[\\w']+", text)


                def word_count(text):
                    """How many words text has (a word is a run of letters, digits and apostrophes)."""
                    return len(words(text))'''),
            edit("textutil.py", '''
                words = re.findall(r"[\\w']+", text)
                out = []
                for i, word in enumerate(words):
                    if 0 < i < len(words) - 1''', '''
                found = words(text)
                out = []
                for i, word in enumerate(found):
                    if 0 < i < len(found) - 1''', indent=4),
        ],
    },
    {
        "id": "flat-size-units-loop", "split": "holdout", "kind": "refactor",
        "goal": """
            human_size() in numfmt.py is a long if/elif chain with one branch per unit. Please rewrite it as a
            loop over a module-level tuple `UNITS = ("B", "KB", "MB", "GB", "TB")`, so adding a unit later means
            adding it to UNITS. The output must stay exactly the same for every size.
        """,
        "check": """
            import numfmt
            assert tuple(numfmt.UNITS) == ("B", "KB", "MB", "GB", "TB"), numfmt.UNITS
            want = {0: "0 B", 1: "1 B", 1023: "1023 B", 1024: "1.0 KB", 1536: "1.5 KB", 1048575: "1024.0 KB",
                    1048576: "1.0 MB", 5 * 1024 ** 3: "5.0 GB", 3 * 1024 ** 4: "3.0 TB", 2000 * 1024 ** 4: "2000.0 TB"}
            for n, w in want.items():
                assert numfmt.human_size(n) == w, (n, numfmt.human_size(n), w)
            real = numfmt.UNITS
            numfmt.UNITS = ("b", "kb", "mb", "gb", "tb")
            try:
                assert numfmt.human_size(2048) == "2.0 kb", "human_size does not read UNITS"
            finally:
                numfmt.UNITS = real
        """,
        "solution": [edit("numfmt.py", '''
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
                    return f"{n / 1024 ** 4:.1f} TB"''', '''
                UNITS = ("B", "KB", "MB", "GB", "TB")


                def human_size(n):
                    """A byte count as a short string: 512 -> '512 B', 1536 -> '1.5 KB'."""
                    if n < 1024:
                        return f"{n} {UNITS[0]}"
                    for power, unit in enumerate(UNITS[1:], 1):
                        if n < 1024 ** (power + 1) or unit == UNITS[-1]:
                            return f"{n / 1024 ** power:.1f} {unit}"''')],
    },
    {
        "id": "flat-title-small-words-test", "split": "dev", "kind": "add-test",
        "goal": """
            title_case() keeps small words like "of", "the" and "and" lower-case inside a title but capitalises
            them as the first or last word ("the lord of the rings" -> "The Lord of the Rings"). Nothing tests
            that; please add a test to test_textutil.py that covers both: a small word inside the title, and a
            small word as the first or last word. Don't change textutil.py.
        """,
        "mutants": [
            mutant("textutil.py", "and word.lower() in SMALL_WORDS", "and word.lower() in ()",
                   "small words inside a title are capitalised"),
            mutant("textutil.py", "if 0 < i < len(words) - 1 and word", "if word",
                   "a small first word stays lower-case"),
        ],
        "solution": [edit("test_textutil.py", '''
                def test_title_case(self):
                    self.assertEqual(title_case("hello world"), "Hello World")''', '''
                def test_title_case(self):
                    self.assertEqual(title_case("hello world"), "Hello World")

                def test_title_case_small_words(self):
                    self.assertEqual(title_case("the lord of the rings"), "The Lord of the Rings")''', indent=4)],
    },
    {
        "id": "flat-size-boundary-test", "split": "holdout", "kind": "add-test",
        "goal": """
            Please add a test for where human_size() switches from bytes to kilobytes: 1023 bytes is still
            "1023 B" and 1024 bytes is "1.0 KB". Put it in test_numfmt.py; numfmt.py itself should not change.
        """,
        "mutants": [
            mutant("numfmt.py", "    if n < 1024:\n", "    if n <= 1024:\n", "1024 bytes are shown as bytes"),
            mutant("numfmt.py", "    if n < 1024:\n", "    if n < 1000:\n", "1000 to 1023 bytes are shown as KB"),
        ],
        "solution": [edit("test_numfmt.py", '''
                def test_bytes(self):
                    self.assertEqual(human_size(512), "512 B")''', '''
                def test_bytes(self):
                    self.assertEqual(human_size(512), "512 B")

                def test_switch_to_kilobytes(self):
                    self.assertEqual(human_size(1023), "1023 B")
                    self.assertEqual(human_size(1024), "1.0 KB")''', indent=4)],
    },
]

TRUNCATE_RETURN = "    return text[:width] + suffix"
SIZE_KB = '''
    elif n < 1024 ** 2:
        return f"{n / 1024:.1f} KB"'''

VARIANTS = {
    "flat-initials": {
        "alternatives": [variant("hyphens replaced, then split", edit("textutil.py", "import re", '''
            import re


            def initials(name):
                return "".join(word[0] for word in name.replace("-", " ").split()).upper()'''))],
        "wrong": [variant("splits on spaces only", edit("textutil.py", "import re", '''
            import re


            def initials(name):
                return "".join(word[0].upper() for word in name.split())'''))],
    },
    "flat-format-duration": {
        "alternatives": [variant("a list built step by step", edit("numfmt.py", "def ordinal(n):", '''
            def format_duration(seconds):
                parts = []
                if seconds >= 3600:
                    parts.append(f"{seconds // 3600}h")
                if seconds % 3600 >= 60:
                    parts.append(f"{seconds % 3600 // 60}m")
                if seconds % 60 or not parts:
                    parts.append(f"{seconds % 60}s")
                return " ".join(parts)


            def ordinal(n):'''))],
        "wrong": [variant("zero parts kept", edit("numfmt.py", "def ordinal(n):", '''
            def format_duration(seconds):
                h, rest = divmod(seconds, 3600)
                m, s = divmod(rest, 60)
                return f"{h}h {m}m {s}s"


            def ordinal(n):'''))],
    },
    "flat-ordinal-teens": {
        "alternatives": [variant("the teens tested first", edit("numfmt.py", '''
            suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")''', '''
            if n % 100 in (11, 12, 13):
                return f"{n}th"
            suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")''', indent=4))],
        "wrong": [variant("only 11 to 13 themselves", edit("numfmt.py", '''
            suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")''', '''
            suffix = "th" if n in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")''', indent=4))],
    },
    "flat-truncate-width": {
        "alternatives": [variant("room computed first", edit("textutil.py", TRUNCATE_RETURN, '''
            room = max(0, width - len(suffix))
            return text[:room] + suffix''', indent=4))],
        "wrong": [variant("the suffix's length taken as 3", edit("textutil.py", TRUNCATE_RETURN,
                                                               "    return text[:width - 3] + suffix"))],
    },
    "flat-slug-separator": {
        "alternatives": [variant("the dashes replaced at the end", edit("textutil.py", '''
            def slugify(text):
                """A lower-case ASCII slug for text: 'Hello, World!' -> 'hello-world'."""
                ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
                return "-".join(re.findall(r"[a-z0-9]+", ascii_text.lower()))''', '''
            def slugify(text, separator="-"):
                ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
                return "-".join(re.findall(r"[a-z0-9]+", ascii_text.lower())).replace("-", separator)'''))],
        "wrong": [variant("the parameter is not used", edit("textutil.py", "def slugify(text):",
                                                          'def slugify(text, separator="-"):'))],
    },
    "flat-size-precision": {
        "alternatives": [variant("a loop with the precision in the format", edit("numfmt.py", '''
            def human_size(n):
                """A byte count as a short string: 512 -> '512 B', 1536 -> '1.5 KB'."""''', '''
            def human_size(n, precision=1):
                if n < 1024:
                    return f"{n} B"
                value = n
                for unit in ("KB", "MB", "GB", "TB"):
                    value /= 1024
                    if value < 1024 or unit == "TB":
                        return f"{value:.{precision}f} {unit}"


            def _old_human_size(n):'''))],
        "wrong": [variant("round() then str(), which drops trailing zeros", edit("numfmt.py", "def human_size(n):",
                                                                           "def human_size(n, precision=1):"),
                          edit("numfmt.py", SIZE_KB, '''
                              elif n < 1024 ** 2:
                                  return f"{round(n / 1024, precision)} KB"''', indent=4))],
    },
    "flat-size-negative": {
        "alternatives": [variant("a guard at the end of the byte branch", edit("numfmt.py", '''
            if n < 1024:
                return f"{n} B"''', '''
            if n < 1024:
                if n < 0:
                    raise ValueError("negative size")
                return f"{n} B"''', indent=4))],
        "wrong": [variant("an assert (AssertionError, and gone under -O)", edit("numfmt.py", '''
            if n < 1024:
                return f"{n} B"''', '''
            assert n >= 0, "negative size"
            if n < 1024:
                return f"{n} B"''', indent=4))],
    },
    "flat-percent-zero": {
        "alternatives": [variant("the ZeroDivisionError translated", edit("numfmt.py", '''
            return f"{100 * part / whole:.1f}%"''', '''
            try:
                return f"{100 * part / whole:.1f}%"
            except ZeroDivisionError:
                raise ValueError("cannot take a percentage of a zero whole") from None''', indent=4))],
        "wrong": [variant("a message that does not say what is wrong", edit("numfmt.py", '''
            return f"{100 * part / whole:.1f}%"''', '''
            if not whole:
                raise ValueError("bad input")
            return f"{100 * part / whole:.1f}%"''', indent=4))],
    },
    "flat-words-helper": {
        "alternatives": [variant("words() defined last, title_case iterating over it", edit("textutil.py", """
            words = re.findall(r"[\\w']+", text)
            out = []
            for i, word in enumerate(words):
                if 0 < i < len(words) - 1""", """
            found = words(text)
            out = []
            for i, word in enumerate(found):
                if 0 < i < len(found) - 1""", indent=4), edit("textutil.py", """
            return len(re.findall(r"[\\w']+", text))""", """
            return sum(1 for _ in words(text))""", indent=4), append("textutil.py", """
            def words(text):
                return re.findall(r"[\\w']+", text)"""))],
        "wrong": [variant("words() added, title_case keeps its own copy", edit("textutil.py", """
            return len(re.findall(r"[\\w']+", text))""", """
            return len(words(text))""", indent=4), append("textutil.py", """
            def words(text):
                return re.findall(r"[\\w']+", text)"""))],
    },
    "flat-size-units-loop": {
        "alternatives": [variant("a loop dividing step by step", edit("numfmt.py", '''
            def human_size(n):
                """A byte count as a short string: 512 -> '512 B', 1536 -> '1.5 KB'."""''', '''
            UNITS = ("B", "KB", "MB", "GB", "TB")


            def human_size(n):
                value, unit = n, UNITS[0]
                for bigger in UNITS[1:]:
                    if value < 1024:
                        break
                    value, unit = value / 1024, bigger
                return f"{value} {unit}" if unit == UNITS[0] else f"{value:.1f} {unit}"


            def _old_human_size(n):'''))],
        "wrong": [variant("UNITS added, the chain kept", edit("numfmt.py", '''
            def human_size(n):''', '''
            UNITS = ("B", "KB", "MB", "GB", "TB")


            def human_size(n):'''))],
    },
    "flat-title-small-words-test": {
        "alternatives": [variant("a pytest function in a new file", write("test_title_case.py", '''
            from textutil import title_case


            def test_small_words():
                assert title_case("a tale of two cities") == "A Tale of Two Cities"
            '''))],
        "wrong": [variant("a small word inside the title only", write("test_title_case.py", '''
            from textutil import title_case


            def test_small_words():
                assert title_case("war and peace") == "War and Peace"
            '''))],
    },
    "flat-size-boundary-test": {
        "alternatives": [variant("a parametrized pytest test in a new file", write("test_boundary.py", '''
            import pytest

            from numfmt import human_size


            @pytest.mark.parametrize("n, text", [(1023, "1023 B"), (1024, "1.0 KB")])
            def test_boundary(n, text):
                assert human_size(n) == text
            '''))],
        "wrong": [variant("a test far from the boundary", write("test_boundary.py", '''
            from numfmt import human_size


            def test_kilobytes():
                assert human_size(2048) == "2.0 KB"
            '''))],
    },
}
