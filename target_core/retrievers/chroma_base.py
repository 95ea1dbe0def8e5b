"""The Chroma scaffolding of the retrievers that embed texts into one collection (dense,
and through it summary, HySE and the standard-shape py: class; rows): building from an
embedder spec, naming the collection by (texts, embedder), opening it only once it is
this process's to write, embedding what is not stored yet in chunks stored as they
finish (a run killed while embedding resumes where it stopped), and exact cosine
scores of a query against every stored vector.

A collection is named by `collection_name(prefix + corpus_key, embedder fingerprint)`,
so a second run of the same texts and embedder embeds nothing (`prefix` keeps rows'
collections apart from dense's over the same texts). Vectors are normalized, so cosine is
a dot product; it runs with BLAS on one thread, so that no OpenBLAS worker is left
spinning against the next query's embedding and search (benchmarks/dense_speed.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np

from target_core.config import Settings
from target_core.embeddings.base import Embedder, blas_threads
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import NotIndexedError, Retriever
from target_core.vectorstore import VectorStore, collection_name

EMBED_CHUNK = 256
"""Texts embedded and stored at a time: what an interrupted run loses at most."""

C = TypeVar("C", bound="ChromaRetriever")


class ChromaRetriever(Retriever):
    """Vectors of texts in one Chroma collection, one id per text. A subclass says what
    its spec starts with (`family`), what it embeds (`unit`, in progress messages) and
    how it searches; `open_collection` does the indexing it shares."""

    family: ClassVar[str] = "dense"
    """The spec is "<family>:<embedder spec>"."""
    unit: ClassVar[str] = "tables"
    """What one embedded text is, in progress messages ("embedding tables")."""
    collection_prefix: ClassVar[str] = ""
    """Put before the corpus key in the collection's name."""

    def __init__(self, embedder: Embedder, store: VectorStore) -> None:
        self.embedder = embedder
        self.store = store
        self.spec = f"{self.family}:{embedder.spec}"
        self._collection: Any = None
        self._ids: list[str] = []
        self._matrix: np.ndarray | None = None
        self._last_vectors: dict[str, np.ndarray] = {}
        """The queries of the last search and their vectors: gold-rank scoring of a missed
        query (score_all) comes right after its search and reuses its vector."""

    @classmethod
    def from_spec(cls: type[C], embedder_spec: str, settings: Settings,
                  store: VectorStore | None = None) -> C:
        from target_core.embeddings import get_embedder

        embedder = get_embedder(embedder_spec, settings)  # raises before any work
        return cls(embedder, store or VectorStore.from_settings(settings))

    @property
    def _n(self) -> int:
        """How many texts (vectors) the collection holds for this corpus."""
        return len(self._ids)

    def collection_for(self, corpus_key: str) -> str:
        return collection_name(self.collection_prefix + corpus_key,
                               self.embedder.fingerprint())

    def open_collection(self, corpus_key: str, ids: list[str], texts: Sequence[str],
                        metadata: dict[str, Any], progress: Progress = no_progress
                        ) -> tuple[str, Any, int, int]:
        """Open (create) this corpus's collection once it is ours, embed and store the
        texts it lacks, and keep it for searching: (name, collection, how many were
        embedded, how many were truncated)."""
        name = self.collection_for(corpus_key)

        def waiting() -> None:
            progress(0, len(texts), f"waiting: another run is embedding these {self.unit}")

        # open and read the collection only once it is ours: a process that read it while
        # another was still adding to it cannot search it afterwards (Chroma 1.5 keeps its
        # first view: "Error creating hnsw segment reader: Nothing found on disk")
        with self.store.writing(name, waiting):
            collection = self.store.collection(name, metadata)
            n_missing, truncated = self._embed_missing(collection, ids, texts, progress)
        self.embedder.load()  # not inside the first query's time
        self._collection, self._ids, self._matrix = collection, ids, None
        return name, collection, n_missing, truncated

    def _embed_missing(self, collection: Any, ids: list[str], texts: Sequence[str],
                       progress: Progress) -> tuple[int, int]:
        """Embed and store the texts not stored yet, in chunks; (how many, truncated)."""
        stored = self.store.stored_ids(collection)
        missing = [i for i, id_ in enumerate(ids) if id_ not in stored]
        total, what = len(texts), f"embedding {self.unit}"
        progress(total - len(missing), total, what)
        truncated = 0
        for start in range(0, len(missing), EMBED_CHUNK):
            chunk = missing[start:start + EMBED_CHUNK]
            before = total - len(missing) + start

            def within(done: int, _total: int, _what: str, before: int = before) -> None:
                progress(before + done, total, what)

            vectors = self.embedder.embed([texts[i] for i in chunk], kind="document",
                                          progress=within)
            truncated += self.embedder.last_truncated
            self.store.add(collection, [ids[i] for i in chunk], vectors)
            progress(before + len(chunk), total, what)
        return len(missing), truncated

    def _require(self) -> Any:
        if self._collection is None:
            raise NotIndexedError(self.spec)
        return self._collection

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        """The queries' vectors, kept for score_all of the same queries."""
        vectors = np.asarray(self.embedder.embed(list(queries), kind="query"))
        self._last_vectors = dict(zip(queries, vectors, strict=True))
        return vectors

    def stored_matrix(self) -> np.ndarray:
        """Every stored vector in id order (read once per index)."""
        collection = self._require()
        if self._matrix is None:
            self._matrix = self.store.vectors(collection, self._ids)
        return self._matrix

    def exact_scores(self, query: str) -> np.ndarray:
        """Exact cosine of the query with every stored vector; a query of the last
        search is not embedded again."""
        matrix = self.stored_matrix()
        vector = self._last_vectors.get(query)
        if vector is None:
            vector = np.asarray(self.embedder.embed([query], kind="query")[0])
        with blas_threads(1):  # a second thread gains ~0.1 ms and then spins ~100 ms
            return matrix @ vector
