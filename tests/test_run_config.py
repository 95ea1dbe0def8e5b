"""A run configuration's rules given a task (run_config.py): what a configuration leaves
open is filled in by the task's rules, in the layer every user of a RunConfig may import
(the engine and the plans both ask it)."""

from __future__ import annotations

import pytest

from target_core.run_config import GenerationConfig, RunConfig, with_task_defaults


def _config(context: str = "retrieved", context_k: int | None = None,
            top_k: int = 10) -> RunConfig:
    return RunConfig("demo-sql", "bm25", top_k=top_k,
                     generation=GenerationConfig("heuristic", context=context,
                                                 context_k=context_k))


def test_text_to_sql_gets_the_papers_context_size() -> None:
    filled = with_task_defaults(_config(), "sql")
    assert filled.generation is not None and filled.generation.context_k == 1
    assert filled.to_dict()["generation"]["context_k"] == 1  # what the store records
    assert with_task_defaults(_config(), "sql") == filled


@pytest.mark.parametrize(("config", "task"), [
    (_config(), "qa"),                             # the task has no default size
    (_config(context_k=3), "sql"),                 # chosen by the user
    (_config(context="oracle"), "sql"),            # the gold tables, not a top k
    (RunConfig("demo-sql", "bm25"), "sql"),        # retrieval only
])
def test_what_the_config_or_the_task_decides_is_left_as_it_is(config: RunConfig,
                                                              task: str) -> None:
    assert with_task_defaults(config, task) is config
