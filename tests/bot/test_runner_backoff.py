"""The reconnection back-off: doubling from the first wait, never past the cap, jitter only down."""

from __future__ import annotations

import pytest

from bot.adapter import Backoff
from bot.settings import Settings, SettingsError, load_settings


def test_doubles_up_to_the_cap_and_jitter_only_shortens() -> None:
    backoff = Backoff(first=1.0, ceiling=60.0, jitter=0.25)
    assert [backoff.delay(n, rand=lambda: 0.0) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff.delay(3, rand=lambda: 1.0) == 3.0  # 4 s less a quarter
    assert backoff.delay(10**9, rand=lambda: 0.0) == 60.0  # no overflow however long it's been down
    assert all(45.0 <= backoff.delay(50) <= 60.0 for _ in range(100))


def test_the_figures_come_from_the_settings() -> None:
    figures = {"reconnect_first_seconds": 0.5, "reconnect_max_seconds": 30, "reconnect_jitter": 0}
    settings = Settings(_env_file=None, **figures)  # type: ignore[call-arg, arg-type]
    assert Backoff.from_settings(settings) == Backoff(0.5, 30.0, 0.0)
    default = Backoff.from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    assert default.first > 0 and default.ceiling >= default.first and 0 <= default.jitter <= 1


def test_a_bad_figure_is_named() -> None:
    with pytest.raises(SettingsError, match="TOKBOT_RECONNECT_JITTER"):
        load_settings(_env_file=None, reconnect_jitter=2)
