"""Embedding map: the corpus of a dense run projected to 2-D with the run's queries in the
same plane (GTR's Figure 4 draws questions and answers by t-SNE the same way).

Where the points come from: the run's Chroma collection (its index info names it), so
nothing is embedded again but the questions (with the run's embedder, the vector a dense
run searches with; a HySE run searched with hypothetical tables instead, the map shows
the question). A table is one point: for a rows run (ids "T:R", one vector per row) the
normalized mean of its rows' vectors, the centre of the rows it is scored by. Hybrid runs
use their dense side; summary and HySE runs their stored vectors. BM25 and TF-IDF runs
have none (NoEmbeddingsError says so); asked to (`borrow`), their map uses the
dense:minilm vectors of the same texts when a dense run of the same view stored them:
where did BM25's top 10 land in MiniLM's space.

Methods:
- `tsne` (default): t-SNE (scikit-learn, Barnes-Hut, perplexity min(30, (n - 1) / 3),
  init PCA, seed 0) after a PCA to 50 dimensions, fitted on the tables AND the run's
  questions together. t-SNE has no transform for new points, so a question can only be
  placed by being in the fit; one fit serves every question of the run (Query page) and
  every category (Failures page). It keeps neighbourhoods: on demo-qa 47% of questions
  have a gold table among their 10 nearest map points, against 13% under PCA. Its
  distances between far clusters and its axes mean nothing.
- `pca`: the first two principal components of the tables; questions are placed by the
  same linear map (PCA.transform), exact and cheap, but 384 dimensions seen along two
  directions overlap a lot.

Both are seeded: the same vectors give the same map. The map is cached on disk under
the workspace, `maps/<collection>-<method>-<queries>.npz` (queries: a digest of the
embedder and the run's question ids and texts, since the questions are part of a t-SNE
fit), written atomically: the second view of any question or category of the run, or of
another run over the same texts and questions, reads the file (benchmarks/embedding_map.py).

Readable at 10,000 tables: `sample_around` keeps the marked points, their nearest map
neighbours and a seeded random draw of the rest, up to SAMPLE_LIMIT points.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from target_core.config import Settings
from target_core.engine.store import RunRecord
from target_core.errors import TargetError
from target_core.types import Dataset, TableKey

METHODS: dict[str, str] = {
    "tsne": "t-SNE of the tables and the run's questions together (neighbourhoods kept; "
            "distances between clusters mean nothing)",
    "pca": "the first two principal components of the tables, questions placed by the "
           "same linear map (global, exact, crowded)",
}
DEFAULT_METHOD = "tsne"
SEED = 0
PCA_DIMS = 50
"""t-SNE runs on the first 50 principal components (the usual speed-up; the 384-dim
neighbourhoods survive it)."""
MAX_PERPLEXITY = 30.0
SAMPLE_LIMIT = 3_000
NEIGHBOURS = 15
"""Nearest map points kept around each marked point when the corpus is sampled."""
MAPS_DIR = "maps"
BORROWED_EMBEDDER = "minilm"


class NoEmbeddingsError(TargetError):
    """The run stored no vectors (a lexical retriever)."""

    def __init__(self, retriever: str) -> None:
        super().__init__(f"no embeddings for this run ({retriever}): it stored no vectors "
                         "(a lexical retriever, or imported results); a dense, hybrid, "
                         "summary, hyse or rows run has them")


def borrowed_note(retriever: str) -> str:
    """What a map drawn for a run without vectors (can_borrow) is drawn from."""
    return (f"{retriever} stores no vectors of its own: this map uses dense:"
            f"{BORROWED_EMBEDDER}'s vectors of the same texts.")


class MapError(TargetError):
    """The run's vectors cannot be mapped (unknown method, collection gone, dataset
    changed since the run)."""


@dataclass(frozen=True)
class CorpusMap:
    """The 2-D positions of a run's tables and questions."""

    collection: str
    method: str
    keys: tuple[TableKey, ...]
    """The tables in corpus order (a haystack's distractors last), one per row of xy."""
    xy: np.ndarray
    query_ids: tuple[str, ...]
    query_xy: np.ndarray
    seconds: float
    """How long the projection took when it was computed (not reading the cache)."""
    computed: bool
    """True when this call computed the map, False when it read the cache."""
    path: Path
    borrowed: bool = False
    """The run stored no vectors: dense:minilm vectors of the same texts (MapSource)."""

    def positions(self) -> dict[TableKey, int]:
        return {key: i for i, key in enumerate(self.keys)}

    def query_index(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.query_ids)}


