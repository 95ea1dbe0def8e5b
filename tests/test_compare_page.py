"""The Compare page driven with AppTest (real bm25 / tfidf / no-context runs on the
handmade dataset), the standalone HTML report, the per-query outcomes frame, the
comparison figures, and the Overview's test of every row against the best row."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest

from target_core.analysis.compare import compare_runs, run_names
from target_core.analysis.report import paired_tests_table
from target_core.analysis.significance import (
    outcome_column,
    outcomes_frame,
    significant_vs_best,
)
from target_core.analysis.stats import mcnemar_exact
from target_core.engine.store import QueryResult, RunStore
from target_core.figures.compare import ci_forest, rank_scatter, win_tie_loss_bars
from target_core.figures.report import comparison_report, report_html
from target_core.run_config import RunConfig
from target_core.table_view import TableView

ROOT = Path(__file__).resolve().parent.parent
EVIL = "<script>alert(1)</script>"


# --- hand-built stores ---------------------------------------------------------------------

def _result(qid: str, position: int, ranks: list[int | None]) -> QueryResult:
    """Gold tables at `ranks` (None: never ranked); metrics at k = 10 follow from them."""
    gold = [("db", f"t-{qid}-{i}") for i in range(len(ranks))]
    found = [r for r in ranks if r is not None and r <= 10]
    first = min((r for r in ranks if r is not None), default=None)
    metrics = {"hit@10": float(bool(found)), "recall@10": len(found) / len(ranks),
               "mrr": 1 / first if first is not None and first <= 10 else 0.0}
    return QueryResult(query_id=qid, position=position, ranked=[], gold=gold,
                       gold_ranks=dict(zip(gold, ranks, strict=True)), metrics=metrics,
                       ms=1.0)


def _add_run(store: RunStore, retriever: str, ranks: dict[str, list[int | None]], *,
             dataset: str = "hand", view: TableView | None = None) -> str:
    config = RunConfig(dataset, retriever, view or TableView())
    run, _ = store.start_run(config, dataset_fingerprint="x",
                             task="qa", n_queries=len(ranks), versions={})
    results = [_result(q, i, r) for i, (q, r) in enumerate(ranks.items())]
    store.save_results(run.run_id, results)
    recall = sum(r.metrics["recall@10"] for r in results) / len(results)
    store.finish_run(run.run_id, {"recall@10": recall, "recall_micro@10": recall,
                                  "hit@10": recall})
    return run.run_id


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite")


# --- significance against the best row -----------------------------------------------------

def test_a_clearly_better_run_is_significant_and_an_equal_one_is_not(store) -> None:
    queries = [f"q{i:02d}" for i in range(30)]
    best = _add_run(store, "bm25", {q: [1] for q in queries})
    worse = _add_run(store, "tfidf", {q: [None] if i < 20 else [2]
                                      for i, q in enumerate(queries)})
    same = _add_run(store, "dense:minilm", {q: [3] for q in queries})
    result = significant_vs_best(store, store.list_runs())
    assert set(result) == {best, worse, same}
    assert result[best].is_best and result[best].marker == "best"
    low = result[worse]
    assert (low.best_run_id, low.test, low.n_queries) == (best, "mcnemar", 30)
    assert low.p_value == mcnemar_exact(20, 0) and low.p_holm == 2 * low.p_value
    assert low.significant and low.marker == "≠ best (McNemar)" and low.n_rows == 3
    assert low.p_text == "<0.0001 (<0.0001)"
    tie = result[same]
    assert tie.p_value == 1.0 and not tie.significant
    assert tie.marker == "n.s. (McNemar)" and tie.metric == "recall@10"
    assert tie.p_text == "1 (1)" and result[best].p_text == "–"


def test_a_verdict_does_not_move_with_runs_the_leaderboard_does_not_show(store) -> None:
    """Regression (issue 25): bm25 vs hybrid read "≠ best" after the demo runs, then
    "n.s." once ablation and haystack runs were stored: Holm ran over every stored row.
    The family is now the rows shown, stated in the caption, raw p beside Holm's."""
    from target_core.read_models.overview import leaderboard_view, row_choices, select_runs

    queries = [f"q{i:02d}" for i in range(20)]
    best = _add_run(store, "bm25", {q: [1] for q in queries})
    _add_run(store, "hybrid", {q: [None] if i < 6 else [1] for i, q in enumerate(queries)})
    shown = TableView().label
    p = mcnemar_exact(6, 0)  # 0.031: significant alone, not once tripled by Holm

    def cells(views: list[str] | None) -> tuple[str, str, str | None]:
        runs = select_runs(store.list_runs(), ["hand"], ["qa"], views=views)
        view = leaderboard_view(store, runs)
        row = view.shown.loc[("hybrid", shown)]
        return row[("hand", "R@10 vs best")], row[("hand", "R@10 p (Holm)")], view.family_note

    before = cells([shown])
    assert before == ("≠ best", f"{p:.3g} ({p:.3g}) · McNemar",
                      "Holm over the 2 runs shown on hand")
    header_only = TableView(rows=0)  # an ablation's variants, as good as the best
    for retriever in ("bm25", "tfidf"):
        _add_run(store, retriever, {q: [1] for q in queries}, view=header_only)
    assert row_choices(store.list_runs())[1] == sorted([shown, header_only.label])
    assert cells([shown]) == before  # not shown: not in the family
    # shown, they join the family: the verdict moves, and the caption and raw p say why
    assert cells(None) == ("n.s.", f"{p:.3g} ({3 * p:.3g}) · McNemar",
                           "Holm over the 4 runs shown on hand")
    assert leaderboard_view(store, store.list_runs()).shown.loc[
        ("bm25", shown), ("hand", "R@10 vs best")] == "best"
    assert best in {r.run_id for r in select_runs(store.list_runs(), ["hand"], ["qa"],
                                                  retrievers=["bm25"], views=[shown])}


