"""Tasks on the "cross" shape (cross.py): the shop's checkout, where what a test of the cart or the
receipt shows is decided in another module (money, pricing, layout)."""

from _spec import append, edit, mutant, variant, write

SHAPE = "cross"
REPO = "cross.py"

SHOP = '''
from shop import money, pricing
from shop.cart import Cart
from shop.receipt import render
def raises(error, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except error:
        return True
    return False
def cart(*lines, code=None, tax_rate=0.0):
    c = Cart(tax_rate=tax_rate)
    for sku, price, qty in lines:
        c.add(sku, price, qty)
    if code:
        c.apply_code(code)
    return c
'''
"""Shared set-up of the checks below: a cart from lines, a receipt, an expected error."""

TOTAL = '''
def total(self):
    """What the customer pays, in cents."""
    return self.subtotal() - self.discount() + self.tax()'''
"""Cart.total, the last method of the cart (at the indentation of a method: ``indent=4``)."""

SPLIT = '''

def split(self, n):
    """The total in n shares (money.split_evenly)."""
    return money.split_evenly(self.total(), n)'''

APPLY_BEST = '''

def apply_best_code(self):
    """Use the code that takes the most off this cart; returns it (None when none applies)."""
    code = pricing.best_code(self.subtotal())
    if code is not None:
        self.apply_code(code)
    return code'''

RECEIPT_WITH = '''
"""The printed receipt of a cart."""

from shop import layout, money, pricing


def render(cart, {param}):
    """The receipt: one line per cart line, then the subtotal, the discount, the tax and the total."""
    lines = [layout.line(f"{{sku}} x{{qty}}", money.format_money(cents * qty{a}){l}) for sku, cents, qty in cart.lines]
    lines.append(layout.line("Subtotal", money.format_money(cart.subtotal(){a}){l}))
    if cart.code:
        percent = pricing.discount_for(cart.code, cart.subtotal())
        if percent:
            amount = cart.subtotal() * percent // 100
            lines.append(layout.line(f"Discount {{cart.code}} ({{percent}}%)", "-" + money.format_money(amount{a}){l}))
    if cart.tax_rate:
        lines.append(layout.line("Tax", money.format_money(cart.tax(){a}){l}))
    lines.append(layout.line("Total", money.format_money(cart.total(){a}){l}))
    return "\\n".join(lines)
'''
"""receipt.py with one more parameter passed to money.format_money ({a}) or to layout.line ({l})."""

