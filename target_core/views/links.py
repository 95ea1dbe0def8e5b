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
