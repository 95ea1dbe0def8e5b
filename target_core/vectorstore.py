"""Chroma: a persistent client under the workspace by default, a `chroma run` server when
TARGET_CHROMA_HOST is set, an in-memory client for tests.

We always pass embeddings we computed (`embedding_function=None`): Chroma's default
function would download a model. A collection's name is a fingerprint of (texts,
embedder), so an identical configuration never embeds twice, across runs and restarts;
documents are added in chunks, so an interrupted indexing keeps what it stored. Processes
sharing an on-disk store take turns writing a collection (`writing`): two jobs of the same
texts and embedder (the demo suite runs dense:minilm and hybrid side by side) would
otherwise both embed every table, and one of them could not search it afterwards. A
server serializes its writers itself; its clients may share no file system.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.errors import TargetError

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0
EF_SEARCH = 500
"""Candidates HNSW explores per query (Chroma's default: 100). A retrieval benchmark
should not lose gold tables to the index: on 100,000 random unit vectors, HNSW's worst
case, a query near its gold vector finds it in the top 10 for 91.5% of queries at 100,
98.4% at 200 and 99.9% at 500, in 2.3, 4.3 and 6.4 ms per query. Fixed when a
collection is created (benchmarks/scale_chroma.py measures it)."""
LOCK_POLL_S = 0.5
"""How often a process waiting for another's writes to a collection looks again."""


class VectorStoreError(TargetError):
    """Chroma cannot be reached or refused an operation."""


def collection_name(corpus_key: str, embedder_fingerprint: str) -> str:
    """A valid Chroma name (3-512 chars of [a-zA-Z0-9._-]) identifying texts + embedder."""
    digest = hashlib.sha256(f"{corpus_key}|{embedder_fingerprint}".encode()).hexdigest()
    return f"target-{digest[:32]}"


def _with_timeout(what: str, timeout: float, work: Any) -> Any:
    """Run work() in a thread; raise VectorStoreError if it takes longer than `timeout`."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = work()
        except Exception as exc:  # noqa: BLE001 - reported below with context
            result["error"] = exc

    worker = threading.Thread(target=target, name=f"chroma-{what}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise VectorStoreError(f"{what}: no answer within {timeout:g} s")
    if "error" in result:
        raise VectorStoreError(f"{what}: {result['error']}") from result["error"]
    return result.get("value")


class VectorStore:
    """A Chroma client and the operations the dense retrievers need."""

    def __init__(self, client: Any, description: str, lock_dir: Path | None = None) -> None:
        self.client = client
        self.description = description
        self.lock_dir = lock_dir
        """Where the per-collection write locks of an on-disk store live; None for a server
        or an in-memory store."""

    @classmethod
    def from_settings(cls, settings: Settings) -> VectorStore:
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False)
        host = settings.chroma_host
        if host:
            import chromadb

            where = f"Chroma server at {host}:{settings.chroma_port}"

            def connect() -> Any:
                client = chromadb.HttpClient(host=host,
                                             port=settings.chroma_port,
                                             settings=chroma_settings)
                client.heartbeat()
                return client

            try:
                client = _with_timeout(f"connecting to the {where}", CONNECT_TIMEOUT, connect)
            except VectorStoreError as exc:
                raise VectorStoreError(f"{exc}. Start it with `chroma run --path DIR --port "
                                       f"{settings.chroma_port}` or unset TARGET_CHROMA_HOST "
                                       "to use the local store.") from None
            return cls(client, where)  # users of a server may share no file system
        return cls.persistent(Path(settings.workspace) / "chroma")

    @classmethod
    def persistent(cls, path: Path) -> VectorStore:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        path.mkdir(parents=True, exist_ok=True)
        locks = path.parent / f"{path.name}-locks"
        # one process at a time: two workers opening a new store at once both ran Chroma's
        # schema migrations ("table collections already exists" failed one of them)
        with _flocked(locks / "open.lock"):
            client = chromadb.PersistentClient(
                path=str(path), settings=ChromaSettings(anonymized_telemetry=False))
        return cls(client, f"Chroma on disk at {path}", locks)

    @classmethod
    def ephemeral(cls) -> VectorStore:
        """In memory, for tests. Chroma shares one in-memory system per process, so
        collections persist across ephemeral clients until the process ends."""
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        client = chromadb.EphemeralClient(settings=ChromaSettings(anonymized_telemetry=False))
        return cls(client, "Chroma in memory")

    def collection(self, name: str, metadata: dict[str, Any]) -> Any:
        """Get or create a cosine collection that never embeds by itself."""
        try:
            return self.client.get_or_create_collection(
                name, embedding_function=None, metadata=metadata or None,
                configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}})
        except Exception as exc:
            raise VectorStoreError(f"{self.description}: cannot open collection {name}: "
                                   f"{exc}") from exc

    @contextmanager
    def writing(self, name: str, waiting: Callable[[], None] = lambda: None
                ) -> Iterator[None]:
        """Hold collection `name` for writing against other processes of this workspace
        (an advisory flock, released if the holder dies). While another process holds it,
        `waiting()` is called every LOCK_POLL_S (a progress callback; raising gives up)."""
        if self.lock_dir is None:
            yield
            return
        with _flocked(self.lock_dir / f"{name}.lock", waiting):
            yield

    def stored_ids(self, collection: Any) -> set[str]:
        """Ids already in the collection (paged, so large collections stay cheap)."""
        ids: set[str] = set()
        page = 10_000
        offset = 0
        while True:
            got = collection.get(include=[], limit=page, offset=offset)["ids"]
            ids.update(got)
            if len(got) < page:
                return ids
            offset += page

    def max_batch(self) -> int:
        """Chroma's largest add; 1,000 when the server does not say (older servers raise,
        an HttpClient whose server sent no limit reports -1)."""
        try:
            size = int(self.client.get_max_batch_size())
        except Exception:  # noqa: BLE001 - 1,000 is always fine
            return 1000
        return size if size > 0 else 1000

    def add(self, collection: Any, ids: Sequence[str], vectors: np.ndarray) -> None:
        step = self.max_batch()
        for start in range(0, len(ids), step):
            collection.add(ids=list(ids[start:start + step]),
                           embeddings=vectors[start:start + step])

    def query(self, collection: Any, vectors: np.ndarray, top_k: int, *,
              size: int | None = None) -> list[list[tuple[str, float]]]:
        """Nearest ids with cosine similarity (1 - Chroma's cosine distance), best first.

        `size`: the collection's count when the caller knows it (asking Chroma costs
        about 8 ms at 100,000 vectors, more than the search itself)."""
        n = min(top_k, collection.count() if size is None else size)
        if n == 0:
            return [[] for _ in range(len(vectors))]
        found = collection.query(query_embeddings=vectors, n_results=n, include=["distances"])
        return [[(i, 1.0 - float(d)) for i, d in zip(ids, dists, strict=True)]
                for ids, dists in zip(found["ids"], found["distances"], strict=True)]

    def vectors(self, collection: Any, ids: Sequence[str]) -> np.ndarray:
        """The stored vectors for `ids`, in that order (for exact scores of every text)."""
        got = collection.get(ids=list(ids), include=["embeddings"])
        by_id = dict(zip(got["ids"], got["embeddings"], strict=True))
        return np.asarray([by_id[i] for i in ids], dtype=np.float32)

    def existing(self, name: str) -> Any:
        """Collection `name` if it is stored (never creates one); VectorStoreError if not."""
        try:
            return self.client.get_collection(name, embedding_function=None)
        except Exception as exc:
            raise VectorStoreError(f"{self.description}: no collection {name} ({exc}); the "
                                   "run that made it used another workspace or store, or "
                                   "it was deleted") from exc

    def all_vectors(self, collection: Any, *, page: int = 5_000
                    ) -> tuple[list[str], np.ndarray]:
        """Every (id, vector) of the collection, paged (for a map of the whole corpus)."""
        ids: list[str] = []
        chunks: list[np.ndarray] = []
        offset = 0
        while True:
            got = collection.get(include=["embeddings"], limit=page, offset=offset)
            ids.extend(got["ids"])
            if len(got["ids"]):
                chunks.append(np.asarray(got["embeddings"], dtype=np.float32))
            if len(got["ids"]) < page:
                break
            offset += page
        return ids, (np.concatenate(chunks) if chunks else np.zeros((0, 0), np.float32))


@contextmanager
def _flocked(path: Path, waiting: Callable[[], None] = lambda: None) -> Iterator[None]:
    """Hold the advisory flock of `path` (created with its folder) against other
    processes, released if the holder dies; `waiting()` is called every LOCK_POLL_S while
    another holds it (raising gives up). Without fcntl (not POSIX): no turn-taking."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waiting()
                time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
