"""Your own retriever: `py:MODULE:CLASS` or `py:PATH.py:CLASS`, run by the full engine.

Three shapes of class are accepted, told apart by their methods; each is wrapped in an
adapter that implements the Retriever protocol and checks what the class returns, so a
broken result stops the run with a message naming the class instead of a wrong score.
A spec may give the class constructor arguments after one more ':'
(`py:PATH.py:CLASS:withtitle=false,num_rows=0`, registry.parse_class_ref); they are part
of the spec, so of the run's key and of every place the spec is shown.

- **this project's protocol** (`index`, `search`, optional `score_all` and
  `prepare_texts`; see retrievers/base.py). It needs no base class: a missing
  `prepare_texts` is the view's text, a missing `score_all` gives no ranks beyond k.
  `index` may return an IndexInfo or nothing. `corpus_key` is the texts' fingerprint
  joined with the plugin's code fingerprint, so a persistent index of an edited class
  is not reused.
- **TARGET's two retriever shapes**, without importing TARGET: its custom retriever
  (`embed_corpus(dataset_name, corpus)`, `retrieve(query, dataset_name, top_k)`) and its
  standard embedding retriever (`embed_corpus(dataset_name, entry)` and
  `embed_query(query, dataset_name)` -> vectors, stored and searched here):
  retrievers/target_plugin.py says what they receive and how their lists are counted.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from target_core.config import Settings
from target_core.progress import Progress, no_progress
from target_core.pyclass import code_fingerprint, instantiate, parse_class_ref
from target_core.registry import PluginError
from target_core.retrievers.base import Hits, IndexInfo, NotIndexedError, Retriever
from target_core.retrievers.llm_calls import LLMCalls
from target_core.retrievers.plugin_base import PluginAdapter, describe
from target_core.retrievers.target_plugin import StandardPlugin, TargetPlugin
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.types import Table

PROTOCOL_METHODS = ("index", "search")
TARGET_METHODS = ("embed_corpus", "retrieve")
STANDARD_METHODS = ("embed_corpus", "embed_query")


def build_plugin_retriever(arg: str, settings: Settings) -> Retriever:
    """The `py` registry entry: load the class `arg` names, build it with the spec's
    constructor arguments and adapt it to the protocol by its shape."""
    ref = parse_class_ref(arg, "retriever")
    return adapt_retriever(instantiate(ref, "retriever"), spec=f"py:{arg}",
                           code=code_fingerprint(ref, "retriever"), settings=settings)


def retriever_shape(obj: object) -> str | None:
    """"protocol", "target" (TARGET's custom retriever), "standard" (TARGET's standard
    embedding retriever), or None when `obj` has the methods of none."""
    for shape, methods in (("protocol", PROTOCOL_METHODS), ("target", TARGET_METHODS),
                           ("standard", STANDARD_METHODS)):
        if all(callable(getattr(obj, m, None)) for m in methods):
            return shape
    return None


def adapt_retriever(obj: object, *, spec: str, code: str | None = None,
                    settings: Settings | None = None) -> Retriever:
    """`obj` wrapped for the engine; a class of no shape raises PluginError saying
    which methods each shape needs and which it lacks. `settings` say where a
    standard-shape class's vectors are stored (None: in memory)."""
    shape = retriever_shape(obj)
    if shape == "protocol":
        return ProtocolPlugin(obj, spec=spec, code=code)
    if shape == "target":
        return TargetPlugin(obj, spec=spec, code=code)
    if shape == "standard":
        return StandardPlugin(obj, spec=spec, code=code, settings=settings)
    name = type(obj).__name__
    missing = {s: [m for m in methods if not callable(getattr(obj, m, None))]
               for s, methods in (("this project's protocol", PROTOCOL_METHODS),
                                  ("TARGET's custom retriever", TARGET_METHODS),
                                  ("TARGET's standard embedding retriever",
                                   STANDARD_METHODS))}
    raise PluginError(f"retriever '{spec}': {name} fits no retriever shape: "
                      + "; ".join(f"{s} needs {', '.join(missing[s])}" for s in missing))


class ProtocolPlugin(PluginAdapter):
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
                            f"({len(queries)}), got {describe(results)}")
        checked = [self._hits(hits) for hits in results]
        for hits in checked:  # this protocol's contract: never cut a list silently
            if len(hits) > top_k:
                raise self.fail("search", f"returned {len(hits)} hits for top_k = {top_k}: "
                                "return at most top_k (more would be dropped unseen)")
        return [self.check_hits("search", hits, top_k) for hits in checked]

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
