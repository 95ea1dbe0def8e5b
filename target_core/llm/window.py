"""The context window and what it leaves for a prompt: how many tokens one request may
hold, where that number came from, and how prompts are counted.

The window is, first found first: one a server named in an error ("context window of
2048 tokens"), what the server reports (llama.cpp's /props, the models list), OpenAI's
published window, else the caller's setting (TARGET_CONTEXT_WINDOW). A prompt may hold

    window - reply tokens (the task's max_tokens) - PROMPT_MARGIN

counted with llama.cpp's own tokenizer where the server has one (`ServerCounter`, exact),
else with tiktoken, of which only FOREIGN_COUNT_SHARE is used for a model that is not
OpenAI's: another model's tokenizer may count more.

A server that refuses a prompt as too long names why (`overflow_in`): llama.cpp "request
(731 tokens) exceeds the available context size (512 tokens)" (with `n_prompt_tokens`
and `n_ctx` in its body), vLLM "maximum context length is 8192 tokens ... (8216 in the
messages, ...)" or "... your request has 8216 input tokens", Ollama "the input length
exceeds the context length" (no numbers). The window it names is learned
(`negotiation.learn_window`); the share is learned too (`_SHARES`): our count of the
refused prompt over the server's, times COUNT_MARGIN, or, when the server gives no
count, the share used so far times SHARE_STEP. Both are kept per server and model for
the process, so the retry of the refused prompt is fitted to them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from target_core.llm.negotiation import Learned, learned_window
from target_core.llm.servers import is_openai, server_label
from target_core.tokens import TokenCounter

log = logging.getLogger(__name__)

PROMPT_MARGIN = 64
"""Tokens kept free beyond the prompt and the reply: the chat template's role markers."""
FOREIGN_COUNT_SHARE = 0.85
"""Share of the window used when counts come from tiktoken for another model."""
COUNT_MARGIN = 0.95
"""A learned share is our count over the server's of a refused prompt, times this."""
SHARE_STEP = 0.8
"""A refusal that gives no count shrinks the share used by this factor."""

_EXCEEDS = re.compile(r"exceeds? the (?:available )?context|maximum context length|"
                      r"context length exceeded|context_length_exceeded|"
                      r"exceed_context_size", re.I)
_WINDOW = re.compile(r"(?:context window of|maximum context length is|context size"
                     r"(?: is)?|n_ctx\W+)\s*\(?(\d{3,})", re.I)
_PROMPT = re.compile(r"request \((\d+) tokens\)|\((\d+) in the messages|"
                     r"request has (\d+) input tokens|messages resulted in (\d+) tokens",
                     re.I)


@dataclass(frozen=True)
class PromptLimit:
    """What a model's context window leaves for one prompt (all its messages)."""

    tokens: int
    """window - reply_tokens - margin: the most tokens the messages may hold."""
    window: int
    reply_tokens: int
    counter: TokenCounter
    """Counts as the model does where the server says how (else tiktoken's)."""
    source: str = ""
    """Where the window came from ("the server's /props", "TARGET_CONTEXT_WINDOW", ...)."""
    reply_setting: str = ""
    """The setting that sets reply_tokens (TARGET_MAX_TOKENS_SQL, ...), for advice."""
    window_setting: str = ""
    """What sets the window (TARGET_LOCAL_CONTEXT, the server's context size, ...)."""
    share: float = 1.0
    """The share of the window's room our counter may fill (below 1: a foreign count)."""

    def advice(self) -> str:
        """Which knob helps a prompt that does not fit: lowering the reply's tokens when
        they take most of the window, else raising the window."""
        lower = f"lower {self.reply_setting} ({self.reply_tokens})"
        raise_ = f"raise the window ({self.window_setting or self.source})"
        return (f"{lower} or {raise_}" if 2 * self.reply_tokens >= self.window
                else f"{raise_} or {lower}")

    def too_small(self, prompt_tokens: int, without_tables: int) -> str:
        """Why a prompt of `prompt_tokens` (with its smallest table) is not sent."""
        return (f"the prompt does not fit the context window: {prompt_tokens} tokens with "
                f"its first table ({without_tables} without), but the window of "
                f"{self.window} tokens ({self.source}) minus {self.reply_tokens} reply "
                f"tokens ({self.reply_setting}) and a {PROMPT_MARGIN}-token margin leaves "
                f"{self.tokens}{self._share_note()}; {self.advice()}")

    def _share_note(self) -> str:
        return (f" ({self.share:.0%} of the room, as our count is not the model's)"
                if self.share < 1 else "")


class WindowFacts(Protocol):
    """What a server reported of its window (llm.client.ServerInfo)."""

    @property
    def context_window(self) -> int | None: ...

    @property
    def window_source(self) -> str: ...

    @property
    def tokenize(self) -> bool: ...

    @property
    def llama_cpp(self) -> bool: ...


