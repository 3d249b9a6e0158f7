"""Launch commands: the catalog's `str.format` templates and, per framework family, the values of
their placeholders. Each module fills the placeholders of one family; `values` joins them."""
