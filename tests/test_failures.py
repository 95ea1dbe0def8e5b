"""Failure taxonomy: one hand-built case per category, the title pair, bad input, and the
demo datasets' built-in failure modes landing in the categories they were built for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from target_core.analysis.failures import (
    CATEGORIES,
    FailureAnalysisError,
    analyse_failures,
    title_stem,
)
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import QueryResult, RunStore
from target_core.run_config import RunConfig
from target_core.table_view import TableView
from target_core.types import Dataset, Query, Table

ROOT = Path(__file__).resolve().parent.parent

MEDALS = ("Nation", "Gold", "Silver")
T1 = Table("db1", "2001_Games_medal_table_1", MEDALS, (("Avia", 3, 1), ("Brel", 2, 2)),
           {"title": "2001 Games medal table"})
T2 = Table("db1", "2005_Games_medal_table_1", MEDALS, (("Cosa", 4, 0),),
           {"title": "2005 Games medal table"})
T3 = Table("db2", "Rivers_of_Norland", ("River", "Length"),
           (("Arn", 10), ("Bel", 20), ("Cor", 30), ("Kelda", 40)),
           {"title": "Rivers of Norland"})
T4 = Table("db2", "Lakes", ("Lake", "Area"), (("Mora", 5),), {"title": "Lakes"})
T5 = Table("db3", "Films", ("Film", "Year"), (("Dawn", 1999),), {"title": "Film awards"})
T6 = Table("db3", "Songs", ("Song", "Band"), (("Echo", "Vale"),), {"title": "Hit songs"})


def _query(qid: str, text: str, *gold: Table, **meta: object) -> Query:
    return Query(qid, text, "answer", tuple(t.key for t in gold), gold[0].database_id,
                 meta=meta)


QUERIES = (
    _query("near", "Which nation won most gold at the 2001 Games medal", T1,
           failure_mode="sibling"),
    _query("deep", "When was cinema invented", T3, failure_mode="paraphrase"),
    _query("unranked", "Which lake covers the biggest surface", T4),
    _query("partial", "Compare 2001 Games medal and Norland rivers", T1, T3),
    _query("hit", "Film awards of 1999", T5),
    _query("trunc", "How long is the Kelda river in Norland", T3,
           evidence=[{"row": 3, "column": "Length"}], failure_mode="deep-row"),
)
DATASET = Dataset("hand", "qa", (T1, T2, T3, T4, T5, T6), QUERIES)


def _result(query: Query, position: int, ranked: list[Table],
            ranks: dict[tuple[str, str], int | None], k: int = 2) -> QueryResult:
    gold_ranks = {g: ranks.get(g) for g in query.gold}
    hit = any(r is not None and r <= k for r in gold_ranks.values())
    return QueryResult(query_id=query.query_id, position=position,
                       ranked=[(t.key, 1.0 / (i + 1)) for i, t in enumerate(ranked)],
                       gold=list(query.gold), gold_ranks=gold_ranks,
                       metrics={f"hit@{k}": float(hit)}, ms=1.0)


DEFAULT_VIEW = TableView()
RESULTS = {  # top-2 lists and gold ranks, k = 2
    "near": ([T2, T5], {T1.key: 3}),
    "deep": ([T5, T6], {T3.key: 7}),
    "unranked": ([T5, T6], {}),
    "partial": ([T1, T6], {T1.key: 1}),
    "hit": ([T5, T1], {T5.key: 1}),
    "trunc": ([T4, T6], {T3.key: 5}),
}


def _add(store: RunStore, dataset: Dataset, view: TableView = DEFAULT_VIEW,
         results: dict[str, tuple[list[Table], dict]] = RESULTS,
         retriever: str = "bm25") -> str:
    run, _ = store.start_run(RunConfig(dataset.name, retriever, view=view, top_k=2),
                             dataset_fingerprint=dataset.fingerprint, task=dataset.task,
                             n_queries=len(results), versions={})
    store.save_results(run.run_id, [_result(dataset.query(q), i, *v)
                                    for i, (q, v) in enumerate(results.items())])
    store.finish_run(run.run_id, {})
    return run.run_id


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite")


def _cases(store: RunStore, run_id: str, dataset: Dataset = DATASET, **kw):
    report = analyse_failures(store, dataset, run_id, **kw)
    return report, {c.query_id: c for c in report.cases}


def test_each_hand_built_case_gets_its_categories(store: RunStore) -> None:
    report, cases = _cases(store, _add(store, DATASET))
    assert report.k == 2 and report.n_queries == 6 and report.n_failed == 5
    assert "hit" not in cases
    assert cases["near"].categories == ("near-miss", "sibling-confusion")
    assert "same database" in cases["near"].evidence["sibling-confusion"]
    assert "near-identical header" in cases["near"].evidence["sibling-confusion"]
    assert "same title stem" in cases["near"].evidence["sibling-confusion"]
    assert cases["deep"].categories == ("deep-miss", "no-lexical-overlap")
    assert cases["deep"].best_rank == 7
    assert cases["unranked"].categories == ("deep-miss", "weak-lexical-overlap")
    assert cases["unranked"].best_rank is None
    assert set(cases["partial"].categories) >= {"deep-miss", "partial-multi-table"}
    # the all-rows view serialized the evidence row: not truncated
    assert "truncated-evidence" not in cases["trunc"].categories
    assert cases["trunc"].categories[0] == "near-miss"  # rank 5 is within 3k = 6
    # the run has the title: title-dependent cannot apply, and no note asks for a pair
    assert report.counts["title-dependent"] == 0 and report.notes == []


def test_every_failure_is_exactly_one_of_near_or_deep_miss(store: RunStore) -> None:
    report, _ = _cases(store, _add(store, DATASET))
    for case in report.cases:
        assert ("near-miss" in case.categories) != ("deep-miss" in case.categories)
    assert sum(report.counts[c] for c in ("near-miss", "deep-miss")) == report.n_failed


def test_truncated_evidence_when_the_view_cuts_the_row(store: RunStore) -> None:
    _, cases = _cases(store, _add(store, DATASET, view=TableView(rows=2)))
    assert "truncated-evidence" in cases["trunc"].categories
    assert "data row 4" in cases["trunc"].evidence["truncated-evidence"]
    _, cases = _cases(store, _add(store, DATASET, view=TableView(rows=4)))
    assert "truncated-evidence" not in cases["trunc"].categories  # rows 0-3 serialized


def test_title_dependent_needs_the_pair_run(store: RunStore) -> None:
    untitled = TableView(title=False, section_title=False)
    alone = _add(store, DATASET, view=untitled)
    report, _ = _cases(store, alone)
    assert report.title_pair is None and report.counts["title-dependent"] == 0
    assert "ablate" in report.notes[0]
    # with the title, "near" and "deep" are found; another retriever's run does not count
    found = RESULTS | {"near": ([T1, T2], {T1.key: 1}), "deep": ([T3, T5], {T3.key: 1})}
    _add(store, DATASET, results=found, retriever="tfidf")
    assert _cases(store, alone)[0].title_pair is None
    pair = _add(store, DATASET, results=found)
    report, cases = _cases(store, alone)
    assert report.title_pair == pair
    assert [c.query_id for c in report.in_category("title-dependent")] == ["near", "deep"]


def test_wrong_database_for_text_to_sql_only(store: RunStore) -> None:
    sql = replace(DATASET, task="sql")
    _, cases = _cases(store, _add(store, sql), dataset=sql)
    assert "wrong-database" in cases["deep"].categories  # top table from db3, gold db2
    assert "wrong-database" not in cases["near"].categories  # top table T2 is in db1
    _, cases = _cases(store, _add(store, DATASET))
    assert not any("wrong-database" in c.categories for c in cases.values())


def test_database_counts_for_siblings_only_when_databases_group_tables(store: RunStore
                                                                         ) -> None:
    one_db = Dataset("flat", "qa", tuple(replace(t, database_id="wiki") for t in
                                         (T1, T2, T3, T4, T5, T6)),
                     tuple(replace(q, gold=tuple(("wiki", g[1]) for g in q.gold),
                                   database_id="wiki") for q in QUERIES))
    flat = {q: ([replace(t, database_id="wiki") for t in ranked],
                {("wiki", key[1]): r for key, r in ranks.items()})
            for q, (ranked, ranks) in RESULTS.items()}
    store_run = _add(store, one_db, results=flat)
    _, cases = _cases(store, store_run, dataset=one_db)
    assert "same database" not in cases["near"].evidence["sibling-confusion"]
    # "trunc": Lakes ranked above Rivers of Norland: nothing alike but the (one) database
    assert "sibling-confusion" not in cases["trunc"].categories


def test_by_tag_and_json(store: RunStore) -> None:
    report, _ = _cases(store, _add(store, DATASET, view=TableView(rows=2)))
    tags = report.by_tag()
    assert tags["sibling"]["sibling-confusion"] == 1
    assert tags["paraphrase"]["no-lexical-overlap"] == 1
    assert tags["deep-row"]["truncated-evidence"] == 1
    data = json.loads(json.dumps(report.to_dict()))
    assert data["definitions"] == CATEGORIES and data["n_failed"] == 5
    assert data["counts"]["near-miss"] + data["counts"]["deep-miss"] == 5


def test_title_stem_drops_years_and_indices() -> None:
    assert title_stem(T1) == title_stem(T2) == ("games", "medal", "table")
    assert title_stem(Table("d", "orders_2", ("a",), ())) == ("orders",)


def test_bad_input_is_a_clear_error(store: RunStore) -> None:
    run_id = _add(store, DATASET)
    with pytest.raises(FailureAnalysisError, match="between 1 and"):
        analyse_failures(store, DATASET, run_id, k=3)
    other = replace(DATASET, queries=QUERIES[:2])
    with pytest.raises(FailureAnalysisError, match="another version"):
        analyse_failures(store, other, run_id)
    empty, _ = store.start_run(RunConfig("hand", "tfidf", top_k=2),
                               dataset_fingerprint=DATASET.fingerprint, task="qa",
                               n_queries=0, versions={})
    with pytest.raises(FailureAnalysisError, match="no stored queries"):
        analyse_failures(store, DATASET, empty.run_id)


def test_the_pages_report_is_kept_until_its_run_or_title_pair_changes(store: RunStore
                                                                       ) -> None:
    from target_core.read_models.failures import aggregates_view, failures_report

    alone = _add(store, DATASET, view=TableView(title=False, section_title=False))
    first = failures_report(store, DATASET, alone, 2)
    assert failures_report(store, DATASET, alone, 2) is first  # a rerun: remembered
    assert failures_report(store, DATASET, alone, 1).k == 1  # another k: its own report
    recurring = aggregates_view(store, DATASET, first)
    assert aggregates_view(store, DATASET, first) is recurring
    found = RESULTS | {"near": ([T1, T2], {T1.key: 1}), "deep": ([T3, T5], {T3.key: 1})}
    pair = _add(store, DATASET, results=found)  # a title pair arrives: title-dependent
    paired = failures_report(store, DATASET, alone, 2)
    assert first.title_pair is None and paired.title_pair == pair
    assert paired.counts["title-dependent"] == 2
    assert aggregates_view(store, DATASET, paired) is not recurring  # other categories
    store.merge_run_metrics(alone, {"judged": 1.0})  # the run itself changed
    again = failures_report(store, DATASET, alone, 2)
    assert again is not paired and again.to_dict() == paired.to_dict()


# --- the demo datasets' built-in failure modes -------------------------------------------

@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory):
    workspace = tmp_path_factory.mktemp("failures-demo")
    settings = load_settings(environ={"TARGET_WORKSPACE": str(workspace)})
    store = RunStore.in_workspace(settings.workspace)
    runs = {}
    for name in ("demo-qa", "demo-sql"):
        for view in ("default", "no-title", "header-only"):
            config = RunConfig(name, "bm25", view=TableView.preset(view))
            runs[name, view] = run_retrieval(config, settings=settings, store=store).run.run_id
    return settings, store, runs


def _demo_report(demo_runs, name: str, view: str):
    settings, store, runs = demo_runs
    return analyse_failures(store, load_dataset(name, settings), runs[name, view])


@pytest.mark.parametrize("name", ["demo-qa", "demo-sql"])
@pytest.mark.parametrize("view", ["default", "no-title", "header-only"])
def test_demo_every_failure_has_a_category(demo_runs, name: str, view: str) -> None:
    report = _demo_report(demo_runs, name, view)
    assert report.n_failed > 0
    assert all(case.categories for case in report.cases)


@pytest.mark.parametrize("name", ["demo-qa", "demo-sql"])
def test_demo_paraphrase_failures_have_little_lexical_overlap(demo_runs, name: str) -> None:
    for view in ("default", "header-only"):
        failed = [c for c in _demo_report(demo_runs, name, view).cases
                  if c.tag == "paraphrase"]
        assert failed
        assert all({"no-lexical-overlap", "weak-lexical-overlap"} & set(c.categories)
                   for c in failed)


def test_demo_sibling_failures_are_sibling_confusions(demo_runs) -> None:
    """Sibling queries that failed on the sibling itself (not on a join table missed
    while the family's table was found) are sibling confusions."""
    for name in ("demo-qa", "demo-sql"):
        failed = [c for c in _demo_report(demo_runs, name, "default").cases
                  if c.tag == "sibling" and "partial-multi-table" not in c.categories]
        assert all("sibling-confusion" in c.categories for c in failed), failed
    assert failed  # demo-sql has some


@pytest.mark.parametrize("name", ["demo-qa", "demo-sql"])
def test_demo_title_only_failures_without_the_title_are_title_dependent(demo_runs,
                                                                        name: str) -> None:
    report = _demo_report(demo_runs, name, "no-title")
    assert report.title_pair == demo_runs[2][name, "default"]
    failed = [c for c in report.cases if c.tag == "title-only"]
    dependent = [c for c in failed if "title-dependent" in c.categories]
    assert len(failed) >= 4 and len(dependent) >= 0.5 * len(failed)


def test_demo_deep_row_failures_header_only_are_truncated_evidence(demo_runs) -> None:
    report = _demo_report(demo_runs, "demo-sql", "header-only")
    settings = demo_runs[0]
    dataset = load_dataset("demo-sql", settings)
    failed = [c for c in report.cases if c.tag == "deep-row"]
    assert failed
    for case in failed:
        evidence_tables = {e["table_id"] for e in dataset.query(case.query_id).meta["evidence"]}
        result = demo_runs[1].get_result(report.run_id, case.query_id)
        missing = {g[1] for g in result.gold
                   if result.gold_ranks[g] is None or result.gold_ranks[g] > report.k}
        assert ("truncated-evidence" in case.categories) == bool(evidence_tables & missing)
    assert sum("truncated-evidence" in c.categories for c in failed) >= len(failed) / 2


def test_failures_cli_json(demo_runs) -> None:
    settings, _, runs = demo_runs
    env = {**os.environ, "TARGET_WORKSPACE": str(settings.workspace)}
    done = subprocess.run([sys.executable, "-m", "target_core", "failures",
                           runs["demo-qa", "no-title"], "--json"], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=True)
    data = json.loads(done.stdout)
    assert data["n_failed"] == len(data["cases"]) > 0
    assert data["counts"]["title-dependent"] > 0
    text = subprocess.run([sys.executable, "-m", "target_core", "failures",
                           runs["demo-qa", "no-title"], "--definitions"], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=True).stdout
    assert "title-dependent" in text and "by the queries' failure_mode tag" in text
    bad = subprocess.run([sys.executable, "-m", "target_core", "failures", "nope"],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert bad.returncode == 2 and "nope" in bad.stderr and not bad.stdout
