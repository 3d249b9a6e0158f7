"""Readers for config.json families whose layers differ from the one-mixer-one-FFN layout that
`core.catalog.from_config` counts generically (per-layer head sizes, state-space blocks)."""
