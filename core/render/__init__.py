"""Replies as chat messages: compact tables, detail views and charts, rendered per chat target."""
