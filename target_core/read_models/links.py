"""Links between views, relative to the app's root: every view of a query or a run has a
URL that opens it again. Pages and exports build links only here."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote_plus, urlencode

from target_core.engine.job_record import Job


def query_link(run_id: str, query_id: str) -> str:
    """The Query page on one query of one run."""
    return "query?" + urlencode({"run": run_id, "query": query_id})


def query_links(run_id: str, query_ids: Iterable[str | None]) -> list[str | None]:
    """query_link(run_id, q) of each q (None stays None), the run's part encoded once
    (urlencode per link took two thirds of the All runs page's matrix of 2 runs x
    5,000 queries; for those 10,000 links: 9 ms against 51 ms, 20 alternating rounds
    in one process, load average 0.4)."""
    head = "query?" + urlencode({"run": run_id}) + "&query="
    return [None if q is None else head + quote_plus(q) for q in query_ids]


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


def job_link(job: Job) -> tuple[str, str]:
    """Where a job leads, as (text, link), as its kind says (JobKind.done / open): a
    finished run's queries, a finished draft's review, else the page that launched it.
    A finished job leads to its `done` page only when every parameter it needs is set.
    A job whose kind is no longer registered leads to its dataset's Run page (its jobs)."""
    if not job.kind_known:
        return "run page", run_page_link(job.dataset)
    kind = job.kind_entry

    def value(field: str) -> str | None:
        found = job.run_id if field == "run_id" else job.spec.get(field)
        return None if found is None else str(found)

    lead = kind.done if job.status == "done" and all(
        value(field) is not None for _, field in kind.done.params) else kind.open
    params = {param: value(field) for param, field in lead.params}
    return lead.text, lead.page + ("?" + urlencode(params) if params else "")
