"""Retrievers: a registry from spec strings to builders, and the shared protocol.

Specs: `bm25`, `tfidf`, `ottqa:bm25`, `ottqa:tfidf` (TARGET's OTT-QA retriever,
retrievers/drqa.py), `no-context`, `dense:EMBEDDER` (`dense:minilm`, `dense:openai`,
`dense:openai/MODEL`), `hybrid` (= `hybrid:minilm`, fusion of bm25 and dense:minilm) or
`hybrid:EMBEDDER[:OPTIONS]` (retrievers/fusion.py), `summary:EMBEDDER[@GENERATOR]`
(generated table summaries, embedded; default minilm@heuristic), `rows[:EMBEDDER]` (one
vector per row, a table scored by its best row; default minilm),
`hyse[:EMBEDDER][@GENERATOR][:OPTIONS]` (hypothetical tables written per query, embedded
with it; default minilm@heuristic, retrievers/hyse.py), `py:MODULE:CLASS` or
`py:PATH.py:CLASS` (your own class: this protocol or TARGET's custom retriever shape,
retrievers/plugin.py), `pyenv:PYTHON:PATH.py:CLASS` (the same, run by another
interpreter, retrievers/remote.py). The grammar is
target_core.registry's; each family's `parts` reads its argument and its `cost` prices
its paid parts (retrievers/estimates.py). Adding a retriever means one module, one
entry in RETRIEVERS and one line in docs/retrievers/index.md (docs/extending/retriever.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from target_core.config import Settings
from target_core.registry import Entry, Part, Registry, parse_spec
from target_core.retrievers import estimates
from target_core.retrievers.base import Retriever

if TYPE_CHECKING:
    from target_core.retrievers.hyse import HySEOptions

DEFAULT_EMBEDDER = "minilm"
DEFAULT_SUMMARIZER = "heuristic"

RetrieverEntry = Entry[Retriever]


def _embedder_part(arg: str) -> tuple[Part, ...]:
    """dense:EMBEDDER and hybrid:EMBEDDER: the argument is an embedder spec."""
    return (Part("embedder", arg or DEFAULT_EMBEDDER),)


def _hybrid_parts(arg: str) -> tuple[Part, ...]:
    """hybrid[:EMBEDDER][:OPTIONS]: options (name=value,...) follow the last ':'."""
    from target_core.retrievers.fusion import split_options

    return _embedder_part(split_options(arg)[0])


def _summary_parts(arg: str) -> tuple[Part, ...]:
    """summary:EMBEDDER[@GENERATOR]: the first '@' splits (a generator spec has ':')."""
    nested = parse_spec(arg, "@")
    return (Part("embedder", nested.name or DEFAULT_EMBEDDER),
            Part("generator", nested.arg or DEFAULT_SUMMARIZER))


def _hyse_split(arg: str) -> tuple[tuple[Part, ...], str]:
    """hyse[:EMBEDDER][@GENERATOR][:OPTIONS]: options (name=value,...) after the last
    ':' as hybrid's, then EMBEDDER@GENERATOR as summary's."""
    from target_core.retrievers.fusion import split_options

    head, options = split_options(arg)
    return _summary_parts(head), options


def _hyse_parts(arg: str) -> tuple[Part, ...]:
    return _hyse_split(arg)[0]


def hyse_options(arg: str) -> HySEOptions:
    """The options of a `hyse:` spec's argument (what follows "hyse:")."""
    from target_core.retrievers.hyse import parse_hyse_options

    return parse_hyse_options(_hyse_split(arg)[1])


