"""Your own generator: `py:MODULE:CLASS` or `py:PATH.py:CLASS`.

The minimal shape is a class built with no arguments that has `generate(request)`:
`request` is a GenerationRequest (task, query, context, messages; generators/base.py)
and the reply is the answer as a str, a Generation, or a dict of Generation's fields
("answer", and "database_id" for text-to-SQL). Optional: `label` (shown with the run),
`concurrency` (requests at once, default 1) and `summarize(table, rows=3)` (used by
summary:EMBEDDER@py:...; by default the table's title and header). The adapter keeps
the protocol's promise that a failed call never raises: an exception, or a reply of
another type, becomes that query's Generation.error, and the run goes on.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from target_core.config import Settings
from target_core.generators.base import (
    Generation,
    GenerationRequest,
    TableSummary,
    first_rows,
)
from target_core.pyclass import code_fingerprint, instantiate, parse_class_ref
from target_core.registry import PluginError
from target_core.types import Table

_FIELDS = {f.name for f in fields(Generation)}


def build_plugin_generator(arg: str, settings: Settings) -> PluginGenerator:
    """The `py` registry entry: load the class `arg` names, build it with no arguments."""
    ref = parse_class_ref(arg, "generator")
    return adapt_generator(instantiate(ref, "generator"), spec=f"py:{arg}",
                           code=code_fingerprint(ref, "generator"))


def adapt_generator(obj: object, *, spec: str, code: str | None = None) -> PluginGenerator:
    """`obj` wrapped as a Generator; one without generate() raises PluginError."""
    if not callable(getattr(obj, "generate", None)):
        raise PluginError(f"generator '{spec}': {type(obj).__name__} has no generate("
                          "request) method")
    concurrency = getattr(obj, "concurrency", 1)
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise PluginError(f"generator '{spec}': {type(obj).__name__}.concurrency must be a "
                          f"positive int, got {concurrency!r}")
    return PluginGenerator(obj, spec=spec, code=code, concurrency=concurrency)


class PluginGenerator:
    """A user's generator behind the Generator protocol."""

    def __init__(self, obj: Any, *, spec: str, code: str | None, concurrency: int) -> None:
        self.obj = obj
        self.spec = spec
        self.code = code
        self.concurrency = concurrency
        name = type(obj).__name__
        label = getattr(obj, "label", None)
        self.label = str(label) if label else f"{name} (your generator, {spec})"
        self.name = name

    def generate(self, request: GenerationRequest) -> Generation:
        started = time.perf_counter()
        try:
            reply = self.obj.generate(request)
            generation = self.as_generation(reply)
        except Exception as exc:  # the protocol's promise: a failed call is recorded
            generation = Generation(answer="", error=f"{self.name}.generate raised "
                                    f"{type(exc).__name__}: {exc}")
        ms = (time.perf_counter() - started) * 1000
        return generation if generation.ms else Generation(**{**generation.to_dict(),
                                                              "ms": ms})

    def as_generation(self, reply: Any) -> Generation:
        if isinstance(reply, Generation):
            return reply
        if isinstance(reply, str):
            return Generation(answer=reply)
        if isinstance(reply, Mapping):
            unknown = sorted(set(reply) - _FIELDS)
            if unknown or not isinstance(reply.get("answer"), str):
                return Generation(answer="", error=f"{self.name}.generate returned a dict "
                                  "that needs a str 'answer' and only Generation's fields"
                                  + (f" (unknown: {', '.join(map(str, unknown))})"
                                     if unknown else ""))
            return Generation(**dict(reply))
        return Generation(answer="", error=f"{self.name}.generate must return a str, a "
                          f"dict or a Generation, got {type(reply).__name__}")

    def summarize(self, table: Table, *, rows: int = 3) -> TableSummary:
        if callable(getattr(self.obj, "summarize", None)):
            try:
                reply = self.obj.summarize(table, rows=rows)
            except Exception as exc:
                return TableSummary(name=table.table_id, summary="", error=(
                    f"{self.name}.summarize raised {type(exc).__name__}: {exc}"))
            if isinstance(reply, TableSummary):
                return reply
            if isinstance(reply, str):
                return TableSummary(name=table.title or table.table_id, summary=reply)
            return TableSummary(name=table.table_id, summary="", error=(
                f"{self.name}.summarize must return a str or a TableSummary, got "
                f"{type(reply).__name__}"))
        shown = first_rows(table, max(rows, 0))
        name = table.title or table.table_id
        return TableSummary(name=name, summary=f"{name}: {', '.join(map(str, shown.header))}")
