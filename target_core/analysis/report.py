"""The tables of a comparison of runs, as the Compare page and the standalone HTML report
(figures/report.py) show them, and the definitions they follow."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from target_core.analysis.compare import PairComparison, RunComparison
from target_core.analysis.significance import format_p
from target_core.analysis.stats import ALPHA

__all__ = ["DEFINITIONS", "flipped_table", "headline_table", "paired_tests_table"]

DEFINITIONS = (
    "The first run is the baseline; every other run is compared with it on the queries "
    "all runs answered. Win/tie/loss count the queries where the compared run scores "
    "higher, the same or lower than the baseline. hit@k (1 when a gold table is in the "
    "top k) and other yes/no metrics get the exact McNemar test on the discordant "
    "queries; graded ones (mrr: reciprocal rank of the first gold table, sentence BLEU) "
    "get the paired sign-flip randomization test of the mean difference (10,000 "
    "resamples, or every sign vector when fewer). Both are two-sided. With more than two "
    "runs, each metric's p-values over the pairs are adjusted by Holm's method; ✱ marks "
    f"p < {ALPHA} (Holm-adjusted when there is an adjustment). Intervals are percentile "
    "bootstrap 95% confidence intervals of the mean (10,000 resamples). A flipped query "
    "is found within k by one run and missed by the other.")


def headline_table(comparison: RunComparison, names: Mapping[str, str]) -> pd.DataFrame:
    """One row per run: its name, id, role, and each metric as "mean [low, high]"."""
    rows = []
    for i, run in enumerate(comparison.runs):
        row = {"run": names.get(run.run_id, run.run_id), "run_id": run.run_id,
               "role": "baseline" if i == 0 else "compared"}
        for metric, (mean, low, high) in run.cis.items():
            row[metric] = f"{mean:.3f} [{low:.3f}, {high:.3f}]"
        rows.append(row)
    return pd.DataFrame(rows).fillna("–")


def paired_tests_table(comparison: RunComparison, names: Mapping[str, str]) -> pd.DataFrame:
    """One row per (pair, metric): means, W/T/L, p, Holm p and a ✱ at p < 0.05."""
    rows = []
    for pair in comparison.pairs:
        for t in pair.tests:
            p_used = t.p_holm if t.p_holm is not None else t.p_value
            rows.append({
                "compared": names.get(pair.other, pair.other), "metric": t.metric,
                "test": t.test, "baseline mean": round(t.mean_baseline, 4),
                "compared mean": round(t.mean_other, 4),
                "Δ": round(t.mean_other - t.mean_baseline, 4),
                "W/T/L": f"{t.wins}/{t.ties}/{t.losses}", "p": format_p(t.p_value),
                "Holm p": "–" if t.p_holm is None else format_p(t.p_holm),
                "sig.": "✱" if p_used < ALPHA else ""})
    return pd.DataFrame(rows)


def flipped_table(pair: PairComparison, names: Mapping[str, str]) -> pd.DataFrame:
    """The pair's flipped queries (largest change of reciprocal rank first). "all gold
    by" is the rank by which each run retrieved every gold table: found at k when it is
    at most k."""
    columns = ["query_id", "found by", "baseline: all gold by", "compared: all gold by",
               "baseline rank", "compared rank", "baseline RR", "compared RR"]
    rows = [{"query_id": f.query_id,
             "found by": names.get(pair.other if f.hit_other else pair.baseline,
                                   pair.other if f.hit_other else pair.baseline),
             "baseline: all gold by": f.last_rank_baseline,
             "compared: all gold by": f.last_rank_other,
             "baseline rank": f.rank_baseline, "compared rank": f.rank_other,
             "baseline RR": round(f.rr_baseline, 4), "compared RR": round(f.rr_other, 4)}
            for f in pair.flipped]
    frame = pd.DataFrame(rows, columns=columns)
    for column in columns[2:6]:
        frame[column] = frame[column].astype("Int64")
    return frame