class Tokenizer(Protocol):
    """What ServerCounter needs of a client (llm.client.LLMClient)."""

    @property
    def server(self) -> str: ...

    def tokenize(self, text: str) -> int | None: ...


class ServerCounter(TokenCounter):
    """Counts with llama.cpp's own tokenizer (POST /tokenize), exact for its model."""

    def __init__(self, client: Tokenizer, fallback: TokenCounter) -> None:
        super().__init__(f"{client.server} /tokenize", True)
        object.__setattr__(self, "_client", client)
        object.__setattr__(self, "_fallback", fallback)

    @property
    def label(self) -> str:
        return f"the server's tokenizer ({self.encoding_name})"

    def count(self, text: str) -> int:
        counted = self._client.tokenize(text)  # type: ignore[attr-defined]
        return counted if counted is not None else self._fallback.count(text)  # type: ignore[attr-defined]

    def count_many(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]


# --- a server's refusal of a prompt too long ------------------------------------------------

@dataclass(frozen=True)
class Overflow:
    """What a server's refusal of a too-long prompt says (None where it says nothing)."""

    window: int | None
    prompt_tokens: int | None
    """The server's own count of the refused prompt."""


def overflow_in(text: str, body: Any = None) -> Overflow | None:
    """The overflow a server's error `text` (and its JSON `body`) reports, or None when
    it is not about the context (see the module docstring)."""
    if not _EXCEEDS.search(text):
        return None
    fields = body if isinstance(body, dict) else {}  # the body, or its "error" object
    if isinstance(fields.get("error"), dict):
        fields = fields["error"]
    window = fields.get("n_ctx")
    prompt = fields.get("n_prompt_tokens")
    if not isinstance(window, int) and (found := _WINDOW.search(text)):
        window = int(found.group(1))
    if not isinstance(prompt, int) and (found := _PROMPT.search(text)):
        prompt = int(next(g for g in found.groups() if g))
    return Overflow(window if isinstance(window, int) else None,
                    prompt if isinstance(prompt, int) else None)


_SHARES = Learned[float]()
"""The share of the window's room our counts may fill, after a refusal."""


def share_after(overflow: Overflow, our_count: int, share: float) -> float:
    """The share to use after a refusal of a prompt we counted `our_count` tokens, when
    `share` was used."""
    if overflow.prompt_tokens and our_count:
        return min(share, COUNT_MARGIN * our_count / overflow.prompt_tokens)
    return share * SHARE_STEP


# --- a model's prompt limit, and what a refusal teaches it ----------------------------------

def prompt_limit(info: WindowFacts, client: Tokenizer, base_url: str, model: str, task: str,
                 *, reply: int, default_window: int, local: bool, fallback: TokenCounter
                 ) -> PromptLimit:
    """What the window of `model` on the server at `base_url` (which reported `info`;
    `client` counts with its tokenizer) leaves for a `task` prompt whose reply may take
    `reply` tokens; `default_window` is the setting used when nothing better is known,
    `local` tells a `local:` model's (its setting is named in messages)."""
    learned = learned_window(base_url, model)
    window = learned or info.context_window or default_window
    source = ("the server's error message" if learned else info.window_source
              if info.context_window else "TARGET_CONTEXT_WINDOW")
    room = window - reply - PROMPT_MARGIN
    counter: TokenCounter = ServerCounter(client, fallback) if info.tokenize else fallback
    share = _SHARES.get(base_url, model) or (
        1.0 if info.tokenize or is_openai(base_url) else FOREIGN_COUNT_SHARE)
    where = ("TARGET_LOCAL_CONTEXT" if local else
             "TARGET_CONTEXT_WINDOW" if source == "TARGET_CONTEXT_WINDOW" else
             "the server's context size, llama.cpp's --ctx-size per slot"
             if info.llama_cpp else "the server's context length")
    return PromptLimit(max(0, int(room * share)), window, reply, counter, source,
                       f"TARGET_MAX_TOKENS_{task.upper()}", where, share)


def learn_from_refusal(overflow: Overflow, limit: PromptLimit,
                       messages: Sequence[Mapping[str, str]], base_url: str, model: str
                       ) -> None:
    """After the server refused `messages` as too long: the share of the window our
    counts may fill from now on."""
    ours = sum(limit.counter.count(m["content"]) for m in messages)
    share = share_after(overflow, ours, limit.share)
    _SHARES.put(base_url, model, share)
    log.warning("%s refused a prompt of %d tokens by our count (%s by its own) as too "
                "long; prompts now fill %.0f%% of the window's room", server_label(base_url),
                ours, overflow.prompt_tokens or "no count", share * 100)