@dataclass(frozen=True)
class MapSource:
    """Where a run's map takes its vectors from."""

    collection: str
    embedder: str
    borrowed: bool
    """True: the run stored no vectors (bm25, tfidf); these are BORROWED_EMBEDDER's
    vectors of the same texts, stored by a dense run of the same view."""


def can_borrow(run: RunRecord) -> bool:
    """A lexical run of the view's text (Entry.lexical_view_text: bm25, tfidf; no vectors
    of its own) may be mapped with BORROWED_EMBEDDER's vectors of the same texts."""
    from target_core.retrievers import RETRIEVERS

    return RETRIEVERS.parse(run.config.retriever)[0].lexical_view_text


def map_source(run: RunRecord, settings: Settings, *, borrow: bool = False) -> MapSource:
    """The run's own Chroma collection; with `borrow`, for a lexical run, the collection
    a dense:minilm run of the same texts stores (named by the run's text fingerprint and
    MiniLM's, as retrievers/dense.py names it; it may not exist). NoEmbeddingsError
    otherwise."""
    name = run.index_info.get("collection")
    if isinstance(name, str) and name:
        return MapSource(name, str(run.index_info.get("embedder", "")), False)
    if borrow and can_borrow(run) and run.text_fingerprint:
        from target_core.embeddings import get_embedder
        from target_core.vectorstore import collection_name

        fingerprint = get_embedder(BORROWED_EMBEDDER, settings).fingerprint()
        return MapSource(collection_name(run.text_fingerprint, fingerprint),
                         BORROWED_EMBEDDER, True)
    raise NoEmbeddingsError(run.config.retriever)


def check_method(method: str) -> str:
    if method not in METHODS:
        raise MapError(f"unknown map method '{method}': use one of {', '.join(METHODS)}")
    return method


def queries_digest(embedder: str, query_ids: Sequence[str], texts: Sequence[str]) -> str:
    """12 hex digits naming (embedder, the questions in order) in a cache file's name."""
    digest = hashlib.sha256(embedder.encode())
    for query_id, text in zip(query_ids, texts, strict=True):
        digest.update(f"\x00{query_id}\x01{text}".encode())
    return digest.hexdigest()[:12]


def map_path(settings: Settings, collection: str, method: str, digest: str) -> Path:
    return Path(settings.workspace) / MAPS_DIR / f"{collection}-{method}-{digest}.npz"


def corpus_map(run: RunRecord, dataset: Dataset, query_ids: Sequence[str],
               settings: Settings, *, method: str = DEFAULT_METHOD,
               borrow: bool = False) -> CorpusMap:
    """The map of `run` (its stored vectors; with `borrow`, a lexical run's texts'
    dense:minilm vectors) with `query_ids` (the run's questions) in it: read from the
    workspace's cache, or computed and cached. Raises NoEmbeddingsError for a run without
    vectors, MapError when they cannot be mapped."""
    from target_core.engine.haystack import run_corpus
    from target_core.vectorstore import VectorStoreError

    path = cached_map_path(run, dataset, query_ids, settings, method=method, borrow=borrow)
    source = map_source(run, settings, borrow=borrow)
    if path.exists():
        return _read(path, source, method)
    texts = [dataset.query(q).query for q in query_ids]
    tables = run_corpus(dataset, run.config.haystack, settings)
    try:
        corpus = table_vectors(source.collection, len(tables), settings)
    except VectorStoreError as exc:
        if not source.borrowed:
            raise
        raise MapError(f"no dense:{BORROWED_EMBEDDER} vectors of this run's texts yet: run "
                       f"dense:{BORROWED_EMBEDDER} on {run.config.dataset} with view "
                       f"'{run.config.view.label}' (and the same haystack), then the map "
                       "can use them") from exc
    questions = _embed_questions(source.embedder, texts, settings)
    started = time.perf_counter()
    xy, query_xy = project(corpus, questions, method)
    seconds = time.perf_counter() - started
    keys = tuple(t.key for t in tables)
    _write(path, keys, xy, tuple(query_ids), query_xy, seconds)
    return CorpusMap(source.collection, method, keys, xy, tuple(query_ids), query_xy,
                     seconds, True, path, source.borrowed)


