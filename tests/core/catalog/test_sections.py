"""Typed catalog sections (core/catalog/sections.py): the shipped files read as typed values, a
catalog without a file gets the section's defaults, and a bad value names its file and field."""

from __future__ import annotations

import dataclasses
import tomllib

import pytest

from core.catalog.loader import CATALOG_DIR, CatalogError, default_catalog
from core.catalog.sections import (
    AnchorCalibration,
    AnchorNearest,
    ReplySection,
    SubmitRules,
    sections,
)

CATALOG = default_catalog()


def _file(name: str) -> dict[str, object]:
    with (CATALOG_DIR / name).open("rb") as fh:
        return tomllib.load(fh)


def test_the_shipped_files_read_as_typed_sections() -> None:
    s = sections(CATALOG)
    anchors = _file("anchors.toml")
    assert dataclasses.asdict(s.anchors.calibration) == anchors["calibration"]
    assert dataclasses.asdict(s.anchors.nearest) == anchors["nearest"]
    submit = _file("submit.toml")["submit"]
    assert isinstance(submit, dict)
    assert {k: getattr(s.submit.submit, k) for k in submit} == {
        k: tuple(v) if isinstance(v, list) else v for k, v in submit.items()
    }
    assert s.reply.cpu_only.hide_notes == frozenset(_file("reply.toml")["cpu_only"]["hide_notes"])  # type: ignore[index]
    assert s.calibration.rows == _file("calibration.toml")["meta"]["rows"]  # type: ignore[index]
    assert s.socket_words["双路"] == 2
    assert "unsloth" in s.hub.search_words("forks")


def test_every_default_is_the_shipped_value_where_the_file_gives_one() -> None:
    # A tiny catalog without the file prices and reads as the shipped one would.
    assert AnchorCalibration() == sections(CATALOG).anchors.calibration
    assert AnchorNearest() == sections(CATALOG).anchors.nearest
    shipped = sections(CATALOG).submit.submit
    defaults = SubmitRules()
    for f in dataclasses.fields(SubmitRules):
        if f.name not in {"tensor_parallel_engines", "speculative_words"}:
            assert getattr(defaults, f.name) == getattr(shipped, f.name), f.name


def test_a_catalog_without_the_files_gets_the_defaults() -> None:
    bare = dataclasses.replace(CATALOG, tables={})
    s = sections(bare)
    assert s.reply == ReplySection() and s.anchors.nearest == AnchorNearest()
    assert s.hub.name_words("ignore") == frozenset() and s.calibration.rows is None


def test_a_bad_value_names_its_file_and_field() -> None:
    tables = {**CATALOG.tables, "anchors": {"nearest": {"max_distance": "far"}}}
    with pytest.raises(CatalogError, match=r"anchors\.toml: nearest\.max_distance"):
        sections(dataclasses.replace(CATALOG, tables=tables))


def test_the_estimator_files_read_as_typed_sections_and_pickle_for_the_warm_cache() -> None:
    import pickle

    s = sections(CATALOG)
    estimator = _file("estimator.toml")
    assert s.estimator.ladder.contexts == tuple(estimator["ladder"]["contexts"])  # type: ignore[index]
    assert s.estimator.host.os_reserve_gib == estimator["host"]["os_reserve_gib"]  # type: ignore[index]
    assert s.fit.multi_gpu.tp_eff == _file("calibration.toml")["multi_gpu"]["tp_eff"]  # type: ignore[index]
    assert s.speed.multi_gpu.layer_split_us == _file("speed.toml")["multi_gpu"]["layer_split_us"]  # type: ignore[index]
    assert {h.id for h in s.hosts.host} == {h["id"] for h in _file("hosts.toml")["host"]}  # type: ignore[union-attr]
    assert s.cpus.efficiency.band["decode"].low == _file("cpus.toml")["efficiency"]["band"]["decode"]["low"]  # type: ignore[index]
    assert pickle.loads(pickle.dumps(s)) == s


def test_a_catalog_without_the_estimator_files_still_prices() -> None:
    from core.catalog.pricing_sections import EstimatorSection

    bare = sections(dataclasses.replace(CATALOG, tables={}))
    assert bare.estimator == EstimatorSection() and bare.estimator.host.os_reserve_gib == 4.0
    assert bare.hosts.host == () and bare.fit.band == {}
