"""Your own retriever: `py:MODULE:CLASS` or `py:PATH.py:CLASS`, run by the full engine.

Two shapes of class are accepted, told apart by their methods; either is wrapped in an
adapter that implements the Retriever protocol and checks what the class returns, so a
broken result stops the run with a message naming the class instead of a wrong score:

- **this project's protocol** (`index`, `search`, optional `score_all` and
  `prepare_texts`; see retrievers/base.py). It needs no base class: a missing
  `prepare_texts` is the view's text, a missing `score_all` gives no ranks beyond k.
  `index` may return an IndexInfo or nothing. `corpus_key` is the texts' fingerprint
  joined with the plugin's code fingerprint, so a persistent index of an edited class
  is not reused.
- **TARGET's custom retriever** (AbsCustomEmbeddingRetriever, without importing TARGET):
  `embed_corpus(dataset_name, corpus)` then `retrieve(query, dataset_name, top_k)` ->
  [(database_id, table_id), ...]. The corpus is handed over as TARGET's loader does:
  batches of TARGET_BATCH tables, each a dict of lists under `database_id`, `table_id`,
  `table` and `context`; a table is a nested array (header row first), or a list of
  row dicts / a pandas DataFrame when the class's `get_expected_corpus_format()` (or
  `expected_corpus_format`) says "dictionary" / "dataframe". `dataset_name` is a
  content key (texts fingerprint, then code fingerprint), never the same for other
  tables or other code: a class that persists its index by dataset name cannot reuse a
  stale one. Such a class gives no scores: a hit's score is 1/rank, and a gold table
  outside its list has no rank (the pages' "not ranked").
"""

from __future__ import annotations

import inspect
import numbers
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.progress import Progress, no_progress
from target_core.registry import (
    PluginError,
    code_fingerprint,
    instantiate,
    parse_class_ref,
)
from target_core.retrievers.base import Hits, IndexInfo, NotIndexedError, Retriever
from target_core.retrievers.llm_calls import LLMCalls
from target_core.serialize import table_text
from target_core.types import Table, TableKey, TableView

TARGET_BATCH = 64
"""Tables per corpus batch handed to a TARGET-shaped embed_corpus (TARGET's default)."""

PROTOCOL_METHODS = ("index", "search")
TARGET_METHODS = ("embed_corpus", "retrieve")
TARGET_FORMATS = ("nested array", "array", "dictionary", "dataframe")


def build_plugin_retriever(arg: str, settings: Settings) -> Retriever:
    """The `py` registry entry: load the class `arg` names, build it with no arguments
    and adapt it to the protocol by its shape."""
    ref = parse_class_ref(arg, "retriever")
    return adapt_retriever(instantiate(ref, "retriever"), spec=f"py:{arg}",
                           code=code_fingerprint(ref, "retriever"))


def retriever_shape(obj: object) -> str | None:
    """"protocol", "target", or None when `obj` has the methods of neither."""
    if all(callable(getattr(obj, m, None)) for m in PROTOCOL_METHODS):
        return "protocol"
    if all(callable(getattr(obj, m, None)) for m in TARGET_METHODS):
        return "target"
    return None


def adapt_retriever(obj: object, *, spec: str, code: str | None = None) -> Retriever:
    """`obj` wrapped for the engine; a class of neither shape raises PluginError saying
    which methods each shape needs and which it lacks."""
    shape = retriever_shape(obj)
    if shape == "protocol":
        return ProtocolPlugin(obj, spec=spec, code=code)
    if shape == "target":
        return TargetPlugin(obj, spec=spec, code=code)
    name = type(obj).__name__
    missing = {s: [m for m in methods if not callable(getattr(obj, m, None))]
               for s, methods in (("this project's protocol", PROTOCOL_METHODS),
                                  ("TARGET's custom retriever", TARGET_METHODS))}
    raise PluginError(f"retriever '{spec}': {name} fits no retriever shape: "
                      + "; ".join(f"{s} needs {', '.join(missing[s])}" for s in missing))


