"""Shared builders: approved submissions on a card the published set doesn't cover (V100 32 GB)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.anchors.anchor_index import AnchorIndex
from core.catalog.loader import default_catalog
from core.storage.records import Actor, Measurement, Submission

CATALOG = default_catalog()
GPU = "tesla-v100-32g-pcie"
MODEL = "gemma-3-27b"


def make(
    sid: int,
    decode: float,
    *,
    name: str = "alice",
    gpu: str = GPU,
    model: str = MODEL,
    quant: str = "Q4_K_M",
    count: int = 1,
    origin: str = "community",
    status: str = "approved",
    when: datetime | None = None,
    **fields: Any,
) -> Submission:
    measurement = Measurement(gpu, model, quant, decode, gpu_count=count, **fields)
    published = origin == "published"
    return Submission(
        id=sid,
        measurement=measurement,
        submitter=Actor("published" if published else "telegram", f"user{sid}", name),
        created_at=when or datetime(2026, 11, 3, tzinfo=UTC),
        chat_id="chat" if not published else "",
        lang="en",
        status=status,  # type: ignore[arg-type]
        origin=origin,  # type: ignore[arg-type]
        source="https://example.org/bench" if published else None,
        source_date="2024-05" if published else None,
    )


def index_of(*subs: Submission) -> AnchorIndex:
    return AnchorIndex(list(subs), CATALOG)