def _bm25(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.bm25 import BM25Retriever

    return BM25Retriever(cache_dir=lexical_cache(settings))


def lexical_cache(settings: Settings) -> Path:
    """Where lexical indexes are saved between runs and restarts (retrievers/index_files.py)."""
    return Path(settings.workspace) / "cache" / "lexical"


def _tfidf(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.tfidf import TfidfRetriever

    return TfidfRetriever()


def _ottqa(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.drqa import DrQARetriever

    return DrQARetriever(arg)


def _no_context(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.no_context import NoContextRetriever

    return NoContextRetriever()


def _dense(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.dense import DenseRetriever

    (embedder,) = _embedder_part(arg)
    return DenseRetriever.from_spec(embedder.spec, settings)


def _summary(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.summary import SummaryRetriever

    embedder, generator = _summary_parts(arg)
    return SummaryRetriever.from_specs(embedder.spec, generator.spec, settings)


def _rows(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.rows import RowsRetriever

    (embedder,) = _embedder_part(arg)
    return RowsRetriever.from_spec(embedder.spec, settings)


def _hyse(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.hyse import HySERetriever

    (embedder, generator), _ = _hyse_split(arg)
    return HySERetriever.from_specs(embedder.spec, generator.spec, hyse_options(arg),
                                    settings)


def _plugin(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.plugin import build_plugin_retriever

    return build_plugin_retriever(arg, settings)


def _remote_plugin(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.remote import build_remote_retriever

    return build_remote_retriever(arg, settings)


def _hybrid(arg: str, settings: Settings) -> Retriever:
    from target_core.retrievers.fusion import split_options
    from target_core.retrievers.hybrid import HybridRetriever

    (embedder,) = _hybrid_parts(arg)
    return HybridRetriever.from_spec(embedder.spec, settings, split_options(arg)[1])


RETRIEVERS: Registry[Retriever] = Registry("retriever", (
    Entry("bm25", "BM25 (Okapi, rank-bm25's formula) over the table text", _bm25,
          ("bm25",), lexical_view_text=True, self_contained=True),
    Entry("tfidf", "TF-IDF cosine over the table text (scikit-learn)", _tfidf, ("tfidf",),
          lexical_view_text=True, self_contained=True),
    Entry("ottqa", "TARGET's OTT-QA retriever, DrQA's hashed unigram+bigram BM25 or "
          "TF-IDF (ottqa:bm25, ottqa:tfidf); the paper's rows use the ottqa view format",
          _ottqa, ("ottqa:bm25", "ottqa:tfidf"), self_contained=True),
    Entry("no-context", "retrieves nothing: the no-context baseline for generators",
          _no_context, ("no-context",), self_contained=True),
    Entry("dense", "embeddings in Chroma, cosine: dense:minilm (local, offline) or "
          "dense:openai[/MODEL]", _dense, ("dense:minilm", "dense:openai"),
          parts=_embedder_part, cost=estimates.table_embeddings, embeds_view=True,
          self_contained=True),
    Entry("hybrid", "fusion of bm25 and dense (hybrid[:EMBEDDER][:OPTIONS], default "
          "minilm, CombMNZ of z-scores; options method, norm, w, k, tune=recall@K)",
          _hybrid, ("hybrid", "hybrid:openai", "hybrid:minilm:method=rrf,k=60"),
          parts=_hybrid_parts, cost=estimates.table_embeddings, embeds_view=True,
          self_contained=True,
          version="2"),  # 2: the default became CombMNZ of z-scores
    Entry("summary", "generated table summaries embedded in Chroma, the LlamaIndex "
          "baseline (summary:EMBEDDER[@GENERATOR], default minilm@heuristic)", _summary,
          ("summary:minilm", "summary:openai@openai:gpt-4o-mini"), parts=_summary_parts,
          cost=estimates.summaries, self_contained=True),
    Entry("rows", "one vector per row ('column is value, ...') in Chroma, a table scored "
          "by its best row (rows[:EMBEDDER], default minilm)", _rows, ("rows", "rows:openai"),
          parts=_embedder_part, cost=estimates.row_embeddings, scores_rows=True,
          self_contained=True),
    Entry("hyse", "HySE: N hypothetical tables written per query, embedded with it, "
          "searched by their mean vector or merged per table (hyse[:EMBEDDER][@GENERATOR]"
          "[:n=2,rows=2,agg=mean|split], default minilm@heuristic)", _hyse,
          ("hyse", "hyse:minilm@heuristic:n=3,agg=split", "hyse:openai@openai:gpt-4o-mini"),
          parts=_hyse_parts, cost=estimates.hypothetical, self_contained=True),
    Entry("py", "your own class: py:MODULE:CLASS or py:PATH.py:CLASS, this project's "
          "Retriever protocol or TARGET's custom retriever (embed_corpus, retrieve)",
          _plugin, ("py:examples/target_style_retriever.py:KeywordRetriever",
                    "py:examples/protocol_retriever.py:OverlapRetriever")),
    Entry("pyenv", "your own class run by another Python (its own venv): "
          "pyenv:PYTHON:PATH.py:CLASS, PYTHON an interpreter or a venv folder, the class "
          "as for py:", _remote_plugin,
          ("pyenv:python3:examples/target_style_retriever.py:KeywordRetriever",)),
))

EXAMPLE_SPECS = RETRIEVERS.examples()


def self_contained(spec: str) -> bool:
    """Whether building `spec` needs nothing outside this package (Entry.self_contained),
    its parts included: dense:minilm does, dense:openai needs a key, py: user code."""
    from target_core.embeddings import EMBEDDERS
    from target_core.generators import GENERATORS

    registries = {r.kind: r for r in (EMBEDDERS, GENERATORS)}
    entry, arg = RETRIEVERS.parse(spec)
    return entry.self_contained and all(
        registries[part.kind].parse(part.spec)[0].self_contained
        for part in entry.parts(arg))


def split_spec(spec: str) -> tuple[RetrieverEntry, str]:
    """The registry entry for `spec` and its argument; unknown names suggest the closest."""
    return RETRIEVERS.parse(spec)


def build_retriever(spec: str, settings: Settings) -> Retriever:
    """A fresh retriever for `spec`; configuration errors (e.g. no API key) raise here,
    before any work starts."""
    return RETRIEVERS.build(spec, settings)


__all__ = ["EXAMPLE_SPECS", "RETRIEVERS", "Retriever", "RetrieverEntry", "build_retriever",
           "hyse_options", "split_spec"]
