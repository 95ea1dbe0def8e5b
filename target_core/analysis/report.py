"""The tables of a comparison of runs, and a standalone HTML report of it.

The report is one HTML file that opens offline: plotly.js is inlined once, every
dataset-derived string (query ids above all) and every configuration string is escaped
with html.escape, and nothing is loaded from the network.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from target_core.analysis.compare import PairComparison, RunComparison, compare_runs
from target_core.analysis.figures import ci_forest, rank_scatter, run_names, win_tie_loss_bars
from target_core.analysis.significance import format_p, outcomes_frame
from target_core.analysis.stats import ALPHA
from target_core.engine.store import RunRecord, RunStore

__all__ = ["DEFINITIONS", "comparison_report", "flipped_table", "headline_table",
           "report_html", "paired_tests_table"]

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


# --- HTML ---------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1200px; padding: 0 1rem; color: #0f172a; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #e2e8f0; }
.meta, .note { color: #475569; } .warning { background: #fef3c7; padding: 0.5rem 0.8rem; }
table { border-collapse: collapse; font-size: 0.9rem; margin: 0.5rem 0; }
th, td { border: 1px solid #e2e8f0; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f1f5f9; } pre { background: #f8fafc; padding: 0.5rem; overflow-x: auto; }
"""


def _table(frame: pd.DataFrame) -> str:
    """An HTML table with every header and cell escaped."""
    def cell(value: Any) -> str:  # a DataFrame cell: any scalar
        return "–" if value is None or (not isinstance(value, str) and pd.isna(value)) \
            else html.escape(str(value))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _runs_table(runs: Sequence[RunRecord], names: Mapping[str, str]) -> pd.DataFrame:
    return pd.DataFrame([{
        "run": names[r.run_id], "run_id": r.run_id, "retriever": r.config.retriever,
        "generator": "–" if r.config.generation is None else r.config.generation.generator,
        "view": r.config.view.label, "top_k": r.config.top_k, "limit": r.config.limit,
        "seed": r.config.seed, "queries": r.n_done,
        "created": time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created_at)),
        "dataset fingerprint": r.dataset_fingerprint[:12]} for r in runs])


def report_html(comparison: RunComparison, outcomes: pd.DataFrame, runs: Sequence[RunRecord],
                *, generated_at: float | None = None) -> str:
    """The standalone HTML document of a comparison already computed (pure: no store)."""
    names = run_names(runs)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(generated_at or time.time()))
    figures: list[tuple[str, go.Figure]] = [
        ("Means with 95% confidence intervals", ci_forest(comparison, names=names)),
        ("Win / tie / loss against the baseline", win_tie_loss_bars(comparison, names=names))]
    figures += [(f"Best gold rank: {names[p.baseline]} vs {names[p.other]}",
                 rank_scatter(outcomes, p.baseline, p.other, names=names))
                for p in comparison.pairs]
    plots = []
    for i, (title, figure) in enumerate(figures):
        figure.update_layout(template="plotly_white")
        div = figure.to_html(full_html=False, include_plotlyjs=i == 0,
                             config={"displaylogo": False, "responsive": True})
        plots.append(f"<h3>{html.escape(title)}</h3>\n{div}")
    plots_html = "\n".join(plots)
    warnings = "".join(f'<p class="warning">{html.escape(names[p.other])}: '
                       f"{html.escape(p.warning)}</p>" for p in comparison.pairs if p.warning)
    flipped = "\n".join(
        f"<h3>{html.escape(names[p.other])} vs {html.escape(names[p.baseline])}: "
        f"{len(p.flipped)} flipped</h3>\n{_table(flipped_table(p, names))}"
        for p in comparison.pairs)
    configs = "\n".join(
        f"<p><b>{html.escape(r.run_id)}</b></p><pre>"
        f"{html.escape(json.dumps(r.config.to_dict(), indent=2, ensure_ascii=False))}</pre>"
        for r in runs)
    title = f"Comparison of {len(runs)} runs on {comparison.dataset}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p class="meta">{comparison.n_queries} queries in common · k = {comparison.k} ·
baseline {html.escape(names[runs[0].run_id])} ({html.escape(runs[0].run_id)}) ·
generated {html.escape(stamp)} by TARGET Explorer</p>
<h2>Definitions</h2>
<p class="note">{html.escape(DEFINITIONS)}</p>
<h2>Runs</h2>
{_table(_runs_table(runs, names))}
<h2>Headline</h2>
{_table(headline_table(comparison, names))}
<h2>Paired tests</h2>
{warnings}
{_table(paired_tests_table(comparison, names))}
<h2>Figures</h2>
{plots_html}
<h2>Flipped queries</h2>
{flipped}
<h2>Run configurations</h2>
{configs}
</body>
</html>
"""


def comparison_report(store: RunStore, run_ids: Sequence[str], *, k: int | None = None) -> str:
    """A complete standalone HTML report comparing runs[1:] with runs[0]
    (see `compare_runs`; raises CompareError the same way)."""
    comparison = compare_runs(store, run_ids, k=k)
    outcomes = outcomes_frame(store, run_ids, comparison.k)
    return report_html(comparison, outcomes, [store.get_run(r) for r in run_ids])
