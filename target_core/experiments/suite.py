"""The demo suite: the bundled demo datasets run by the built-in retrievers with the
offline heuristic generator, launched as jobs, so a first visit has failures to explore
(the Home page's button, `demo-suite` on the command line)."""

from __future__ import annotations

from target_core.config import Settings
from target_core.engine.workers import Launch, launch_run
from target_core.run_config import GenerationConfig, RunConfig

__all__ = ["DEMO_DATASETS", "DEMO_RETRIEVERS", "demo_suite_configs", "launch_demo_suite"]

DEMO_DATASETS = ("demo-qa", "demo-fact", "demo-sql")
DEMO_RETRIEVERS = ("bm25", "tfidf", "dense:minilm", "hybrid")


def demo_suite_configs() -> list[RunConfig]:
    """Every demo dataset × every suite retriever, answered by the heuristic generator."""
    return [RunConfig(dataset=dataset, retriever=retriever,
                      generation=GenerationConfig("heuristic"))
            for dataset in DEMO_DATASETS for retriever in DEMO_RETRIEVERS]


def launch_demo_suite(settings: Settings, *, spawn: bool = True) -> list[Launch]:
    """Launch every suite run not complete yet as a job (complete ones are reused, queued
    or running ones found); at most TARGET_MAX_JOBS work at once, the rest wait.
    Its retrievers are built-in and offline, so they are not built here (which took
    seconds in a cold dashboard, greying the page): the workers build them. With
    `spawn` False the jobs are only queued (workers.start_waiting starts them)."""
    from target_core.datasets import load_dataset
    from target_core.engine.jobs import JobStore
    from target_core.engine.store import RunStore

    stores = (JobStore.in_workspace(settings.workspace), RunStore.in_workspace(settings.workspace))
    datasets = {name: load_dataset(name, settings) for name in DEMO_DATASETS}
    return [launch_run(config, settings=settings, stores=stores,
                       dataset=datasets[config.dataset], spawn=spawn)
            for config in demo_suite_configs()]
