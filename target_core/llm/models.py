"""Which chat model a spec names, for every caller that asks a model for JSON (the
benchmark builder's writer and judge, the truthfulness judge, HySE's writer): one
chooser instead of one per caller.

    openai[:MODEL]      OpenAI or any OpenAI-compatible server (OPENAI_BASE_URL);
                        default gpt-4o-mini on OpenAI, elsewhere the server's one model
    local:NAME          a GGUF model on llama.cpp inside this process (llm.local)

Each family is an entry of CHAT_MODELS (registry.py's Registry: adding a backend is one
entry). `chat_model(spec, settings)` returns the ChatModel with the workspace's response
cache. A role a model plays (the truthfulness judge, the question writer and judge) is a
registry of its own, made by `role_registry`: its offline stand-in (`heuristic`,
`template`, `round-trip`) first, then one entry per chat backend, so its examples and
error messages follow the backends. No API key for `openai` is a ConfigError when the
model is built, before any call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from target_core.config import Settings
from target_core.errors import UnknownNameError
from target_core.llm.cache import ResponseCache
from target_core.llm.chat import DEFAULT_MODEL, ChatModel
from target_core.registry import Entry, Registry

T = TypeVar("T")


def _openai(arg: str, settings: Settings) -> ChatModel:
    return ChatModel(settings, arg or None)


def _local(arg: str, settings: Settings) -> ChatModel:
    from target_core.llm.local import local_chat

    return local_chat(arg, settings)


CHAT_MODELS: Registry[ChatModel] = Registry("chat model", [
    Entry("openai", f"OpenAI or any OpenAI-compatible server (OPENAI_BASE_URL); default "
          f"{DEFAULT_MODEL} on OpenAI, elsewhere the server's one model", _openai,
          ("openai", f"openai:{DEFAULT_MODEL}")),
    Entry("local", "a GGUF model on llama.cpp inside this process (local:PATH.gguf); "
          "local:smollm2 is SmolLM2-135M, bundled", _local, ("local:smollm2",)),
])
"""Chat backends; each entry builds a model without a response cache (chat_model and
role_registry give it one)."""
CHAT_SPECS = CHAT_MODELS.examples()
"""Examples of model specs, for error messages and pickers."""


def chat_model(spec: str, settings: Settings, *,
               cache: ResponseCache | None = None) -> ChatModel:
    """The chat model `spec` names (module docstring); an unknown family raises
    UnknownNameError. `cache` defaults to the workspace's response cache."""
    return cached(CHAT_MODELS.build(spec, settings), settings, cache)


def role_registry(kind: str, offline: tuple[str, str, Callable[[], T]],
                  wrap: Callable[[ChatModel, Settings], T]) -> Registry[T]:
    """The registry of a role models play (`kind`, e.g. "truthfulness judge"): its
    offline stand-in (name, description, build), which takes no argument, then one
    entry per chat backend whose component is `wrap(model, settings)` of the backend's
    model (built here, so a missing key fails here)."""
    name, description, build = offline
    registry: Registry[T] = Registry(kind)

    def make(arg: str, settings: Settings) -> T:
        if arg:  # `template:x` is no spec: named in the role's own words
            raise UnknownNameError(kind, f"{name}:{arg}", registry.examples())
        return build()

    def entry(backend: Entry[ChatModel]) -> Entry[T]:
        return Entry(backend.name, backend.description,
                     lambda arg, settings: wrap(backend.build(arg, settings), settings),
                     backend.examples)

    registry.register(Entry(name, description, make, (name,), self_contained=True))
    for backend in CHAT_MODELS:
        registry.register(entry(backend))
    return registry


def cached(model: ChatModel, settings: Settings, cache: ResponseCache | None = None
           ) -> ChatModel:
    """`model` with `cache`, by default the workspace's response cache."""
    model.cache = cache or ResponseCache.in_workspace(settings.workspace)
    return model
