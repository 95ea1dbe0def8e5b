"""A comparison of runs as one standalone HTML file that opens offline: plotly.js is
inlined once, every dataset-derived string (query ids above all) and every configuration
string is escaped with html.escape, and nothing is loaded from the network. The tables
are analysis.report's, the figures figures.compare's (as on the Compare page).

It lives with the figures, not in analysis/, because it renders them: serialising a
figure to HTML with plotly.js is drawing, and analysis/ stays free of plotly. It is not
a read model either: the CLI's `report` and the Compare page's download share it.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from target_core.analysis.compare import RunComparison, compare_runs, run_names
from target_core.analysis.report import (
    DEFINITIONS,
    flipped_table,
    headline_table,
    paired_tests_table,
)
from target_core.analysis.significance import outcomes_frame
from target_core.engine.store import RunRecord, RunStore
from target_core.figures.compare import ci_forest, rank_scatter, win_tie_loss_bars
from target_core.figures.style import Figure

__all__ = ["comparison_report", "report_html"]


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
    figures: list[tuple[str, Figure]] = [
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
