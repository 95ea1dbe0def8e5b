"""Launched runs (jobs) on every page: the sidebar lists the queued, running and recent
jobs with their progress, a link and Cancel / Resume, polling the workspace while any
job is active; the Run page shows its dataset's jobs the same way. The jobs themselves
work in their own processes (target_core.engine.workers), so nothing here waits on them.
A page's launch button only queues its jobs and runs the page again: the sidebar lists
them, then starts their workers in a background thread (workers.start_waiting), so the
new jobs show within a second of the click, before any worker process exists.

When the dashboard's server starts, jobs whose worker died meanwhile (a machine
restart) are resumed, once per server process and workspace."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from pages._ui import resources
from pages._ui.text import plain
from target_core.actions.runs import cancel, queue_runs, resume, resume_interrupted, start_waiting
from target_core.errors import TargetError
from target_core.read_models.jobs import group_jobs, under_way_note
from target_core.read_models.links import job_link
from target_core.read_models.resources import Job, recent_jobs
from target_core.run_config import RunConfig
from target_core.types import TableLookup

POLL_S = 2.0
"""Seconds between two looks at the jobs while one is active."""
RECENT_S = 15 * 60
"""Finished jobs stay listed this long."""


@st.cache_resource(show_spinner=False)
def _resume_at_start(workspace: str) -> list[str]:
    """Resume the jobs whose worker is gone, once per server process and workspace."""
    try:
        return [job.job_id for job in resume_interrupted(resources.settings())]
    except TargetError:
        return []


def _jobs(dataset: str | None) -> list[Job]:
    """A new connection per script run (sqlite connections must not cross threads)."""
    return recent_jobs(resources.settings(), dataset, RECENT_S)


def _cancel(job_id: str) -> None:
    cancel(job_id, resources.settings())


def _resume(job_id: str) -> None:
    resume(job_id, resources.settings())


def _link(job: Job) -> str:
    text, link = job_link(job)
    return f"[{text}]({link})"


def job_line(job: Job, key: str) -> None:
    """One job: its label, a progress bar with the step, a link and its buttons."""
    st.markdown(f"**{plain(job.label)}** · {_link(job)}")
    st.progress(job.fraction, text=plain(job.describe()))
    if job.active and not job.cancel_requested:
        st.button("Cancel", key=f"{key}-cancel-{job.job_id}", on_click=_cancel,
                  args=(job.job_id,), icon=":material/cancel:",
                  help="Stop after the current step; finished queries are kept and "
                  "launching the same configuration again resumes the run.")
    elif job.status in ("interrupted", "cancelled") and job.kind_known:
        st.button("Resume", key=f"{key}-resume-{job.job_id}", on_click=_resume,
                  args=(job.job_id,), icon=":material/play_arrow:",
                  help="Start a new worker: it resumes the run, keeping finished queries.")


def queued_line(job: Job, key: str) -> None:
    """A queued job in one line: its label and a Cancel button."""
    text, button = st.columns([7, 1], vertical_alignment="center")
    text.markdown(f"{plain(job.label)} · {_link(job)}")
    button.button("", key=f"{key}-cancel-{job.job_id}", on_click=_cancel, args=(job.job_id,),
                  icon=":material/cancel:", type="tertiary",
                  help="Cancel this queued job: it never starts.")


def under_way() -> None:
    """An info line naming how many runs are queued or running, linked to their Run
    pages; nothing when none is (the Overview, above its leaderboard)."""
    if note := under_way_note(_jobs(None)):
        st.info(note, icon=":material/pending:")


def _looked(key: str) -> str:
    return f"_jobs-looked-{key}"


def _active_ids(jobs: list[Job]) -> tuple[str, ...]:
    return tuple(sorted(j.job_id for j in jobs if j.active))


def _listing(dataset: str | None, key: str, heading: str | None, watched: tuple[str, ...]
             ) -> None:
    # the page's own run looked already (job_list); the fragment's reruns look again
    jobs = st.session_state.pop(_looked(key), None)
    if jobs is None:
        jobs = _jobs(dataset)
    if _active_ids(jobs) != watched:
        st.rerun()  # a job started or ended: the whole page (its run lists) is stale
    if not jobs:
        return
    if heading:
        st.markdown(heading)
    groups = group_jobs(jobs)
    for job in groups.shown:  # running, or needing the user: failed, cancelled...
        job_line(job, key)
    if groups.queued:  # waiting for a slot: one line each, folded, so the page's
        # pickers stay in view however many wait
        with st.expander(groups.queued_heading, icon=":material/schedule:"):
            for job in groups.queued:
                queued_line(job, key)
    if groups.done:  # finished well: one short line each, folded, so the list stays short
        with st.expander(groups.done_heading, icon=":material/check_circle:"):
            st.markdown("\n".join(f"- {plain(job.label)} · {_link(job)}"
                                   for job in groups.done))


def job_list(dataset: str | None = None, *, key: str, heading: str | None = None
             ) -> list[Job]:
    """The jobs (of one dataset, or all), kept up to date while any is active: one look
    at the job table per page run, and one per poll. Returns the jobs of that look."""
    jobs = _jobs(dataset)
    st.session_state[_looked(key)] = jobs
    watched = _active_ids(jobs)
    every = POLL_S if watched else None
    st.fragment(_listing, run_every=every)(dataset, key, heading, watched)
    return jobs


def sidebar() -> None:
    """The sidebar's jobs, on every page (called by app.py); then the workers of queued
    jobs that have none, launched by a page (each started once, in the background)."""
    _resume_at_start(str(resources.settings().workspace))
    with st.sidebar:
        jobs = job_list(key="sidebar", heading="**Jobs**")
    if any(job.status == "queued" and job.pid is None for job in jobs):
        start_waiting(resources.settings())


def launch_missing(configs: Sequence[RunConfig], dataset: TableLookup, *, noun: str, key: str,
                   primary: bool = False) -> None:
    """A button "Run N missing NOUN(s)" (disabled, "All NOUNs are stored", when none)
    that queues each configuration as a job; the page then runs again, so the
    sidebar lists the new jobs (and starts them), and says what was launched."""
    label = f"Run {len(configs)} missing {noun}(s)" if configs else f"All {noun}s are stored"
    if st.button(label, key=key, type="primary" if primary else "secondary",
                 disabled=not configs):
        try:  # one job each: they work on in worker processes
            queue_runs(configs, resources.settings(), dataset)
        except TargetError as exc:
            st.error(str(exc))
            return
        st.session_state[f"{key}-ran"] = (
            f"Launched {len(configs)} {noun}(s) as jobs: they work on when you leave this "
            "page, and it redraws when they end.")
        st.rerun()
    if ran := st.session_state.pop(f"{key}-ran", None):
        st.success(ran)
