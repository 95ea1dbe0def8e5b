"""Benchmark builder (seed 002): SQL templates -> sampled SQL -> questions -> automatic
check -> human review -> an exported sql dataset -> evaluation by error source.
?draft=NAME&pair=ID reopens one pair of a draft in the Review tab, ?run=ID a run's
evaluation in the Export tab; a bad value's error shows above the tabs, never in a hidden
one. Only the open tab's content runs."""

from __future__ import annotations

import tempfile
from datetime import date
from pathlib import Path

import streamlit as st

from pages._ui import jobs, resources, shell, url, widgets
from pages._ui.text import plain
from target_core.actions.benchmark import DraftSpec, export_draft, keep_upload, launch_draft
from target_core.errors import TargetError
from target_core.read_models.benchmark import (
    EXAMPLE_TEMPLATES_DIR,
    PAPER_ACCEPTANCE,
    TAB_REVIEW,
    TABLE_COLUMNS,
    Draft,
    Pair,
    automatically_passed,
    counts_frame,
    default_draft_name,
    draft_report,
    error_source_view,
    evaluable_runs,
    link_tab,
    list_drafts,
    load_templates,
    next_pair,
    pair_by_id,
    pair_frame,
    pair_ids,
    pick_templates,
    result_frame,
    run_labels,
    sql_dataset_names,
    template_databases,
)
from target_core.read_models.cells import wrapped_row_height
from target_core.read_models.params import ParamError, check_choice
from target_core.read_models.resources import get_job
from target_core.wording import counted

shell.frame()
st.title("Benchmark builder")
st.caption("Start from valid SQL, write the questions, check them, review them, and "
           "evaluate text-to-SQL on the result (seed 002: semi-automatic text-to-SQL "
           "benchmarks).")
settings = resources.settings()
TABS = ["1 · Sample", "2 · Review", "3 · Export and evaluate"]
_OPEN_REVIEW = "bg-open-review-draft"
# a link's draft, pair and run are checked before the tabs: an error is never hidden in one
url.read_choice("draft", list_drafts(settings.workspace), kind="draft")
if url.read("run") is not None:
    url.read_choice("run", list(run_labels(evaluable_runs(resources.store()))),
                    kind="run", among="the text-to-SQL runs with a generator")
linked_pair = url.read("pair") if url.from_link() else None
if linked_pair is not None:
    linked_draft = (url.read("draft") or st.session_state.get("bg-draft")
                    or next(iter(list_drafts(settings.workspace)), None))
    try:
        check_choice("pair", linked_pair, pair_ids(settings.workspace, linked_draft),
                     among=f"the pairs of draft {linked_draft}" if linked_draft else
                     "the pairs of a draft (there are none)")
    except ParamError as exc:
        url.stop(str(exc))
if url.from_link() and (opens := link_tab(url.read("draft"), url.read("pair"),
                                          url.read("run"))) is not None:
    st.session_state["bg-tab"] = TABS[opens]
if (made := st.session_state.pop(_OPEN_REVIEW, None)) is not None:  # "Review draft" clicked
    url.write(draft=made)
    url.drop("pair")
    st.session_state["bg-tab"] = TABS[TAB_REVIEW]
make_tab, review_tab, export_tab = st.tabs(TABS, key="bg-tab", on_change="rerun")


