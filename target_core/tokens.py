"""Token counts: exact with tiktoken when its encoding is available, else a labelled estimate.

tiktoken downloads its BPE files on first use and cannot do so offline; loading is
bounded in time (a worker thread) so a missing network never hangs the caller, and the
result is remembered for the process so the wait is paid at most once.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "o200k_base"
_PIECES = re.compile(r"[^\W\d_]+|\d+|[^\w\s]|_", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate of BPE tokens.

    Letters: one token per started 4 characters of a word; digits: one per started 3
    (cl100k and o200k split numbers into groups of at most three); every punctuation
    mark one. It is a rough figure for sizing tables, always labelled as an estimate.
    """
    total = 0
    for piece in _PIECES.findall(text):
        if piece[0].isdigit():
            total += math.ceil(len(piece) / 3)
        elif piece[0].isalpha():
            total += math.ceil(len(piece) / 4)
        else:
            total += 1
    return total


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens of text; `exact` says whether tiktoken or the estimate is used."""

    encoding_name: str
    exact: bool
    _encoding: Any = None

    @property
    def label(self) -> str:
        if self.exact:
            return f"tiktoken {self.encoding_name}"
        return f"estimate (tiktoken {self.encoding_name} unavailable offline)"

    def count(self, text: str) -> int:
        if self._encoding is not None:
            return len(self._encoding.encode(text, disallowed_special=()))
        return estimate_tokens(text)

    def count_many(self, texts: list[str]) -> list[int]:
        if self._encoding is not None:
            return [len(t) for t in self._encoding.encode_batch(texts, disallowed_special=())]
        return [estimate_tokens(t) for t in texts]


def _load_encoding(name: str, timeout: float) -> Any | None:
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            import tiktoken

            result["encoding"] = tiktoken.get_encoding(name)
        except Exception as exc:  # noqa: BLE001 - any failure means "use the estimate"
            result["error"] = exc

    worker = threading.Thread(target=work, name=f"tiktoken-{name}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        log.warning("tiktoken %s did not load within %.1f s; using an estimate", name, timeout)
        return None
    if "error" in result:
        log.info("tiktoken %s unavailable (%s); using an estimate", name,
                 type(result["error"]).__name__)
        return None
    return result.get("encoding")


def get_counter(encoding_name: str = DEFAULT_ENCODING, timeout: float | None = None
                ) -> TokenCounter:
    """The counter for an encoding, loaded once per process within `timeout` seconds
    (default: the TARGET_TOKEN_TIMEOUT setting)."""
    if timeout is None:
        from target_core.config import load_settings

        timeout = load_settings().token_timeout
    return _counter(encoding_name, timeout)


@lru_cache(maxsize=8)
def _counter(encoding_name: str, timeout: float) -> TokenCounter:
    encoding = _load_encoding(encoding_name, timeout)
    return TokenCounter(encoding_name, encoding is not None, encoding)