TASKS = [
    {
        "id": "cross-split-evenly", "split": "dev", "kind": "add-function",
        "goal": """
            Customers want to split the bill. Please add `split_evenly(cents, n)` to shop/money.py: it returns a
            list of n amounts in cents that add up to `cents` and differ by at most one cent, larger amounts
            first (split_evenly(1000, 3) == [334, 333, 333]). Then add `Cart.split(n)`, which splits the cart's
            total that way.
        """,
        "setup": SHOP, "check": """
            for args, want in [((1000, 3), [334, 333, 333]), ((1001, 2), [501, 500]), ((900, 3), [300, 300, 300]),
                               ((2, 3), [1, 1, 0]), ((5, 1), [5])]:
                assert list(money.split_evenly(*args)) == want, (args, money.split_evenly(*args))
            assert list(cart(("pizza", 1000, 1)).split(3)) == [334, 333, 333]
            c = cart(("kettle", 4000, 1), ("tea", 399, 2), code="SAVE10", tax_rate=0.1)
            shares = list(c.split(4))
            assert sum(shares) == c.total() and max(shares) - min(shares) <= 1 and shares == sorted(shares, reverse=True), shares
        """,
        "solution": [
            edit("shop/money.py", '''
                def parse_money(text):''', '''
                def split_evenly(cents, n):
                    """cents in n shares that differ by at most one cent, the larger ones first."""
                    share, extra = divmod(cents, n)
                    return [share + 1] * extra + [share] * (n - extra)


                def parse_money(text):'''),
            edit("shop/cart.py", TOTAL, TOTAL + SPLIT, indent=4),
        ],
    },
    {
        "id": "cross-best-code", "split": "holdout", "kind": "add-function",
        "goal": """
            Customers don't know which discount code to type. Add `best_code(subtotal)` to shop/pricing.py: of the
            codes in DISCOUNT_CODES, the one that takes the most off that subtotal (in cents), or None when none
            takes anything off. Then add `Cart.apply_best_code()`, which applies that code to the cart and
            returns it (None when there is none, leaving the cart as it was).
        """,
        "setup": SHOP, "check": """
            for subtotal, want in [(1000, "WELCOME5"), (1999, "WELCOME5"), (2000, "SAVE10"), (5000, "SAVE10"),
                                   (10000, "BIG20"), (25000, "BIG20")]:
                assert pricing.best_code(subtotal) == want, (subtotal, pricing.best_code(subtotal))
            c = cart(("bike", 12000, 1))
            assert c.apply_best_code() == "BIG20"
            assert c.total() == 9600 and "Discount BIG20 (20%)" in render(c), render(c)
            c = cart(("pen", 300, 2))
            assert c.apply_best_code() == "WELCOME5" and c.total() == 570, c.total()
        """,
        "solution": [
            edit("shop/pricing.py", '''
                def tax(cents, rate):''', '''
                def best_code(subtotal):
                    """The code that takes the most off subtotal (cents), or None when none takes anything."""
                    best = max(DISCOUNT_CODES, key=lambda code: discount_for(code, subtotal))
                    return best if discount_for(best, subtotal) else None


                def tax(cents, rate):'''),
            edit("shop/cart.py", TOTAL, TOTAL + APPLY_BEST, indent=4),
        ],
    },
    {
        "id": "cross-thousands", "split": "dev", "kind": "fix-bug",
        "goal": """
            Receipts of large orders are hard to read, the amounts have no thousands separator:

                laptop x1               $1234.56
                Subtotal                $1234.56
                Total                   $1234.56

            They should read $1,234.56 (and $1,000,000.00 for a million dollars); small amounts stay as they are.
        """,
        "setup": SHOP, "check": """
            for cents, want in [(123456, "$1,234.56"), (100000000, "$1,000,000.00"), (5, "$0.05"), (99999, "$999.99"),
                                (100000, "$1,000.00"), (0, "$0.00")]:
                assert money.format_money(cents) == want, (cents, money.format_money(cents))
            text = render(cart(("laptop", 123456, 1)))
            assert text.count("$1,234.56") == 3, text
            assert render(cart(("tea", 399, 2))).splitlines()[-1].endswith(" $7.98")
        """,
        "solution": [edit("shop/money.py", 'return f"${dollars}.{rest:02d}"', 'return f"${dollars:,}.{rest:02d}"')],
    },
    {
        "id": "cross-tax-rounding", "split": "holdout", "kind": "fix-bug",
        "goal": """
            A customer bought a $19.99 mug with 8% sales tax. The receipt says

                Tax                        $1.59
                Total                     $21.58

            but 8% of $19.99 is $1.5992, which is $1.60, and the register charged $21.59. Tax must be rounded to
            the nearest cent, not cut off.
        """,
        "setup": SHOP, "check": """
            c = cart(("mug", "$19.99", 1), tax_rate=0.08)
            assert c.tax() == 160 and c.total() == 2159, (c.tax(), c.total())
            lines = render(c).splitlines()
            assert lines[-2].startswith("Tax") and lines[-2].endswith("$1.60"), lines
            assert lines[-1].endswith("$21.59"), lines
            for cents, rate, want in [(1001, 0.0825, 83), (199, 0.08, 16), (1000, 0.1, 100), (10000, 0.07, 700),
                                      (1234, 0.05, 62), (1220, 0.05, 61), (0, 0.08, 0)]:
                assert pricing.tax(cents, rate) == want, (cents, rate, pricing.tax(cents, rate))
        """,
        "solution": [edit("shop/pricing.py", "return int(cents * rate)", "return int(cents * rate + 0.5)")],
    },
    {
        "id": "cross-currency-symbol", "split": "dev", "kind": "add-parameter",
        "goal": """
            We are opening a store in Ireland and need receipts in euros. Add a `symbol` parameter (default "$")
            to `money.format_money`, so format_money(250, symbol="€") gives "€2.50", and a `symbol` parameter
            (default "$") to `receipt.render` that is used for every amount on the receipt. Without the
            parameter everything stays in dollars as today.
        """,
        "setup": SHOP, "check": """
            assert money.format_money(250, symbol="€") == "€2.50" and money.format_money(250) == "$2.50"
            c = cart(("kettle", 4000, 1), ("tea", 399, 2), code="SAVE10", tax_rate=0.1)
            text = render(c, symbol="€")
            assert "$" not in text, text
            assert "€40.00" in text and "-€4.79" in text and text.splitlines()[-1].endswith("€47.50"), text
            plain = render(c)
            assert "€" not in plain and plain.splitlines()[-1].endswith("$47.50"), plain
        """,
        "solution": [
            edit("shop/money.py", '''
                def format_money(cents):
                    """Cents as dollars: 123456 -> '$1,234.56'."""
                    dollars, rest = divmod(cents, 100)
                    return f"${dollars}.{rest:02d}"''', '''
                def format_money(cents, symbol="$"):
                    """Cents as dollars (or another currency's symbol): 123456 -> '$1,234.56'."""
                    dollars, rest = divmod(cents, 100)
                    return f"{symbol}{dollars}.{rest:02d}"'''),
            write("shop/receipt.py", RECEIPT_WITH.format(param='symbol="$"', a=", symbol", l="")),
        ],
    },
    {
        "id": "cross-receipt-width", "split": "holdout", "kind": "add-parameter",
        "goal": """
            Our new receipt printer is 40 columns wide, the old ones 32. Add a `width` parameter to
            `receipt.render` (default 32, today's width) so that every line of the receipt is padded to that
            many columns, with the amounts right-aligned at the edge.
        """,
        "setup": SHOP, "check": """
            c = cart(("kettle", 4000, 1), ("tea", 399, 2), code="SAVE10", tax_rate=0.1)
            for width in (40, 36, 32, 44):
                lines = render(c, width=width).splitlines()
                assert len(lines) == 6 and all(len(line) == width for line in lines), (width, lines)
                assert lines[0].startswith("kettle x1 ") and lines[0].endswith(" $40.00"), lines
            from shop import layout
            assert len(layout.line("Total", "$1.00")) == 32, "rendering at a width changed the layout for every receipt"
            assert all(len(line) == 32 for line in render(c).splitlines()), "the default is no longer 32"
            assert render(c) == render(c, width=32)
        """,
        "solution": [
            edit("shop/layout.py", '''
                def line(label, value):
                    """label and value padded with spaces to WIDTH columns (at least one space between them)."""
                    gap = max(1, WIDTH - len(label) - len(value))''', '''
                def line(label, value, width=WIDTH):
                    """label and value padded with spaces to width columns (at least one space between them)."""
                    gap = max(1, width - len(label) - len(value))'''),
            write("shop/receipt.py", RECEIPT_WITH.format(param="width=layout.WIDTH", a="", l=", width")),
        ],
    },
    {
        "id": "cross-unknown-code", "split": "dev", "kind": "raise-error",
        "goal": """
            A typo in a discount code goes unnoticed: `cart.apply_code("SAEV10")` is accepted and the customer
            simply gets no discount. Applying a code that does not exist should raise a new exception
            `UnknownCode` (define it in shop/pricing.py, where the codes are, as a subclass of ValueError) right
            away, and leave the cart without a code. Known codes work as before in any case, including a known
            code whose minimum order is not reached (it is accepted and gives no discount).
        """,
        "setup": SHOP, "check": """
            from shop.pricing import UnknownCode
            assert issubclass(UnknownCode, ValueError)
            c = cart(("kettle", 4000, 1))
            assert raises(UnknownCode, c.apply_code, "SAEV10"), "an unknown code was accepted"
            assert c.total() == 4000 and "Discount" not in render(c)
            c.apply_code("save10")
            assert c.total() == 3600
            c.apply_code("BIG20")
            assert c.total() == 4000
        """,
        "solution": [
            edit("shop/pricing.py", '''
                def discount_for(code, subtotal):''', '''
                class UnknownCode(ValueError):
                    """No discount code has this name."""


                def discount_for(code, subtotal):'''),
            edit("shop/cart.py", '''
                    """Use a discount code (any case)."""
                    self.code = code.upper()''', '''
                    """Use a discount code (any case). Raises pricing.UnknownCode for a code that does not exist."""
                    code = code.upper()
                    if code not in pricing.DISCOUNT_CODES:
                        raise pricing.UnknownCode(code)
                    self.code = code''', indent=8),
        ],
    },
    {
        "id": "cross-price-validation", "split": "holdout", "kind": "raise-error",
        "goal": """
            Staff type prices into the cart (`cart.add("mug", "$4.50")`). Two kinds of typo get through today: a
            negative price ("-4.50") is accepted as a negative amount, and a price with more than two decimals
            ("$4.505") is silently cut to "$4.50". Both should raise ValueError, from money.parse_money and so
            from Cart.add, without adding anything to the cart. Valid prices ("$4.5", "$1,234.50", "2") work as
            today.
        """,
        "setup": SHOP, "check": """
            for bad in ("-4.50", "$-4.50", "$4.505", "1.999", "abc"):
                assert raises(ValueError, money.parse_money, bad), bad
                c = Cart()
                assert raises(ValueError, c.add, "mug", bad), bad
                assert c.subtotal() == 0 and len(c.lines) == 0, bad
            for text, want in [("$4.5", 450), ("$1,234.50", 123450), ("2", 200), (" $0.99 ", 99), ("$4.50", 450)]:
                assert money.parse_money(text) == want, (text, money.parse_money(text))
        """,
        "solution": [edit("shop/money.py", '''
                dollars, _, fraction = text.partition(".")''', '''
                dollars, _, fraction = text.partition(".")
                if dollars.startswith("-") or len(fraction) > 2:
                    raise ValueError(f"not a price: {text!r}")''', indent=4)],
    },
    {
        "id": "cross-discount-amount", "split": "dev", "kind": "refactor",
        "goal": """
            The discount in cents is computed twice, once in Cart.discount() and again in receipt.render(). Please
            move that computation into one function in shop/pricing.py, `discount_amount(code, subtotal)`, that
            returns the discount in cents a code gives on a subtotal (0 for an unknown code or below the code's
            minimum), and make both the cart and the receipt use it. Totals and receipts must not change.
        """,
        "setup": SHOP, "check": """
            for args, want in [(("SAVE10", 4000), 400), (("SAVE10", 1999), 0), (("BOGUS", 5000), 0),
                               (("BIG20", 12345), 2469), (("WELCOME5", 999), 49)]:
                assert pricing.discount_amount(*args) == want, (args, pricing.discount_amount(*args))
            c = cart(("kettle", 4000, 1), ("tea", 399, 2), code="SAVE10")
            assert c.discount() == 479 and c.total() == 4319 and "-$4.79" in render(c), render(c)
            import shop.cart, shop.receipt
            holders = [m for m in (pricing, shop.cart, shop.receipt) if hasattr(m, "discount_amount")]
            real = {m: m.discount_amount for m in holders}
            for m in holders:
                m.discount_amount = lambda *args, **kwargs: 123
            try:
                assert c.discount() == 123 and c.total() == 4798 - 123, "Cart does not use discount_amount"
                assert "-$1.23" in render(c), "the receipt does not use discount_amount"
            finally:
                for m in holders:
                    m.discount_amount = real[m]
        """,
        "solution": [
            edit("shop/pricing.py", '''
                def tax(cents, rate):''', '''
                def discount_amount(code, subtotal):
                    """The discount in cents that code gives on subtotal (cents)."""
                    return subtotal * discount_for(code, subtotal) // 100


                def tax(cents, rate):'''),
            edit("shop/cart.py", "return self.subtotal() * pricing.discount_for(self.code, self.subtotal()) // 100",
                 "return pricing.discount_amount(self.code, self.subtotal())"),
            edit("shop/receipt.py", "amount = cart.subtotal() * percent // 100",
                 "amount = pricing.discount_amount(cart.code, cart.subtotal())"),
        ],
    },
    {
        "id": "cross-code-dataclass", "split": "holdout", "kind": "refactor",
        "goal": """
            In shop/pricing.py each discount code is a bare tuple (percent, minimum), and readers keep having to
            look up which number is which. Please make each entry of DISCOUNT_CODES a small frozen dataclass
            `Code` (defined in pricing.py) with the fields `percent` and `minimum` (the minimum subtotal, in
            cents), and update the code that reads them. Discounts, totals and receipts must not change.
        """,
        "setup": SHOP, "check": """
            import dataclasses
            assert dataclasses.is_dataclass(pricing.Code), "Code is not a dataclass"
            want = {"WELCOME5": (5, 0), "SAVE10": (10, 2000), "BIG20": (20, 10000)}
            assert set(pricing.DISCOUNT_CODES) == set(want)
            for name, (percent, minimum) in want.items():
                code = pricing.DISCOUNT_CODES[name]
                assert isinstance(code, pricing.Code) and (code.percent, code.minimum) == (percent, minimum), code
            assert raises(dataclasses.FrozenInstanceError, setattr, pricing.DISCOUNT_CODES["SAVE10"], "percent", 50)
            for subtotal, code, want in [(4000, "SAVE10", 10), (1999, "SAVE10", 0), (10000, "BIG20", 20), (5, "WELCOME5", 5),
                                         (5000, "NOPE", 0)]:
                assert pricing.discount_for(code, subtotal) == want, (code, subtotal)
            c = cart(("kettle", 4000, 1), ("tea", 399, 2), code="SAVE10", tax_rate=0.1)
            assert (c.discount(), c.tax(), c.total()) == (479, 431, 4750), (c.discount(), c.tax(), c.total())
            assert "Discount SAVE10 (10%)     -$4.79" in render(c), render(c)
        """,
        "solution": [
            edit("shop/pricing.py", '''
                DISCOUNT_CODES = {
                    # code: (percent off, minimum subtotal in cents)
                    "WELCOME5": (5, 0),
                    "SAVE10": (10, 2000),
                    "BIG20": (20, 10000),
                }''', '''
                from dataclasses import dataclass


                @dataclass(frozen=True)
                class Code:
                    """A discount code's terms: percent off from a minimum subtotal (cents)."""

                    percent: int
                    minimum: int


                DISCOUNT_CODES = {
                    "WELCOME5": Code(5, 0),
                    "SAVE10": Code(10, 2000),
                    "BIG20": Code(20, 10000),
                }'''),
            edit("shop/pricing.py", '''
                    percent, minimum = DISCOUNT_CODES[code]
                    return percent if subtotal >= minimum else 0''', '''
                    terms = DISCOUNT_CODES[code]
                    return terms.percent if subtotal >= terms.minimum else 0''', indent=4),
        ],
    },
    {
        "id": "cross-code-minimum-test", "split": "dev", "kind": "add-test",
        "goal": """
            Please add a test to tests/test_receipt.py for discount codes with a minimum order: SAVE10 needs a
            subtotal of at least $20.00, so on a $15.00 cart it gives no discount, the receipt has no Discount
            line and the total is the full $15.00. Don't change the shop code.
        """,
        "mutants": [
            mutant("shop/pricing.py", "return percent if subtotal >= minimum else 0", "return percent",
                   "a code's minimum order is ignored"),
        ],
        "solution": [edit("tests/test_receipt.py", '''
            def test_discount_line(self):''', '''
            def test_no_discount_below_the_minimum(self):
                cart = Cart()
                cart.add("mug", 1500)
                cart.apply_code("SAVE10")
                text = render(cart)
                self.assertNotIn("Discount", text)
                self.assertTrue(text.endswith("$15.00"))

            def test_discount_line(self):''', indent=4)],
    },
    {
        "id": "cross-price-comma-test", "split": "holdout", "kind": "add-test",
        "goal": """
            Staff type prices with a thousands separator, like cart.add("sofa", "$1,234.50"). That works, but
            no test says so. Please add a test to tests/test_cart.py that such a price counts as 123450 cents in
            the cart's subtotal. Don't change the shop code.
        """,
        "mutants": [
            mutant("shop/money.py", '.replace(",", "")', "", "a price with a thousands separator is refused"),
            mutant("shop/money.py", '.replace(",", "")', '.replace(",", ".")', "a thousands separator is read as a decimal point"),
        ],
        "solution": [edit("tests/test_cart.py", '''
            def test_discount_code(self):''', '''
            def test_price_with_a_thousands_separator(self):
                cart = Cart()
                cart.add("sofa", "$1,234.50")
                self.assertEqual(cart.subtotal(), 123450)

            def test_discount_code(self):''', indent=4)],
    },
]

