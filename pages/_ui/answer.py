"""The Query page's downstream section: generated answer vs reference, fact label vs
gold, or predicted vs gold SQL with both results and their diff. Renders an
AnswerView (target_core.read_models.answer); every piece of dataset or model text goes
through plain() or a dataframe/code block, never through HTML."""

from __future__ import annotations

from itertools import groupby

import streamlit as st

from pages._ui.text import code, plain
from pages._ui.widgets import grid_height
from target_core.read_models.answer import COMPARISON_RULE, ERROR_CLASS_HELP, AnswerView


def marked(tokens: list[tuple[str, bool]]) -> str:
    """Markdown with the words not shared by the other side on an orange background
    (one background per run of such words)."""
    parts: list[str] = []
    for shared, group in groupby(tokens, key=lambda item: item[1]):
        text = plain(" ".join(t for t, _ in group))
        parts.append(text if shared else f":orange-background[{text}]")
    return " ".join(parts) or "*(empty)*"


def _facts(view: AnswerView) -> str:
    parts = [plain(view.generator), f"context: {view.context_mode}"]
    if view.facts.get("ms") is not None:
        parts.append(f"{view.facts['ms']:.0f} ms")
    if view.facts.get("tokens_in") is not None:
        parts.append(f"{view.facts['tokens_in']} → {view.facts.get('tokens_out')} tokens")
    if view.facts.get("cached"):
        parts.append("from the response cache")
    return " · ".join(parts)


def render(view: AnswerView) -> None:
    st.subheader(view.heading)
    st.caption(_facts(view))
    if view.error:
        st.error(f"The generator failed on this query: {plain(view.error)}")
    if view.reply in ("text", "value"):
        _qa(view)
    elif view.reply == "label":
        _fact(view)
    elif view.sql is not None:
        _sql(view)
    if view.truthfulness:
        st.caption(plain(view.truthfulness))
    with st.expander("What the generator saw"):
        if view.context.empty:
            st.markdown("No tables: the no-context prompt." if view.context_mode == "none"
                        else "No tables fitted in the prompt.")
        else:
            st.dataframe(view.context, hide_index=True, width="stretch")
        if view.dropped:
            st.markdown("Left out (over the token budget): "
                        + ", ".join(plain(d) for d in view.dropped))
        if view.budget_note:
            st.caption(plain(view.budget_note))
        if view.facts.get("reasoning"):
            st.markdown("**Reasoning**")
            st.text(str(view.facts["reasoning"]))


def _qa(view: AnswerView) -> None:
    left, right = st.columns(2)
    left.markdown("**Generated**")
    left.markdown(marked(view.answer_marks))
    right.markdown("**Reference**")
    right.markdown(marked(view.reference_marks))
    bleu, rouge = view.scores.get("sentence_bleu"), view.scores.get("rouge_l")
    st.caption(f"sentence BLEU {bleu:.1f} · ROUGE-L {rouge:.3f} · words on orange appear "
               "only on their side" if bleu is not None and rouge is not None else "")
    if view.gtr:
        st.caption(f"GTR's metrics: {plain(view.gtr)}")


def _fact(view: AnswerView) -> None:
    left, middle, right = st.columns(3)
    left.metric("Predicted", view.predicted_label or "")
    middle.metric("Gold", view.gold_label or "")
    right.metric("Verdict", "correct" if view.correct else "wrong")
    st.markdown(f"Reply: {plain(view.answer) or '*(empty)*'}")
    st.caption("The reply maps to a label by TARGET's rule: it contains \"true\", else "
               "\"false\", else Not Enough Information.")


def _sql(view: AnswerView) -> None:
    sql = view.sql
    if sql is None:
        return
    good = sql.error_class == "correct"
    box = st.success if good else st.warning
    box(f"**{sql.error_class.replace('_', ' ')}**: {ERROR_CLASS_HELP.get(sql.error_class, '')}")
    if sql.alternative:
        st.info(plain(sql.interpretation))
    elif sql.interpretation and not good:
        st.caption(plain(sql.interpretation))
    left, right = st.columns(2)
    left.markdown(f"**Predicted** · database {code(sql.pred_database or 'none')}")
    left.code(sql.pred_sql or "-- no SQL", language="sql", wrap_lines=True)
    right.markdown(f"**Gold** · database {code(sql.gold_database)}")
    right.code(sql.gold_sql, language="sql", wrap_lines=True)
    left.caption(plain(sql.pred_note))
    if sql.pred is not None and not sql.pred.empty:
        left.dataframe(sql.pred, hide_index=True, width="stretch",
                       height=grid_height(len(sql.pred)))
    right.caption(plain(sql.gold_note))
    if not sql.gold.empty:
        right.dataframe(sql.gold, hide_index=True, width="stretch",
                        height=grid_height(len(sql.gold)))
    for finding in sql.findings:
        st.markdown(f"- {plain(finding)}")
    st.caption(COMPARISON_RULE)
    if sql.efficiency:
        st.caption(plain(sql.efficiency))
    if sql.counts and (sql.only_gold is not None or sql.only_pred is not None):
        st.markdown(f"**Execution diff**: {sql.diff_counts}")
        left, right = st.columns(2)
        if sql.only_pred is not None and not sql.only_pred.empty:
            left.markdown("Only in the prediction")
            left.dataframe(sql.only_pred, hide_index=True, width="stretch",
                           height=grid_height(len(sql.only_pred)))
        if sql.only_gold is not None and not sql.only_gold.empty:
            right.markdown("Only in gold")
            right.dataframe(sql.only_gold, hide_index=True, width="stretch",
                            height=grid_height(len(sql.only_gold)))


def judge_launcher(run_id: str) -> None:
    """A job rating every answer of the run with GTR's truthfulness rubric
    (experiments.judge); its ratings show beside the other metrics when it is done."""
    from pages._ui import resources
    from target_core.actions.experiments import judge_run
    from target_core.errors import TargetError

    with st.expander("Rate the run's truthfulness (GTR's rubric: 1 relevant, 0 irrelevant)"):
        spec = st.text_input("Judge", "heuristic", key=f"judge-spec-{run_id}",
                             help="openai[:MODEL], local:smollm2, or heuristic (an offline "
                                  "stand-in with no model: ROUGE-1 recall >= 0.5)")
        if st.button("Launch the judge as a job", key=f"judge-launch-{run_id}"):
            try:
                job = judge_run(run_id, spec, resources.settings())
            except TargetError as exc:
                st.error(plain(str(exc)))
            else:
                st.success(f"Job {job.job_id} launched: {plain(job.label)}. Its progress "
                           "is in the sidebar's job list; its ratings show beside the "
                           "run's metrics when it is done.")