def test_graded_recall_uses_the_randomization_test(store) -> None:
    queries = [f"q{i}" for i in range(12)]
    best = _add_run(store, "bm25", {q: [1, 2] for q in queries})
    half = _add_run(store, "tfidf", {q: [1, None] for q in queries})
    result = significant_vs_best(store, store.list_runs())
    assert result[half].test == "randomization" and result[half].best_run_id == best
    assert result[half].p_value == 2 / 2**12  # every sign vector enumerated
    assert result[half].p_holm == result[half].p_value  # a family of one


def test_one_run_per_dataset_has_nothing_to_test(store) -> None:
    _add_run(store, "bm25", {"q1": [1]})
    _add_run(store, "bm25", {"q1": [None]}, dataset="other")
    assert significant_vs_best(store, store.list_runs()) == {}


# --- outcomes frame, report, figures -------------------------------------------------------

BASE = {"q1": [1], "q2": [3], EVIL: [None], "q4": [20, 2], "q5": [None]}
OTHER = {"q1": [2], "q2": [None], EVIL: [1], "q4": [4, None], "q5": [None], "q6": [1]}


def test_outcomes_frame_one_row_per_query(store) -> None:
    a, b = _add_run(store, "bm25", BASE), _add_run(store, "tfidf", OTHER)
    frame = outcomes_frame(store, [a, b], 10)
    assert list(frame["query_id"]) == ["q1", "q2", EVIL, "q4", "q5", "q6"]
    assert list(frame.columns) == ["query_id"] + [
        outcome_column(run, f) for run in (a, b)
        for f in ("hit", "rr", "best_gold_rank", "found", "last_gold_rank")]
    row = frame.set_index("query_id")
    assert row.loc["q4", f"{a}:best_gold_rank"] == 2 and row.loc["q4", f"{a}:rr"] == 0.5
    assert pd.isna(row.loc["q5", f"{a}:best_gold_rank"]) and row.loc["q5", f"{a}:hit"] == 0
    assert pd.isna(row.loc["q6", f"{a}:hit"])  # not answered by a: hit is missing too
    # found = every gold table within k: q4 of b has a gold table never ranked
    assert row.loc["q4", f"{b}:hit"] == 1 and row.loc["q4", f"{b}:found"] == 0
    assert pd.isna(row.loc["q4", f"{b}:last_gold_rank"])
    assert row.loc["q1", f"{b}:found"] == 1 and row.loc["q1", f"{b}:last_gold_rank"] == 2
    assert frame.attrs["k"] == 10
    again = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    assert again.shape == frame.shape


