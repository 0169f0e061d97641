"""Number settings refuse what no setting means."""

from __future__ import annotations

import pytest

from foreman.config import resolve
from foreman.errors import ConfigError


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_a_number_setting_refuses_nan_and_infinity(value: str) -> None:
    """Found by a newcomer: ``--speed nan`` was accepted, and the sim never planned."""
    with pytest.raises(ConfigError) as err:
        resolve({"speed": value}, env={})
    assert "speed" in str(err.value) and value in str(err.value)
