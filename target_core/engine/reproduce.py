"""TARGET's Table 2 baselines as runs: each method of the paper in the paper's settings,
on any dataset, so our figures can stand beside the paper's (views/reproduce.py).

Settings (seed 000, Sections 3-4): k = 10 (text-to-SQL is read at k = 1 at the database
level from the same run); OTT-QA's BM25 and TF-IDF over the table id as title, the
section title and the header (`target-ottqa`), and without that title; dense
embeddings of the header with 100 rows in markdown, and of the header only;
LlamaIndex's generated summaries, embedded; no context (needs a generator). Where we
cannot match the paper offline the baseline says so in its note (the embedding model,
the summarizer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from target_core.config import Settings
from target_core.engine.runner import run_retrieval, with_task_defaults
from target_core.engine.store import RunRecord, RunStore
from target_core.engine.workers import Launch, launch_run
from target_core.progress import Progress, no_progress
from target_core.types import (
    DEFAULT_PROMPT_SET,
    VIEW_PRESETS,
    Dataset,
    GenerationConfig,
    RunConfig,
    TableView,
)

__all__ = ["Baseline", "baselines", "launch_missing", "reproduce", "reproduction_configs",
           "stored_reproduction"]

PAPER_K = 10

OTTQA_VIEW = VIEW_PRESETS["target-ottqa"]
OTTQA_NO_TITLE = OTTQA_VIEW.with_(table_id=False, section_title=False, title=False)


@dataclass(frozen=True)
class Baseline:
    method: str
    """The row name in the paper's Table 2."""
    retriever: str
    view: TableView
    note: str = ""
    """Where our setting differs from the paper's."""
    needs_generator: bool = False


def baselines(embedder: str = "minilm", summarizer: str = "heuristic") -> list[Baseline]:
    """The paper's methods with our specs: `embedder` stands in for OpenAI's
    text-embedding-3-small (`openai` is the paper's), `summarizer` for LlamaIndex's LLM."""
    dense = f"dense:{embedder}"
    embedding_note = ("" if embedder in ("openai", "openai/text-embedding-3-small") else
                      f"paper: text-embedding-3-small; here {embedder}")
    summary_note = (f"paper: LLM summaries embedded with text-embedding-ada-002; here "
                    f"{summarizer} summaries embedded with {embedder}")
    return [
        Baseline("No context", "no-context", VIEW_PRESETS["default"],
                 "needs a generator", needs_generator=True),
        Baseline("OTT-QA BM25", "bm25", OTTQA_VIEW),
        Baseline("OTT-QA BM25 w/o table title", "bm25", OTTQA_NO_TITLE),
        Baseline("OTT-QA TF-IDF", "tfidf", OTTQA_VIEW),
        Baseline("OTT-QA TF-IDF w/o table title", "tfidf", OTTQA_NO_TITLE),
        Baseline("LlamaIndex", f"summary:{embedder}@{summarizer}", VIEW_PRESETS["default"],
                 summary_note),
        Baseline("OpenAI embedding", dense, TableView(rows=100), embedding_note),
        Baseline("OpenAI embedding header only", dense, TableView(rows=0), embedding_note),
    ]


def reproduction_configs(dataset: str, *, generator: str | None = None,
                         embedder: str = "minilm", summarizer: str = "heuristic",
                         limit: int | None = None, seed: int = 0,
                         prompt_set: str = DEFAULT_PROMPT_SET
                         ) -> list[tuple[Baseline, RunConfig]]:
    """One run configuration per baseline; without a generator, retrieval only (and no
    "No context" row, which measures a generator alone). `prompt_set`: the generator's
    prompts (generators/prompts.py; the paper's by default)."""
    generation = GenerationConfig(generator, prompt_set=prompt_set) if generator else None
    return [(b, RunConfig(dataset=dataset, retriever=b.retriever, view=b.view, top_k=PAPER_K,
                          limit=limit, seed=seed, generation=generation))
            for b in baselines(embedder, summarizer)
            if generation is not None or not b.needs_generator]


def reproduce(settings: Settings, dataset: str, *, generator: str | None = None,
              embedder: str = "minilm", summarizer: str = "heuristic",
              limit: int | None = None, seed: int = 0, progress: Progress = no_progress,
              on_method: Callable[[int, int, str], None] | None = None,
              prompt_set: str = DEFAULT_PROMPT_SET
              ) -> list[tuple[Baseline, RunRecord]]:
    """Run (or reuse) every baseline; `on_method(i, n, method)` before each."""
    configs = reproduction_configs(dataset, generator=generator, embedder=embedder,
                                   summarizer=summarizer, limit=limit, seed=seed,
                                   prompt_set=prompt_set)
    done = []
    for i, (baseline, config) in enumerate(configs):
        if on_method is not None:
            on_method(i, len(configs), baseline.method)
        done.append((baseline, run_retrieval(config, settings=settings,
                                             progress=progress).run))
    return done


def stored_reproduction(store: RunStore, dataset: Dataset, *, generator: str | None = None,
                        embedder: str = "minilm", summarizer: str = "heuristic",
                        limit: int | None = None, seed: int = 0
                        ) -> tuple[list[tuple[Baseline, RunRecord]], list[Baseline]]:
    """The baselines already complete on this dataset version (nothing runs), and the
    ones still to run."""
    done, missing = [], []
    for baseline, config in reproduction_configs(dataset.name, generator=generator,
                                                 embedder=embedder, summarizer=summarizer,
                                                 limit=limit, seed=seed):
        run = store.complete_run(with_task_defaults(config, dataset.task), dataset.fingerprint)
        if run is None:
            missing.append(baseline)
        else:
            done.append((baseline, run))
    return done, missing


def launch_missing(settings: Settings, dataset: Dataset, *, generator: str | None = None,
                   embedder: str = "minilm", summarizer: str = "heuristic",
                   limit: int | None = None, seed: int = 0,
                   prompt_set: str = DEFAULT_PROMPT_SET) -> list[Launch]:
    """Launch every baseline not complete yet as a job (the Overview's button); complete
    ones are reused, queued or running ones found."""
    return [launch_run(config, settings=settings, dataset=dataset)
            for _, config in reproduction_configs(dataset.name, generator=generator,
                                                  embedder=embedder, summarizer=summarizer,
                                                  limit=limit, seed=seed,
                                                  prompt_set=prompt_set)]
