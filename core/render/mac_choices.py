"""The line asking which chip and memory a Mac has, when only its product was named ("mac studio"):
each chip it ships with and the memory sizes it comes in, newest first."""

from __future__ import annotations

import re

from core.catalog.loader import Catalog
from core.i18n import Lang, translate
from core.understanding.name_index import index_for

SHOWN = 4  # a MacBook Pro shipped with 11 chips: the newest few are the ones asked about
_BIN = re.compile(r"-\d+c$")  # "apple-m4-max-40c": a GPU-core bin of the one chip "apple-m4-max"
_APPLE = re.compile(r"^Apple\s+|\s*\(.*\)$")


def mac_choices_line(product: str, catalog: Catalog, lang: Lang) -> str:
    """ "Which Mac Studio? … M3 Ultra 96/256/512 GB, M4 Max 36/48/64/128 GB, …"."""
    vocab = index_for(catalog).vocab
    sizes: dict[str, set[float]] = {}
    names: dict[str, str] = {}
    for gid in vocab.mac_products.get(product, ()):
        gpu = catalog.gpus.get(gid)
        if gpu is None:
            continue
        chip = _BIN.sub("", gid)
        names.setdefault(chip, _APPLE.sub("", gpu.name))
        sizes.setdefault(chip, set()).update(gpu.memory_options_gib)
    chips = list(names)[:SHOWN]
    listed = ", ".join(f"{names[c]} {'/'.join(f'{m:g}' for m in sorted(sizes[c]))} GB" for c in chips)
    first = chips[0] if chips else ""
    top = sorted(sizes.get(first, {0.0}))
    example = f"{product} {names.get(first, '').lower()} {top[len(top) // 2]:g}gb" if first else product
    shown = vocab.mac_product_names.get(product, product)
    return translate("reply.clarify.mac", lang, product=shown, chips=listed, example=example)
