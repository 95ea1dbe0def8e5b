"""What a retrieval metric is: one entry holding its name, label, direction, cutoffs and
ONE vectorised computation over the gold ranks of many queries.

The one computation serves both paths: a run's numbers evaluate it on every query at
once (`RankBatch.of(outcomes)`), a query's stored row evaluates it on a batch of one, and
the per-list functions (`recall_at_k(retrieved, gold, k)` ...) on a batch of one list.
So a query's value and the run's average can never drift apart.

Shapes: `values(batch, ks)` gets the cutoffs as a float array (`inf` for a metric with
no cutoff, such as mrr) and returns one row per query and one column per cutoff,
float64, C-ordered. A macro metric's run value is the column mean; a micro metric
pools two `Part`s instead (Σ numerator / Σ denominator over queries), and a query
stores the parts so any subset of queries re-aggregates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Protocol

import numpy as np

from target_core.errors import ConfigError, UnknownNameError
from target_core.metrics.ranking import GoldRanks, rank_positions
from target_core.registry import DuplicateNameError
from target_core.types import TableKey

Values = Callable[["RankBatch", np.ndarray], np.ndarray]
"""values(batch, ks) -> float64 array of shape (len(batch), len(ks))."""


class Ranked(Protocol):
    """What a metric reads of one query (metrics.retrieval.QueryOutcome has it all)."""

    @property
    def retrieved(self) -> Sequence[TableKey]: ...
    @property
    def gold(self) -> tuple[TableKey, ...]: ...
    @property
    def gold_database(self) -> str: ...
    @property
    def returned(self) -> Sequence[TableKey] | None: ...
    @property
    def gold_ranks(self) -> GoldRanks: ...


@dataclass(frozen=True)
class RankedList:
    """One ranked list and its gold, validated as `rank_positions` does (ValueError)."""

    retrieved: Sequence[TableKey]
    gold: tuple[TableKey, ...]
    gold_database: str = ""
    returned: Sequence[TableKey] | None = None
    gold_ranks: GoldRanks = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gold", tuple(self.gold))
        object.__setattr__(self, "gold_ranks", rank_positions(self.retrieved, self.gold))


@dataclass(frozen=True, eq=False)
class RankBatch:
    """The gold ranks of many queries as arrays: the one input of every metric.

    `ranks`: every gold rank (float, inf = not retrieved), grouped by query in gold
    order; `starts`: where each query's group starts (groups are never empty);
    `n_gold`, `lengths` (|retrieved|), `first` (best gold rank, inf: none): one per
    query; `queries`: the queries themselves, for the metrics that read the lists."""

    queries: Sequence[Ranked]
    ranks: np.ndarray
    starts: np.ndarray
    n_gold: np.ndarray
    lengths: np.ndarray
    first: np.ndarray
    _parts: dict[tuple[str, tuple[float, ...]], np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, queries: Sequence[Ranked]) -> RankBatch:
        n = len(queries)
        n_gold = np.fromiter((len(q.gold_ranks) for q in queries), dtype=np.int64, count=n)
        ranks = np.fromiter((math.inf if r is None else r
                             for r in chain.from_iterable(q.gold_ranks for q in queries)),
                            dtype=np.float64, count=int(n_gold.sum()))
        starts = np.concatenate(([0], np.cumsum(n_gold)[:-1])).astype(np.int64)
        lengths = np.fromiter((len(q.retrieved) for q in queries), dtype=np.int64, count=n)
        first = np.minimum.reduceat(ranks, starts) if n else np.empty(0)
        return cls(queries, ranks, starts, n_gold, lengths, first)

    @classmethod
    def of_list(cls, retrieved: Sequence[TableKey], gold: Sequence[TableKey],
                gold_database: str = "") -> RankBatch:
        """A batch of one ranked list (ValueError for empty gold or a key twice)."""
        return cls.of([RankedList(retrieved, tuple(gold), gold_database)])

    def __len__(self) -> int:
        return len(self.queries)

    def part(self, part: Part, ks: np.ndarray) -> np.ndarray:
        """`part`'s values, computed once per batch and cutoffs (micro metrics share them)."""
        key = (part.name, tuple(ks.tolist()))
        if key not in self._parts:
            self._parts[key] = part.values(self, ks)
        return self._parts[key]


def no_task_limit(task: str) -> bool:
    return True


@dataclass(frozen=True)
class Part:
    """A per-query number a micro metric sums over queries, stored per query under
    `name@k` (per_k) or `name`: overlap@k, capped_gold@k, n_gold."""

    name: str
    per_k: bool
    values: Values

    def key(self, k: float) -> str:
        return f"{self.name}@{int(k)}" if self.per_k else self.name


