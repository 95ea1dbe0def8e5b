"""Links between views, relative to the app's root: every view of a query or a run has a
URL that opens it again. Pages and exports build links only here."""

from __future__ import annotations

from urllib.parse import urlencode


def query_link(run_id: str, query_id: str) -> str:
    """The Query page on one query of one run."""
    return "query?" + urlencode({"run": run_id, "query": query_id})


def run_queries_link(run_id: str) -> str:
    """The Query page on a run (its first query)."""
    return "query?" + urlencode({"run": run_id})


def dataset_link(name: str) -> str:
    """The Datasets page on one dataset."""
    return "datasets?" + urlencode({"dataset": name})


def run_page_link(dataset: str) -> str:
    """The Run page on one dataset."""
    return "run?" + urlencode({"dataset": dataset})


def draft_link(name: str | None = None) -> str:
    """The Benchmark builder, on one draft when `name` is given."""
    return "benchmark_builder" + ("?" + urlencode({"draft": name}) if name else "")


def job_link(job_kind: str, *, dataset: str, run_id: str | None, draft: str | None,
             done: bool) -> tuple[str, str]:
    """Where a job leads, as (text, link): a finished run's queries, a finished draft's
    review, else the page that launched it."""
    if job_kind == "draft":
        return ("review", draft_link(draft)) if done else ("builder", draft_link())
    if done and run_id:
        return "queries", run_queries_link(run_id)
    return "run page", run_page_link(dataset)
