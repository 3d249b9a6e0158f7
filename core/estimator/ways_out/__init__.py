"""The ways out of a row that doesn't fit: one class per way out, one ordered registry.

- `kind`: `WayOutKind`, the typed name of a way out (its value is the string `estimate --json` and
  stored data carry);
- `remedy`: `Remedy`, a way out with its own figures, as the estimate hands it on;
- `base`: `WayOut`, what every way out says (when it applies, what it proposes and what that changes
  in the run) and the class-level `Facts` other code reads instead of sets of kind strings;
- one module per way out (`kv_quant`, `wired_limit`, `shorter_context`, `offload`, `lower_quant`,
  `more_cards`, `more_ram`) and `outcomes` (what a row's `remedy` says that is no way out);
- `registry`: the ordered list `find` walks and the look-up by kind; `ranking`: which one leads.

Nothing is imported here: `core.estimator.memory_fit` reads `kind` and `remedy`, and the ways out
read `memory_fit`, so importing the registry from the package would be a cycle.
"""
