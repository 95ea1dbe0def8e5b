"""Generators: a registry from spec strings to builders, and the shared protocol.

Specs: `heuristic` (offline baseline, no model), `openai` / `openai:MODEL` (any
OpenAI-compatible chat server; default gpt-4o-mini) and `local:smollm2` / `local:PATH.gguf`
(a GGUF model on llama.cpp's server inside this process; SmolLM2-135M is bundled, for
trying the pipeline, not for scores). The grammar is
target_core.registry's; `py:MODULE:CLASS` is your own class
(generators/plugin.py). Adding a generator means one module, one entry in GENERATORS
and one line in docs/generators.md.
"""

from __future__ import annotations

from target_core.config import Settings
from target_core.generators.base import (
    CONTEXT_MODES,
    Context,
    Generation,
    GenerationRequest,
    Generator,
    TableSummary,
)
from target_core.registry import Entry, Registry

GeneratorEntry = Entry[Generator]


def _heuristic(arg: str, settings: Settings) -> Generator:
    from target_core.generators.heuristic import HeuristicGenerator

    return HeuristicGenerator()


def _plugin(arg: str, settings: Settings) -> Generator:
    from target_core.generators.plugin import build_plugin_generator

    return build_plugin_generator(arg, settings)


def _openai_model(arg: str) -> str:
    """openai[:MODEL]: the chat model, default gpt-4o-mini."""
    from target_core.llm.chat import DEFAULT_MODEL

    return arg or DEFAULT_MODEL


def _openai_paid(arg: str) -> str | None:
    """The chat model OpenAI bills for this spec, or None on another server
    (OPENAI_BASE_URL): a self-hosted model has no known price."""
    from target_core.config import load_settings
    from target_core.llm.servers import billed_by_openai

    return _openai_model(arg) if billed_by_openai(load_settings().openai_base_url) else None


def _openai(arg: str, settings: Settings) -> Generator:
    from target_core.generators.openai_chat import OpenAIGenerator
    from target_core.llm.cache import ResponseCache

    # no model named: the server's own (llm.chat.default_model), priced as gpt-4o-mini
    # only on OpenAI (_openai_paid)
    return OpenAIGenerator(settings, arg or None,
                           cache=ResponseCache.in_workspace(settings.workspace))


def _local(arg: str, settings: Settings) -> Generator:
    from target_core.generators.local_llm import local_generator
    from target_core.llm.cache import ResponseCache

    return local_generator(arg, settings, cache=ResponseCache.in_workspace(settings.workspace))


GENERATORS: Registry[Generator] = Registry("generator", (
    Entry("heuristic", "offline baseline, no model: extractive answers, a lexical "
          "fact checker, pattern-based SQL (never sees gold data)", _heuristic,
          ("heuristic",), self_contained=True),
    Entry("openai", "OpenAI or any OpenAI-compatible chat server "
          "(openai[:MODEL], default gpt-4o-mini; TARGET's Appendix D prompts)", _openai,
          ("openai", "openai:gpt-4o-mini", "openai:gpt-4o"), paid_model=_openai_paid),
    Entry("local", "a GGUF model on llama.cpp's server inside this process, offline "
          "(local:PATH.gguf); local:smollm2 is SmolLM2-135M, bundled, for trying the "
          "pipeline, not for scores", _local, ("local:smollm2",)),
    Entry("py", "your own class: py:MODULE:CLASS or py:PATH.py:CLASS with "
          "generate(request) (generators/plugin.py)", _plugin,
          ("py:examples/echo_generator.py:EchoGenerator",)),
))

EXAMPLE_SPECS = GENERATORS.examples()


def split_generator_spec(spec: str) -> tuple[GeneratorEntry, str]:
    """The registry entry for `spec` and its argument; unknown names suggest the closest."""
    return GENERATORS.parse(spec)


def generator_note(spec: str) -> str | None:
    """What a launch form says about the generator `spec` before it runs (the offline
    baseline, a local model's label), or None; a `local:` file that is missing raises
    ConfigError, an unknown name UnknownNameError."""
    entry, arg = GENERATORS.parse(spec)
    if entry.name == "heuristic":
        return ("heuristic, an offline baseline with no model (it reads no prompt: the "
                "prompt set changes nothing).")
    if entry.name == "local":
        from target_core.llm.llama_server import local_label

        return (f"{local_label(arg)}. Runs on this machine (llama.cpp inside the run's "
                "process), free.")
    return None


def build_generator(spec: str, settings: Settings) -> Generator:
    """A generator for `spec`; configuration errors (e.g. no API key) raise here."""
    return GENERATORS.build(spec, settings)


__all__ = ["CONTEXT_MODES", "EXAMPLE_SPECS", "GENERATORS", "Context", "Generation",
           "GenerationRequest", "Generator", "GeneratorEntry", "TableSummary",
           "build_generator", "generator_note", "split_generator_spec"]
