"""HySE, hypothetical schema embedding (TARGET's HySERetriever): search with tables a
generator imagines for the query instead of (beside) the query itself.

The corpus is indexed as by `dense` (the view's text, embedded into Chroma: the same
collection, so a dense run of the same view and embedder has already embedded it). Per
query, a writer (generators/hypothetical.py) writes N hypothetical tables of R rows;
each is serialized with the run's view (no table id: they have none) and embedded as a
document, and the query is embedded as a query (TARGET's with_query=True). With those
N + 1 unit vectors v_1..v_N, v_q:

    agg=mean   (TARGET's aggregated=True, HyDE's prototype vector): one search with
               m = mean(v_1..v_N, v_q) / ||mean||; score(t) = cos(m, t).
    agg=split  (TARGET's aggregated=False, its default): one ranked list per vector,
               merged round-robin: the text at rank r of list s (s = 1..N for the
               tables, N + 1 for the query) sits at position p = (r - 1)(N + 1) + s - 1,
               a text at its smallest p, score(t) = 1 / (1 + p). The top k then holds
               about k/(N + 1) texts per list, and a smaller k is a prefix of a larger
               one. TARGET instead takes k/N per table and concatenates the lists
               (duplicates kept, the query's list dropped): its top 5 is not the start
               of its top 10, which this project's metrics rely on.

score_all gives exactly these scores for every text (mean: the stored vectors against
m; split: the positions from full exact rankings), so gold ranks beyond k agree with
search; a split search is computed from those exact scores too.

A write that fails (the model's call, or a reply with no table) falls back to the query
alone (v_q: then HySE is dense) and is counted; an LLM writer's calls are judged by the
failure policy (`llm_calls`, retrievers/llm_calls.py): too many failed, the run fails.
In a run, the run's queries are written up front and in parallel (`prepare_queries`,
which the runner calls after indexing), so `retrieval_ms` is embedding and search; the
writing time, the writer's label, N, R, the aggregation and the failed writes go into
the run's index info. Spec: `hyse[:EMBEDDER][@GENERATOR][:OPTIONS]`, OPTIONS
`n=2,rows=2,agg=mean|split` (TARGET's N and R are 2).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.embeddings.base import Embedder, blas_threads
from target_core.errors import ConfigError
from target_core.generators.hypothetical import (
    HypotheticalTables,
    LLMWriter,
    TableWriter,
    table_writer,
)
from target_core.progress import Progress, no_progress
from target_core.retrievers.base import Hits, IndexInfo, top_k_hits
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.llm_calls import LLMCalls
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.types import Table
from target_core.vectorstore import VectorStore

AGGREGATIONS = ("mean", "split")
OPTION_NAMES = ("n", "rows", "agg")
MAX_TABLES = 10


@dataclass(frozen=True)
class HySEOptions:
    """How many tables are written per query, of how many rows, and how they search."""

    n: int = 2
    rows: int = 2
    agg: str = "mean"

    def __post_init__(self) -> None:
        if not 1 <= self.n <= MAX_TABLES:
            raise ConfigError(f"hyse option n={self.n}: expected 1 to {MAX_TABLES} tables")
        if self.rows < 0:
            raise ConfigError(f"hyse option rows={self.rows}: expected 0 or more rows")
        if self.agg not in AGGREGATIONS:
            raise ConfigError(f"hyse option agg={self.agg}: expected one of "
                              f"{', '.join(AGGREGATIONS)}")

    @property
    def text(self) -> str:
        return f"n={self.n},rows={self.rows},agg={self.agg}"


def parse_hyse_options(text: str) -> HySEOptions:
    """HySEOptions from "n=3,rows=2,agg=split"; an unknown name or a bad value raises
    ConfigError naming it."""
    values: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in OPTION_NAMES:
            raise ConfigError(f"hyse option '{item}': expected NAME=VALUE with NAME one of "
                              f"{', '.join(OPTION_NAMES)}")
        values[name.strip()] = value.strip()
    numbers = {}
    for name in ("n", "rows"):
        if name in values:
            try:
                numbers[name] = int(values[name])
            except ValueError:
                raise ConfigError(f"hyse option {name}={values[name]}: expected a whole "
                                  "number") from None
    return replace(HySEOptions(), agg=values.get("agg", "mean"), **numbers)


class HySERetriever(DenseRetriever):
    """Dense search by hypothetical tables and the query (see the module docstring)."""

    description = "hypothetical tables written per query, embedded with the query (HySE)"

    def __init__(self, embedder: Embedder, store: VectorStore, writer: TableWriter,
                 options: HySEOptions | None = None) -> None:
        super().__init__(embedder, store)
        self.writer = writer
        self.options = options or HySEOptions()
        self.spec = f"hyse:{embedder.spec}@{writer.spec}:{self.options.text}"
        self.view = TableView()
        """The run's view: hypothetical tables are serialized as the corpus is."""
        self._written: dict[str, HypotheticalTables] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_specs(cls, embedder_spec: str, generator_spec: str, options: HySEOptions,
                   settings: Settings) -> HySERetriever:
        """From the parts of a `hyse:EMBEDDER@GENERATOR:OPTIONS` spec (read by the registry)."""
        from target_core.embeddings import get_embedder
        from target_core.generators import build_generator

        embedder = get_embedder(embedder_spec, settings)
        writer = table_writer(build_generator(generator_spec, settings), options.n,
                              options.rows)
        return cls(embedder, VectorStore.from_settings(settings), writer, options)

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        """The view's text, as dense; the view is kept for the hypothetical tables."""
        self.view = view
        return [table_text(t, view) for t in tables]

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        info = super().index(texts, corpus_key=corpus_key, progress=progress)
        return IndexInfo(info.n_texts, info.seconds, info.details | self.writing_info())

    # --- writing ----------------------------------------------------------------------------

    def prepare_queries(self, queries: Sequence[str], *,
                        progress: Progress = no_progress) -> dict[str, Any]:
        """Writes the hypothetical tables of the run's queries now, `concurrency` at a
        time; returns what the run records about the writing."""
        started = time.perf_counter()
        texts = list(dict.fromkeys(queries))
        workers = max(1, min(self.writer.concurrency, len(texts) or 1))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hyse") as pool:
            for n, _ in enumerate(pool.map(self._write, texts), start=1):
                if n % 8 == 0 or n == len(texts):
                    progress(n, len(texts), "writing hypothetical tables")
        with self._lock:  # in query order (written as they finished): llm_calls' order
            self._written = {q: self._written[q] for q in texts} | self._written
        return self.writing_info(time.perf_counter() - started)

    def writing_info(self, seconds: float | None = None) -> dict[str, Any]:
        """The writer's label, N, R, aggregation, and counts of the writes so far."""
        with self._lock:
            written = list(self._written.values())
        info: dict[str, Any] = {
            "hyse_writer": self.writer.label, "hyse_n": self.options.n,
            "hyse_rows": self.options.rows, "hyse_agg": self.options.agg,
            "hyse_writes": len(written),
            "hyse_writes_failed": sum(w.error is not None for w in written),
            "hyse_writes_cached": sum(w.cached for w in written),
            "hyse_tables_written": sum(len(w.tables) for w in written)}
        if seconds is not None:
            info["hyse_write_seconds"] = round(seconds, 4)
        if errors := [w.error for w in written if w.error]:
            info["hyse_write_error_example"] = errors[0][:300]
        return info

    def llm_calls(self) -> list[LLMCalls]:
        """The LLM writer's calls so far, failures by query text (the runner names them
        by query id); none for the heuristic writer, which calls no model."""
        if not isinstance(self.writer, LLMWriter):
            return []
        with self._lock:
            written = list(self._written.items())
        failures = tuple((query, w.error, w.error_class) for query, w in written if w.error)
        return [LLMCalls("hyse", "HySE", "hypothetical tables", "query",
                         "fell back to the query", len(written), failures)]

    def _write(self, query: str) -> HypotheticalTables:
        with self._lock:
            done = self._written.get(query)
        if done is None:
            done = self.writer.write(query)
            with self._lock:
                self._written[query] = done
        return done

    def written(self, query: str) -> HypotheticalTables:
        """The hypothetical tables of `query` (written now if they were not yet)."""
        return self._write(query)

    # --- search ------------------------------------------------------------------------------

    def query_vectors(self, query: str) -> np.ndarray:
        """Unit vectors (N' + 1, d): the written tables (N' <= N, 0 after a failed
        write), then the query."""
        vectors = self._vectors.get(query)
        if vectors is None:
            view = replace(self.view, table_id=False)
            tables = [table_text(t, view) for t in self.written(query).tables]
            parts = [np.asarray(self.embedder.embed(tables, kind="document"))] if tables else []
            parts.append(np.asarray(self.embedder.embed([query], kind="query")))
            vectors = np.vstack(parts).astype(np.float32)
            self._vectors = {query: vectors}  # score_all follows its search: keep one
        return vectors

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        collection = self._require()
        results = []
        for query in queries:
            vectors = self.query_vectors(query)
            if self.options.agg == "split":
                results.append(top_k_hits(self.score_all(query), top_k))
                continue
            mean = _unit(vectors.mean(axis=0))
            found = self.store.query(collection, mean[None, :], top_k + 1, size=self._n)[0]
            ranked = sorted(((int(i), s) for i, s in found), key=lambda h: (-h[1], h[0]))
            if 0 < top_k < len(ranked) and ranked[top_k][1] == ranked[top_k - 1][1]:
                ranked = top_k_hits(self.score_all(query), top_k)  # as dense: exact ties
            results.append(ranked[:top_k])
        return results

    def score_all(self, query: str) -> np.ndarray:
        """Exact scores of every stored text (module docstring): cosine with the mean
        vector, or 1 / (1 + round-robin position) for split."""
        matrix = self.stored_matrix()
        vectors = self.query_vectors(query)
        with blas_threads(1):
            if self.options.agg == "mean":
                return np.asarray(matrix @ _unit(vectors.mean(axis=0)), dtype=np.float64)
            return split_scores(matrix @ vectors.T)


def split_scores(cosines: np.ndarray) -> np.ndarray:
    """Round-robin merge scores from a (texts, lists) cosine matrix: list s ranks the
    texts by cosine (ties to the lower index); the text at 0-based rank r of list s has
    position r * lists + s; each text keeps its smallest position p; score 1 / (1 + p)."""
    n_texts, n_lists = cosines.shape
    best = np.full(n_texts, np.iinfo(np.int64).max, dtype=np.int64)
    for s in range(n_lists):
        order = np.lexsort((np.arange(n_texts), -cosines[:, s]))
        positions = np.empty(n_texts, dtype=np.int64)
        positions[order] = np.arange(n_texts) * n_lists + s
        np.minimum(best, positions, out=best)
    return 1.0 / (1.0 + best.astype(np.float64))


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)