def test_outcomes_frame_carries_downstream_metrics(store) -> None:
    run, _ = store.start_run(RunConfig("hand", "bm25"), dataset_fingerprint="x",
                             task="qa", n_queries=1, versions={})
    result = _result("q1", 0, [1])
    result.metrics["sentence_bleu"] = 42.0
    store.save_results(run.run_id, [result])
    frame = outcomes_frame(store, [run.run_id], 10)
    assert frame.loc[0, outcome_column(run.run_id, "sentence_bleu")] == 42.0


class _Checker(HTMLParser):
    """Records the open-tag stack so unbalanced markup fails the test."""

    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data) -> None:
        if self.stack and self.stack[-1] not in ("script", "style"):
            self.text.append(data)


def test_report_is_standalone_escaped_and_well_formed(store) -> None:
    a, b = _add_run(store, "bm25", BASE), _add_run(store, "tfidf", OTHER)
    page = comparison_report(store, [a, b])
    assert page.startswith("<!DOCTYPE html>") and a in page and b in page
    assert EVIL not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r"<script[^>]*\bsrc\s*=", page)  # no CDN, no external script
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert checker.stack == []
    assert all("src" not in attrs for attrs in checker.scripts)
    assert page.count("PlotlyConfig") == 1  # plotly.js inlined exactly once
    text = " ".join(checker.text)
    assert EVIL in text  # shown to the reader as text, not run
    assert "McNemar" in text and "Holm" in text and "generated" in text
    assert '"retriever": "tfidf"' in text  # the run configurations
    assert page.count('class="plotly-graph-div"') == 3


def test_report_of_three_runs_has_holm_and_a_scatter_per_pair(store) -> None:
    ids = [_add_run(store, "bm25", BASE), _add_run(store, "tfidf", OTHER),
           _add_run(store, "no-context", {q: [None] for q in BASE})]
    comparison = compare_runs(store, ids)
    runs = [store.get_run(r) for r in ids]
    page = report_html(comparison, outcomes_frame(store, ids, 10), runs, generated_at=0)
    assert page.count('class="plotly-graph-div"') == 4
    table = paired_tests_table(comparison, run_names(runs))
    assert len(table) == 4 and "–" not in set(table["Holm p"])


def test_figures(store) -> None:
    a, b = _add_run(store, "bm25", BASE), _add_run(store, "tfidf", OTHER)
    comparison = compare_runs(store, [a, b])
    outcomes = outcomes_frame(store, [a, b], comparison.k)
    names = {a: "bm25", b: "tfidf"}
    scatter = rank_scatter(outcomes, a, b, names=names)
    points = [t for t in scatter.data if t.mode == "markers"]
    assert sum(len(t.x) for t in points) == 5  # q6 is not in a: left out
    assert {t.name for t in points} == {"both found", "only bm25", "only tfidf",
                                        "both missed"}
    axis = scatter.layout.xaxis
    assert axis.type == "log" and axis.ticktext[-1] == "not ranked"
    assert axis.tickvals[-1] > 20  # beyond the largest rank
    assert all(EVIL not in str(c) for t in points for c in t.customdata)
    bars = win_tie_loss_bars(comparison, names=names)
    hit = comparison.pairs[0].tests[0]
    assert [bar.x[0] for bar in bars.data] == [hit.wins, hit.ties, hit.losses]
    forest = ci_forest(comparison, names=names)
    assert len(forest.data) == 2 and list(forest.data[0].y) == ["bm25", "tfidf"]


def test_run_names_tell_runs_apart(store) -> None:
    a, b = _add_run(store, "bm25", BASE), _add_run(store, "bm25", OTHER, dataset="hand")
    names = run_names([store.get_run(a), store.get_run(b)])
    assert names == {a: f"bm25 ({a})", b: f"bm25 ({b})"}


# --- kept while the runs are unchanged (analysis.memo) -----------------------------------

