"""Several consumer cards with no RAM said: the box around them is a multi-card desktop, whose RAM
is the preset hosts.toml [defaults] names for it ("consumer:multi"), not the one-card desktop's
32 GiB; a datacenter box and a single card keep their own presets."""

from __future__ import annotations

from core.catalog.loader import default_catalog
from core.estimator.setup import HostSpec, build_setup

CATALOG = default_catalog()


def test_three_3090s_assume_a_multi_card_desktop() -> None:
    one = build_setup(CATALOG.gpus["rtx-3090"], CATALOG, 1)
    three = build_setup(CATALOG.gpus["rtx-3090"], CATALOG, 3)
    assert one.host.ram_gib == 32
    assert three.host.ram_gib >= 64 and three.host.bandwidth_gbs == one.host.bandwidth_gbs


def test_said_ram_wins_over_the_multi_card_default() -> None:
    setup = build_setup(CATALOG.gpus["rtx-3090"], CATALOG, 3, host_spec=HostSpec(ram_gib=32))
    assert setup.host.ram_gib == 32


def test_datacenter_cards_keep_the_server_preset() -> None:
    one = build_setup(CATALOG.gpus["h100-sxm"], CATALOG, 1)
    eight = build_setup(CATALOG.gpus["h100-sxm"], CATALOG, 8)
    assert eight.host == one.host