@dataclass(frozen=True)
class RetrievalMetric:
    """One retrieval metric. Give `values` (a macro metric: the mean over queries of a
    per-query value) or `pooled` (a micro metric: Σ numerator / Σ denominator over
    queries, 0.0 when Σ denominator is 0), never both."""

    name: str
    """The key's stem: "recall" reports recall@1, recall@3 ...; "mrr" reports mrr."""
    definition: str
    """One line for captions and help (metrics.labels.definition)."""
    values: Values | None = None
    pooled: tuple[Part, Part] | None = None
    per_k: bool = True
    """Reported at every cutoff of the run (default_ks); else at `cutoff` only."""
    cutoff: int | None = None
    """The one cutoff of a metric that is not per_k (ndcg@10, db_hit@1); None: the
    metric has no cutoff (mrr: its key has no @, and values() gets k = inf)."""
    label: str = ""
    """What a person reads, "{k}" and "{tables}" filled in (" tables" in a task whose
    Table 2 recall is database-level); "": the key is its own label."""
    higher_is_better: bool = True
    reported_for: Callable[[str], bool] = no_task_limit
    """Whether a run of the task reports it (a query's row always holds it)."""

    def __post_init__(self) -> None:
        if (self.values is None) == (self.pooled is None):
            raise ConfigError(f"metric '{self.name}' needs values or pooled, not both")
        if self.per_k and self.cutoff is not None:
            raise ConfigError(f"metric '{self.name}' is per_k and has a fixed cutoff")

    def cutoffs(self, ks: Sequence[int]) -> tuple[float, ...]:
        """The cutoffs it is reported at for a run's `ks`."""
        if self.per_k:
            return tuple(float(k) for k in ks)
        return (math.inf if self.cutoff is None else float(self.cutoff),)

    def key(self, k: float) -> str:
        """Its metric key at cutoff `k`: recall@5, ndcg@10, mrr."""
        return self.name if math.isinf(k) else f"{self.name}@{int(k)}"

    def keys(self, ks: Sequence[int]) -> list[str]:
        return [self.key(k) for k in self.cutoffs(ks)]

    def per_query(self, batch: RankBatch, cut: np.ndarray) -> np.ndarray:
        """A macro metric's value per query (rows) and cutoff in `cut` (columns)."""
        if self.values is None:
            raise ConfigError(f"metric '{self.name}' is pooled over queries: its queries "
                              "store its parts, not a value")
        return self.values(batch, cut)

    def run_values(self, batch: RankBatch, ks: Sequence[int]) -> np.ndarray:
        """The run's value at each of `cutoffs(ks)`, averaged over the batch."""
        cut = np.asarray(self.cutoffs(ks), dtype=np.float64)
        if self.pooled is None:
            return np.asarray(self.per_query(batch, cut).mean(axis=0))
        numerator, denominator = (batch.part(p, cut).sum(axis=0) for p in self.pooled)
        return np.divide(numerator, denominator, out=np.zeros(len(cut)),
                         where=denominator > 0)


class MetricRegistry:
    """The retrieval metrics by name, in the order a run reports them; a name is
    registered once (DuplicateNameError), an unknown one suggests the closest."""

    kind = "retrieval metric"

    def __init__(self, metrics: Iterable[RetrievalMetric] = ()) -> None:
        self._metrics: dict[str, RetrievalMetric] = {}
        for metric in metrics:
            self.register(metric)

    def register(self, metric: RetrievalMetric) -> RetrievalMetric:
        if metric.name in self._metrics:
            raise DuplicateNameError(self.kind, metric.name)
        self._metrics[metric.name] = metric
        return metric

    def unregister(self, name: str) -> RetrievalMetric:
        """Remove and return the metric called `name` (a test's throwaway metric)."""
        return self._metrics.pop(self.get(name).name)

    def get(self, name: str) -> RetrievalMetric:
        try:
            return self._metrics[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._metrics) from None

    def of_key(self, key: str) -> tuple[RetrievalMetric, float] | None:
        """The metric a key names and its cutoff: "recall@5" -> (recall, 5.0), "mrr" ->
        (mrr, inf); None for any other key (overlap@k, sacrebleu ...)."""
        stem, at, k = key.partition("@")
        metric = self._metrics.get(stem)
        if metric is None or bool(at) != (metric.per_k or metric.cutoff is not None):
            return None
        if not at:
            return metric, math.inf
        if not k.isdigit() or int(k) < 1 or (not metric.per_k and int(k) != metric.cutoff):
            return None
        return metric, float(k)

    def parts(self) -> list[Part]:
        """Every part a micro metric pools, each once, in registration order."""
        found = {p.name: p for m in self for p in (m.pooled or ())}
        return list(found.values())

    def names(self) -> list[str]:
        return list(self._metrics)

    def __iter__(self) -> Iterator[RetrievalMetric]:
        return iter(list(self._metrics.values()))

    def __len__(self) -> int:
        return len(self._metrics)

    def __contains__(self, name: object) -> bool:
        return name in self._metrics


def gold_within(batch: RankBatch, ks: np.ndarray) -> np.ndarray:
    """|gold ∩ top-k| per query (rows) and cutoff (columns), int64: the ranking's overlap."""
    return np.add.reduceat((batch.ranks[:, None] <= ks).astype(np.int64), batch.starts,
                           axis=0)


def score_list(metric: RetrievalMetric, retrieved: Sequence[TableKey],
               gold: Sequence[TableKey], k: float = math.inf) -> float:
    """`metric` of one ranked list at cutoff `k` (inf: no cutoff), from its one
    definition; the per-list functions (recall_at_k ...) are this."""
    batch = RankBatch.of_list(retrieved, gold)
    return float(metric.per_query(batch, np.array([k], dtype=np.float64))[0, 0])
