"""The LocalRunner's TurnResult usage against the scripted HTTP server: tokens summed over every
model call of a guided turn (attempts and repairs), the model the server named, a cost from the
profile's prices; and the price keys of a profile (camelCase, non-negative)."""

from __future__ import annotations

import pytest

from foreman.backends.local.profiles import parse_profile
from foreman.errors import ConfigError

from .fakeserver import text
from .test_guided_runner import run


async def test_a_guided_turn_sums_every_call_and_prices_it(tmp_path) -> None:
    def responder(req):
        return text("```python\n# file: calc.py\ndef sub(a, b):\n    return b - a\n```")

    result, _tools, server, stats, _repo = await run(tmp_path, responder, attempts=2, repairs=1,
                                                     price_in_per_mtok=3.0, price_out_per_mtok=15.0)
    assert len(server.usage_sent) == 4 == stats.replies  # 2 attempts x (first reply + 1 repair)
    sent_in = sum(u["prompt_tokens"] for _, u in server.usage_sent)
    sent_out = sum(u["completion_tokens"] for _, u in server.usage_sent)
    assert (result.input_tokens, result.output_tokens) == (sent_in, sent_out) == (400, stats.completion_tokens)
    assert result.model == "fake-coder"
    assert result.cost_usd == pytest.approx((sent_in * 3.0 + sent_out * 15.0) / 1_000_000)


async def test_without_a_price_the_turn_costs_zero(tmp_path) -> None:
    result, *_ = await run(tmp_path, lambda req: text("```python\n# file: calc.py\ndef sub(a, b):\n    return a - b\n```"))
    assert result.input_tokens == 100 and result.output_tokens and result.cost_usd == 0


def test_price_keys_of_a_profile() -> None:
    profile = parse_profile("p", {"priceInPerMtok": 0.5, "price_out_per_mtok": 2})
    assert (profile.price_in_per_mtok, profile.price_out_per_mtok) == (0.5, 2.0)
    assert parse_profile("p", {}).price_in_per_mtok == 0.0
    with pytest.raises(ConfigError, match="priceInPerMtok|price_in_per_mtok"):
        parse_profile("p", {"priceInPerMtok": -1})
    with pytest.raises(ConfigError, match=r"p\.priceOutPerMtok: "):
        parse_profile("p", {"priceOutPerMtok": "cheap"})
