"""One framework judged for a query: the hard gates and matching rules give whether it runs and
why not; a runnable one (or one that runs under WSL only) gets its launch command and notes."""

from __future__ import annotations

from core.catalog.framework import Framework
from core.catalog.loader import Catalog, default_catalog
from core.estimator.frameworks.commands.values import launch_command
from core.estimator.frameworks.gates import gate_params, hard_gates
from core.estimator.frameworks.notes import framework_notes
from core.estimator.frameworks.query import FrameworkOption, FrameworkQuery
from core.estimator.frameworks.rules import rule_notes
from core.i18n import Note


def evaluate(fw: Framework, q: FrameworkQuery, with_command: bool = True) -> FrameworkOption:
    """Judge one framework for the query. `with_command=False` skips filling the launch command and
    its notes: choosing a framework needs only whether each one runs, and filling eight commands
    was most of the cost of an answer."""
    params = gate_params(fw, q)
    gates = hard_gates(fw, q, params)
    rule_blockers, notes = rule_notes(fw, q, gates.backend, params)
    blockers = [*gates.blockers, *rule_blockers]
    runnable = not blockers
    command = ""
    if not (runnable or (gates.wsl_only and len(blockers) == 1)):
        notes = []  # caveats of a combination that doesn't run only distract from why it doesn't
    elif with_command:
        command, fill_notes = launch_command(fw, q, gates.backend)
        notes.extend(fill_notes)
        notes.extend(framework_notes(fw, q, params))
    # Every card holds its own CUDA context and buffers.
    low, high = fw.overhead_gib
    # Blockers first: they are the answer to "why not".
    return FrameworkOption(
        framework=fw.id,
        runnable=runnable,
        notes=tuple(blockers + notes),
        overhead_gib=(low * q.gpu_count, high * q.gpu_count),
        command=command,
        backend=gates.backend,
        strengths=tuple(Note(code, params) for code in fw.strengths),
        weaknesses=tuple(Note(code, params) for code in fw.weaknesses),
    )


def framework_options(
    q: FrameworkQuery, catalog: Catalog | None = None, with_commands: bool = True
) -> tuple[FrameworkOption, ...]:
    """Every catalog framework judged for the query, in catalog order."""
    frameworks = (catalog or default_catalog()).frameworks
    return tuple(evaluate(fw, q, with_commands) for fw in frameworks.values())
