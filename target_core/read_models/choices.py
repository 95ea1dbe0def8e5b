"""What the pages' pickers offer: the registered retriever and generator families'
example specs (and their parsers, to check a typed spec), the prompt sets, the named
pipelines, a generator's note, and the metrics' labels and definitions. Reading the
registries lists and describes families; building one is a run's work."""

from __future__ import annotations

from target_core.engine.presets import pipeline_preset
from target_core.generators import EXAMPLE_SPECS as GENERATOR_SPECS
from target_core.generators import GENERATORS, generator_note
from target_core.generators.prompts import PROMPT_SETS
from target_core.metrics.labels import definition, label
from target_core.retrievers import EXAMPLE_SPECS as RETRIEVER_SPECS
from target_core.retrievers import split_spec

__all__ = ["GENERATORS", "GENERATOR_SPECS", "PROMPT_SETS", "RETRIEVER_SPECS", "definition",
           "generator_note", "label", "pipeline_preset", "split_spec"]
