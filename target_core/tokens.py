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

import numpy as np

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


def _ascii_classes() -> np.ndarray:
    """Per ASCII code: 0 space, 1 letter, 2 digit, 3 punctuation, as _PIECES sees it."""
    classes = np.full(128, 3, dtype=np.int8)
    for code in range(128):
        char = chr(code)
        if re.fullmatch(r"[^\W\d_]", char):
            classes[code] = 1
        elif re.fullmatch(r"\d", char):
            classes[code] = 2
        elif re.fullmatch(r"\s", char):
            classes[code] = 0
    return classes


_ASCII_CLASSES = _ascii_classes()
_PER_TOKEN = np.array([0, 4, 3, 1])  # characters per started token, by class (0: none)
_BATCH_CHARS = 4_000_000


def estimate_many(texts: list[str]) -> list[int]:
    """estimate_tokens of each text, the same numbers computed in bulk: ASCII texts go
    through numpy in batches (runs of one character class, their lengths, a division
    per run); any other text takes the regular expression."""
    counts = [0] * len(texts)
    batch: list[int] = []
    size = 0
    for i, text in enumerate(texts):
        if not text.isascii():
            counts[i] = estimate_tokens(text)
            continue
        batch.append(i)
        size += len(text) + 1
        if size >= _BATCH_CHARS:
            _estimate_ascii(texts, batch, counts)
            batch, size = [], 0
    if batch:
        _estimate_ascii(texts, batch, counts)
    return counts


def _estimate_ascii(texts: list[str], batch: list[int], counts: list[int]) -> None:
    # one space after each text, so no run of letters or digits crosses two texts
    joined = " ".join(texts[i] for i in batch) + " "
    classes = _ASCII_CLASSES[np.frombuffer(joined.encode("ascii"), dtype=np.uint8)]
    starts = np.flatnonzero(np.diff(classes, prepend=np.int8(-1)))
    lengths = np.diff(starts, append=classes.size)
    kinds = classes[starts]
    per_token = _PER_TOKEN[kinds]
    tokens = np.where(kinds == 3, lengths, -(-lengths // np.maximum(per_token, 1)))
    tokens[kinds == 0] = 0
    text_starts = np.cumsum([0] + [len(texts[i]) + 1 for i in batch[:-1]])
    owner = np.searchsorted(text_starts, starts, side="right") - 1
    totals = np.bincount(owner, weights=tokens, minlength=len(batch))
    for i, total in zip(batch, totals.tolist(), strict=True):
        counts[i] = int(total)


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
        return estimate_many(texts)


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