def _sample() -> None:
    sql_sets = sql_dataset_names(settings)  # none loaded: only the one chosen below
    if not sql_sets:
        st.info("No text-to-SQL dataset with SQLite databases is available.")
        return
    left, right = st.columns(2)
    name = left.selectbox("Dataset", sql_sets, key="bg-dataset")
    try:
        dataset = resources.load_by_name(name)
    except TargetError as exc:
        st.error(str(exc))
        return
    upload = right.file_uploader("Templates (JSON or YAML); empty: the examples",
                                 type=["json", "yaml", "yml"], key="bg-templates")
    try:
        if upload is None:
            templates = load_templates(EXAMPLE_TEMPLATES_DIR)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / Path(upload.name).name
                path.write_bytes(upload.getvalue())
                templates = load_templates(path)
        databases = template_databases(templates, dataset)
        database = left.selectbox("Database", ["(every database with templates)", *databases],
                                  key="bg-database")
        chosen = pick_templates(templates, dataset,
                                None if database.startswith("(") else database)
    except TargetError as exc:
        st.error(str(exc))
        return
    cols = st.columns(4)
    n = int(cols[0].number_input("Queries per template", 1, 200, 5, key="bg-n"))
    seed = int(cols[1].number_input("Seed", 0, 2**31 - 1, 0, key="bg-seed"))
    writer_spec = cols[2].selectbox("Question writer", ["template", "openai"], key="bg-writer",
                                    accept_new_options=True,
                                    help="template: the offline baseline (the template's "
                                    "question patterns); openai or openai:MODEL (type it): "
                                    "the openai generator, with OPENAI_API_KEY and "
                                    "OPENAI_BASE_URL for a compatible server")
    judge_spec = cols[3].selectbox("Automatic check", ["round-trip", "openai"], key="bg-judge",
                                   accept_new_options=True,
                                   help="round-trip: the question mentions every value, column "
                                   "and time reference of its SQL (offline); openai or "
                                   "openai:MODEL: an LLM also judges whether exactly this SQL "
                                   "answers the question")
    dates = st.columns(3)
    fixed = dates[0].checkbox("Fixed reference date", key="bg-fixed",
                              help="Relative times ('last month') resolve against it. Off: "
                              "the day after the latest date in each template's time column.")
    reference = dates[1].date_input("Reference date", date(2025, 1, 1), key="bg-ref",
                                    disabled=not fixed)
    suggested = default_draft_name(name, None if database.startswith("(") else database,
                                   seed)
    draft_name = dates[2].text_input("Draft name", key="bg-name", placeholder=suggested,
                                     help="Empty: named after the dataset, the database "
                                     "and the seed") or suggested
    st.caption(f"{len(chosen)} templates: " + ", ".join(plain(t.id) for t in chosen))
    replace = False
    if draft_name.strip() in list_drafts(settings.workspace):
        replace = st.checkbox(f"Replace the existing draft '{plain(draft_name.strip())}' "
                              "(its review decisions are lost)", key="bg-replace")
    if st.button("Sample and write questions", type="primary", key="bg-go"):
        spec = DraftSpec(
            dataset=name, name=draft_name.strip(),
            templates=str(keep_upload(settings, upload.name, upload.getvalue()))
            if upload else None,
            templates_label=upload.name if upload else "examples",
            database=None if database.startswith("(") else database, n=n, seed=seed,
            reference_date=reference.isoformat() if fixed else None, writer=writer_spec,
            judge=judge_spec, replace=replace)
        try:
            st.session_state["bg-job"] = launch_draft(spec, settings).job_id
        except TargetError as exc:
            st.error(str(exc))
            return
        st.rerun()  # the sidebar, drawn before the click, then lists the job
    if job_id := st.session_state.get("bg-job"):
        job = get_job(settings, job_id)
        st.fragment(_draft_job, run_every=jobs.POLL_S if job.active else None)(
            job_id, job.active)


def _draft_job(job_id: str, was_active: bool) -> None:
    """The session's last draft job: its progress while it works (it goes on when you
    leave the page), then what it made."""
    job = get_job(settings, job_id)
    if job.active != was_active:
        st.rerun()  # it ended: the drafts in the other tabs changed too
    if job.status != "done" or job.result is None:
        jobs.job_line(job, key="bg")
        return
    result = job.result
    st.success(f"Draft '{plain(result['draft'])}': {result['queries']} SQL queries, "
               f"{result['questions']} questions; the automatic check passed "
               f"{result['automatic_passed']}.")
    if st.button(f"Review draft '{plain(result['draft'])}'", icon=":material/rate_review:",
                 key="bg-open-review"):
        st.session_state[_OPEN_REVIEW] = result["draft"]
        st.rerun(scope="app")  # the tabs are outside this fragment
    report = draft_report(job)
    if report is not None:
        st.dataframe(counts_frame(report), hide_index=True, width="stretch",
                     column_config={"template_id": None,
                                    "first_error": st.column_config.TextColumn(
                                        "first error", width="large")})


