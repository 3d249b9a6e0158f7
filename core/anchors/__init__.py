"""Measured anchors: approved real-machine runs shown beside estimates and used to calibrate them.

`index` (AnchorIndex: exact and nearest lookups), `calibrate` (shrunken per-card speed factors from
community runs), `render` (the reply's anchor lines), `seed` (published numbers as anchors) and
`export` (the open data set). Pure core code: no storage, no chat.
"""
