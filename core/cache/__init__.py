"""Caches that outlive one process (core/cache/warm.py: what start-up builds from the shipped catalog)."""
