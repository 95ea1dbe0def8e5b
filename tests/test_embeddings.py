"""Embedders: torch-free MiniLM against sentence-transformers' vectors, and the
OpenAI-compatible embedder end to end against a fake server on loopback."""

from __future__ import annotations

import json
import logging
import random
import shutil
import struct
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.special

from target_core.config import Settings, load_settings
from target_core.embeddings import (
    Embedder,
    EmbeddingError,
    ModelFilesError,
    get_embedder,
    minilm,
    minilm_weights,
)
from target_core.embeddings.minilm import MiniLMEmbedder
from target_core.embeddings.openai_embedder import OpenAIEmbedder
from target_core.errors import ConfigError, UnknownNameError
from target_core.tokens import TokenCounter

if TYPE_CHECKING:  # registered by tests/conftest.py (pytest_plugins)
    from fake_openai import FakeOpenAI


REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json")
                       .read_text(encoding="utf-8"))
TEXTS = [item["text"] for item in REFERENCE["items"]]
VECTORS = np.array([item["vector"] for item in REFERENCE["items"]], dtype=np.float64)
KEY = "sk-test-0123456789abcdef"


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    model = MiniLMEmbedder()
    model.load()
    return model


# --- MiniLM against sentence-transformers -------------------------------------------------
def test_minilm_matches_reference_batched(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(TEXTS, kind="document")
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosines(vectors, VECTORS).min() >= 0.999


def test_minilm_matches_reference_one_at_a_time(embedder: MiniLMEmbedder) -> None:
    vectors = np.concatenate([embedder.embed([t], kind="query") for t in TEXTS])
    assert cosines(vectors, VECTORS).min() >= 0.999


@pytest.mark.parametrize(("workers", "batch_tokens"), [(1, 64), (2, 300), (2, 4096)])
def test_minilm_any_order_and_batching(workers: int, batch_tokens: int) -> None:
    order = list(range(len(TEXTS)))
    random.Random(workers + batch_tokens).shuffle(order)
    model = MiniLMEmbedder(workers=workers, batch_tokens=batch_tokens)
    vectors = model.embed([TEXTS[i] for i in order], kind="document")
    assert cosines(vectors, VECTORS[order]).min() >= 0.999


def test_minilm_tokenizes_like_sentence_transformers(embedder: MiniLMEmbedder) -> None:
    embedder.embed(TEXTS, kind="document")
    lengths = [item["n_tokens"] for item in REFERENCE["items"]]
    assert embedder.last_tokens == sum(lengths)
    # the 40-row table and the repeated sentence exceed the 256-token window
    assert embedder.last_truncated == sum(1 for n in lengths if n == 256) == 2
    embedder.embed(["short"], kind="query")
    assert embedder.last_truncated == 0


def test_minilm_edge_inputs(embedder: MiniLMEmbedder) -> None:
    assert embedder.embed([], kind="document").shape == (0, 384)
    with pytest.raises(ValueError, match="kind"):
        embedder.embed(["a"], kind="passage")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sequence"):
        embedder.embed("a single string", kind="query")
    duplicate = embedder.embed(["same text", "other", "same text"], kind="document")
    assert np.allclose(duplicate[0], duplicate[2], atol=1e-6)


def test_minilm_progress_reaches_total() -> None:
    calls: list[tuple[int, int, str]] = []
    MiniLMEmbedder(batch_tokens=64).embed(TEXTS, kind="document",
                                          progress=lambda *a: calls.append(a))
    assert len(calls) > 1 and calls[-1][:2] == (len(TEXTS), len(TEXTS))
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)


def test_minilm_cancel_and_blas_threads_restored() -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    class Cancelled(Exception):
        pass

    def cancel(done: int, total: int, what: str) -> None:
        raise Cancelled

    before = blas_threads()
    with pytest.raises(Cancelled):
        MiniLMEmbedder(workers=2, batch_tokens=64).embed(TEXTS, kind="document",
                                                         progress=cancel)
    assert blas_threads() == before


