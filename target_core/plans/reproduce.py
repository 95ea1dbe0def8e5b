"""The plan of TARGET's Table 2 reproduced: each method of the paper in the paper's
settings, on any dataset, as run configurations, and which of them are stored, so our
figures can stand beside the paper's (read_models/reproduce.py; experiments/reproduce.py
runs or launches the missing ones).

Settings: those of TARGET's code (target-benchmark 0.1.3), each row naming the class and
arguments it follows: k = 10 (text-to-SQL is read at k = 1 at the database level from the
same run); OTT-QA's BM25 and TF-IDF are DrQA's hashed uni+bigram retriever
(`ottqa:bm25`, `ottqa:tfidf`, retrievers/drqa.py) over `table id | section title |
header` (view `ottqa-withtitle`) and, "w/o table title", without the table id
(`ottqa-notitle`: TARGET's withtitle=False keeps the section title); the embeddings embed
TARGET's markdown of the header and 100 rows, or of the header line only, with no title;
LlamaIndex's generated summaries, embedded; no context (needs a generator). Where we
cannot match the paper offline the row says so in its note (the embedding model, the
summarizer). Our stronger settings follow as rows of their own, named "ours: ...".
"""

from __future__ import annotations

from dataclasses import dataclass

from target_core.engine.store import RunRecord, RunStore
from target_core.run_config import (
    DEFAULT_PROMPT_SET,
    GenerationConfig,
    RunConfig,
    with_task_defaults,
)
from target_core.table_view import VIEW_PRESETS, TableView
from target_core.types import TableLookup

__all__ = ["OTTQA_VIEW", "PAPER_K", "Baseline", "baselines", "reproduction_configs",
           "stored_reproduction"]

PAPER_K = 10

TARGET_CODE = "target-benchmark 0.1.3"
"""The code of TARGET's rows follow (the PyPI release of the paper's library)."""

OTTQA_VIEW = VIEW_PRESETS["ottqa-withtitle"]
OTTQA_NO_TITLE = VIEW_PRESETS["ottqa-notitle"]
TARGET_EMBEDDING_VIEW = TableView(title=False, section_title=False, rows=100,
                                  format="target-markdown")


@dataclass(frozen=True)
class Baseline:
    method: str
    """The row's name: Table 2's method, or "ours: ..." for our stronger settings."""
    retriever: str
    view: TableView
    note: str = ""
    """Where our setting differs from the paper's."""
    needs_generator: bool = False
    follows: str = ""
    """The code of TARGET the row's settings follow, or what ours changes."""
    paper_row: str | None = None
    """The row of the paper's Table 2 it stands beside (None: ours only)."""


def _target(method: str, retriever: str, view: TableView, follows: str, note: str = "",
            needs_generator: bool = False) -> Baseline:
    return Baseline(method, retriever, view, note, needs_generator,
                    f"{TARGET_CODE} {follows}", method)


def baselines(embedder: str = "minilm", summarizer: str = "heuristic", *,
              ours: bool = False) -> list[Baseline]:
    """The paper's methods in the settings of TARGET's code, then (with `ours`) our
    stronger settings beside them ("ours: ..."): `embedder` stands in for OpenAI's
    text-embedding-3-small (`openai` is
    the paper's), `summarizer` for LlamaIndex's LLM."""
    dense = f"dense:{embedder}"
    embedding_note = ("" if embedder in ("openai", "openai/text-embedding-3-small") else
                      f"paper: text-embedding-3-small; here {embedder}")
    summary_note = (f"paper: LLM summaries embedded with text-embedding-ada-002; here "
                    f"{summarizer} summaries embedded with {embedder}")
    ottqa = "retrievers/ottqa/OTTQARetriever.py: OTTQARetriever(encoding={!r}, withtitle={})"
    embedding = ("retrievers/naive/DefaultOpenAIEmbeddingRetriever.py: OpenAIEmbedder("
                 "num_rows={}), markdown_table_str: no title")
    target = [
        _target("No context", "no-context", VIEW_PRESETS["default"],
                "retrievers/context/NoContextRetriever.py", "needs a generator",
                needs_generator=True),
        _target("OTT-QA BM25", "ottqa:bm25", OTTQA_VIEW, ottqa.format("bm25", True)),
        _target("OTT-QA BM25 w/o table title", "ottqa:bm25", OTTQA_NO_TITLE,
                ottqa.format("bm25", False)),
        _target("OTT-QA TF-IDF", "ottqa:tfidf", OTTQA_VIEW, ottqa.format("tfidf", True)),
        _target("OTT-QA TF-IDF w/o table title", "ottqa:tfidf", OTTQA_NO_TITLE,
                ottqa.format("tfidf", False)),
        _target("LlamaIndex", f"summary:{embedder}@{summarizer}", VIEW_PRESETS["default"],
                "retrievers/llama_index/LlamaIndexRetriever.py", summary_note),
        _target("OpenAI embedding", dense, TARGET_EMBEDDING_VIEW, embedding.format(100),
                embedding_note),
        _target("OpenAI embedding header only", dense, TARGET_EMBEDDING_VIEW.with_(rows=0),
                embedding.format(0), embedding_note)]
    return target + ([
        Baseline("ours: bm25 over cells", "bm25", VIEW_PRESETS["default"],
                 follows="rank-bm25 Okapi over title, section title, header and every row"),
        Baseline("ours: tfidf over cells", "tfidf", VIEW_PRESETS["default"],
                 follows="scikit-learn TF-IDF cosine over title, section title, header and "
                         "every row"),
        Baseline("ours: embedding with titles", dense, TableView(rows=100), embedding_note,
                 follows="page and section title, then the header and 100 rows in markdown"),
        Baseline("ours: embedding header only with titles", dense, TableView(rows=0),
                 embedding_note, follows="page and section title, then the header"),
    ] if ours else [])


def reproduction_configs(dataset: str, *, generator: str | None = None,
                         embedder: str = "minilm", summarizer: str = "heuristic",
                         ours: bool = False,
                         limit: int | None = None, seed: int = 0,
                         prompt_set: str = DEFAULT_PROMPT_SET
                         ) -> list[tuple[Baseline, RunConfig]]:
    """One run configuration per baseline; without a generator, retrieval only (and no
    "No context" row, which measures a generator alone). `prompt_set`: the generator's
    prompts (generators/prompts.py; the paper's by default)."""
    generation = GenerationConfig(generator, prompt_set=prompt_set) if generator else None
    return [(b, RunConfig(dataset=dataset, retriever=b.retriever, view=b.view, top_k=PAPER_K,
                          limit=limit, seed=seed, generation=generation))
            for b in baselines(embedder, summarizer, ours=ours)
            if generation is not None or not b.needs_generator]


def stored_reproduction(store: RunStore, dataset: TableLookup, *, generator: str | None = None,
                        embedder: str = "minilm", summarizer: str = "heuristic",
                        ours: bool = False,
                        limit: int | None = None, seed: int = 0
                        ) -> tuple[list[tuple[Baseline, RunRecord]], list[Baseline]]:
    """The baselines already complete on this dataset version (nothing runs), and the
    ones still to run."""
    done, missing = [], []
    for baseline, config in reproduction_configs(dataset.name, generator=generator,
                                                 embedder=embedder, summarizer=summarizer,
                                                 ours=ours,
                                                 limit=limit, seed=seed):
        run = store.complete_run(with_task_defaults(config, dataset.task), dataset.fingerprint)
        if run is None:
            missing.append(baseline)
        else:
            done.append((baseline, run))
    return done, missing
