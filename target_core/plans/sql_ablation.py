"""Seed 002's ablation's plan (its Table 2): the text-to-SQL system with its seed002
prompt and every module on, then one module removed at a time (few-shot examples, schema
annotation, chain of thought), each variant's run configuration, and the variants'
stored runs. experiments/sql_ablation.py runs the missing ones; read_models/
sql_ablation.py reads them as Table 2."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from target_core.engine.store import RunRecord, RunStore, complete_runs
from target_core.errors import ConfigError
from target_core.generators.sql_prompt_options import (
    MAX_SHOTS,
    SEED002_SET,
    PromptOptions,
    parse_prompt_options,
)
from target_core.run_config import GenerationConfig, RunConfig
from target_core.tasks import task_rules
from target_core.types import Dataset

__all__ = ["BASE_NAME", "DEFAULT_SHOTS", "SqlVariant", "sql_ablation_configs",
           "sql_ablation_variants", "sql_variant_runs"]

BASE_NAME = "Text-to-SQL System"
DEFAULT_SHOTS = 3


@dataclass(frozen=True)
class SqlVariant:
    name: str
    """As in seed 002's Table 2: "Text-to-SQL System", "[-] Few Shot Examples", ..."""
    options: PromptOptions


def sql_ablation_variants(few_shot: int = DEFAULT_SHOTS, *, answer: bool = False
                          ) -> list[SqlVariant]:
    """The full system first (the base every row is tested against), then one module
    removed per row, in Table 2's order; `answer` adds the phrased answer to each."""
    if not isinstance(few_shot, int) or not 1 <= few_shot <= MAX_SHOTS:
        raise ConfigError(f"few-shot examples: {few_shot!r} is not a number from 1 to "
                          f"{MAX_SHOTS}")
    full = PromptOptions(few_shot=few_shot, annotations=True, cot=True, answer=answer)
    return [SqlVariant(BASE_NAME, full),
            SqlVariant("[-] Few Shot Examples", PromptOptions(0, True, True, answer)),
            SqlVariant("[-] Schema Annotation", PromptOptions(few_shot, False, True, answer)),
            SqlVariant("[-] CoT", PromptOptions(few_shot, True, False, answer))]


def sql_ablation_configs(dataset: str, retriever: str, generator: str,
                         variants: Sequence[SqlVariant], *, top_k: int = 10,
                         limit: int | None = None, seed: int = 0) -> list[RunConfig]:
    """One run configuration per variant: the seed002 prompts with its options, the
    paper's text-to-SQL context (the top table's database, context_k 1)."""
    configs = []
    for variant in variants:
        options = variant.options.to_options()
        parse_prompt_options(options, SEED002_SET)  # a round trip: canonical and valid
        configs.append(RunConfig(
            dataset=dataset, retriever=retriever, top_k=top_k, limit=limit, seed=seed,
            generation=GenerationConfig(generator, context_k=1, prompt_set=SEED002_SET,
                                        prompt_options=options)))
    return configs


def sql_variant_runs(store: RunStore, dataset: Dataset, configs: Sequence[RunConfig]
                     ) -> list[RunRecord | None]:
    """The newest complete run of each configuration (None: not run yet)."""
    if not task_rules(dataset.task).answers_sql:
        raise ConfigError(f"dataset '{dataset.name}' has task '{dataset.task}': seed 002's "
                          "ablation needs a text-to-SQL dataset")
    return complete_runs(store, configs, dataset.fingerprint)