def _pair_pane(draft: Draft, pair: Pair, queue: list[Pair]) -> None:
    item = pair.item
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Question** · {plain(pair.style)} · {plain(pair.writer)} · "
                    f"status **{pair.status}**")
        text = st.text_area("Question (edit to correct it)", pair.final_question,
                            key=f"bg-edit-{draft.name}-{pair.pair_id}", height=100)
        check = pair.check
        mark = ":green[passed]" if check.passed else ":red[failed]"
        st.markdown(f"Round trip {mark}" + (": missing " + plain(", ".join(check.missing))
                                           if check.missing else ""))
        if pair.judge is not None:
            verdict = {True: ":green[answerable]", False: ":red[not answerable]",
                       None: ":orange[could not judge]"}[pair.judge.passed]
            st.markdown(f"{plain(pair.judge.method)}: {verdict} · "
                        f"{plain(pair.judge.reason)}")
        if item.time:
            st.caption(f"Time reference '{plain(item.time['expression'])}' against "
                       f"reference date {item.reference_date}: {item.time['start']} to "
                       f"{item.time['end']} (end excluded)")
        buttons = st.columns(3)
        accept = buttons[0].button("Accept", type="primary", key=f"bg-acc-{pair.pair_id}")
        reject = buttons[1].button("Reject", key=f"bg-rej-{pair.pair_id}")
        later = buttons[2].button("Skip", key=f"bg-skip-{pair.pair_id}")
    with right:
        st.markdown(f"**SQL** · template {plain(item.template_id)} · database "
                    f"{plain(item.database)} · {plain(item.difficulty or '')}")
        st.code(item.sql, language="sql", wrap_lines=True)
        st.markdown(f"**Result** · {counted(item.n_rows, 'row')}"
                    + (" (first 5)" if item.n_rows > 5 else ""))
        st.dataframe(result_frame(item), hide_index=True, width="stretch")
    if accept or reject or later:
        if accept or reject:
            draft.review(pair.pair_id, "accepted" if accept else "rejected", edited=text)
        nxt = next_pair(queue, pair)
        if nxt is not None:
            url.write(pair=str(nxt.pair_id))
        st.rerun()


QUESTION_PX = {"question": 320}
"""The review list's question column: it wraps, and the list fits a 1,500-pixel screen."""


def _review() -> None:
    names = list_drafts(settings.workspace)
    if not names:
        st.info("No drafts yet: make one in tab 1, or with `python -m target_core benchgen "
                "sample --draft NAME`.")
        return
    name = url.url_selectbox("Draft", names, param="draft", key="bg-draft", kind="draft")
    with Draft.open(settings.workspace, name) as draft:
        wanted = url.read("pair")
        if wanted is not None and url.from_link():  # checked above the tabs
            every = {str(p.pair_id): p for p in draft.pairs(None)}
            if wanted in every and every[wanted].status != "pending":
                st.session_state["bg-status-default"] = "all"  # a reviewed pair: every status
        summary = draft.summary()
        cols = st.columns(5)
        cols[0].metric("Pairs", summary.total)
        cols[1].metric("Accepted", summary.accepted)
        cols[2].metric("Rejected", summary.rejected)
        cols[3].metric("Pending", summary.pending)
        rate = summary.acceptance_rate
        cols[4].metric("Acceptance rate", "-" if rate is None else f"{rate:.1%}",
                       None if rate is None else f"{rate - PAPER_ACCEPTANCE:+.1%} vs paper",
                       help="accepted / reviewed; seed 002 reports 95.11% for its "
                       "LLM-written questions")
        meta = draft.meta()
        st.caption(f"From {plain(meta.get('dataset'))}, seed {meta.get('seed')}, "
                   f"{meta.get('n')} per template · questions: {plain(meta.get('writer'))}"
                   f" · automatic check: {plain(meta.get('judge'))}")
        for item, error in draft.writer_errors()[:5]:
            st.warning(f"No questions for {plain(item.template_id)}: {plain(error)}")
        if summary.pending and st.button(
                f"Accept the {automatically_passed(draft.pairs('pending'))} "
                "pending pairs the automatic check passed, reject those it failed (a pair "
                "the round trip failed and the judge passed stays pending)",
                key="bg-bulk"):
            draft.accept_automatic()
            st.rerun()
        status = st.segmented_control("Show", ["pending", "accepted", "rejected", "all"],
                                      default=st.session_state.get("bg-status-default",
                                                                   "pending"),
                                      key="bg-status") or "all"
        pairs = draft.pairs(None if status == "all" else status)
        if not pairs:
            st.success("Nothing here." if status != "pending" else
                       "Every pair is reviewed. Export the accepted ones in tab 3.")
            return
        current = pair_by_id(pairs, url.read("pair"))
        st.divider()
        st.caption(f"Pair {current.pair_id} · {pairs.index(current) + 1} of {len(pairs)} "
                   f"{status if status != 'all' else ''} · link: ?draft={plain(name)}"
                   f"&pair={current.pair_id}")
        _pair_pane(draft, current, pairs)
        st.divider()
        table_key = f"bg-list-{name}-{status}"
        st.session_state[f"{table_key}-ids"] = [p.pair_id for p in pairs]
        listed = pair_frame(pairs)
        row_px = wrapped_row_height(listed, QUESTION_PX)  # a question wraps whole
        st.dataframe(listed, hide_index=True, width="stretch", row_height=row_px,
                     height=widgets.grid_height(len(pairs), 10, row_px or 35), key=table_key,
                     on_select=lambda: _open_selected(table_key),
                     selection_mode="single-row",
                     column_config={"question": st.column_config.TextColumn(
                         width=QUESTION_PX["question"])})
        st.caption("Select a row to review that pair.")