def test_a_comparison_is_kept_until_a_run_changes(store) -> None:
    from target_core.analysis import memo
    from target_core.analysis.compare import _PAIRS
    from target_core.read_models.compare import compare_figures, compare_view

    queries = [f"q{i:02d}" for i in range(30)]
    ranks = {q: [1] if i % 3 else [None] for i, q in enumerate(queries)}
    base = _add_run(store, "bm25", {q: [1] if i % 2 else [4] for i, q in enumerate(queries)})
    other = _add_run(store, "tfidf", {q: ranks[q] for q in queries[:20]})
    first = compare_view(store, [base, other])
    misses = _PAIRS.misses
    again = compare_view(store, [base, other])
    assert again is first and compare_figures(again) is compare_figures(first)
    assert compare_runs(store, [base, other]) == first.comparison and _PAIRS.misses == misses
    assert first.comparison.n_queries == 20

    # resumed: the other run stores its last ten queries and finishes again
    store.save_results(other, [_result(q, i, ranks[q]) for i, q in enumerate(queries)
                               if i >= 20])
    store.finish_run(other, {"recall@10": 0.6})
    grown = compare_view(store, [base, other])
    assert grown.comparison.n_queries == 30 and len(grown.outcomes) == 30
    # judged afterwards: new per-query metrics and the run's own
    store.merge_query_metrics(other, {q: {"truthfulness": float(i % 2)}
                                      for i, q in enumerate(queries)})
    store.merge_run_metrics(other, {"truthfulness": 0.5})
    store.merge_query_metrics(base, {q: {"truthfulness": 1.0} for q in queries})
    store.merge_run_metrics(base, {"truthfulness": 1.0})
    judged = compare_view(store, [base, other]).comparison
    assert "truthfulness" in {t.metric for t in judged.pairs[0].tests}
    memo.clear_all()  # every number as computed afresh
    assert judged == compare_runs(store, [base, other])
    assert grown.comparison != judged


# --- the pages -----------------------------------------------------------------------------

@pytest.fixture
def app(app):
    """The shared AppTest starter, opening the Compare page unless told otherwise."""
    return lambda page="pages/compare.py", **params: app(page, **params)


@pytest.fixture
def runs(app, tmp_path: Path) -> list[str]:
    """bm25, tfidf and no-context on handmade-qa (3 queries): the first two find every
    gold table at rank 1, no-context none."""
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval

    settings = load_settings(tmp_path / "ws")
    return [run_retrieval(RunConfig("handmade-qa", spec), settings=settings).run.run_id
            for spec in ("bm25", "tfidf", "no-context")]


def test_compare_without_runs_says_what_to_do(app) -> None:
    at = app()
    assert at.title[0].value == "Compare"
    assert "at least two complete runs" in at.info[0].value


def test_compare_two_runs(app, runs) -> None:
    bm25, tfidf, _ = runs
    at = app(runs=f"{bm25},{tfidf}")
    assert not at.error
    assert at.multiselect[0].value == [bm25, tfidf]
    headline = at.dataframe[0].value
    assert list(headline["run_id"]) == [bm25, tfidf]
    assert list(headline["role"]) == ["baseline", "compared"]
    assert headline.loc[0, "hit@10"] == "1.000 [1.000, 1.000]"
    tests = at.dataframe[1].value
    assert list(tests["metric"]) == ["hit@10", "mrr"]
    assert list(tests["W/T/L"]) == ["0/3/0", "0/3/0"] and set(tests["Holm p"]) == {"–"}
    assert "only 3 queries" in at.warning[0].value
    assert len(at.get("plotly_chart")) == 4  # forest, bars, scatter, metadata slices
    assert at.query_params["runs"] == f"{bm25},{tfidf}"
    assert at.query_params["k"] == "10" and at.query_params["dataset"] == "handmade-qa"


def test_a_dataset_is_found_by_every_name_of_its_content(app, runs, tmp_path: Path,
                                                         handmade_dir: Path) -> None:
    """Regression (issue 25, item 7): with handmade-qa's content registered a second
    time as hand-copy and run there last, ?dataset=handmade-qa was refused (the group
    took the newest run's name). Either name opens the group, shown under that name."""
    import json
    import shutil

    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval

    copy = shutil.copytree(handmade_dir, tmp_path / "ws" / "datasets" / "hand-copy")
    meta = json.loads((copy / "dataset.json").read_text()) | {"name": "hand-copy"}
    (copy / "dataset.json").write_text(json.dumps(meta))
    newest = run_retrieval(RunConfig("hand-copy", "bm25"),
                           settings=load_settings(tmp_path / "ws")).run.run_id
    for name in ("handmade-qa", "hand-copy"):
        at = app(dataset=name)
        assert not at.error, at.error[0].value
        assert at.sidebar.selectbox[0].value == name
        assert at.sidebar.selectbox[0].options == [name]  # one group, not two
        assert len(at.multiselect[0].options) == 4  # the three runs and the copy's
        assert at.caption[0].value.replace("\\", "").startswith(f"{name} · 3 queries")
        assert at.query_params["dataset"] == name
    at = app(dataset="handmade-qa", runs=f"{runs[0]},{newest}")
    assert not at.error and at.multiselect[0].value == [runs[0], newest]


