"""TARGET's retriever classes as they are, run by the engine (the `py:` adapters of
TARGET's two shapes; retrievers/plugin.py tells the shapes apart).

- **AbsCustomEmbeddingRetriever's shape** (`TargetPlugin`): `embed_corpus(dataset_name,
  corpus)` then `retrieve(query, dataset_name, top_k)` -> [(database_id, table_id), ...].
- **AbsStandardEmbeddingRetriever's shape** (`StandardPlugin`): `embed_corpus(dataset_name,
  entry)` -> one vector per table and `embed_query(query, dataset_name)` -> one vector.
  As TARGET stores those vectors itself and searches them by cosine, the engine stores
  them in Chroma (a collection named by corpus, class code and constructor arguments, as
  a dense run's) and searches by cosine: every table gets a score, so a gold table
  beyond k gets its rank.

What the class receives is what TARGET's loader gives (dataset_loaders/utils.py,
AbsDatasetLoader.convert_corpus_table_to): the table in the class's
`get_expected_corpus_format()` (or `expected_corpus_format`), read as TARGET reads it
(lower-cased, by substring: "array"/"nested array" -> [header, *rows]; "dataframe" or
"pandas" -> a pandas DataFrame; "dictionary" -> a list of {column: cell} rows), every
cell a string (TARGET's corpora are all-string tables; here a null cell is "" and a
boolean "true"/"false", serialize.cell_text), and the table's context dict. The custom
shape gets batches of TARGET_BATCH tables as dicts of lists, the standard shape one
entry at a time. `dataset_name` is a content key (texts fingerprint, then the class's
code fingerprint), never the same for other tables or other code.

The table view does not apply: the class gets the whole table and its context, as in
TARGET, and is configured by its constructor (`py:...:OTTQARetriever:withtitle=false`).
A run with any other view than the default is refused before it starts (it would be a
second run of identical results under another name).

A custom-shape class's list is taken as returned: a table listed twice, or more than
top_k tables, is ranked once at its first place within k (the rank metrics), while
TARGET's recall and capped recall count the list as TARGET does (`lists_as_returned`,
metrics.capped.target_counts); the run records how many lists did so.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.progress import Progress, no_progress
from target_core.registry import PluginError
from target_core.retrievers.base import Hits, IndexInfo, NotIndexedError
from target_core.retrievers.chroma_base import EMBED_CHUNK
from target_core.retrievers.dense import DenseRetriever
from target_core.retrievers.plugin_base import PluginAdapter, describe
from target_core.serialize import cell_text, table_text
from target_core.table_view import TableView
from target_core.types import Table, TableKey

TARGET_BATCH = 64
"""Tables per corpus batch handed to a custom-shape embed_corpus (TARGET's default)."""

TARGET_FORMATS = ("nested array", "dataframe", "dictionary")
"""The forms a table is handed over in; TARGET's spellings map onto them (target_form)."""


def target_form(value: object) -> str | None:
    """TARGET's reading of an expected corpus format (set_in_memory_data_format):
    lower-cased, "array" anywhere -> "nested array", else "dataframe" or "pandas" ->
    "dataframe", else "dictionary" -> "dictionary"; None for anything else."""
    cleaned = str(value).lower().strip()
    if "array" in cleaned:
        return "nested array"
    if "dataframe" in cleaned or "pandas" in cleaned:
        return "dataframe"
    if "dictionary" in cleaned:
        return "dictionary"
    return None


def target_table(table: Table, form: str = "nested array") -> Any:
    """`table` as TARGET hands it over, every cell a string: a nested array, header row
    first (TARGET's default); "dictionary": a list of {column: cell} rows; "dataframe": a
    pandas DataFrame."""
    header = [str(h) for h in table.header]
    rows = [[cell_text(c) for c in row] for row in table.rows]
    if form == "dictionary":
        return [dict(zip(header, row, strict=False)) for row in rows]
    if form == "dataframe":
        import pandas as pd

        return pd.DataFrame(rows, columns=header)
    return [header, *rows]


class TargetShaped(PluginAdapter):
    """What both of TARGET's shapes share: the tables kept whole, their format, the
    default view only, the content-keyed dataset name."""

    def __init__(self, obj: Any, *, spec: str, code: str | None) -> None:
        super().__init__(obj, spec=spec, code=code)
        self.tables: Sequence[Table] = ()
        self.dataset_name: str | None = None

    def check_view(self, view: TableView) -> None:
        """PluginError unless `view` is the default: the class gets whole tables."""
        if view != TableView():
            raise PluginError(
                f"retriever '{self.spec}': {self.name} has TARGET's shape: it gets each "
                f"table whole with its context, as in TARGET, so the view "
                f"'{view.label}' would change nothing but the run's name; run it with "
                f"the default view and configure the class by its constructor instead "
                f"(py:...:{self.name}:NAME=VALUE,...)")

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        """The default view's texts (what the run records as indexed text); the tables
        are kept for embed_corpus, which gets them whole."""
        self.check_view(view)
        self.tables = tables
        return [table_text(t, view) for t in tables]

    def corpus_format(self) -> str:
        getter = getattr(self.obj, "get_expected_corpus_format", None)
        value = self.call("get_expected_corpus_format") if callable(getter) else getattr(
            self.obj, "expected_corpus_format", "nested array")
        form = target_form(value)
        if form is None:
            raise self.fail("get_expected_corpus_format", f"gave {value!r}; TARGET reads "
                            "'nested array' (or 'array'), 'dataframe' (or 'pandas') and "
                            "'dictionary'")
        return form

    def entry(self, table: Table, form: str) -> dict[str, Any]:
        return {"database_id": table.database_id, "table_id": table.table_id,
                "table": target_table(table, form), "context": dict(table.context)}

    def name_for(self, corpus_key: str, texts: Sequence[str]) -> str:
        if len(self.tables) != len(texts):
            raise self.fail("embed_corpus", "needs the tables: call prepare_texts(tables, "
                            "view) before index (the engine does)")
        return f"corpus-{self.index_key(corpus_key)}"


class TargetPlugin(TargetShaped):
    """A class of TARGET's custom-retriever shape, fed tables as TARGET feeds them."""

    shape = "target"

    def __init__(self, obj: Any, *, spec: str, code: str | None) -> None:
        super().__init__(obj, spec=spec, code=code)
        self.position: dict[TableKey, int] = {}
        self.returned: list[tuple[TableKey, ...]] = []

    def batches(self, progress: Progress) -> Iterator[dict[str, list[Any]]]:
        """The corpus as TARGET's loader yields it: dicts of lists, TARGET_BATCH tables
        each; progress moves as the class consumes them."""
        form = self.corpus_format()
        n = len(self.tables)
        for start in range(0, n, TARGET_BATCH):
            entries = [self.entry(t, form) for t in self.tables[start:start + TARGET_BATCH]]
            yield {key: [e[key] for e in entries]
                   for key in ("database_id", "table_id", "table", "context")}
            progress(min(start + TARGET_BATCH, n), n, f"{self.name}.embed_corpus")

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        name = self.name_for(corpus_key, texts)
        started = time.perf_counter()
        self.call("embed_corpus", name, self.batches(progress))
        self.position = {t.key: i for i, t in enumerate(self.tables)}
        self.dataset_name = name
        return IndexInfo(len(texts), time.perf_counter() - started,
                         {**self.details(), "dataset_name": name})

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        if self.dataset_name is None:
            raise NotIndexedError(self.spec)
        self.returned = []
        results = []
        for query in queries:
            listed = self._retrieve(query, top_k)
            self.returned.append(tuple(self.tables[i].key for i in listed))
            first = list(dict.fromkeys(listed))  # each table at its first rank
            results.append(self.check_hits(
                "retrieve", [(i, 1.0 / rank) for rank, i in enumerate(first, start=1)],
                top_k))
        return results

    def lists_as_returned(self) -> list[tuple[TableKey, ...]]:
        """The lists of the last search() exactly as the class returned them (repeats
        and entries beyond top_k kept), one per query: TARGET counts these."""
        return list(self.returned)

    def _retrieve(self, query: str, top_k: int) -> list[int]:
        found = self.call("retrieve", query, self.dataset_name, top_k)
        if isinstance(found, str | bytes) or not hasattr(found, "__iter__"):
            raise self.fail("retrieve", f"must return a list of (database_id, table_id) "
                            f"pairs, got {describe(found)}")
        listed = []
        for pair in found:
            if isinstance(pair, str | bytes) or not hasattr(pair, "__len__") or len(pair) != 2:
                raise self.fail("retrieve", f"must return (database_id, table_id) pairs, "
                                f"got {pair!r}")
            key = (str(pair[0]), str(pair[1]))
            index = self.position.get(key)
            if index is None:
                raise self.fail("retrieve", f"returned {key}, which is not a table of the "
                                "corpus it was given")
            listed.append(index)
        return listed

    def score_all(self, query: str) -> np.ndarray | None:
        """None: TARGET's shape has no scores, so a gold table is ranked only when the
        class's own list holds it."""
        return None


class _ClassEmbedder:
    """A standard-shape class's embed_query as an Embedder (queries only: its tables are
    embedded entry by entry by StandardPlugin)."""

    max_tokens = 0
    last_truncated = 0
    backend = "py class"

    def __init__(self, plugin: StandardPlugin, dataset_name: str) -> None:
        self.plugin = plugin
        self.dataset_name = dataset_name
        self.spec = plugin.spec
        self.dimension = 0

    def embed(self, texts: Sequence[str], *, kind: str,
              progress: Progress = no_progress) -> np.ndarray:
        if kind != "query":
            raise self.plugin.fail("embed_corpus", "embeds tables, not texts")
        return self.plugin.vectors("embed_query", [
            self.plugin.call("embed_query", text, self.dataset_name) for text in texts])

    def load(self) -> None:
        return None

    def fingerprint(self) -> str:
        """The spec (class and constructor arguments) and its code."""
        digest = hashlib.sha256(f"{self.spec}|{self.plugin.code}".encode()).hexdigest()
        return f"py-{digest[:24]}"


class _EntryDense(DenseRetriever):
    """Dense retrieval whose stored vectors come from the class's embed_corpus, one table
    entry at a time, stored in chunks as dense runs store theirs (a killed run resumes)."""

    def __init__(self, plugin: StandardPlugin, embedder: _ClassEmbedder, store: Any) -> None:
        super().__init__(embedder, store)
        self.plugin = plugin
        self.spec = plugin.spec

    def _embed_missing(self, collection: Any, ids: list[str], texts: Sequence[str],
                       progress: Progress) -> tuple[int, int]:
        plugin, name = self.plugin, self.plugin.dataset_name
        form = plugin.corpus_format()
        stored = self.store.stored_ids(collection)
        missing = [i for i, id_ in enumerate(ids) if id_ not in stored]
        for start in range(0, len(missing), EMBED_CHUNK):
            chunk = missing[start:start + EMBED_CHUNK]
            vectors = plugin.vectors("embed_corpus", [
                plugin.call("embed_corpus", name, plugin.entry(plugin.tables[i], form))
                for i in chunk])
            self.store.add(collection, [ids[i] for i in chunk], vectors)
            progress(len(texts) - len(missing) + start + len(chunk), len(texts),
                     f"{plugin.name}.embed_corpus")
        return len(missing), 0


class StandardPlugin(TargetShaped):
    """A class of TARGET's standard-embedding shape: its vectors stored in Chroma and
    searched by cosine (retrievers/dense.py does the storing and searching)."""

    shape = "standard"

    def __init__(self, obj: Any, *, spec: str, code: str | None,
                 settings: Settings | None = None) -> None:
        super().__init__(obj, spec=spec, code=code)
        self.settings = settings
        self.dense: _EntryDense | None = None
        self.dimension: int | None = None

    def details(self) -> dict[str, Any]:
        return {**super().details(), "ranks_beyond_k": True}

    def vectors(self, method: str, raw: list[Any]) -> np.ndarray:
        """The class's vectors as normalized float32 rows (cosine is unchanged), each
        one-dimensional, finite and of one length, else PluginError."""
        from target_core.embeddings.base import normalize_rows

        rows = []
        for value in raw:
            try:
                row = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError):
                row = np.empty(0)
            if row.ndim != 1 or row.size == 0 or not np.isfinite(row).all():
                raise self.fail(method, f"must return one vector of finite numbers, got "
                                f"{describe(value)}")
            if self.dimension is None:
                self.dimension = row.size
            if row.size != self.dimension:
                raise self.fail(method, f"returned a vector of {row.size} numbers after "
                                f"one of {self.dimension}: every vector needs one length")
            rows.append(row)
        return normalize_rows(np.asarray(rows).reshape(len(rows), self.dimension or 0))

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        from target_core.vectorstore import VectorStore

        name = self.name_for(corpus_key, texts)
        self.dataset_name = name
        store = (VectorStore.from_settings(self.settings) if self.settings is not None
                 else VectorStore.ephemeral())
        self.dense = _EntryDense(self, _ClassEmbedder(self, name), store)
        info = self.dense.index(texts, corpus_key=self.index_key(corpus_key),
                                progress=progress)
        keep = ("collection", "store", "embedded", "cached")
        return IndexInfo(info.n_texts, info.seconds,
                         {**{k: info.details[k] for k in keep if k in info.details},
                          **self.details(), "dataset_name": name})

    def _dense(self) -> _EntryDense:
        if self.dense is None:
            raise NotIndexedError(self.spec)
        return self.dense

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        return self._dense().search(queries, top_k=top_k)

    def score_all(self, query: str) -> np.ndarray | None:
        return self._dense().score_all(query)
