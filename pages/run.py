"""Run: choose retrievers, a table view and k for the sidebar's dataset, optionally a
generator that answers each query from a context (retrieved, oracle, none); see the
estimated tokens and cost of a paid run; launch: each run is a job in its own process
(target_core.engine.workers), followed here and in the sidebar; the runs are listed
below. The GTR-T button fills in seed 001's pipeline. The form is a view: its choices live
in the URL (?dataset=D&retriever=bm25&retriever=tfidf&view=...&k=10&limit=0&seed=0&
generator=...) and in the session (url.form_field), so a link or a return through the
sidebar reopens it as it was; a bad value stops the page with an error naming it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import streamlit as st

from pages._ui import jobs, resources, shell, url, widgets
from pages._ui.text import plain
from target_core.actions.runs import launch_notes
from target_core.errors import TargetError
from target_core.read_models.choices import (
    GENERATOR_SPECS,
    GENERATORS,
    PROMPT_SETS,
    definition,
    generator_note,
    pipeline_preset,
    split_spec,
)
from target_core.read_models.choices import RETRIEVER_SPECS as EXAMPLE_SPECS
from target_core.read_models.params import ParamError, check_choice, parse_int, unknown_message
from target_core.read_models.runs import (
    answers_label,
    failed_notes,
    fallback_notes,
    run_list,
)
from target_core.run_config import (
    CONTEXT_MODES,
    DEFAULT_PROMPT_SET,
    DEFAULT_TOKEN_BUDGET,
    SQL_SCHEMAS,
    GenerationConfig,
    RunConfig,
)
from target_core.tasks import ANSWER_TASKS, task_rules

shell.frame()
dataset = widgets.lookup_or_stop(widgets.pick_dataset())
st.title("Run")
st.caption(f"on **{plain(dataset.name)}** ({dataset.task}, {dataset.n_tables:,} tables, "
           f"{len(dataset.queries):,} queries)")

NO_GENERATOR = "none (retrieval only)"


def _spec(param: str, value: str) -> str:
    """A retriever or generator spec from the URL, when its family is registered."""
    entry, examples = ((split_spec, EXAMPLE_SPECS) if param == "retriever"
                       else (GENERATORS.parse, GENERATOR_SPECS))
    try:
        entry(value)
    except TargetError:
        raise ParamError(param, value, unknown_message(param, value, list(examples))) from None
    return value


def _generator(value: str) -> str:
    return NO_GENERATOR if value == "none" else _spec("generator", value)


def _int(param: str, minimum: int, maximum: int) -> Callable[[str], int]:
    return lambda value: parse_int(param, value, minimum=minimum, maximum=maximum)


def _choice(param: str, known: Sequence[str]) -> Callable[[str], str]:
    return lambda value: check_choice(param, value, list(known))


def use_gtr_t() -> None:
    """Fill the widgets with the GTR-T preset (runs on the next rerun)."""
    preset = pipeline_preset("gtr-t")
    state = st.session_state
    state["run-specs"] = [preset.retriever]
    state["run-preset"] = preset.view
    state["run-generator"] = (preset.generator if resources.settings().openai_api_key
                              else "heuristic")
    state["run-context"] = preset.context
    state["run-context-k"] = preset.context_k or 0
    state["run-sql-schema"] = preset.sql_schema


answers_sql = task_rules(dataset.task).answers_sql
if answers_sql:
    st.button("GTR-T preset", on_click=use_gtr_t, icon=":material/auto_awesome:",
              help=pipeline_preset("gtr-t").description + ". Uses openai when OPENAI_API_KEY "
              "is set, else the offline heuristic generator.")
url.form_field("retriever", "run-specs", lambda v: _spec("retriever", v), many=True)
specs = st.multiselect("Retrievers", list(dict.fromkeys([*EXAMPLE_SPECS,
                                                         *st.session_state.get("run-specs", [])])),
                       default=["bm25", "tfidf"], accept_new_options=True, key="run-specs",
                       help="Type another spec, e.g. dense:openai/text-embedding-3-large.")
url.form_echo("retriever", "run-specs", list(specs))
with st.expander("Table view", expanded=False):
    view = widgets.view_picker("run", in_url=True)
cols = st.columns(3)
url.form_field("k", "run-k", _int("k", 1, 1000))
top_k = int(cols[0].number_input("k (tables per query)", 1, 1000, 10, key="run-k"))
url.form_field("limit", "run-limit", _int("limit", 0, len(dataset.queries)))
if st.session_state.get("run-limit", 0) > len(dataset.queries):  # chosen on a larger dataset
    st.session_state["run-limit"] = len(dataset.queries)
limit = int(cols[1].number_input("Queries (0 = all)", 0, len(dataset.queries), 0,
                                 key="run-limit"))
url.form_field("seed", "run-seed", _int("seed", 0, 2**31 - 1))
seed = int(cols[2].number_input("Sample seed", 0, 2**31 - 1, 0, key="run-seed",
                                disabled=limit == 0))
for param, key, value in (("k", "run-k", top_k), ("limit", "run-limit", limit),
                          ("seed", "run-seed", seed)):
    url.form_echo(param, key, str(value))
generation = None
if dataset.task in ANSWER_TASKS:
    with st.expander("Generation (answer each query)", expanded=False):
        url.form_field("generator", "run-generator", _generator)
        generator = st.selectbox(
            "Generator", list(dict.fromkeys([NO_GENERATOR, *GENERATOR_SPECS,
                                             st.session_state.get("run-generator",
                                                                  NO_GENERATOR)])),
            key="run-generator",
            accept_new_options=True, help="heuristic: offline baseline, no model. openai: "
            "OpenAI or an OpenAI-compatible server (OPENAI_BASE_URL), TARGET's prompts. "
            "local:smollm2: SmolLM2-135M on llama.cpp in the run's process, offline, for "
            "trying the pipeline, not for scores; local:PATH.gguf: any GGUF model.")
        gcols = st.columns(4)
        for param, key, parse in (
                ("context", "run-context", _choice("context", CONTEXT_MODES)),
                ("context_k", "run-context-k", _int("context_k", 0, 1000)),
                ("budget", "run-budget", _int("budget", 100, 1_000_000)),
                ("sql_schema", "run-sql-schema", _choice("sql_schema", SQL_SCHEMAS)),
                ("prompt_set", "run-prompt-set", _choice("prompt_set", list(PROMPT_SETS)))):
            url.form_field(param, key, parse)
        context = gcols[0].radio("Context", CONTEXT_MODES, key="run-context",
                                 help="retrieved: the top tables; oracle: the gold tables "
                                 "(upper bound); none: TARGET's no-context prompt")
        context_k = int(gcols[1].number_input("Tables in the prompt (0 = k)", 0, 1000, 0,
                                              key="run-context-k"))
        budget = int(gcols[2].number_input("Token budget", 100, 1_000_000,
                                           DEFAULT_TOKEN_BUDGET, step=1000,
                                           key="run-budget"))
        schema = gcols[3].radio("SQL schema", SQL_SCHEMAS, key="run-sql-schema",
                                disabled=not answers_sql,
                                help="database: every table of each retrieved table's "
                                "database (TARGET); tables: only the retrieved tables (GTR-T)")
        prompt_names = list(PROMPT_SETS)
        prompts = st.selectbox(
            "Prompt set", prompt_names, index=prompt_names.index(DEFAULT_PROMPT_SET),
            key="run-prompt-set", format_func=lambda n: f"{n}: {PROMPT_SETS[n].description}",
            help="The prompts the LLM generators (openai, local:) are sent; recorded with "
            "the run. The heuristic generators read no prompt.")
        for param, key, text in (
                ("generator", "run-generator",
                 "none" if generator == NO_GENERATOR else generator),
                ("context", "run-context", context), ("context_k", "run-context-k",
                                                      str(context_k)),
                ("budget", "run-budget", str(budget)), ("sql_schema", "run-sql-schema", schema),
                ("prompt_set", "run-prompt-set", prompts)):
            url.form_echo(param, key, text)
    if generator != NO_GENERATOR:
        generation = GenerationConfig(generator=generator, context=context,
                                      context_k=context_k or None, token_budget=budget,
                                      sql_schema=schema, prompt_set=prompts)
        try:
            if note := generator_note(generator):
                st.caption(f"Generator: {plain(note)}")
        except TargetError as exc:
            st.error(f"{generator}: {exc}")


for spec in specs:
    try:
        estimate = resources.run_estimate(dataset, spec, generation, view, top_k=top_k,
                                          n_queries=limit or len(dataset.queries))
    except TargetError as exc:
        st.error(f"{spec}: {exc}")
        continue
    if estimate.lines:
        items = "\n".join(f"- {line.describe()}".replace("$", "\\$") for line in estimate.lines)
        counted = ("" if estimate.exact
                   else " Some token counts are estimates (tiktoken unavailable, or assumed "
                   "summary and reply lengths).")
        st.info(f"`{spec}`: estimated cost of this run\n{items}\n\nNeeds OPENAI_API_KEY (and "
                f"OPENAI_BASE_URL for a compatible server).{counted}")

fresh = st.checkbox("Fresh run", key="run-fresh",
                    help="A configuration that is complete already is not run again: its "
                    "stored run is shown. Tick this to run it again; both runs are kept and "
                    "numbered in the list below.")
if st.button("Launch", type="primary", disabled=not specs):
    configs = [RunConfig(dataset=dataset.name, retriever=spec, view=view, top_k=top_k,
                         limit=limit or None, seed=seed, generation=generation)
               for spec in specs]
    notes = launch_notes(configs, settings=resources.settings(), fresh=fresh, dataset=dataset,
                         spawn=False)
    st.session_state["run-notes"] = (dataset.name, time.strftime("%H:%M:%S"), notes)
    st.rerun()  # the sidebar, drawn before the click, lists the new jobs, then starts them
# the last launch's notes stay (timed) while its dataset is shown: the page redraws
# whenever a job starts or ends, and a note that vanished then was never read
if (last := st.session_state.get("run-notes")) and last[0] == dataset.name:
    for kind, note in last[2]:
        {"error": st.error, "info": st.info, "success": st.success}[kind](f"{last[1]} · {note}")

jobs.job_list(dataset.name, key="run", heading="#### Jobs on this dataset")

st.subheader("Runs on this dataset")
runs = resources.store().list_runs(dataset=dataset.name)
if not runs:
    st.info("No runs yet: pick retrievers and launch.")
else:
    for note in failed_notes(runs):
        st.error(note)
    for note in fallback_notes(runs):
        st.warning(plain(note))
    listed = run_list(runs)
    widths = listed.widths
    columns = {c: st.column_config.Column(width=w) for c, w in widths.items()}
    columns.update({c: st.column_config.TextColumn(alignment="right", width=widths[c])
                    for c in listed.numbers})
    columns["run"] = st.column_config.LinkColumn(
        "run", display_text=r"run=(.+)$", width=widths["run"],
        help="Opens the run's queries on the Query page.")
    columns["R@k"] = st.column_config.TextColumn(
        alignment="right", width=widths["R@k"],
        help=f"k = min(10, the run's k): {definition('recall_micro@10')}")
    if "answers" in widths:
        columns["answers"] = st.column_config.TextColumn(
            answers_label(dataset.task), alignment="right", width=widths["answers"],
            help="sacreBLEU (QA), F1 (fact), execution accuracy (SQL)")
    st.dataframe(listed.runs, hide_index=True, width="stretch", row_height=listed.row_height,
                 height=widgets.grid_height(len(listed.runs), 10, listed.row_height or 35),
                 column_config=columns)
    if not listed.answers.empty:
        st.caption("GTR's answer metrics of the runs with a generator (the Overview "
                   "explains each).")
        st.dataframe(listed.answers, hide_index=True, width="stretch", column_config={
            "run": st.column_config.LinkColumn("run", display_text=r"run=(.+)$"),
            **{c: st.column_config.TextColumn(alignment="right")
               for c in listed.answers.columns[2:]}})
