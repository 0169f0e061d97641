"""The ``uses`` check (issue 39): a function a task asks the code to share must be used by the
code, not only by the tests (an answer that adds it and leaves the old copies passed every check)."""

from __future__ import annotations

from foreman.backends.local.uses import check, kept_copies, left_alone, unused

GOAL = ("word_count() and title_case() in textutil.py each carry their own copy of the regular expression. "
        "Please pull it out into one public function `words(text)` and make both functions use it.")
BEFORE = ("import re\n\ndef word_count(text):\n    return len(re.findall(r'\\w+', text))\n\n"
          "def title_case(text):\n    return ' '.join(w.title() for w in re.findall(r'\\w+', text))\n")
ADDED_ONLY = BEFORE + "\ndef words(text):\n    return re.findall(r'\\w+', text)\n"
SHARED = ("import re\n\ndef words(text):\n    return re.findall(r'\\w+', text)\n\n"
          "def word_count(text):\n    return len(words(text))\n\n"
          "def title_case(text):\n    return ' '.join(w.title() for w in words(text))\n")


def test_a_shared_function_nothing_but_its_own_body_calls_is_unused() -> None:
    assert unused(GOAL, {"textutil.py": BEFORE}, {"textutil.py": ADDED_ONLY}) == ["words"]
    recursive = ADDED_ONLY + "\ndef again(text):\n    pass\n"
    assert unused(GOAL, {"textutil.py": BEFORE}, {"textutil.py": recursive.replace(
        "return re.findall", "return words(text[1:]) if 0 else re.findall")}) == ["words"]  # its own body only
    assert check(GOAL, {"textutil.py": BEFORE}, {"textutil.py": ADDED_ONLY}) is not None


def test_a_use_anywhere_in_the_code_counts_an_import_alone_does_not() -> None:
    assert unused(GOAL, {"textutil.py": BEFORE}, {"textutil.py": SHARED}) == []
    other = {"textutil.py": ADDED_ONLY, "cli.py": "from textutil import words\n\ndef main():\n    print(words('a b'))\n"}
    assert unused(GOAL, {"textutil.py": BEFORE}, other) == []
    imported_only = {"textutil.py": ADDED_ONLY, "cli.py": "from textutil import words\n"}
    assert unused(GOAL, {"textutil.py": BEFORE}, imported_only) == ["words"]
    handler = {"cli.py": "def cmd_add(args):\n    pass\n\ndef build(sub):\n    sub.set_defaults(func=cmd_add)\n"}
    goal = "Give each command its own function, `cmd_add(args)`, and have main call `args.func(args)`."
    assert unused(goal, {"cli.py": "def build(sub):\n    pass\n"}, handler) == []


def test_no_use_asked_or_nothing_new_means_nothing_to_check() -> None:
    add = "Add a function `words(text)` to textutil.py that returns the list of words."
    assert unused(add, {"textutil.py": BEFORE}, {"textutil.py": ADDED_ONLY}) == []  # a new API: tests call it
    assert unused(GOAL, {"textutil.py": ADDED_ONLY}, {"textutil.py": ADDED_ONLY}) == []  # it was there before
    assert unused(GOAL, {}, {"textutil.py": ADDED_ONLY}) == []  # the attempt wrote no such file
    assert unused(GOAL, {"textutil.py": BEFORE}, {"textutil.py": "def broken(:\n"}) == []


def test_a_function_that_still_computes_what_the_shared_one_returns_keeps_its_own_copy() -> None:
    half = ("import re\n\ndef words(text):\n    return re.findall(r'\\w+', text)\n\n"
            "def word_count(text):\n    return len(words(text))\n\n"
            "def title_case(line):\n    return ' '.join(w.title() for w in re.findall(r'\\w+', line))\n")
    assert kept_copies("words", {"textutil.py": half}) == ["textutil.py:title_case"]  # any argument in place of text
    assert check(GOAL, {"textutil.py": BEFORE}, {"textutil.py": half}) == (
        "words: own copy kept in title_case in textutil.py",
        "The task asks the existing code to use words, but title_case in textutil.py still computes what words "
        "returns with its own copy of that code. Change it to call words instead, and send the changed definition "
        "complete.")
    assert kept_copies("words", {"textutil.py": SHARED}) == [] and check(GOAL, {"textutil.py": BEFORE},
                                                                       {"textutil.py": SHARED}) is None
    other_pattern = half.replace("re.findall(r'\\w+', line)", "re.findall(r'[a-z]+', line)")
    assert kept_copies("words", {"textutil.py": other_pattern}) == []  # another expression: no copy
    tiny = "def inc(x):\n    return x + 1\n\ndef other(y):\n    return y + 1\n"
    assert kept_copies("inc", {"m.py": tiny}) == []  # too small to be a copy of anything


