"""Model architectures, one module each: what config.json `model_type`s it reads, how it reads them
into a catalog `Model` and a parameter count, and how a model of its attention kind is sized (KV
cache shape, cache reads, weight tensors).

A module declares all of that in one `register(Architecture(...))` call; `registry` finds every
module of this package on first use, so adding an architecture is adding its module (and its
tests). `from_config` looks readers up by `model_type`, `core.estimator.memory` and
`core.estimator.weights` look sizing up by `Model.attention` (a catalog row has no model_type).

Building blocks shared by several modules: `fields` (typed config reads), `parts` (KvShape, the
weight-tensor record, GQA/FFN tensors), `mamba2` (the Mamba-2 mixer), `transformer` (the generic
mixer + FFN counting that the dense, MoE, MLA and linear-hybrid readers share).
"""
