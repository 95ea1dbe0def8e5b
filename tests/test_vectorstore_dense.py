"""Chroma and dense retrieval: ephemeral, persistent across restarts, a real `chroma run`
server on loopback, an unreachable server, caching and resume of embeddings, RRF."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from chroma_support import free_port, start_chroma

from target_core.config import load_settings
from target_core.progress import Progress, no_progress
from target_core.retrievers.bm25 import BM25Retriever
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.hybrid import HybridRetriever, rrf
from target_core.textproc import tokenize
from target_core.vectorstore import EF_SEARCH, VectorStore, VectorStoreError, collection_name

TEXTS = ["lakes of norland depth area", "marathon results 2019 runners", "marathon 2020 winner",
         "mountain peaks elevation", "river length basin", "city population census"]


class BagOfWords:
    """A deterministic test embedder: hashed bag of words, L2-normalized (no model)."""

    spec = "bow"
    dimension = 64
    max_tokens = 512
    last_truncated = 0
    backend = "numpy"

    def __init__(self) -> None:
        self.embedded = 0
        self.loaded = 0

    def load(self) -> None:
        self.loaded += 1

    def fingerprint(self) -> str:
        return "bow-v1"

    def embed(self, texts: Sequence[str], *, kind: str = "document",
              progress: Progress = no_progress) -> np.ndarray:
        self.embedded += len(texts) if kind == "document" else 0
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                out[row, int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dimension] += 1
            if (row + 1) % 16 == 0 or row + 1 == len(texts):  # as MiniLM: per batch
                progress(row + 1, len(texts), "embedding")
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def test_index_search_and_exact_scores() -> None:
    retriever = DenseRetriever(BagOfWords(), VectorStore.ephemeral())
    info = retriever.index(TEXTS, corpus_key="six-search")
    assert info.details["embedded"] == 6 and info.details["cached"] == 0
    hits = retriever.search(["marathon winner 2020", "elevation of peaks"], top_k=3)
    assert hits[0][0][0] == 2 and hits[1][0][0] == 3
    assert all(a[1] >= b[1] for h in hits for a, b in zip(h, h[1:], strict=False))
    scores = retriever.score_all("marathon winner 2020")
    assert scores.shape == (6,) and int(np.argmax(scores)) == 2
    assert hits[0][0][1] == pytest.approx(scores[2], abs=1e-5)


def test_the_model_is_loaded_while_indexing_not_in_the_first_query() -> None:
    """Regression: a cached dense run's first query took 510 ms (the ONNX session made
    and warmed inside it), the others 4 ms."""
    embedder = BagOfWords()
    retriever = DenseRetriever(embedder, VectorStore.ephemeral())
    retriever.index(TEXTS, corpus_key="six-load")
    assert embedder.loaded == 1


def test_same_texts_and_embedder_never_embed_twice(tmp_path: Path) -> None:
    embedder = BagOfWords()
    first = DenseRetriever(embedder, VectorStore.persistent(tmp_path / "chroma"))
    first.index(TEXTS, corpus_key="six")
    assert embedder.embedded == 6
    # a "restart": a new client on the same directory
    again = DenseRetriever(embedder, VectorStore.persistent(tmp_path / "chroma"))
    info = again.index(TEXTS, corpus_key="six")
    assert embedder.embedded == 6 and info.details["cached"] == 6
    other_view = again.index([t.upper() for t in TEXTS], corpus_key="six-upper")
    assert other_view.details["embedded"] == 6


def test_interrupted_indexing_resumes_with_the_missing_texts() -> None:
    store = VectorStore.ephemeral()
    embedder = BagOfWords()
    name = collection_name("six-interrupted", embedder.fingerprint())
    partial = store.collection(name, {})
    store.add(partial, ["0", "1"], embedder.embed(TEXTS[:2]))
    embedder.embedded = 0
    info = DenseRetriever(embedder, store).index(TEXTS, corpus_key="six-interrupted")
    assert embedder.embedded == 4 and info.details["cached"] == 2


def test_a_server_that_sends_no_batch_limit_still_gets_every_vector() -> None:
    # chromadb's HttpClient reports -1 when the server sent no max_batch_size: a step of
    # -1 would add nothing, silently
    store = VectorStore.ephemeral()
    store.client.get_max_batch_size = lambda: -1
    collection = store.collection("no-limit", {})
    store.add(collection, [str(i) for i in range(3)], np.eye(3, dtype=np.float32))
    assert collection.count() == 3 and store.max_batch() == 1000


def test_collections_search_wider_than_chromas_default() -> None:
    retriever = DenseRetriever(BagOfWords(), VectorStore.ephemeral())
    info = retriever.index(TEXTS, corpus_key="ef-search")
    assert info.details["ef_search"] == EF_SEARCH == 500


def test_search_before_index_is_a_clear_error() -> None:
    from target_core.retrievers.base import NotIndexedError

    with pytest.raises(NotIndexedError, match="call index"):
        DenseRetriever(BagOfWords(), VectorStore.ephemeral()).search(["x"], top_k=1)


def test_rrf_by_hand() -> None:
    # A ranks 0,1,2; B ranks 2,0: 0 -> 1/61 + 1/62, 2 -> 1/63 + 1/61, 1 -> 1/62
    fused = rrf([[(0, 9.0), (1, 5.0), (2, 1.0)], [(2, 0.9), (0, 0.1)]], top_k=3)
    assert [i for i, _ in fused] == [0, 2, 1]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


def test_hybrid_fuses_lexical_and_dense() -> None:
    hybrid = HybridRetriever(BM25Retriever(), DenseRetriever(BagOfWords(),
                                                            VectorStore.ephemeral()))
    hybrid.index(TEXTS, corpus_key="six-hybrid")
    assert hybrid.spec == "hybrid:bow"
    (hits,) = hybrid.search(["marathon winner"], top_k=2)
    assert hits[0][0] == 2
    scores = hybrid.score_all("marathon winner")
    assert int(np.argmax(scores)) == 2


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[int]:
    """A real `chroma run` on 127.0.0.1 (tests/chroma_support.py), stopped at teardown."""
    with start_chroma(tmp_path / "server") as server:
        yield server.port


def test_server_mode_against_chroma_run(tmp_path: Path, chroma_server: int) -> None:
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                      "TARGET_CHROMA_HOST": "127.0.0.1",
                                      "TARGET_CHROMA_PORT": str(chroma_server)})
    store = VectorStore.from_settings(settings)
    assert "server" in store.description
    embedder = BagOfWords()
    retriever = DenseRetriever(embedder, store)
    retriever.index(TEXTS, corpus_key="six")
    assert retriever.search(["river basin"], top_k=1)[0][0][0] == 4
    # a second client (another user) finds the embeddings already there
    second = DenseRetriever(BagOfWords(), VectorStore.from_settings(settings))
    assert second.index(TEXTS, corpus_key="six").details["cached"] == 6
    assert not (tmp_path / "ws" / "chroma").exists()


def test_unreachable_server_is_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                      "TARGET_CHROMA_HOST": "127.0.0.1",
                                      "TARGET_CHROMA_PORT": str(free_port())})
    started = time.monotonic()
    with pytest.raises(VectorStoreError, match="chroma run"):
        VectorStore.from_settings(settings)
    assert time.monotonic() - started < 30


def test_gold_rank_scoring_reuses_the_searched_query_vector() -> None:
    """A missed query is scored against every table right after its search: the query is
    embedded once, not again for the scoring."""
    embedder = BagOfWords()
    calls: list[tuple[str, ...]] = []
    original = embedder.embed

    def counting(texts, *, kind="document", progress=None):
        if kind == "query":
            calls.append(tuple(texts))
        return original(texts, kind=kind)

    embedder.embed = counting  # type: ignore[method-assign]
    retriever = DenseRetriever(embedder, VectorStore.ephemeral())
    retriever.index(TEXTS, corpus_key="six-reuse")
    hits = retriever.search(["river basin"], top_k=2)
    scores = retriever.score_all("river basin")
    assert calls == [("river basin",)]
    assert hits[0][0][1] == pytest.approx(scores[hits[0][0][0]], abs=1e-5)
    retriever.score_all("city census")  # another query: embedded for the scoring
    assert calls[-1] == ("city census",)


def test_embedding_progress_moves_at_least_every_64_tables() -> None:
    """Progress comes from the embedder within a chunk: a bar that sat at 0/440 while the
    first 256 tables were embedded looked stuck."""
    texts = [f"table {i} of lakes and rivers" for i in range(300)]
    calls: list[tuple[int, int, str]] = []
    DenseRetriever(BagOfWords(), VectorStore.ephemeral()).index(
        texts, corpus_key="progress-300", progress=lambda *call: calls.append(call))
    done = [d for d, total, what in calls if what == "embedding tables" and total == 300]
    assert done[0] == 0 and done[-1] == 300 and done == sorted(done)
    assert max(np.diff(done)) <= 64


def test_gold_rank_scoring_runs_blas_on_one_thread() -> None:
    """A second OpenBLAS thread would spin for ~100 ms after the product, against the next
    query's embedding and search."""
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    seen: list[list[int]] = []

    class Matrix:  # records the BLAS limit in force when score_all multiplies
        def __matmul__(self, vector: np.ndarray) -> np.ndarray:
            seen.append(blas_threads())
            return np.zeros(len(TEXTS), dtype=np.float32)

    retriever = DenseRetriever(BagOfWords(), VectorStore.ephemeral())
    retriever.index(TEXTS, corpus_key="six-blas")
    retriever.search(["river basin"], top_k=1)
    before = blas_threads()
    retriever._matrix = Matrix()  # type: ignore[assignment]
    retriever.score_all("river basin")
    assert seen == [[1] * len(before)] and blas_threads() == before


