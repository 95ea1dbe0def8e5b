"""VES, BIRD's valid efficiency score: execution accuracy weighted by relative speed.

For query q with gold query Y_q and prediction Ŷ_q, both timed `repeats` times (pairs
i = 1..m, `target_core.sql.timing.time_pair`):

    ratio_i = t_gold_i / t_pred_i
    kept    = {ratio_i : mean - 3σ < ratio_i < mean + 3σ}   (σ: population std)
    R_q     = √(mean(kept))   when Ŷ_q is execution-correct, else 0
    ves_q   = 100 · R_q                                      (the stored per-query value)
    VES     = (1/n) Σ_q ves_q                                 (macro, over all n queries)

as BIRD's `evaluation_ves.py` (`clean_abnormal`, `iterated_execute_sql`, `compute_ves`):
the square root is taken of the mean ratio, not averaged per repeat, and wrong queries stay
in the denominator with 0. Above 100: predictions faster than the gold queries.

Edge cases:
* σ = 0 (every ratio equal, or one repeat): all ratios are kept. BIRD's strict test
  would keep none, divide by zero and score the query 0.
* A time of 0 (a coarse or fake clock) is raised to `MIN_SECONDS` first.
* No pairs: ValueError. `ves([])`: ValueError (no queries, no mean).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MIN_SECONDS", "VesTiming", "drop_outliers", "reward", "time_ratio", "ves",
           "ves_of_timing"]

MIN_SECONDS = 1e-6
"""Floor of a measured time, so every ratio is defined."""


def drop_outliers(values: Sequence[float]) -> list[float]:
    """The values strictly within mean ± 3σ (population σ), in order; all of them when
    σ = 0. BIRD's `clean_abnormal`, except for σ = 0 (see the module docstring)."""
    if not values:
        return []
    mean = math.fsum(values) / len(values)
    sigma = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    if sigma == 0:
        return list(values)
    return [v for v in values if mean - 3 * sigma < v < mean + 3 * sigma]


def time_ratio(gold_s: Sequence[float], pred_s: Sequence[float]) -> float:
    """Mean of t_gold / t_pred over the repeats, outliers dropped."""
    if len(gold_s) != len(pred_s):
        raise ValueError(f"{len(gold_s)} gold times but {len(pred_s)} predicted times")
    if not gold_s:
        raise ValueError("no timings: VES needs at least one repeat")
    ratios = [max(g, MIN_SECONDS) / max(p, MIN_SECONDS)
              for g, p in zip(gold_s, pred_s, strict=True)]
    kept = drop_outliers(ratios)
    return math.fsum(kept) / len(kept)


def reward(gold_s: Sequence[float], pred_s: Sequence[float], *, correct: bool) -> float:
    """R_q = √(time_ratio) when the prediction is execution-correct, else 0."""
    if not correct:
        return 0.0
    return math.sqrt(time_ratio(gold_s, pred_s))


def ves(per_query: Sequence[float]) -> float:
    """VES from the per-query values `ves_q` = 100 · R_q: their mean over all queries."""
    if not per_query:
        raise ValueError("no queries: VES needs at least one")
    return math.fsum(per_query) / len(per_query)


@dataclass(frozen=True)
class VesTiming:
    """One query's VES evidence, as stored with its generation record.

    `score` is ves_q = 100 · R_q; `gold_ms` and `pred_ms` are the mean times over the
    repeats; `error` says why a correct prediction still scored 0 (its timing failed).
    """

    score: float
    reward: float
    ratio: float | None = None
    gold_ms: float | None = None
    pred_ms: float | None = None
    repeats: int = 0
    kept: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 6), "reward": round(self.reward, 6),
                "ratio": None if self.ratio is None else round(self.ratio, 6),
                "gold_ms": None if self.gold_ms is None else round(self.gold_ms, 4),
                "pred_ms": None if self.pred_ms is None else round(self.pred_ms, 4),
                "repeats": self.repeats, "kept": self.kept, "error": self.error}


def ves_of_timing(gold_s: Sequence[float], pred_s: Sequence[float]) -> VesTiming:
    """The VesTiming of an execution-correct prediction timed as given."""
    ratio = time_ratio(gold_s, pred_s)
    ratios = [max(g, MIN_SECONDS) / max(p, MIN_SECONDS)
              for g, p in zip(gold_s, pred_s, strict=True)]
    r = math.sqrt(ratio)
    return VesTiming(score=100 * r, reward=r, ratio=ratio,
                     gold_ms=1000 * math.fsum(gold_s) / len(gold_s),
                     pred_ms=1000 * math.fsum(pred_s) / len(pred_s),
                     repeats=len(gold_s), kept=len(drop_outliers(ratios)))
