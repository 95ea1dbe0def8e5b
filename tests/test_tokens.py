"""Token counts: the estimate by hand, and tiktoken loading that never hangs."""

from __future__ import annotations

import random
import time

import pytest

from target_core import tokens


def test_estimate_by_hand() -> None:
    # "Lake" 1, "Depth" 2 (5 letters -> 2 groups of <=4), "|" x3, "12345" 2 (groups of <=3)
    assert tokens.estimate_tokens("| Lake | Depth | 12345") == 1 + 2 + 3 + 2
    assert tokens.estimate_tokens("") == 0
    assert tokens.estimate_tokens("   ") == 0
    assert tokens.estimate_tokens("naïve café") == 2 + 1


def test_unknown_encoding_falls_back_to_labelled_estimate() -> None:
    counter = tokens.get_counter("no-such-encoding", 2.0)
    assert not counter.exact
    assert counter.label.startswith("estimate")
    assert counter.count("| Lake |") == 3
    assert counter.count_many(["a", "bb cc"]) == [1, 2]


def test_hanging_download_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: time.sleep(30))
    start = time.monotonic()
    counter = tokens.get_counter("slow-encoding-for-test", 0.2)
    assert time.monotonic() - start < 5
    assert not counter.exact


def test_default_timeout_comes_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: time.sleep(30))
    monkeypatch.setenv("TARGET_TOKEN_TIMEOUT", "0.3")
    start = time.monotonic()
    assert not tokens.get_counter("slow-encoding-from-settings").exact
    assert time.monotonic() - start < 5


def test_loaded_encoding_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    class Encoding:
        def encode(self, text, disallowed_special=()):
            return text.split()

        def encode_batch(self, texts, disallowed_special=()):
            return [t.split() for t in texts]

    import tiktoken

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: Encoding())
    counter = tokens.get_counter("fake-encoding-for-test", 2.0)
    assert counter.exact and counter.label == "tiktoken fake-encoding-for-test"
    assert counter.count("a b c") == 3 and counter.count_many(["a", "b c"]) == [1, 2]


def test_estimate_many_equals_estimate_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    from target_core.datasets import load_dataset
    from target_core.serialize import table_text
    from target_core.types import VIEW_PRESETS

    rng = random.Random(0)
    texts = [table_text(t, view) for name in ("demo-qa", "demo-sql")
             for t in load_dataset(name).tables for view in VIEW_PRESETS.values()]
    texts += ["".join(chr(rng.randrange(128)) for _ in range(rng.randrange(40)))
              for _ in range(2000)]  # every ASCII class, control characters included
    texts += ["", " ", "_", "x" * 9, "1234567", "naïve café 123", "١٢٣ digits", "a\x1fb"]
    expected = [tokens.estimate_tokens(t) for t in texts]
    assert tokens.estimate_many(texts) == expected
    monkeypatch.setattr(tokens, "_BATCH_CHARS", 50)  # many batches, texts at their edges
    assert tokens.estimate_many(texts) == expected
