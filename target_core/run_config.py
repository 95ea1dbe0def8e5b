"""A run's configuration: what decides a retrieval run's results (RunConfig: dataset,
retriever, table view, k, sample) and its downstream half (GenerationConfig: generator,
context, prompts); equal configurations resume each other (engine/store.py, config_key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from target_core.errors import ConfigError, UnknownNameError
from target_core.table_view import TableView
from target_core.tasks import task_rules

CONTEXT_MODES: tuple[str, ...] = ("retrieved", "oracle", "none")
SQL_SCHEMAS: tuple[str, ...] = ("database", "tables")
DEFAULT_TOKEN_BUDGET = 8000
DEFAULT_PROMPT_SET = "appendix-d"
"""TARGET's paper prompts; the sets themselves are in generators/prompts.py (PROMPT_SETS),
which checks a name when a run builds its prompts."""


@dataclass(frozen=True)
class GenerationConfig:
    """The downstream half of a run: which generator answers, from which context.

    `context`: "retrieved" (the top `context_k` retrieved tables in rank order; all
    top_k when None), "oracle" (the gold tables: the upper bound) or "none" (TARGET's
    no-context prompt). `token_budget` caps the tokens of the tables (or schema) in
    each prompt; rows are cut to fit, in rank order. Text-to-SQL prompts get the schema of
    each context table's whole database (`sql_schema="database"`, TARGET's paper) or of
    the context tables only (`"tables"`, TARGET's code and GTR-T). `prompt_set` names the
    prompts of generators/prompts.py's PROMPT_SETS the LLM generators are sent (the
    heuristic generators read no prompt).
    """

    generator: str
    context: str = "retrieved"
    context_k: int | None = None
    token_budget: int = DEFAULT_TOKEN_BUDGET
    sql_schema: str = "database"
    prompt_set: str = DEFAULT_PROMPT_SET
    prompt_options: tuple[str, ...] = ()  # seed 002's toggles: generators/sql_prompt_options.py

    def __post_init__(self) -> None:
        if self.context not in CONTEXT_MODES:
            raise UnknownNameError("context mode", self.context, CONTEXT_MODES)
        if self.context_k is not None and (not isinstance(self.context_k, int)
                                           or self.context_k < 1):
            raise ConfigError(f"context_k must be a positive integer, got {self.context_k!r}")
        if not isinstance(self.token_budget, int) or self.token_budget < 100:
            raise ConfigError(f"token_budget must be an integer of at least 100, got "
                              f"{self.token_budget!r}")
        if self.sql_schema not in SQL_SCHEMAS:
            raise UnknownNameError("SQL schema scope", self.sql_schema, SQL_SCHEMAS)
        if not isinstance(self.prompt_set, str) or not self.prompt_set.strip():
            raise ConfigError(f"prompt_set must be a prompt set's name, got {self.prompt_set!r}")
        object.__setattr__(self, "prompt_options", tuple(self.prompt_options))  # JSON: a list

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"generator": self.generator, "context": self.context,
                                "context_k": self.context_k,
                                "token_budget": self.token_budget,
                                "sql_schema": self.sql_schema}
        if self.prompt_set != DEFAULT_PROMPT_SET:  # absent by default: run keys stay stable
            data["prompt_set"] = self.prompt_set
        if self.prompt_options:  # absent when none: run keys stay stable
            data["prompt_options"] = list(self.prompt_options)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GenerationConfig:
        return cls(generator=data["generator"], context=data.get("context", "retrieved"),
                   context_k=data.get("context_k"),
                   token_budget=data.get("token_budget", DEFAULT_TOKEN_BUDGET),
                   sql_schema=data.get("sql_schema", "database"),
                   prompt_set=data.get("prompt_set", DEFAULT_PROMPT_SET),
                   prompt_options=tuple(data.get("prompt_options", ())))


def short_spec(spec: str) -> str:
    """`spec` with the folder of a py: file left out, for labels: the run keeps the
    whole spec. A pyenv: spec's interpreter shows as its venv's folder name
    (`pyenv:.venv-plugin:mine.py:Mine`)."""
    if spec.startswith("pyenv:"):
        python, sep, rest = spec[6:].partition(":")
        parts = [p for p in python.replace(chr(92), "/").split("/") if p]
        if len(parts) >= 3 and parts[-2] in ("bin", "Scripts"):
            parts = parts[:-2]  # VENV/bin/python: the venv names it
        return f"pyenv:{parts[-1] if parts else python}{sep}{short_spec('py:' + rest)[3:]}"
    if not spec.startswith("py:"):
        return spec
    target, sep, name = spec[3:].rpartition(":")
    if not sep or not target.endswith(".py"):
        return spec
    return f"py:{target.replace(chr(92), '/').rpartition('/')[2]}:{name}"


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides a retrieval run's results; equal configs resume each other."""

    dataset: str
    retriever: str
    view: TableView = field(default_factory=TableView)
    top_k: int = 10
    limit: int | None = None
    seed: int = 0
    generation: GenerationConfig | None = None
    """None for a retrieval-only run."""
    haystack: str | None = None
    """Distractor tables added to the corpus, as "N@SOURCE[,SOURCE][#SEED]" (parsed and
    drawn by engine/haystack.py; retrieval-only runs); None: the dataset's tables only."""

    def __post_init__(self) -> None:
        if not isinstance(self.top_k, int) or self.top_k < 1:
            raise ConfigError(f"top_k must be a positive integer, got {self.top_k!r}")
        if self.limit is not None and (not isinstance(self.limit, int) or self.limit < 1):
            raise ConfigError(f"limit must be a positive integer, got {self.limit!r}")
        if self.haystack is not None and self.generation is not None:
            raise ConfigError(f"haystack {self.haystack}: a run with distractor tables is "
                              "retrieval-only (drop the generator)")

    def to_dict(self) -> dict[str, Any]:
        data = {"dataset": self.dataset, "retriever": self.retriever,
                "view": self.view.to_dict(), "top_k": self.top_k, "limit": self.limit,
                "seed": self.seed}
        if self.generation is not None:  # absent for retrieval runs: their keys stay stable
            data["generation"] = self.generation.to_dict()
        if self.haystack is not None:  # absent without one: keys of other runs stay stable
            data["haystack"] = self.haystack
        return data

    @property
    def label(self) -> str:
        """e.g. "bm25" or "bm25 → heuristic (oracle)", with the prompt set when it is not
        the default ("bm25 → openai, target-code prompts"); a py: file is named without
        its folder ("py:/home/me/mine.py:Mine" -> "py:mine.py:Mine")."""
        retriever = short_spec(self.retriever)
        if self.haystack is not None:  # "bm25 + 370 distractors"
            retriever += f" + {self.haystack.partition('@')[0]} distractors"
        if self.generation is None:
            return retriever
        mode = "" if self.generation.context == "retrieved" else f" ({self.generation.context})"
        prompts = ("" if self.generation.prompt_set == DEFAULT_PROMPT_SET
                   else f", {self.generation.prompt_set} prompts") + "".join(
            f" +{o}" for o in self.generation.prompt_options)
        return f"{retriever} → {short_spec(self.generation.generator)}{mode}{prompts}"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        return cls(dataset=data["dataset"], retriever=data["retriever"],
                   view=TableView.from_dict(data.get("view", {})), top_k=data.get("top_k", 10),
                   limit=data.get("limit"), seed=data.get("seed", 0),
                   generation=(GenerationConfig.from_dict(data["generation"])
                               if data.get("generation") else None),
                   haystack=data.get("haystack"))


def with_task_defaults(config: RunConfig, task: str) -> RunConfig:
    """`config` with what it leaves open filled in by the task's rules, so the stored
    configuration says what ran: a text-to-SQL generator without a context size gets
    the paper's (the top table's database, k = 1; target_core.tasks)."""
    generation = config.generation
    default_k = task_rules(task).default_context_k
    if (generation is None or generation.context != "retrieved"
            or generation.context_k is not None or default_k is None):
        return config
    return replace(config, generation=replace(generation,
                                              context_k=min(default_k, config.top_k)))