def call_with(fn: Callable[..., Any], *args: Any, **options: Any) -> Any:
    """fn(*args, **options), leaving out the keyword options fn does not take (a user's
    index() need not accept `progress`)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return fn(*args, **options)
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        names = {p.name for p in params}
        options = {k: v for k, v in options.items() if k in names}
    return fn(*args, **options)


class _Plugin(Retriever):
    """What both adapters share: the spec, the class, the code fingerprint, run errors."""

    shape = ""

    def __init__(self, obj: Any, *, spec: str, code: str | None) -> None:
        self.obj = obj
        self.spec = spec
        self.code = code
        self.n_texts: int | None = None

    @property
    def name(self) -> str:
        return type(self.obj).__name__

    def fail(self, method: str, problem: str) -> PluginError:
        return PluginError(f"retriever '{self.spec}': {self.name}.{method} {problem}")

    def index_key(self, corpus_key: str) -> str:
        return f"{corpus_key}-{self.code}" if self.code else corpus_key

    def details(self) -> dict[str, Any]:
        """Recorded with the run. `ranks_beyond_k` False: a gold table outside the hits
        has no rank (the Query page says why)."""
        return {"plugin": self.name, "shape": self.shape, "code": self.code or "",
                "ranks_beyond_k": callable(getattr(self.obj, "score_all", None))}

    def call(self, method: str, *args: Any, **options: Any) -> Any:
        """The class's `method`, its exceptions (other than ours) named as its own."""
        try:
            return call_with(getattr(self.obj, method), *args, **options)
        except PluginError:
            raise
        except Exception as exc:
            raise self.fail(method, f"raised {type(exc).__name__}: {exc}") from exc

    def check_hits(self, method: str, hits: Hits, top_k: int) -> Hits:
        scores = [s for _, s in hits]
        if any(a < b for a, b in zip(scores, scores[1:], strict=False)):
            raise self.fail(method, f"returned hits not best first (scores {scores[:5]}...)")
        indexes = [i for i, _ in hits]
        if len(set(indexes)) != len(indexes):
            raise self.fail(method, f"returned a table twice: {indexes}")
        return hits[:top_k]


class ProtocolPlugin(_Plugin):
    """A class of this project's protocol: its results checked, its gaps filled in."""

    shape = "protocol"

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        if not callable(getattr(self.obj, "prepare_texts", None)):
            return [table_text(t, view) for t in tables]
        texts = self.call("prepare_texts", tables, view, progress=progress)
        if (not isinstance(texts, list | tuple) or len(texts) != len(tables)
                or not all(isinstance(t, str) for t in texts)):
            raise self.fail("prepare_texts", f"must return one str per table "
                            f"({len(tables)}), got {type(texts).__name__}")
        return list(texts)

    def prepare_queries(self, queries: Sequence[str], *,
                        progress: Progress = no_progress) -> dict[str, Any]:
        if not callable(getattr(self.obj, "prepare_queries", None)):
            return {}
        info = self.call("prepare_queries", list(queries), progress=progress)
        if info is not None and not isinstance(info, dict):
            raise self.fail("prepare_queries", f"must return a dict or None, got "
                            f"{type(info).__name__}")
        return dict(info or {})

    def llm_calls(self) -> list[LLMCalls]:
        """The class's own LLM calls (retrievers/llm_calls.py), judged by the same policy
        as HySE's and the summaries'; none when it does not report them."""
        if not callable(getattr(self.obj, "llm_calls", None)):
            return []
        calls = self.call("llm_calls")
        if not isinstance(calls, list) or not all(isinstance(c, LLMCalls) for c in calls):
            raise self.fail("llm_calls", "must return a list of LLMCalls "
                            "(target_core.retrievers.llm_calls)")
        return calls

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        started = time.perf_counter()
        info = self.call("index", texts, corpus_key=self.index_key(corpus_key),
                         progress=progress)
        self.n_texts = len(texts)
        seconds = time.perf_counter() - started
        if info is None:
            return IndexInfo(len(texts), seconds, self.details())
        if not isinstance(info, IndexInfo):
            raise self.fail("index", f"must return an IndexInfo or None, got "
                            f"{type(info).__name__}")
        return IndexInfo(info.n_texts, info.seconds, {**info.details, **self.details()})

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        if self.n_texts is None:
            raise NotIndexedError(self.spec)
        results = self.call("search", list(queries), top_k=top_k)
        if not isinstance(results, list | tuple) or len(results) != len(queries):
            raise self.fail("search", f"must return one list of hits per query "
                            f"({len(queries)}), got {_describe(results)}")
        return [self.check_hits("search", self._hits(hits), top_k) for hits in results]

    def _hits(self, hits: Any) -> Hits:
        """(index, score) pairs as Python ints and floats, each index a text's."""
        n = self.n_texts or 0
        out: Hits = []
        for hit in hits if isinstance(hits, list | tuple) else [hits]:
            try:
                index, score = hit
                ok = (isinstance(index, numbers.Integral) and not isinstance(index, bool)
                      and 0 <= int(index) < n and isinstance(float(score), float))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise self.fail("search", f"must return (index, score) pairs with 0 <= "
                                f"index < {n}, got {hit!r}")
            out.append((int(index), float(score)))
        return out

    def score_all(self, query: str) -> np.ndarray | None:
        if not callable(getattr(self.obj, "score_all", None)):
            return None
        scores = self.call("score_all", query)
        if scores is None:
            return None
        array = np.asarray(scores, dtype=np.float64)
        if array.shape != (self.n_texts,):
            raise self.fail("score_all", f"must return one score per indexed text "
                            f"({self.n_texts}) or None, got shape {array.shape}")
        return array


