"""A framework's filled launch command: every placeholder's value (each family's module fills its
own) and the rendered template, with the notes about guesses made while filling it."""

from __future__ import annotations

from core.catalog.framework import Framework
from core.estimator.frameworks.commands.apps import app_values
from core.estimator.frameworks.commands.ktransformers import kt_template, kt_values
from core.estimator.frameworks.commands.llama_cpp import cpu_flags, ik_values, llama_cpp_values
from core.estimator.frameworks.commands.ollama import ollama_values
from core.estimator.frameworks.commands.serving import serving_values
from core.estimator.frameworks.commands.template import render_command, template_fields
from core.estimator.frameworks.commands.torch_apps import torch_values
from core.estimator.frameworks.query import FrameworkQuery
from core.i18n import Note


def command_values(
    fw: Framework, q: FrameworkQuery, backend: str | None
) -> tuple[dict[str, str], list[Note]]:
    """Every placeholder's value, plus notes about guesses made while filling them."""
    # Every family's values are filled whatever the engine: a template may borrow another
    # family's placeholders (ik_llama.cpp uses llama.cpp's), and the notes check the engine.
    notes: list[Note] = []
    values = {"ctx": str(q.context), "quant": q.quant.id, "gpu_count": str(q.gpu_count)}
    values |= llama_cpp_values(fw, q, backend, notes)
    values |= ik_values(q)
    values |= serving_values(fw, q, notes)
    values |= ollama_values(q)
    values |= app_values(q)
    values |= torch_values(q)
    if fw.engine == "ktransformers":
        values |= kt_values(q, notes)
    return values, notes


def launch_command(fw: Framework, q: FrameworkQuery, backend: str | None) -> tuple[str, list[Note]]:
    """The filled command ("" when there is nothing to serve) and the notes filling it made."""
    values, notes = command_values(fw, q, backend)
    # KTransformers runs a GGUF with another program than its safetensors (kt_template).
    template = kt_template(fw, q) if fw.engine == "ktransformers" else fw.command
    # An empty serve_model means no checkpoint is known: no command rather than a placeholder.
    command = render_command(template, values) if values.get("serve_model", "-") else ""
    if command and q.cpu_only and "ngl" in template_fields(template):
        command += cpu_flags(q)
    return command, notes
