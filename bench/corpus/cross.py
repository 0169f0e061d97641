"""Corpus shape "cross": a checkout (``shop``) whose tests drive the cart and the receipt, while the
rules they show live in other modules (money, pricing, layout); unittest.

``python cross.py DIR`` writes the repository into DIR (a git repository, one commit on main).
"""

from __future__ import annotations

from _repo import main

README = '''
# shop

The checkout of our small web shop: a cart of lines, discount codes, tax, and the printed
receipt. Amounts are integer cents everywhere.

- `shop/money.py`: formatting and parsing amounts
- `shop/pricing.py`: discount codes and tax
- `shop/cart.py`: the cart
- `shop/layout.py`, `shop/receipt.py`: the receipt

Tests: `python -m unittest discover tests` (or `python -m pytest`).
'''

INIT = '''
"""The shop's checkout."""
'''

MONEY = '''
"""Amounts of money, in integer cents."""


def format_money(cents):
    """Cents as dollars: 123456 -> '$1,234.56'."""
    dollars, rest = divmod(cents, 100)
    return f"${dollars}.{rest:02d}"


def parse_money(text):
    """Dollars written by a person as cents: '$1,234.50' -> 123450, '2' -> 200."""
    text = text.strip().lstrip("$").replace(",", "")
    dollars, _, fraction = text.partition(".")
    return int(dollars or "0") * 100 + int((fraction + "00")[:2])
'''

PRICING = '''
"""Discount codes and tax."""

DISCOUNT_CODES = {
    # code: (percent off, minimum subtotal in cents)
    "WELCOME5": (5, 0),
    "SAVE10": (10, 2000),
    "BIG20": (20, 10000),
}


def discount_for(code, subtotal):
    """The percent off that code gives on subtotal (cents): 0 for an unknown code or below its minimum."""
    if code not in DISCOUNT_CODES:
        return 0
    percent, minimum = DISCOUNT_CODES[code]
    return percent if subtotal >= minimum else 0


def tax(cents, rate):
    """The tax on an amount in cents at rate (0.08 is 8%), in cents."""
    return int(cents * rate)
'''

CART = '''
"""The cart: lines of (sku, unit price in cents, quantity), a discount code, tax."""

from shop import money, pricing


class Cart:
    """What a customer is about to buy."""

    def __init__(self, tax_rate=0.0):
        self.lines = []
        self.code = None
        self.tax_rate = tax_rate

    def add(self, sku, price, qty=1):
        """Add qty units of sku at price: cents, or a string such as '$1.25'."""
        cents = money.parse_money(price) if isinstance(price, str) else int(price)
        self.lines.append((sku, cents, qty))

    def apply_code(self, code):
        """Use a discount code (any case)."""
        self.code = code.upper()

    def subtotal(self):
        """The sum of the lines, in cents."""
        return sum(cents * qty for _, cents, qty in self.lines)

    def discount(self):
        """The discount in cents (0 without a code)."""
        if self.code is None:
            return 0
        return self.subtotal() * pricing.discount_for(self.code, self.subtotal()) // 100

    def tax(self):
        """The tax on the discounted subtotal, in cents."""
        return pricing.tax(self.subtotal() - self.discount(), self.tax_rate)

    def total(self):
        """What the customer pays, in cents."""
        return self.subtotal() - self.discount() + self.tax()
'''

LAYOUT = '''
"""The receipt's lines: a label on the left, an amount on the right."""

WIDTH = 32


def line(label, value):
    """label and value padded with spaces to WIDTH columns (at least one space between them)."""
    gap = max(1, WIDTH - len(label) - len(value))
    return label + " " * gap + value
'''

RECEIPT = '''
"""The printed receipt of a cart."""

from shop import layout, money, pricing


def render(cart):
    """The receipt: one line per cart line, then the subtotal, the discount, the tax and the total."""
    lines = [layout.line(f"{sku} x{qty}", money.format_money(cents * qty)) for sku, cents, qty in cart.lines]
    lines.append(layout.line("Subtotal", money.format_money(cart.subtotal())))
    if cart.code:
        percent = pricing.discount_for(cart.code, cart.subtotal())
        if percent:
            amount = cart.subtotal() * percent // 100
            lines.append(layout.line(f"Discount {cart.code} ({percent}%)", "-" + money.format_money(amount)))
    if cart.tax_rate:
        lines.append(layout.line("Tax", money.format_money(cart.tax())))
    lines.append(layout.line("Total", money.format_money(cart.total())))
    return "\\n".join(lines)
'''

TEST_CART = '''
import unittest

from shop.cart import Cart


class CartTest(unittest.TestCase):
    def test_subtotal(self):
        cart = Cart()
        cart.add("apple", 125, qty=2)
        cart.add("bread", "$3.25")
        self.assertEqual(cart.subtotal(), 575)

    def test_discount_code(self):
        cart = Cart()
        cart.add("kettle", 4000)
        cart.apply_code("save10")
        self.assertEqual(cart.discount(), 400)
        self.assertEqual(cart.total(), 3600)

    def test_tax(self):
        cart = Cart(tax_rate=0.1)
        cart.add("lamp", 1000)
        self.assertEqual(cart.tax(), 100)
        self.assertEqual(cart.total(), 1100)


if __name__ == "__main__":
    unittest.main()
'''

TEST_RECEIPT = '''
import unittest

from shop.cart import Cart
from shop.receipt import render


class ReceiptTest(unittest.TestCase):
    def test_lines_and_total(self):
        cart = Cart()
        cart.add("apple", 125, qty=2)
        cart.add("bread", "$3.25")
        lines = render(cart).splitlines()
        self.assertEqual(lines[0], "apple x2" + " " * 19 + "$2.50")
        self.assertTrue(lines[1].startswith("bread x1") and lines[1].endswith("$3.25"))
        self.assertTrue(lines[-1].startswith("Total") and lines[-1].endswith("$5.75"))

    def test_discount_line(self):
        cart = Cart()
        cart.add("kettle", 4000)
        cart.apply_code("SAVE10")
        text = render(cart)
        self.assertIn("Discount SAVE10 (10%)", text)
        self.assertIn("-$4.00", text)
        self.assertTrue(text.endswith("$36.00"))


if __name__ == "__main__":
    unittest.main()
'''

FILES = {"README.md": README, "shop/__init__.py": INIT, "shop/money.py": MONEY, "shop/pricing.py": PRICING,
         "shop/cart.py": CART, "shop/layout.py": LAYOUT, "shop/receipt.py": RECEIPT,
         "tests/__init__.py": "", "tests/test_cart.py": TEST_CART, "tests/test_receipt.py": TEST_RECEIPT}

if __name__ == "__main__":
    main(FILES, "shop: the checkout's cart, pricing and receipt, with tests")