def cached_map_path(run: RunRecord, dataset: Dataset, query_ids: Sequence[str],
                    settings: Settings, *, method: str = DEFAULT_METHOD,
                    borrow: bool = False) -> Path:
    """Where the map of `run` with `query_ids` is cached (it may not exist yet). Raises
    NoEmbeddingsError for a run without vectors, MapError for an unknown method or a
    dataset that changed since the run."""
    check_method(method)
    source = map_source(run, settings, borrow=borrow)
    if run.status != "complete":
        raise MapError(f"run {run.run_id} is {run.status}: a map is drawn for a complete "
                       "run (all its questions are part of the t-SNE fit)")
    if dataset.fingerprint != run.dataset_fingerprint:
        raise MapError(f"run {run.run_id} was made on dataset version "
                       f"{run.dataset_fingerprint}, {dataset.name} is now "
                       f"{dataset.fingerprint}: its vectors no longer match the tables")
    texts = [dataset.query(q).query for q in query_ids]
    return map_path(settings, source.collection, method,
                    queries_digest(source.embedder, query_ids, texts))


def table_vectors(collection: str, n_tables: int, settings: Settings) -> np.ndarray:
    """(n_tables, dim) unit vectors in corpus order: ids "i" are table i; ids "T:R" (a
    rows run) are averaged per table T and normalized."""
    from target_core.vectorstore import VectorStore

    store = VectorStore.from_settings(settings)
    ids, vectors = store.all_vectors(store.existing(collection))
    if not ids:
        raise MapError(f"collection {collection} holds no vectors")
    tables = np.asarray([int(i.partition(":")[0]) for i in ids])
    if tables.max() >= n_tables or len(np.unique(tables)) != n_tables:
        raise MapError(f"collection {collection} holds vectors of {len(np.unique(tables))} "
                       f"tables, the run's corpus has {n_tables}: the dataset changed")
    sums = np.zeros((n_tables, vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, tables, vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return (sums / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def _embed_questions(embedder: str, texts: Sequence[str], settings: Settings) -> np.ndarray:
    from target_core.embeddings import get_embedder

    if not embedder:
        raise MapError("the run's index info names no embedder, so its questions cannot "
                       "be placed")
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(get_embedder(embedder, settings).embed(list(texts), kind="query"),
                      dtype=np.float32)


def project(corpus: np.ndarray, queries: np.ndarray, method: str, *, seed: int = SEED
            ) -> tuple[np.ndarray, np.ndarray]:
    """2-D positions of the corpus rows and the query rows (see the module docstring).
    BLAS and OpenMP run on one thread: their idle workers would otherwise spin against
    the t-SNE gradient (16-26 s instead of 2.5 s for 700 points on 2 shared cores)."""
    from sklearn.decomposition import PCA
    from threadpoolctl import threadpool_limits

    check_method(method)
    n, m = len(corpus), len(queries)
    queries = queries.reshape(m, corpus.shape[1]) if m else np.zeros((0, corpus.shape[1]))
    with threadpool_limits(limits=1):
        if n + m < 3 or corpus.shape[1] < 2:  # too few to project: points on a line
            xy = np.column_stack([np.arange(n + m, dtype=float), np.zeros(n + m)])
            return xy[:n], xy[n:]
        if method == "pca":
            pca = PCA(n_components=2, random_state=seed).fit(corpus if n >= 2 else
                                                             np.vstack([corpus, queries]))
            return pca.transform(corpus), pca.transform(queries) if m else np.zeros((0, 2))
        from sklearn.manifold import TSNE

        points = np.vstack([corpus, queries]).astype(np.float64)
        dims = min(PCA_DIMS, len(points), points.shape[1])
        if dims < points.shape[1]:
            points = PCA(n_components=dims, random_state=seed).fit_transform(points)
        perplexity = max(1.0, min(MAX_PERPLEXITY, (len(points) - 1) / 3))
        xy = TSNE(n_components=2, perplexity=perplexity, init="pca", learning_rate="auto",
                  random_state=seed, n_jobs=1).fit_transform(points)
    return xy[:n], xy[n:]


def sample_around(xy: np.ndarray, marked: Collection[int], *, limit: int = SAMPLE_LIMIT,
                  neighbours: int = NEIGHBOURS, seed: int = SEED,
                  around: np.ndarray | None = None) -> np.ndarray:
    """Sorted indices of at most max(limit, len(marked)) points of `xy` to draw: every
    marked point, then the `neighbours` nearest map points of each marked point and of
    each point of `around` (e.g. the questions' positions), nearest first, then a seeded
    uniform draw of the rest. All of them when there are at most `limit`."""
    n = len(xy)
    if n <= limit:
        return np.arange(n)
    keep = dict.fromkeys(sorted(int(i) for i in marked))
    centres = [xy[i] for i in keep] + ([] if around is None else list(around))
    if centres and neighbours > 0:
        room = max(0, limit - len(keep))
        per = min(neighbours, max(1, room // len(centres)))
        distances = np.stack([np.linalg.norm(xy - c, axis=1) for c in centres])
        nearest = np.argsort(distances, axis=1, kind="stable")[:, :per + 1]
        for j in range(nearest.shape[1]):  # nearest first, round-robin over the centres
            for i in nearest[:, j]:
                if len(keep) >= limit:
                    break
                keep.setdefault(int(i))
    rest = np.setdiff1d(np.arange(n), np.fromiter(keep, dtype=int, count=len(keep)))
    room = max(0, limit - len(keep))
    drawn = np.random.default_rng(seed).choice(rest, size=min(room, len(rest)), replace=False)
    return np.sort(np.concatenate([np.fromiter(keep, dtype=int, count=len(keep)),
                                   drawn.astype(int)]))


def _write(path: Path, keys: Sequence[TableKey], xy: np.ndarray, query_ids: Sequence[str],
           query_xy: np.ndarray, seconds: float) -> None:
    """Atomically: a reader never sees half a file (two pages may compute at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(partial, "wb") as handle:
        np.savez(handle, database_ids=np.asarray([k[0] for k in keys], dtype=str),
                 table_ids=np.asarray([k[1] for k in keys], dtype=str),
                 xy=np.asarray(xy, dtype=np.float64).reshape(len(keys), 2),
                 query_ids=np.asarray(query_ids, dtype=str),
                 query_xy=np.asarray(query_xy, dtype=np.float64).reshape(len(query_ids), 2),
                 seconds=np.float64(seconds))
    os.replace(partial, path)


def _read(path: Path, source: MapSource, method: str) -> CorpusMap:
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = tuple(zip(data["database_ids"].tolist(), data["table_ids"].tolist(),
                             strict=True))
            return CorpusMap(source.collection, method, keys, data["xy"],
                             tuple(data["query_ids"].tolist()), data["query_xy"],
                             float(data["seconds"]), False, path, source.borrowed)
    except (OSError, ValueError, KeyError) as exc:
        raise MapError(f"cached map {path} cannot be read ({exc}): delete it to compute "
                       "the map again") from exc