def test_a_copy_split_over_locals_or_reached_through_its_module_is_still_a_copy() -> None:
    pricing = ("DISCOUNTS = {'A': 10}\n\ndef discount_for(code, subtotal):\n    return DISCOUNTS.get(code, 0)\n\n"
               "def discount_amount(code, subtotal):\n    return subtotal * discount_for(code, subtotal) // 100\n")
    receipt = ("from shop import pricing\n\ndef render(cart):\n    percent = pricing.discount_for(cart.code, cart.total())\n"
               "    amount = cart.total() * percent // 100\n    return f'-{amount}'\n")
    assert kept_copies("discount_amount", {"pricing.py": pricing, "receipt.py": receipt}) == ["receipt.py:render"]
    shared = receipt.replace("    percent = pricing.discount_for(cart.code, cart.total())\n"
                             "    amount = cart.total() * percent // 100\n",
                             "    amount = pricing.discount_amount(cart.code, cart.total())\n")
    assert kept_copies("discount_amount", {"pricing.py": pricing, "receipt.py": shared}) == []
    twice = receipt.replace("    amount = cart.total()", "    percent = 0\n    amount = cart.total()")
    assert kept_copies("discount_amount", {"pricing.py": pricing, "receipt.py": twice}) == []  # assigned twice: unknown


def test_moving_code_into_a_function_asks_for_its_use_even_unsaid() -> None:
    moved = ("The regular expression of word_count() and title_case() is repeated. Pull it out of both into one "
             "function `words(text)` in textutil.py.")
    assert unused(moved, {"textutil.py": BEFORE}, {"textutil.py": ADDED_ONLY}) == ["words"]
    assert unused(moved, {"textutil.py": BEFORE}, {"textutil.py": SHARED}) == []
    new_api = "Add a function `words(text)` to textutil.py that moves each word into a list."
    assert unused(new_api, {"textutil.py": BEFORE}, {"textutil.py": ADDED_ONLY}) == []  # a new API, no refactor


def test_a_function_the_task_names_left_as_it_was_still_does_the_work() -> None:
    goal = ("The discount is computed twice, once in Cart.discount() and again in receipt.render(). Move that "
            "computation into one function `discount_amount(code, subtotal)` in pricing.py and make both use it.")
    pricing = "def discount_for(code, subtotal):\n    return 10 if code else 0\n"
    cart = ("import pricing\n\nclass Cart:\n    def discount(self):\n"
            "        return self.total * pricing.discount_for(self.code, self.total) // 100\n")
    receipt = ("import pricing\n\ndef render(cart):\n    percent = pricing.discount_for(cart.code, cart.total)\n"
               "    return f'-{cart.total * percent // 100}'\n")
    before = {"pricing.py": pricing, "receipt.py": receipt}
    # a new function that repeats the old one's body (no copy of it to find) and only the receipt changed
    added = pricing + "\ndef discount_amount(code, subtotal):\n    return 10 if code else 0\n"
    used = receipt.replace("pricing.discount_for(cart.code, cart.total)", "pricing.discount_amount(cart.code, cart.total)")
    now = {"pricing.py": added, "cart.py": cart, "receipt.py": used}
    assert left_alone(goal, before, now) == ["discount"]
    assert check(goal, before, now) == (
        "discount() unchanged",
        "The task moves that work out of discount() into discount_amount, but discount() is unchanged: still doing "
        "the work without discount_amount. Change discount() to call discount_amount, and send the changed "
        "definitions complete.")
    both = {**now, "cart.py": cart.replace("self.total * pricing.discount_for(self.code, self.total) // 100",
                                           "pricing.discount_amount(self.code, self.total)")}
    assert left_alone(goal, {**before, "cart.py": cart}, both) == [] and check(goal, {**before, "cart.py": cart},
                                                                                both) is None
    assert left_alone("Add a function `discount_amount(code, subtotal)`; Cart.discount() stays.", before, now) == []
