"""Which chat model a spec names, for every caller that asks a model for JSON (the
benchmark builder's writer and judge, the truthfulness judge, HySE's writer): one
chooser instead of one per caller.

    openai[:MODEL]      OpenAI or any OpenAI-compatible server (OPENAI_BASE_URL);
                        default gpt-4o-mini on OpenAI, elsewhere the server's one model
    local:NAME          a GGUF model on llama.cpp inside this process (llm.local)

`chat_model(spec, settings)` returns a ChatModel with the workspace's response cache,
or None for a spec of another family (the caller's offline stand-ins: `template`,
`round-trip`, `heuristic`), so the caller names what it accepts in its own error.
No API key for `openai` is a ConfigError here, before any call.
"""

from __future__ import annotations

from target_core.config import Settings
from target_core.llm.cache import ResponseCache
from target_core.llm.chat import DEFAULT_MODEL, ChatModel
from target_core.registry import parse_spec

CHAT_FAMILIES = ("openai", "local")
CHAT_SPECS = ("openai", f"openai:{DEFAULT_MODEL}", "local:smollm2")
"""Examples of model specs, for error messages and pickers."""


def chat_family(spec: str) -> str | None:
    """`openai` or `local` when `spec` names a chat model, else None."""
    name = parse_spec(spec).name
    return name if name in CHAT_FAMILIES else None


def chat_model(spec: str, settings: Settings, *,
               cache: ResponseCache | None = None) -> ChatModel | None:
    """The chat model `spec` names (module docstring), or None for another family.
    `cache` defaults to the workspace's response cache."""
    family = chat_family(spec)
    if family is None:
        return None
    arg = parse_spec(spec).arg
    cache = cache or ResponseCache.in_workspace(settings.workspace)
    if family == "local":
        from target_core.llm.local import local_chat

        return local_chat(arg, settings, cache=cache)
    return ChatModel(settings, arg or None, cache=cache)
