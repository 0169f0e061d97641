"""Tasks on the "cli" shape (cli.py): the ledger command (argparse), tested with unittest."""

from _spec import append, edit, join, mutant, variant, write

SHAPE = "cli"
REPO = "cli.py"

LEDGER = '''
import json, os, subprocess, sys, tempfile
FILE = os.path.join(tempfile.mkdtemp(), "ledger.json")
def ledger(*args):
    run = subprocess.run([sys.executable, "-m", "ledger", "--file", FILE, *args], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr
def entries(*rows):
    with open(FILE, "w") as f:
        json.dump([{"date": d, "amount": a, "category": c, "note": n} for d, a, c, n in rows], f)
def content():
    with open(FILE) as f:
        return f.read()
'''
"""Shared set-up of the checks below: run ``python -m ledger --file FILE ...``, write entries."""

PARSER_END = '''
    total.add_argument("--category", help="only this category")
    return parser'''

TOTAL_BRANCH = '''
    elif args.command == "total":
        entries = book.load(args.file)
        print(f"Total: {book.total(entries, args.category):.2f}")'''

TASKS = [
    {
        "id": "cli-categories", "split": "dev", "kind": "add-function",
        "goal": """
            Add a `categories` command to ledger: `python -m ledger categories` prints, for each category in
            the ledger, one line `<category>: <total>` with the total to two decimals (e.g. `food: 14.75`),
            sorted by category name.
        """,
        "setup": LEDGER, "check": """
            entries(("2026-01-02", 12.5, "food", ""), ("2026-01-03", 30, "travel", "train"), ("2026-01-04", 22.25, "food", ""),
                    ("2026-01-05", 10, "books", ""))
            code, out, err = ledger("categories")
            assert code == 0, err
            assert out.split("\\n")[:3] == ["books: 10.00", "food: 34.75", "travel: 30.00"], out
            assert out.strip().count("\\n") == 2, out
            entries()
            assert ledger("categories")[:2] == (0, ""), ledger("categories")
        """,
        "solution": [
            edit("ledger/cli.py", PARSER_END, '''
                total.add_argument("--category", help="only this category")
                sub.add_parser("categories", help="the total of each category")
                return parser''', indent=4),
            edit("ledger/cli.py", TOTAL_BRANCH, '''
                elif args.command == "total":
                    entries = book.load(args.file)
                    print(f"Total: {book.total(entries, args.category):.2f}")
                elif args.command == "categories":
                    entries = book.load(args.file)
                    for category in sorted({entry.category for entry in entries}):
                        print(f"{category}: {book.total(entries, category):.2f}")''', indent=4),
        ],
    },
    {
        "id": "cli-month", "split": "holdout", "kind": "add-function",
        "goal": """
            I want to see what I spent in a given month. Add a command `python -m ledger month 2026-01` that
            prints `Total for 2026-01: 17.50`: the sum of that month's entries, two decimals (0.00 when the
            month has no entries).
        """,
        "setup": LEDGER, "check": """
            entries(("2026-01-02", 5, "food", ""), ("2026-01-31", 12.5, "travel", ""), ("2026-02-01", 2.5, "food", ""),
                    ("2025-01-15", 100, "rent", ""))
            code, out, err = ledger("month", "2026-01")
            assert code == 0, err
            assert out.strip() == "Total for 2026-01: 17.50", out
            assert ledger("month", "2026-03")[1].strip() == "Total for 2026-03: 0.00"
            assert ledger("month", "2025-01")[1].strip() == "Total for 2025-01: 100.00"
        """,
        "solution": [
            edit("ledger/cli.py", PARSER_END, '''
                total.add_argument("--category", help="only this category")
                month = sub.add_parser("month", help="the total of one month")
                month.add_argument("month", help="YYYY-MM")
                return parser''', indent=4),
            edit("ledger/cli.py", TOTAL_BRANCH, '''
                elif args.command == "total":
                    entries = book.load(args.file)
                    print(f"Total: {book.total(entries, args.category):.2f}")
                elif args.command == "month":
                    entries = [e for e in book.load(args.file) if e.date.startswith(args.month + "-")]
                    print(f"Total for {args.month}: {book.total(entries):.2f}")''', indent=4),
        ],
    },
    {
        "id": "cli-add-date", "split": "dev", "kind": "fix-bug",
        "goal": """
            `--date` on `ledger add` is ignored. I ran

                python -m ledger add 5 food --date 2026-01-03
                python -m ledger list

            and the entry shows today's date instead of 2026-01-03. Without --date it should still use today.
        """,
        "setup": LEDGER, "check": """
            import datetime
            assert ledger("add", "5", "food", "--date", "2026-01-03")[0] == 0
            days = {datetime.date.today().isoformat()}
            assert ledger("add", "7", "books")[0] == 0
            days.add(datetime.date.today().isoformat())  # (a run across midnight)
            code, out, err = ledger("list")
            lines = out.strip().splitlines()
            assert len(lines) == 2 and lines[0].startswith("2026-01-03") and "food" in lines[0], out
            assert lines[1][:10] in days, out
            assert json.loads(content())[0]["date"] == "2026-01-03"
        """,
        "solution": [edit("ledger/cli.py", "date = datetime.date.today().isoformat()",
                          "date = args.date or datetime.date.today().isoformat()")],
    },
    {
        "id": "cli-missing-file", "split": "holdout", "kind": "fix-bug",
        "goal": """
            On a fresh machine, before anything was added, `python -m ledger list` and `python -m ledger total`
            crash:

                Traceback (most recent call last):
                  ...
                FileNotFoundError: [Errno 2] No such file or directory: 'ledger.json'

            A ledger file that does not exist yet is just an empty ledger: list prints nothing and total
            prints `Total: 0.00`.
        """,
        "setup": LEDGER, "check": """
            code, out, err = ledger("list")
            assert code == 0 and out.strip() == "" and "Traceback" not in err, (code, out, err)
            code, out, err = ledger("total")
            assert code == 0 and out.strip() == "Total: 0.00", (code, out, err)
            assert ledger("total", "--category", "food")[1].strip() == "Total: 0.00"
            assert ledger("add", "3", "food")[0] == 0
            assert ledger("total")[1].strip() == "Total: 3.00"
        """,
        "solution": [edit("ledger/book.py", '''
                """The entries stored in path."""''', '''
                """The entries stored in path (none when it does not exist yet)."""
                if not os.path.exists(path):
                    return []''', indent=4)],
    },
    {
        "id": "cli-list-min", "split": "dev", "kind": "add-parameter",
        "goal": """
            Please add a `--min AMOUNT` option to `ledger list` that shows only the entries of at least that
            amount (e.g. `list --min 10`). Without the option, list shows every entry as today; it can be
            combined with --category.
        """,
        "setup": LEDGER, "check": """
            entries(("2026-01-02", 5, "food", ""), ("2026-01-03", 20, "travel", ""), ("2026-01-04", 12.5, "food", ""))
            code, out, err = ledger("list", "--min", "10")
            lines = out.strip().splitlines()
            assert code == 0 and len(lines) == 2 and "20.00" in lines[0] and "12.50" in lines[1], (out, err)
            assert len(ledger("list", "--min", "12.5")[1].strip().splitlines()) == 2
            assert len(ledger("list")[1].strip().splitlines()) == 3
            out = ledger("list", "--min", "10", "--category", "food")[1].strip().splitlines()
            assert len(out) == 1 and "12.50" in out[0], out
        """,
        "solution": [
            edit("ledger/cli.py", '''
                show.add_argument("--category", help="only this category")''', '''
                show.add_argument("--category", help="only this category")
                show.add_argument("--min", type=float, help="only entries of at least this amount")''', indent=4),
            edit("ledger/cli.py", '''
                if args.category:
                    entries = [e for e in entries if e.category == args.category]''', '''
                if args.category:
                    entries = [e for e in entries if e.category == args.category]
                if args.min is not None:
                    entries = [e for e in entries if e.amount >= args.min]''', indent=8),
        ],
    },
    {
        "id": "cli-total-since", "split": "holdout", "kind": "add-parameter",
        "goal": """
            `ledger total` always sums everything. Add an option `--since YYYY-MM-DD` to it that counts only the
            entries on or after that date. It works together with --category; without it nothing changes.
        """,
        "setup": LEDGER, "check": """
            entries(("2026-01-01", 5, "food", ""), ("2026-01-15", 10, "food", ""), ("2026-02-01", 2.5, "travel", ""))
            code, out, err = ledger("total", "--since", "2026-01-15")
            assert code == 0 and out.strip() == "Total: 12.50", (out, err)
            assert ledger("total", "--since", "2026-01-02", "--category", "food")[1].strip() == "Total: 10.00"
            assert ledger("total", "--since", "2026-03-01")[1].strip() == "Total: 0.00"
            assert ledger("total")[1].strip() == "Total: 17.50"
        """,
        "solution": [
            edit("ledger/cli.py", PARSER_END, '''
                total.add_argument("--category", help="only this category")
                total.add_argument("--since", help="only entries on or after this date (YYYY-MM-DD)")
                return parser''', indent=4),
            edit("ledger/cli.py", '''
                    entries = book.load(args.file)
                    print(f"Total''', '''
                    entries = book.load(args.file)
                    if args.since:
                        entries = [e for e in entries if e.date >= args.since]
                    print(f"Total''', indent=8),
        ],
    },
    {
        "id": "cli-amount-invalid", "split": "dev", "kind": "raise-error",
        "goal": """
            `ledger add` accepts amounts of zero or below (`python -m ledger add 0 food`, `add -5 food`) and
            records them. It should refuse them like other usage errors: exit status 2, an error message on
            stderr that mentions the amount, and the ledger file left as it was. Text that is not a number
            must keep failing the same way.
        """,
        "setup": LEDGER, "check": """
            entries(("2026-01-02", 5, "food", ""))
            before = content()
            for bad in ("0", "-5", "abc", "-0.01"):
                code, out, err = ledger("add", bad, "food")
                assert code == 2, (bad, code, out, err)
                assert "amount" in err.lower(), (bad, err)
                assert content() == before, bad
            assert ledger("add", "0.01", "food")[0] == 0
            assert len(json.loads(content())) == 2
        """,
        "solution": [
            edit("ledger/cli.py", '''
                def build_parser():''', '''
                def positive_amount(text):
                    """An amount given on the command line: a number above zero."""
                    try:
                        value = float(text)
                    except ValueError:
                        raise argparse.ArgumentTypeError(f"invalid amount: {text!r}") from None
                    if not value > 0:
                        raise argparse.ArgumentTypeError(f"the amount must be above zero, not {text}")
                    return value


                def build_parser():'''),
            edit("ledger/cli.py", 'add.add_argument("amount", type=float)', 'add.add_argument("amount", type=positive_amount)'),
        ],
    },
    {
        "id": "cli-date-invalid", "split": "holdout", "kind": "raise-error",
        "goal": """
            `ledger add 5 food --date yesterday` (or a date like 2026-13-01) is accepted without complaint.
            --date must be a real calendar date written YYYY-MM-DD; anything else should fail like other
            usage errors: exit status 2, an error on stderr that mentions the date, nothing written to the
            ledger file.
        """,
        "setup": LEDGER, "check": """
            entries(("2026-01-02", 5, "food", ""))
            before = content()
            for bad in ("yesterday", "2026-13-01", "2026-02-30", "03/02/2026"):
                code, out, err = ledger("add", "5", "food", "--date", bad)
                assert code == 2, (bad, code, out, err)
                assert "date" in err.lower(), (bad, err)
                assert content() == before, bad
            assert ledger("add", "5", "food", "--date", "2026-02-03")[0] == 0
            assert len(json.loads(content())) == 2
        """,
        "solution": [
            edit("ledger/cli.py", '''
                def build_parser():''', '''
                def iso_date(text):
                    """A date given on the command line: YYYY-MM-DD."""
                    try:
                        return datetime.date.fromisoformat(text).isoformat()
                    except ValueError:
                        raise argparse.ArgumentTypeError(f"invalid date {text!r}: expected YYYY-MM-DD") from None


                def build_parser():'''),
            edit("ledger/cli.py", 'add.add_argument("--date", help', 'add.add_argument("--date", type=iso_date, help'),
        ],
    },
    {
        "id": "cli-subcommand-functions", "split": "dev", "kind": "refactor",
        "goal": """
            main() in ledger/cli.py is one if/elif over the command name, and it will grow. Please give each
            command its own function, `cmd_add(args)`, `cmd_list(args)` and `cmd_total(args)` (each takes the
            parsed arguments), attach each to its subparser with `set_defaults(func=...)`, and have main call
            `args.func(args)`. What the commands print and do must not change.
        """,
        "setup": LEDGER, "check": """
            import ledger.cli as cli
            parser = cli.build_parser()
            for argv, name in ((["add", "1", "x"], "cmd_add"), (["list"], "cmd_list"), (["total"], "cmd_total")):
                assert callable(getattr(cli, name, None)), name + " is missing"
                assert parser.parse_args(argv).func is getattr(cli, name), argv
            assert ledger("add", "12.5", "food", "--note", "lunch")[1] == "added 12.50 food\\n"
            assert ledger("add", "2.25", "travel")[0] == 0
            code, out, err = ledger("list")
            assert code == 0 and out.splitlines()[0].endswith("    12.50  food  lunch"), out
            assert out.splitlines()[1].endswith("     2.25  travel"), out
            assert ledger("list", "--category", "travel")[1].count("\\n") == 1
            assert ledger("total")[1] == "Total: 14.75\\n" and ledger("total", "--category", "food")[1] == "Total: 12.50\\n"
        """,
        "solution": [
            edit("ledger/cli.py", '''
                add.add_argument("--date", help="YYYY-MM-DD (default: today)")''', '''
                add.add_argument("--date", help="YYYY-MM-DD (default: today)")
                add.set_defaults(func=cmd_add)''', indent=4),
            edit("ledger/cli.py", '''
                show.add_argument("--category", help="only this category")''', '''
                show.add_argument("--category", help="only this category")
                show.set_defaults(func=cmd_list)''', indent=4),
            edit("ledger/cli.py", PARSER_END, '''
                total.add_argument("--category", help="only this category")
                total.set_defaults(func=cmd_total)
                return parser''', indent=4),
            edit("ledger/cli.py", '''
                def main(argv=None):
                    """Run the ledger command; returns the exit status."""
                    args = build_parser().parse_args(argv)
                    if args.command == "add":
                        entries = book.load(args.file) if os.path.exists(args.file) else []
                        date = datetime.date.today().isoformat()
                        entries.append(book.Entry(date, args.amount, args.category, args.note))
                        book.save(args.file, entries)
                        print(f"added {args.amount:.2f} {args.category}")
                    elif args.command == "list":
                        entries = book.load(args.file)
                        if args.category:
                            entries = [e for e in entries if e.category == args.category]
                        for entry in entries:
                            line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
                            print(f"{line}  {entry.note}" if entry.note else line)
                    elif args.command == "total":
                        entries = book.load(args.file)
                        print(f"Total: {book.total(entries, args.category):.2f}")
                    return 0''', '''
                def cmd_add(args):
                    """Record an expense."""
                    entries = book.load(args.file) if os.path.exists(args.file) else []
                    date = datetime.date.today().isoformat()
                    entries.append(book.Entry(date, args.amount, args.category, args.note))
                    book.save(args.file, entries)
                    print(f"added {args.amount:.2f} {args.category}")
                    return 0


                def cmd_list(args):
                    """Show the entries."""
                    entries = book.load(args.file)
                    if args.category:
                        entries = [e for e in entries if e.category == args.category]
                    for entry in entries:
                        line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
                        print(f"{line}  {entry.note}" if entry.note else line)
                    return 0


                def cmd_total(args):
                    """Print the sum of the entries."""
                    entries = book.load(args.file)
                    print(f"Total: {book.total(entries, args.category):.2f}")
                    return 0


                def main(argv=None):
                    """Run the ledger command; returns the exit status."""
                    args = build_parser().parse_args(argv)
                    return args.func(args)'''),
        ],
    },
    {
        "id": "cli-format-entry", "split": "holdout", "kind": "refactor",
        "goal": """
            The formatting of one ledger line lives inside the list command in ledger/cli.py; we want to reuse it
            for an export. Move it into ledger/book.py as a function `format_entry(entry)` that returns the line
            as a string (without a newline), and have `list` use it. The output of `list` must stay exactly the
            same.
        """,
        "setup": LEDGER, "check": """
            import contextlib, io
            import ledger.book as book
            import ledger.cli as cli
            assert book.format_entry(book.Entry("2026-01-02", 12.5, "food", "lunch")) == "2026-01-02     12.50  food  lunch"
            assert book.format_entry(book.Entry("2026-01-03", 1234.5, "rent")) == "2026-01-03   1234.50  rent"
            entries(("2026-01-02", 12.5, "food", "lunch"), ("2026-01-03", 1234.5, "rent", ""))
            code, out, err = ledger("list")
            assert out == "2026-01-02     12.50  food  lunch\\n2026-01-03   1234.50  rent\\n", out
            patched = [m for m in (book, cli) if hasattr(m, "format_entry")]
            real = {m: m.format_entry for m in patched}
            for m in patched:
                m.format_entry = lambda entry: "entry " + entry.category
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    cli.main(["--file", FILE, "list"])
            finally:
                for m in patched:
                    m.format_entry = real[m]
            assert buf.getvalue() == "entry food\\nentry rent\\n", "list does not use format_entry: " + buf.getvalue()
        """,
        "solution": [
            edit("ledger/book.py", '''
                def total(entries, category=None):''', '''
                def format_entry(entry):
                    """One line of the list command: date, amount, category and the note if any."""
                    line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
                    return f"{line}  {entry.note}" if entry.note else line


                def total(entries, category=None):'''),
            edit("ledger/cli.py", '''
                        line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
                        print(f"{line}  {entry.note}" if entry.note else line)''', '''
                        print(book.format_entry(entry))''', indent=12),
        ],
    },
    {
        "id": "cli-category-filter-test", "split": "dev", "kind": "add-test",
        "goal": """
            Please add a test to tests/test_cli.py showing that `list --category food` lists the food entries and
            no entry of another category. The ledger code itself should not change.
        """,
        "mutants": [
            mutant("ledger/cli.py", "entries = [e for e in entries if e.category == args.category]",
                   "entries = list(entries)", "list --category shows every category"),
            mutant("ledger/cli.py", "if e.category == args.category]", "if e.category != args.category]",
                   "list --category shows every category but that one"),
        ],
        "solution": [edit("tests/test_cli.py", '''
            def test_total(self):''', '''
            def test_list_one_category(self):
                self.run_cli("add", "2", "food", "--note", "bread")
                self.run_cli("add", "3", "travel", "--note", "bus")
                self.run_cli("add", "4", "food", "--note", "milk")
                out = self.run_cli("list", "--category", "food")[1]
                self.assertIn("bread", out)
                self.assertIn("milk", out)
                self.assertNotIn("bus", out)

            def test_total(self):''', indent=4)],
    },
    {
        "id": "cli-total-format-test", "split": "holdout", "kind": "add-test",
        "goal": """
            Add a test to tests/test_cli.py that `ledger total` prints the sum with exactly two decimals, for
            example `Total: 3.50` after adding 1.25 and 2.25. Don't change the ledger code.
        """,
        "mutants": [
            mutant("ledger/cli.py", "args.category):.2f}", "args.category)}", "total prints 3.5 instead of 3.50"),
            mutant("ledger/cli.py", "args.category):.2f}", "args.category):.1f}", "total prints one decimal"),
        ],
        "solution": [edit("tests/test_cli.py", '''
            def test_entries_are_saved(self):''', '''
            def test_total_has_two_decimals(self):
                self.run_cli("add", "1.25", "food")
                self.run_cli("add", "2.25", "food")
                self.assertEqual(self.run_cli("total")[1], "Total: 3.50\\n")

            def test_entries_are_saved(self):''', indent=4)],
    },
]

