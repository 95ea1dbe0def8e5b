"""Plain-text tables, the progress bar and the run summary of the CLI."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any


def format_rows(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """Left-aligned columns, a header line, no trailing spaces."""
    cells = [[("" if r.get(c) is None else str(r.get(c))) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def run_summary(record: Any) -> dict[str, Any]:
    """The `run --json` object (DESIGN.md's contract)."""
    return {"run_id": record.run_id, "dataset": record.config.dataset, "task": record.task,
            "retriever": record.config.retriever, "config": record.config.to_dict(),
            "n_queries": record.n_queries, "metrics": record.metrics}


def run_notes(record: Any) -> list[tuple[str, str]]:
    """(label, sentence) lines `show` prints under a run: its error, then each LLM step
    whose failed calls fell back (retrievers.llm_calls), then what its lists held that
    its ranking does not show (repeats, more than k: metrics.capped.returned_notes)."""
    from target_core.metrics.capped import returned_notes
    from target_core.retrievers.llm_calls import llm_call_notes

    notes = [("error", record.error)] if record.error else []
    return (notes + [("fallback", note) for note in llm_call_notes(record.index_info)]
            + [("lists", note) for note in returned_notes(record.index_info)])


class ProgressBar:
    """A one-line progress bar on stderr (only when stderr is a terminal or forced)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = ("", -1)

    def __call__(self, done: int, total: int, what: str) -> None:
        if not self.enabled or total <= 0:
            return
        percent = int(100 * done / total)
        if (what, percent) == self.last:
            return
        self.last = (what, percent)
        bar = "#" * (percent // 4)
        sys.stderr.write(f"\r{what:<18} [{bar:<25}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def metric_lines(metrics: dict[str, float], task: str) -> list[str]:
    """`show`'s metric lines: each under its one label (metrics.labels) with its key
    beside it where they differ, e.g. "R@10 ... 0.9522  recall_micro@10"."""
    from target_core.metrics.labels import label

    return [f"  {label(key, task):<20} {value:.4f}"
            + (f"  {key}" if label(key, task) != key else "") for key, value in metrics.items()]