FORMAT = '''
def format_money(cents):
    """Cents as dollars: 123456 -> '$1,234.56'."""
    dollars, rest = divmod(cents, 100)
    return f"${dollars}.{rest:02d}"'''

PARSE_SPLIT = '''
    dollars, _, fraction = text.partition(".")'''

APPLY = '''
    def apply_code(self, code):
        """Use a discount code (any case)."""
        self.code = code.upper()'''

VARIANTS = {
    "cross-split-evenly": {
        "alternatives": [variant("cents handed out one by one", append("shop/money.py", '''
            def split_evenly(cents, n):
                shares = [0] * n
                for i in range(cents):
                    shares[i % n] += 1
                return shares'''), edit("shop/cart.py", TOTAL, TOTAL + SPLIT, indent=4))],
        "wrong": [variant("equal shares, the remainder lost", append("shop/money.py", '''
            def split_evenly(cents, n):
                return [cents // n] * n'''), edit("shop/cart.py", TOTAL, TOTAL + SPLIT, indent=4))],
    },
    "cross-best-code": {
        "alternatives": [variant("the amounts compared in a loop", append("shop/pricing.py", '''
            def best_code(subtotal):
                best, most = None, 0
                for code in DISCOUNT_CODES:
                    off = subtotal * discount_for(code, subtotal) // 100
                    if off > most:
                        best, most = code, off
                return best'''), edit("shop/cart.py", TOTAL, TOTAL + APPLY_BEST, indent=4))],
        "wrong": [variant("the largest percent, whatever the minimum", append("shop/pricing.py", '''
            def best_code(subtotal):
                return max(DISCOUNT_CODES, key=lambda code: DISCOUNT_CODES[code][0])'''),
                          edit("shop/cart.py", TOTAL, TOTAL + APPLY_BEST, indent=4))],
    },
    "cross-thousands": {
        "alternatives": [variant("the float format's separator", edit("shop/money.py", FORMAT, '''
            def format_money(cents):
                return f"${cents / 100:,.2f}"'''))],
        "wrong": [variant("the receipt formats its amounts itself, money.format_money unchanged", write("shop/receipt.py", '''
            from shop import layout, pricing


            def _money(cents):
                return f"${cents / 100:,.2f}"


            def render(cart):
                lines = [layout.line(f"{sku} x{qty}", _money(cents * qty)) for sku, cents, qty in cart.lines]
                lines.append(layout.line("Subtotal", _money(cart.subtotal())))
                percent = pricing.discount_for(cart.code, cart.subtotal()) if cart.code else 0
                if percent:
                    lines.append(layout.line(f"Discount {cart.code} ({percent}%)", "-" + _money(cart.discount())))
                if cart.tax_rate:
                    lines.append(layout.line("Tax", _money(cart.tax())))
                lines.append(layout.line("Total", _money(cart.total())))
                return "\\n".join(lines)
            '''))],
    },
    "cross-tax-rounding": {
        "alternatives": [variant("Decimal, half up", edit("shop/pricing.py", "    return int(cents * rate)", '''
            from decimal import ROUND_HALF_UP, Decimal
            return int((Decimal(cents) * Decimal(str(rate))).quantize(Decimal(1), rounding=ROUND_HALF_UP))''', indent=4))],
        "wrong": [variant("rounded up", edit("shop/pricing.py", "    return int(cents * rate)", '''
            import math
            return math.ceil(cents * rate)''', indent=4))],
    },
    "cross-currency-symbol": {
        "alternatives": [variant("a local formatter in render", edit("shop/money.py", FORMAT, '''
            def format_money(cents, symbol="$"):
                dollars, rest = divmod(cents, 100)
                return symbol + f"{dollars}.{rest:02d}"'''),
            write("shop/receipt.py", '''
                from functools import partial

                from shop import layout, money, pricing


                def render(cart, symbol="$"):
                    fmt = partial(money.format_money, symbol=symbol)
                    lines = [layout.line(f"{sku} x{qty}", fmt(cents * qty)) for sku, cents, qty in cart.lines]
                    lines.append(layout.line("Subtotal", fmt(cart.subtotal())))
                    percent = pricing.discount_for(cart.code, cart.subtotal()) if cart.code else 0
                    if percent:
                        lines.append(layout.line(f"Discount {cart.code} ({percent}%)", "-" + fmt(cart.discount())))
                    if cart.tax_rate:
                        lines.append(layout.line("Tax", fmt(cart.tax())))
                    lines.append(layout.line("Total", fmt(cart.total())))
                    return "\\n".join(lines)
                '''))],
        "wrong": [variant("the symbol on the total line only", edit("shop/money.py", FORMAT, '''
            def format_money(cents, symbol="$"):
                dollars, rest = divmod(cents, 100)
                return f"{symbol}{dollars}.{rest:02d}"'''), edit("shop/receipt.py", "def render(cart):", 'def render(cart, symbol="$"):'),
            edit("shop/receipt.py", 'money.format_money(cart.total())', 'money.format_money(cart.total(), symbol)'))],
    },
    "cross-receipt-width": {
        "alternatives": [variant("rjust in layout, width passed on", edit("shop/layout.py", '''
            def line(label, value):
                """label and value padded with spaces to WIDTH columns (at least one space between them)."""
                gap = max(1, WIDTH - len(label) - len(value))
                return label + " " * gap + value''', '''
            def line(label, value, width=None):
                width = WIDTH if width is None else width
                return label + " " + value.rjust(max(len(value), width - len(label) - 1))'''),
            write("shop/receipt.py", RECEIPT_WITH.format(param="width=32", a="", l=", width=width")))],
        "wrong": [variant("the module's WIDTH changed for good", edit("shop/receipt.py", '''
            def render(cart):
                """The receipt: one line per cart line, then the subtotal, the discount, the tax and the total."""''', '''
            def render(cart, width=32):
                layout.WIDTH = width'''))],
    },
    "cross-unknown-code": {
        "alternatives": [variant("a lookup in pricing that the cart calls", edit("shop/pricing.py", '''
            def discount_for(code, subtotal):''', '''
            class UnknownCode(ValueError):
                pass


            def check_code(code):
                if code.upper() not in DISCOUNT_CODES:
                    raise UnknownCode(f"unknown discount code {code!r}")
                return code.upper()


            def discount_for(code, subtotal):'''), edit("shop/cart.py", APPLY, '''
                def apply_code(self, code):
                    self.code = pricing.check_code(code)''', indent=4))],
        "wrong": [variant("raised when the discount is computed, not when the code is applied", edit("shop/pricing.py", '''
            def discount_for(code, subtotal):
                """The percent off that code gives on subtotal (cents): 0 for an unknown code or below its minimum."""
                if code not in DISCOUNT_CODES:
                    return 0''', '''
            class UnknownCode(ValueError):
                pass


            def discount_for(code, subtotal):
                if code not in DISCOUNT_CODES:
                    raise UnknownCode(code)'''))],
    },
    "cross-price-validation": {
        "alternatives": [variant("a regular expression", edit("shop/money.py", PARSE_SPLIT, '''
            import re
            if not re.fullmatch(r"[\\d,]*(\\.\\d{0,2})?", text):
                raise ValueError(f"bad price {text!r}")
            dollars, _, fraction = text.partition(".")''', indent=4))],
        "wrong": [variant("refused by the cart only", edit("shop/cart.py", '''
            cents = money.parse_money(price) if isinstance(price, str) else int(price)''', '''
            if isinstance(price, str) and ("-" in price or len(price.partition(".")[2]) > 2):
                raise ValueError(price)
            cents = money.parse_money(price) if isinstance(price, str) else int(price)''', indent=8))],
    },
    "cross-discount-amount": {
        "alternatives": [variant("imported by name", edit("shop/pricing.py", '''
            def tax(cents, rate):''', '''
            def discount_amount(code, subtotal):
                percent = discount_for(code, subtotal)
                return subtotal * percent // 100


            def tax(cents, rate):'''), edit("shop/cart.py", "from shop import money, pricing",
                                             "from shop import money, pricing\nfrom shop.pricing import discount_amount"),
            edit("shop/cart.py", "return self.subtotal() * pricing.discount_for(self.code, self.subtotal()) // 100",
                 "return discount_amount(self.code, self.subtotal())"),
            edit("shop/receipt.py", "amount = cart.subtotal() * percent // 100", "amount = cart.discount()"))],
        "wrong": [variant("the receipt keeps its own computation", edit("shop/pricing.py", '''
            def tax(cents, rate):''', '''
            def discount_amount(code, subtotal):
                return subtotal * discount_for(code, subtotal) // 100


            def tax(cents, rate):'''), edit("shop/cart.py",
                                             "return self.subtotal() * pricing.discount_for(self.code, self.subtotal()) // 100",
                                             "return pricing.discount_amount(self.code, self.subtotal())"))],
    },
    "cross-code-dataclass": {
        "alternatives": [variant("keyword fields and getattr", edit("shop/pricing.py", '''
            DISCOUNT_CODES = {
                # code: (percent off, minimum subtotal in cents)
                "WELCOME5": (5, 0),
                "SAVE10": (10, 2000),
                "BIG20": (20, 10000),
            }''', '''
            import dataclasses


            @dataclasses.dataclass(frozen=True)
            class Code:
                percent: int
                minimum: int = 0


            DISCOUNT_CODES = {
                "WELCOME5": Code(percent=5),
                "SAVE10": Code(percent=10, minimum=2000),
                "BIG20": Code(percent=20, minimum=10000),
            }'''), edit("shop/pricing.py", '''
                percent, minimum = DISCOUNT_CODES[code]
                return percent if subtotal >= minimum else 0''', '''
                code = DISCOUNT_CODES[code]
                return code.percent if subtotal >= getattr(code, "minimum") else 0''', indent=4))],
        "wrong": [variant("a dataclass that is not frozen", edit("shop/pricing.py", '''
            DISCOUNT_CODES = {
                # code: (percent off, minimum subtotal in cents)
                "WELCOME5": (5, 0),
                "SAVE10": (10, 2000),
                "BIG20": (20, 10000),
            }''', '''
            from dataclasses import astuple, dataclass


            @dataclass
            class Code:
                percent: int
                minimum: int


            DISCOUNT_CODES = {"WELCOME5": Code(5, 0), "SAVE10": Code(10, 2000), "BIG20": Code(20, 10000)}'''),
            edit("shop/pricing.py", "percent, minimum = DISCOUNT_CODES[code]", "percent, minimum = astuple(DISCOUNT_CODES[code])"))],
    },
    "cross-code-minimum-test": {
        "alternatives": [variant("the cart's total in tests/test_cart.py", write("tests/test_minimum.py", '''
            from shop.cart import Cart


            def test_below_minimum():
                cart = Cart()
                cart.add("mug", "$15.00")
                cart.apply_code("SAVE10")
                assert cart.total() == 1500
            '''))],
        "wrong": [variant("a code above its minimum", write("tests/test_minimum.py", '''
            from shop.cart import Cart
            from shop.receipt import render


            def test_minimum():
                cart = Cart()
                cart.add("kettle", 2500)
                cart.apply_code("SAVE10")
                assert "Discount" in render(cart)
            '''))],
    },
    "cross-price-comma-test": {
        "alternatives": [variant("pytest, two units", write("tests/test_prices.py", '''
            from shop.cart import Cart


            def test_thousands_separator():
                cart = Cart()
                cart.add("sofa", "$1,234.50", qty=2)
                assert cart.subtotal() == 246900
            '''))],
        "wrong": [variant("a price without a separator", write("tests/test_prices.py", '''
            from shop.cart import Cart


            def test_large_price():
                cart = Cart()
                cart.add("sofa", "$1234.50")
                assert cart.subtotal() == 123450
            '''))],
    },
}