ADD_DATE = "        date = datetime.date.today().isoformat()"
LIST_FILTER = '''
        if args.category:
            entries = [e for e in entries if e.category == args.category]'''

VARIANTS = {
    "cli-categories": {
        "alternatives": [variant("a function of its own, a defaultdict", edit("ledger/cli.py", PARSER_END, '''
            total.add_argument("--category", help="only this category")
            sub.add_parser("categories")
            return parser''', indent=4), edit("ledger/cli.py", TOTAL_BRANCH, join(TOTAL_BRANCH, '''
            elif args.command == "categories":
                show_categories(book.load(args.file))'''), indent=4), append("ledger/cli.py", '''
            def show_categories(entries):
                import collections
                sums = collections.defaultdict(float)
                for entry in entries:
                    sums[entry.category] += entry.amount
                for name in sorted(sums):
                    print("%s: %.2f" % (name, sums[name]))'''))],
        "wrong": [variant("sorted by total, not by name", edit("ledger/cli.py", PARSER_END, '''
            total.add_argument("--category", help="only this category")
            sub.add_parser("categories")
            return parser''', indent=4), edit("ledger/cli.py", TOTAL_BRANCH, join(TOTAL_BRANCH, '''
            elif args.command == "categories":
                entries = book.load(args.file)
                sums = {c: book.total(entries, c) for c in {e.category for e in entries}}
                for name, value in sorted(sums.items(), key=lambda kv: kv[1]):
                    print(f"{name}: {value:.2f}")'''), indent=4))],
    },
    "cli-month": {
        "alternatives": [variant("dates parsed", edit("ledger/cli.py", PARSER_END, '''
            total.add_argument("--category", help="only this category")
            sub.add_parser("month").add_argument("month")
            return parser''', indent=4), edit("ledger/cli.py", TOTAL_BRANCH, join(TOTAL_BRANCH, '''
            elif args.command == "month":
                year, month = map(int, args.month.split("-"))
                chosen = []
                for e in book.load(args.file):
                    d = datetime.date.fromisoformat(e.date)
                    if (d.year, d.month) == (year, month):
                        chosen.append(e)
                print("Total for %s: %.2f" % (args.month, book.total(chosen)))'''), indent=4))],
        "wrong": [variant("the month of every year", edit("ledger/cli.py", PARSER_END, '''
            total.add_argument("--category", help="only this category")
            sub.add_parser("month").add_argument("month")
            return parser''', indent=4), edit("ledger/cli.py", TOTAL_BRANCH, join(TOTAL_BRANCH, '''
            elif args.command == "month":
                chosen = [e for e in book.load(args.file) if e.date[5:7] == args.month[5:7]]
                print(f"Total for {args.month}: {book.total(chosen):.2f}")'''), indent=4))],
    },
    "cli-add-date": {
        "alternatives": [variant("an if", edit("ledger/cli.py", ADD_DATE, '''
            if args.date:
                date = args.date
            else:
                date = str(datetime.date.today())''', indent=8))],
        "wrong": [variant("today as a date object, which JSON cannot store", edit("ledger/cli.py", ADD_DATE,
                                                                               "        date = args.date or datetime.date.today()"))],
    },
    "cli-missing-file": {
        "alternatives": [variant("caught in the commands", edit("ledger/cli.py", '''
            def main(argv=None):''', '''
            def load_or_empty(path):
                try:
                    return book.load(path)
                except FileNotFoundError:
                    return []


            def main(argv=None):'''), edit("ledger/cli.py", '''
                elif args.command == "list":
                    entries = book.load(args.file)''', '''
                elif args.command == "list":
                    entries = load_or_empty(args.file)''', indent=4), edit("ledger/cli.py", TOTAL_BRANCH, '''
                elif args.command == "total":
                    entries = load_or_empty(args.file)
                    print(f"Total: {book.total(entries, args.category):.2f}")''', indent=4))],
        "wrong": [variant("list fixed, total not", edit("ledger/cli.py", '''
            elif args.command == "list":
                entries = book.load(args.file)''', '''
            elif args.command == "list":
                entries = book.load(args.file) if os.path.exists(args.file) else []''', indent=4))],
    },
    "cli-list-min": {
        "alternatives": [variant("a dest of its own", edit("ledger/cli.py", '''
            show.add_argument("--category", help="only this category")''', '''
            show.add_argument("--category", help="only this category")
            show.add_argument("--min", dest="minimum", type=float, default=None)''', indent=4),
            edit("ledger/cli.py", LIST_FILTER, join(LIST_FILTER, '''
                    entries = [e for e in entries if args.minimum is None or not e.amount < args.minimum]'''), indent=8))],
        "wrong": [variant("above the amount, not at least", edit("ledger/cli.py", '''
            show.add_argument("--category", help="only this category")''', '''
            show.add_argument("--category", help="only this category")
            show.add_argument("--min", type=float)''', indent=4),
            edit("ledger/cli.py", LIST_FILTER, join(LIST_FILTER, '''
                    if args.min is not None:
                        entries = [e for e in entries if e.amount > args.min]'''), indent=8))],
    },
    "cli-total-since": {
        "alternatives": [variant("dates compared as dates", edit("ledger/cli.py", PARSER_END, '''
            total.add_argument("--category", help="only this category")
            total.add_argument("--since", type=datetime.date.fromisoformat)
            return parser''', indent=4), edit("ledger/cli.py", TOTAL_BRANCH, '''
            elif args.command == "total":
                entries = book.load(args.file)
                if args.since is not None:
                    entries = [e for e in entries if datetime.date.fromisoformat(e.date) >= args.since]
                print(f"Total: {book.total(entries, args.category):.2f}")''', indent=4))],
        "wrong": [variant("after the date, not on or after", edit("ledger/cli.py", PARSER_END, '''
            total.add_argument("--category", help="only this category")
            total.add_argument("--since")
            return parser''', indent=4), edit("ledger/cli.py", TOTAL_BRANCH, '''
            elif args.command == "total":
                entries = [e for e in book.load(args.file) if not args.since or e.date > args.since]
                print(f"Total: {book.total(entries, args.category):.2f}")''', indent=4))],
    },
    "cli-amount-invalid": {
        "alternatives": [variant("checked in main with parser.error", edit("ledger/cli.py", '''
            args = build_parser().parse_args(argv)''', '''
            parser = build_parser()
            args = parser.parse_args(argv)
            if args.command == "add" and not args.amount > 0:
                parser.error(f"amount must be positive, got {args.amount}")''', indent=4))],
        "wrong": [variant("an error message and exit status 1", edit("ledger/cli.py", '''
            args = build_parser().parse_args(argv)''', '''
            args = build_parser().parse_args(argv)
            if args.command == "add" and args.amount <= 0:
                print("error: amount must be positive", file=sys.stderr)
                return 1''', indent=4), edit("ledger/cli.py", "import os\n", "import os\nimport sys\n"))],
    },
    "cli-date-invalid": {
        "alternatives": [variant("strptime in main", edit("ledger/cli.py", '''
            args = build_parser().parse_args(argv)''', '''
            parser = build_parser()
            args = parser.parse_args(argv)
            if getattr(args, "date", None) is not None:
                try:
                    datetime.datetime.strptime(args.date, "%Y-%m-%d")
                except ValueError:
                    parser.error(f"bad --date {args.date!r}, use YYYY-MM-DD")''', indent=4))],
        "wrong": [variant("the shape checked, not the calendar", edit("ledger/cli.py", '''
            args = build_parser().parse_args(argv)''', '''
            parser = build_parser()
            args = parser.parse_args(argv)
            import re
            if getattr(args, "date", None) and not re.fullmatch(r"\\d{4}-\\d{2}-\\d{2}", args.date):
                parser.error("bad date")''', indent=4))],
    },
    "cli-subcommand-functions": {
        "alternatives": [variant("the functions return nothing, main returns 0", write("ledger/cli.py", '''
            """The command line: add, list and total."""

            import argparse
            import datetime
            import os

            from ledger import book


            def cmd_add(args):
                entries = book.load(args.file) if os.path.exists(args.file) else []
                entries.append(book.Entry(datetime.date.today().isoformat(), args.amount, args.category, args.note))
                book.save(args.file, entries)
                print(f"added {args.amount:.2f} {args.category}")


            def cmd_list(args):
                for entry in book.load(args.file):
                    if args.category and entry.category != args.category:
                        continue
                    line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
                    print(f"{line}  {entry.note}" if entry.note else line)


            def cmd_total(args):
                print(f"Total: {book.total(book.load(args.file), args.category):.2f}")


            def build_parser():
                parser = argparse.ArgumentParser(prog="ledger")
                parser.add_argument("--file", default="ledger.json")
                sub = parser.add_subparsers(dest="command", required=True)
                add = sub.add_parser("add")
                add.add_argument("amount", type=float)
                add.add_argument("category")
                add.add_argument("--note", default="")
                add.add_argument("--date")
                add.set_defaults(func=cmd_add)
                for name, func in (("list", cmd_list), ("total", cmd_total)):
                    command = sub.add_parser(name)
                    command.add_argument("--category")
                    command.set_defaults(func=func)
                return parser


            def main(argv=None):
                args = build_parser().parse_args(argv)
                args.func(args)
                return 0
            '''))],
        "wrong": [variant("the functions added, main still dispatches by name", append("ledger/cli.py", '''
            def cmd_add(args):
                return main(["--file", args.file, "add", str(args.amount), args.category])


            def cmd_list(args):
                return main(["--file", args.file, "list"])


            def cmd_total(args):
                return main(["--file", args.file, "total"])'''))],
    },
    "cli-format-entry": {
        "alternatives": [variant("imported by name into cli.py", edit("ledger/book.py", '''
            def total(entries, category=None):''', '''
            def format_entry(entry):
                parts = [entry.date, f"{entry.amount:8.2f}", entry.category] + ([entry.note] if entry.note else [])
                return "  ".join(parts)


            def total(entries, category=None):'''), edit("ledger/cli.py", "from ledger import book",
                                                         "from ledger import book\nfrom ledger.book import format_entry"),
            edit("ledger/cli.py", '''
                line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
                print(f"{line}  {entry.note}" if entry.note else line)''', '''
                print(format_entry(entry))''', indent=12))],
        "wrong": [variant("format_entry added, list keeps its own copy", edit("ledger/book.py", '''
            def total(entries, category=None):''', '''
            def format_entry(entry):
                line = f"{entry.date}  {entry.amount:8.2f}  {entry.category}"
                return f"{line}  {entry.note}" if entry.note else line


            def total(entries, category=None):'''))],
    },
    "cli-category-filter-test": {
        "alternatives": [variant("a pytest test running the command", write("tests/test_filter.py", '''
            import json
            import subprocess
            import sys


            def test_list_category(tmp_path):
                path = tmp_path / "l.json"
                path.write_text(json.dumps([{"date": "2026-01-01", "amount": 1, "category": "food", "note": "soup"},
                                            {"date": "2026-01-02", "amount": 2, "category": "rent", "note": "may"}]))
                out = subprocess.run([sys.executable, "-m", "ledger", "--file", str(path), "list", "--category", "food"],
                                     capture_output=True, text=True, check=True).stdout
                assert "soup" in out and "may" not in out
            '''))],
        "wrong": [variant("checks that food is shown, not that the rest is hidden", edit("tests/test_cli.py", '''
            def test_total(self):''', '''
            def test_list_category(self):
                self.run_cli("add", "2", "food", "--note", "bread")
                self.run_cli("add", "3", "travel", "--note", "bus")
                self.assertIn("bread", self.run_cli("list", "--category", "food")[1])

            def test_total(self):''', indent=4))],
    },
    "cli-total-format-test": {
        "alternatives": [variant("a pytest test with capsys", write("tests/test_total_format.py", '''
            from ledger.cli import main


            def test_two_decimals(tmp_path, capsys):
                f = str(tmp_path / "l.json")
                main(["--file", f, "add", "1.25", "a"])
                main(["--file", f, "add", "2.25", "b"])
                capsys.readouterr()
                main(["--file", f, "total"])
                assert capsys.readouterr().out.strip() == "Total: 3.50"
            '''))],
        "wrong": [variant("the number compared, not the text", edit("tests/test_cli.py", '''
            def test_entries_are_saved(self):''', '''
            def test_total_sum(self):
                self.run_cli("add", "1.25", "food")
                self.run_cli("add", "2.25", "food")
                self.assertEqual(float(self.run_cli("total")[1].split(":")[1]), 3.5)

            def test_entries_are_saved(self):''', indent=4))],
    },
}