def test_deep_link_reopens_three_runs_with_links_to_the_query_page(app, runs) -> None:
    bm25, tfidf, none = runs
    at = app(runs=f"{none},{bm25},{tfidf}", k="3")
    assert not at.error
    assert at.multiselect[0].value == [none, bm25, tfidf]
    assert at.sidebar.selectbox[1].value == 3
    tests = at.dataframe[1].value
    assert list(tests["metric"]) == ["hit@3", "mrr"] * 2
    assert list(tests["sig."]) == [""] * 4  # 3 flips cannot reach p < 0.05
    assert len(at.get("plotly_chart")) == 5  # forest, bars, slices, a scatter per pair
    flipped = next(d.value for d in at.dataframe if "open compared" in d.value.columns)
    assert list(flipped["query_id"]) == ["q1", "q2", "q3"]
    link = flipped.loc[0, "open compared"]
    assert link == f"query?run={bm25}&query=q1"
    assert flipped.loc[0, "open baseline"] == f"query?run={none}&query=q1"
    params = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    query_page = app(page="pages/query.py", **params)
    assert query_page.sidebar.selectbox[0].value == bm25
    assert query_page.title[0].value == "Query q1"


def test_picking_runs_updates_the_url(app, runs) -> None:
    bm25, tfidf, _ = runs
    at = app(runs=f"{bm25},{tfidf}")
    at.multiselect[0].set_value([tfidf, bm25]).run()
    assert not at.exception and not at.error
    assert at.query_params["runs"] == f"{tfidf},{bm25}"
    assert list(at.dataframe[0].value["run_id"]) == [tfidf, bm25]
    at.multiselect[0].set_value([bm25, tfidf]).run()  # a second change is not lost
    assert at.query_params["runs"] == f"{bm25},{tfidf}"
    at.sidebar.selectbox[1].set_value(1).run()
    assert at.query_params["k"] == "1" and at.dataframe[1].value["metric"][0] == "hit@1"
    at.multiselect[0].set_value([tfidf]).run()
    assert "at least two runs" in at.info[0].value


def test_overview_marks_rows_against_the_best(app, runs) -> None:
    at = app(page="pages/overview.py")
    board = at.dataframe[0].value  # one dataset's columns, by metric name
    assert at.selectbox(key="overview-dataset").value == "handmade-qa"
    assert "R@10 vs best" in board.columns
    # bm25 and tfidf both find everything: one is the best, the other is not different;
    # no-context has no recall. The verdict is short; the p-values and test beside it
    assert sorted(board["R@10 vs best"]) == ["best", "n.s.", "–"]
    assert sorted(board["R@10 p (Holm)"]) == ["1 (1) · McNemar", "–", "–"]
    assert any("Holm over the 2 runs shown on handmade-qa" in c.value for c in at.caption)


def test_overview_shows_a_run_made_by_path_under_its_datasets_name(
        app, runs, tmp_path: Path, handmade_dir: Path) -> None:
    """Regression (issue 25, item 7): a run made with the dataset's folder path had a
    column group of its own on the Overview, named by the path."""
    import shutil

    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval

    folder = shutil.copytree(handmade_dir, tmp_path / "elsewhere" / "copy")  # not listed
    by_path = run_retrieval(RunConfig(str(folder), "bm25", top_k=5),
                            settings=load_settings(tmp_path / "ws")).run
    assert by_path.config.dataset == str(folder)
    at = app(page="pages/overview.py")
    assert at.selectbox(key="overview-dataset").options == ["handmade-qa"]
    board = at.dataframe[0].value
    rows = set(zip(board["retriever"], board["view"], strict=True))
    assert ("bm25", "default · k=5") in rows  # the path's run, in that column