def _open_selected(table_key: str) -> None:
    rows = st.session_state[table_key].selection.rows
    ids = st.session_state.get(f"{table_key}-ids", [])
    if rows and rows[0] < len(ids):
        url.write(pair=str(ids[rows[0]]))


def _export() -> None:
    names = list_drafts(settings.workspace)
    if names:
        st.subheader("Export the accepted pairs as a dataset")
        cols = st.columns(3)
        name = cols[0].selectbox("Draft", names, key="bg-export-draft")
        target = cols[1].text_input("Dataset name", f"{name}-sql", key="bg-export-name")
        overwrite = cols[2].checkbox("Replace an earlier export", key="bg-export-over")
        if st.button("Export", type="primary", key="bg-export"):
            try:
                with Draft.open(settings.workspace, name) as draft:
                    result = export_draft(draft, settings, target.strip(), overwrite=overwrite)
                resources.dataset_infos.clear()
            except TargetError as exc:
                st.error(str(exc))
            else:
                st.success(f"Dataset '{plain(result.name)}': {result.queries} queries, "
                           f"{result.tables} tables in {len(result.databases)} databases.")
                st.page_link("pages/run.py", label=f"Run a retriever and generator on "
                             f"{result.name}", icon=":material/play_arrow:",
                             query_params={"dataset": result.name})
    st.subheader("Evaluate a text-to-SQL run by error source")
    runs = evaluable_runs(resources.store())
    if not runs:
        st.info("No text-to-SQL run with a generator yet: run one on an exported dataset.")
        return
    labels = run_labels(runs)
    run_id = url.url_selectbox("Run", list(labels), param="run", key="bg-eval-run",
                               format_func=labels.get,
                               kind="run", among="the text-to-SQL runs with a generator")
    run = resources.store().get_run(run_id)
    try:
        view = error_source_view(resources.store(),
                                 resources.load_by_name(run.config.dataset), run_id)
    except TargetError as exc:
        st.error(str(exc))
        return
    st.caption("As the paper's Table 1: share of all queries. Overall = EA + Alt.")
    percent = {c: st.column_config.NumberColumn(c, format="%.1f%%") for c in TABLE_COLUMNS}
    report = view.report
    st.dataframe(report.table(), width="stretch", column_config=percent)
    st.dataframe(report.by_difficulty(), width="stretch", column_config=percent)
    from target_core.figures.failures import error_source_bars  # this tab only

    st.plotly_chart(error_source_bars(report), width="stretch")
    with st.expander("Definitions"):
        st.dataframe(view.definitions, hide_index=True, width="stretch",
                     column_config={"definition": st.column_config.TextColumn(width="large")})
    rows = view.queries
    st.dataframe(rows, hide_index=True, width="stretch", height=widgets.grid_height(len(rows), 12),
                 column_config={"open": st.column_config.LinkColumn("open",
                                                                     display_text="query"),
                                "detail": st.column_config.TextColumn(width="large")})


if make_tab.open:
    with make_tab:
        _sample()
if review_tab.open:
    with review_tab:
        _review()
if export_tab.open:
    with export_tab:
        _export()