def test_minilm_fingerprint_and_protocol(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.spec == "minilm" and embedder.max_tokens == 256
    assert embedder.fingerprint() == MiniLMEmbedder().fingerprint()
    assert embedder.fingerprint().startswith("minilm-53aa51172d142c89")
    assert set(embedder.fingerprint()) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")


# --- MiniLM weights ------------------------------------------------------------------------
def model_copy(tmp_path: Path, weights: bytes | None) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(minilm_weights.find_model_dir() / "tokenizer.json", folder)
    if weights is not None:
        (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_modified_weights_are_refused(tmp_path: Path) -> None:
    folder = model_copy(tmp_path, b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    with pytest.raises(ModelFilesError, match=r"sha256 .*make install"):
        MiniLMEmbedder(folder).embed(["a"], kind="query")


def test_missing_weights_are_reported(tmp_path: Path) -> None:
    folder = model_copy(tmp_path, None)
    with pytest.raises(ModelFilesError, match="make install"):
        MiniLMEmbedder(folder).embed(["a"], kind="query")


def test_read_safetensors_by_hand() -> None:
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([7, -1], dtype="<i8")
    header = json.dumps({"__metadata__": {"format": "pt"},
                         "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
                         "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}}).encode()
    blob = struct.pack("<Q", len(header)) + header + a.tobytes() + b.tobytes()
    tensors = minilm_weights.read_safetensors(blob)
    assert set(tensors) == {"a", "b"}
    assert np.array_equal(tensors["a"], a) and np.array_equal(tensors["b"], b)
    with pytest.raises(ValueError, match="offsets"):
        minilm_weights.read_safetensors(blob[:-8])
    with pytest.raises(ValueError, match="header length"):
        minilm_weights.read_safetensors(struct.pack("<Q", 10_000) + header)


# --- MiniLM numerics ----------------------------------------------------------------------
def test_gelu_matches_exact_erf() -> None:
    x = np.linspace(-12, 12, 200_001).astype(np.float32)
    exact = 0.5 * x.astype(np.float64) * (1 + scipy.special.erf(x.astype(np.float64)
                                                                 / np.sqrt(2)))
    approx = minilm.gelu_(x.copy())
    assert approx.dtype == np.float32
    assert np.abs(approx - exact).max() <= 1e-6
    assert (np.abs(approx - exact) / np.maximum(np.abs(x), 1)).max() <= 3e-7


def naive_attention(qkv: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """softmax(Q K^T + mask) V in float64, with the row-max shift, head by head."""
    b, n = qkv.shape[:2]
    out = np.zeros((b, n, 12, 32))
    for i in range(b):
        for h in range(12):
            q, k, v = (qkv[i, :, j, h].astype(np.float64) for j in range(3))
            s = q @ k.T
            s[:, lengths[i]:] = -np.inf
            p = np.exp(s - s.max(axis=1, keepdims=True))
            out[i, :, h] = (p / p.sum(axis=1, keepdims=True)) @ v
    return out.reshape(b * n, 384)


@pytest.mark.parametrize("scale", [0.3, 3.0])  # logits far below and far above exp's range
def test_attention_with_padding_matches_naive(scale: float) -> None:
    rng = np.random.default_rng(0)
    qkv = (rng.standard_normal((3, 7, 3, 12, 32)) * scale).astype(np.float32)
    lengths = np.array([7, 4, 1])
    got = minilm.attention(qkv.copy(), lengths)
    assert np.isfinite(got).all()
    assert np.allclose(got, naive_attention(qkv, lengths), atol=1e-4)


def test_plan_batches_cover_every_text_once() -> None:
    lengths = np.array([5, 256, 12, 12, 3, 256, 40, 7])
    batches = minilm.plan_batches(lengths, batch_tokens=300)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert lengths[flat].tolist() == sorted(lengths.tolist(), reverse=True)
    for batch in batches:
        assert len(batch) == 1 or len(batch) * lengths[batch].max() <= 300


# --- registry -----------------------------------------------------------------------------
def test_get_embedder_names(settings: Settings) -> None:
    assert isinstance(get_embedder("minilm", settings), MiniLMEmbedder)
    with pytest.raises(UnknownNameError, match="did you mean 'minilm'"):
        get_embedder("minilmm", settings)
    with pytest.raises(UnknownNameError):
        get_embedder("minilm/large", settings)


def openai_settings(tmp_path: Path, server: FakeOpenAI, key: str | None = KEY) -> Settings:
    env = {"TARGET_WORKSPACE": str(tmp_path), "OPENAI_BASE_URL": server.base_url}
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return load_settings(environ=env)


def test_get_embedder_openai_specs(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    settings = openai_settings(tmp_path, fake_openai)
    default = get_embedder("openai", settings)
    assert default.spec == "openai/text-embedding-3-small" and default.max_tokens == 8191
    assert get_embedder("openai/text-embedding-3-large", settings).dimension == 3072
    local = get_embedder("openai/nomic-embed-text:v1.5", settings)
    assert local.spec == "openai/nomic-embed-text:v1.5"
    assert set(local.fingerprint()) <= set("abcdefghijklmnopqrstuvwxyz0123456789._-")
    assert default.fingerprint() != local.fingerprint()


def test_missing_key_fails_before_any_request(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    with pytest.raises(ConfigError, match=r"OPENAI_API_KEY.*OPENAI_BASE_URL"):
        get_embedder("openai", openai_settings(tmp_path, fake_openai, key=None))
    assert fake_openai.requests == []


# --- OpenAI-compatible, end to end -----------------------------------------------------------
def make_openai(tmp_path: Path, server: FakeOpenAI, **options: object) -> OpenAIEmbedder:
    options.setdefault("counter", TokenCounter("estimate", False))
    options.setdefault("timeout", 5.0)
    options.setdefault("max_retries", 2)
    return OpenAIEmbedder(openai_settings(tmp_path, server), **options)  # type: ignore[arg-type]


def test_openai_vectors_in_input_order(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    texts = ["lake depth africa", "football world cup 1998", "lake victoria depth", "", "x"]
    embedder = make_openai(tmp_path, fake_openai, model="my-local-model")
    assert embedder.dimension == 0  # unknown model: known after the first answer
    calls: list[tuple[int, int, str]] = []
    vectors = embedder.embed(texts, kind="document", progress=lambda *a: calls.append(a))
    assert vectors.dtype == np.float32 and vectors.shape == (5, 64)
    expected = np.array([fake_openai.vector(t or " ") for t in texts])
    assert np.allclose(vectors, expected, atol=1e-6)
    assert embedder.dimension == 64 and calls[-1][:2] == (5, 5)
    (request,) = fake_openai.embedding_requests()
    assert request.body["model"] == "my-local-model"
    assert request.body["input"][3] == " "  # OpenAI refuses empty strings
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert embedder.last_usage_tokens > 0 and embedder.last_truncated == 0


def test_openai_batches_split_requests(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    texts = [f"table number {i} about lakes" for i in range(8)]
    vectors = make_openai(tmp_path, fake_openai, batch_size=3).embed(texts, kind="document")
    sizes = [len(r.body["input"]) for r in fake_openai.embedding_requests()]
    assert sizes == [3, 3, 2]
    assert np.allclose(vectors, [fake_openai.vector(t) for t in texts], atol=1e-6)


class WordEncoding:
    """Stands in for a tiktoken encoding: one token per space-separated word."""

    def encode(self, text: str, disallowed_special: object = ()) -> list[str]:
        return text.split()


def test_openai_request_token_budget(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    exact = TokenCounter("words", True, WordEncoding())
    texts = ["w " * 40, "w " * 40, "w " * 40, "w " * 10]
    make_openai(tmp_path, fake_openai, counter=exact, request_tokens=90).embed(
        texts, kind="document")
    assert [len(r.body["input"]) for r in fake_openai.embedding_requests()] == [2, 2]


def test_openai_truncation_recorded(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    exact = TokenCounter("words", True, WordEncoding())
    embedder = make_openai(tmp_path, fake_openai, counter=exact, max_tokens=100)
    embedder.embed(["word " * 5000, "short text"], kind="document")
    assert embedder.last_truncated == 1
    sent = fake_openai.embedding_requests()[0].body["input"]
    assert 90 <= len(sent[0].split()) <= 100 and sent[1] == "short text"


def test_openai_truncation_with_estimate_is_conservative(tmp_path: Path,
                                                         fake_openai: FakeOpenAI) -> None:
    embedder = make_openai(tmp_path, fake_openai, max_tokens=1000)
    embedder.embed(["lake " * 3000], kind="document")  # estimate ~3000 tokens
    assert embedder.last_truncated == 1
    assert len(fake_openai.embedding_requests()[0].body["input"][0]) <= 2 * 1000


@pytest.mark.parametrize("fault", ["429", "502", "503"])
def test_openai_retries_then_succeeds(tmp_path: Path, fake_openai: FakeOpenAI,
                                      fault: str) -> None:
    fake_openai.fail_next(1, fault)
    vectors = make_openai(tmp_path, fake_openai).embed(["retry me"], kind="query")
    assert np.allclose(vectors[0], fake_openai.vector("retry me"), atol=1e-6)
    assert len(fake_openai.embedding_requests()) == 2


def test_openai_gives_up_after_retries(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(3, "502")
    with pytest.raises(EmbeddingError, match=r"HTTP 502 from .*: Internal error \(fake 502\) "
                                             r"\(3 attempts\)$"):
        make_openai(tmp_path, fake_openai).embed(["a"], kind="query")
    assert len(fake_openai.embedding_requests()) == 3


def test_openai_server_error_is_not_retried(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, "500")
    with pytest.raises(EmbeddingError, match=r"HTTP 500 from .*: Internal error \(fake 500\)$"):
        make_openai(tmp_path, fake_openai).embed(["a"], kind="query")
    assert len(fake_openai.embedding_requests()) == 1


def test_openai_timeout_is_a_clear_error(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, "sleep", seconds=10)
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"no reply from .* within 0.2 s "
                                             r"\(TARGET_OPENAI_TIMEOUT\); not sent again"):
        make_openai(tmp_path, fake_openai, timeout=0.2, max_retries=0).embed(
            ["slow"], kind="query")
    assert time.monotonic() - started < 5


def test_openai_malformed_answer(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.fail_next(1, "malformed")
    with pytest.raises(EmbeddingError, match="malformed"):
        make_openai(tmp_path, fake_openai).embed(["a"], kind="query")


def test_openai_key_sent_but_never_shown(tmp_path: Path, fake_openai: FakeOpenAI,
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    embedder = make_openai(tmp_path, fake_openai)
    fake_openai.fail_next(1, "429")
    embedder.embed(["word " * 30_000], kind="document")  # a retry and a truncation, logged
    fake_openai.fail_next(1, "401")
    with pytest.raises(ConfigError, match="rejected the API key") as error:
        embedder.embed(["a"], kind="query")
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in fake_openai.requests)
    shown = [caplog.text, str(error.value), repr(embedder), embedder.fingerprint()]
    assert not any(KEY in text or KEY[:12] in text for text in shown)


# --- the fake server itself ---------------------------------------------------------------
def test_fake_chat_completions(fake_openai: FakeOpenAI) -> None:
    from openai import OpenAI

    client = OpenAI(api_key=KEY, base_url=fake_openai.base_url, max_retries=0, timeout=5)
    messages = [{"role": "user", "content": "Which lake is deepest?"}]
    reply = client.chat.completions.create(model="fake-chat", messages=messages)
    assert json.loads(reply.choices[0].message.content) == {
        "echo": "Which lake is deepest?", "model": "fake-chat"}
    fake_openai.chat_responder = lambda body: "Baikal"
    reply = client.chat.completions.create(model="fake-chat", messages=messages)
    assert reply.choices[0].message.content == "Baikal" and reply.usage.total_tokens > 0