_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, "tests")
    from test_vectorstore_dense import TEXTS, BagOfWords
    from target_core.retrievers.dense import DenseRetriever
    from target_core.vectorstore import VectorStore

    class Slow(BagOfWords):
        def embed(self, texts, *, kind="document", progress=None):
            Path(sys.argv[2]).touch()  # it holds the collection now
            time.sleep(1.5)
            return super().embed(texts, kind=kind)

    DenseRetriever(Slow(), VectorStore.persistent(Path(sys.argv[1]))).index(
        TEXTS, corpus_key="two-processes")
""")


def test_two_processes_embed_the_same_tables_once(tmp_path: Path) -> None:
    """Two jobs of the same texts and embedder (the demo suite's dense:minilm and hybrid):
    the second waits for the first, embeds nothing and can search. Before, both embedded
    everything, and a process that read the collection while the other was adding to it
    could not search it afterwards."""
    holding = tmp_path / "holding"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "chroma"),
                               str(holding)], cwd=Path(__file__).resolve().parent.parent)
    try:
        deadline = time.monotonic() + 60
        while not holding.exists():
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        embedder, calls = BagOfWords(), []
        retriever = DenseRetriever(embedder, VectorStore.persistent(tmp_path / "chroma"))
        info = retriever.index(TEXTS, corpus_key="two-processes",
                               progress=lambda *call: calls.append(call))
    finally:
        assert holder.wait(timeout=60) == 0
    assert embedder.embedded == 0 and info.details["cached"] == len(TEXTS)
    assert any(what.startswith("waiting") for _, _, what in calls)
    assert retriever.search(["marathon winner 2020"], top_k=1)[0][0][0] == 2


def test_a_new_store_is_opened_by_one_process_at_a_time(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers opening a new on-disk store at once both ran Chroma's migrations and
    one failed ("table collections already exists"): the client is made under a lock
    that another process (here: another open file) cannot take meanwhile."""
    import fcntl

    import chromadb

    real, held = chromadb.PersistentClient, []

    def client(*args: object, **kwargs: object) -> object:
        with open(tmp_path / "chroma-locks" / "open.lock", "a+b") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(True)
            else:
                fcntl.flock(other, fcntl.LOCK_UN)
                held.append(False)
        return real(*args, **kwargs)

    monkeypatch.setattr(chromadb, "PersistentClient", client)
    store = VectorStore.persistent(tmp_path / "chroma")
    assert held == [True]
    store.collection("opened-once", {})  # the store works as before