class TargetPlugin(_Plugin):
    """A class of TARGET's custom-retriever shape, fed tables as TARGET feeds them."""

    shape = "target"

    def __init__(self, obj: Any, *, spec: str, code: str | None) -> None:
        super().__init__(obj, spec=spec, code=code)
        self.tables: Sequence[Table] = ()
        self.position: dict[TableKey, int] = {}
        self.dataset_name: str | None = None

    def prepare_texts(self, tables: Sequence[Table], view: TableView, *,
                      progress: Progress = no_progress) -> list[str]:
        """The view's texts (what the run records); the tables themselves are kept for
        embed_corpus, which gets them whole (the view does not apply)."""
        self.tables = tables
        return [table_text(t, view) for t in tables]

    def corpus_format(self) -> str:
        getter = getattr(self.obj, "get_expected_corpus_format", None)
        value = getter() if callable(getter) else getattr(
            self.obj, "expected_corpus_format", "nested array")
        if str(value).lower() not in TARGET_FORMATS:
            raise self.fail("get_expected_corpus_format", f"gave {value!r}; this adapter "
                            f"hands tables over as {', '.join(TARGET_FORMATS[1:])} or "
                            "'nested array'")
        return str(value).lower()

    def batches(self, progress: Progress) -> Iterator[dict[str, list[Any]]]:
        """The corpus as TARGET's loader yields it: dicts of lists, TARGET_BATCH tables
        each; progress moves as the class consumes them."""
        form = self.corpus_format()
        n = len(self.tables)
        for start in range(0, n, TARGET_BATCH):
            chunk = self.tables[start:start + TARGET_BATCH]
            yield {"database_id": [t.database_id for t in chunk],
                   "table_id": [t.table_id for t in chunk],
                   "table": [target_table(t, form) for t in chunk],
                   "context": [dict(t.context) for t in chunk]}
            progress(min(start + TARGET_BATCH, n), n, f"{self.name}.embed_corpus")

    def index(self, texts: Sequence[str], *, corpus_key: str,
              progress: Progress = no_progress) -> IndexInfo:
        if len(self.tables) != len(texts):
            raise self.fail("embed_corpus", "needs the tables: call prepare_texts(tables, "
                            "view) before index (the engine does)")
        started = time.perf_counter()
        name = f"corpus-{self.index_key(corpus_key)}"
        self.call("embed_corpus", name, self.batches(progress))
        self.position = {t.key: i for i, t in enumerate(self.tables)}
        self.dataset_name = name
        return IndexInfo(len(texts), time.perf_counter() - started,
                         {**self.details(), "dataset_name": name})

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        if self.dataset_name is None:
            raise NotIndexedError(self.spec)
        return [self.check_hits("retrieve", self._retrieve(query, top_k), top_k)
                for query in queries]

    def _retrieve(self, query: str, top_k: int) -> Hits:
        found = self.call("retrieve", query, self.dataset_name, top_k)
        if isinstance(found, str | bytes) or not hasattr(found, "__iter__"):
            raise self.fail("retrieve", f"must return a list of (database_id, table_id) "
                            f"pairs, got {_describe(found)}")
        hits: Hits = []
        seen: set[int] = set()
        for pair in found:
            if isinstance(pair, str | bytes) or not hasattr(pair, "__len__") or len(pair) != 2:
                raise self.fail("retrieve", f"must return (database_id, table_id) pairs, "
                                f"got {pair!r}")
            key = (str(pair[0]), str(pair[1]))
            index = self.position.get(key)
            if index is None:
                raise self.fail("retrieve", f"returned {key}, which is not a table of the "
                                "corpus it was given")
            if index not in seen:  # a repeat adds nothing to the ranking
                seen.add(index)
                hits.append((index, 1.0 / (len(hits) + 1)))
        return hits

    def score_all(self, query: str) -> np.ndarray | None:
        """None: TARGET's shape has no scores, so a gold table is ranked only when the
        class's own list holds it."""
        return None


def target_table(table: Table, form: str = "nested array") -> Any:
    """`table` as TARGET hands it to embed_corpus: a nested array, header row first
    (TARGET's default); "dictionary": a list of {column: cell} rows; "dataframe": a
    pandas DataFrame."""
    header = list(table.header)
    rows = [list(row) for row in table.rows]
    if form == "dictionary":
        return [dict(zip(header, row, strict=False)) for row in rows]
    if form == "dataframe":
        import pandas as pd

        return pd.DataFrame(rows, columns=header)
    return [header, *rows]


def _describe(value: Any) -> str:
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__} of {len(value)}"
    return type(value).__name__
