"""TREC run files import as runs (engine/import_trec.py): recall@10, MRR and nDCG@10 equal
pytrec_eval's on the same run and qrels (tests/fixtures/trec, made once), export -> import
gives the run back, and bad files or ids are refused or counted, naming file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES
from target_core.cli import main
from target_core.engine.export import export_run
from target_core.engine.import_trec import import_trec, read_trec_run, trec_order
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import DatasetError
from target_core.run_config import RunConfig

TREC = FIXTURES / "trec"
TINY = str(FIXTURES / "beir-tiny")
ORACLE = json.loads((TREC / "pytrec_eval.json").read_text())
OURS = {"recall_10": "recall@10", "recip_rank": "mrr", "ndcg_cut_10": "ndcg@10"}


@pytest.mark.parametrize(("name", "top_k"), [("bm25", 10), ("handmade", None)])
def test_metrics_equal_pytrec_eval_per_query_and_mean(settings, name: str,
                                                      top_k: int | None) -> None:
    oracle = ORACLE["runs"][name]
    imported = import_trec(TREC / f"{name}.run", settings=settings, dataset=TINY,
                           qrels=TREC / f"{name}.qrels", top_k=top_k)
    store = RunStore.in_workspace(settings.workspace)
    per_query = {r.query_id: r.metrics for r in store.iter_results(imported.run.run_id)}
    assert sorted(per_query) == sorted(oracle["per_query"])  # run ∩ qrels, no -c
    for query_id, values in oracle["per_query"].items():
        for theirs, ours in OURS.items():
            assert per_query[query_id][ours] == pytest.approx(values[theirs], abs=1e-12), \
                (query_id, ours)
    for theirs, ours in OURS.items():
        assert imported.run.metrics[ours] == pytest.approx(oracle["mean"][theirs], abs=1e-12)


def test_handmade_run_is_labelled_by_its_tag_and_warns_of_what_it_skipped(settings) -> None:
    imported = import_trec(TREC / "handmade.run", settings=settings, dataset=TINY)
    assert imported.run.config.retriever == "imported:handmade"
    assert imported.run.config.top_k == 12  # the longest list
    text = " ".join(imported.warnings)
    assert "2 queries are not in beir-tiny and were skipped, e.g. q9, q42" in text
    assert "2 docids in 2 queries are not in beir-tiny's corpus, e.g. d99, d98" in text
    assert "holds 6 of the 8 queries" in text
    store = RunStore.in_workspace(settings.workspace)
    q1 = next(r for r in store.iter_results(imported.run.run_id) if r.query_id == "q1")
    # score ties ordered by docid descending, as trec_eval; the rank column is ignored
    assert [k[1] for k, _ in q1.ranked] == ["d02", "d19", "d03", "d01", "d99"]
    assert q1.gold_ranks == {("documents", "d01"): 4, ("documents", "d19"): 2}
    again = import_trec(TREC / "handmade.run", settings=settings, dataset=TINY)
    assert again.existing and again.run.run_id == imported.run.run_id


def test_trec_order_breaks_ties_by_docid_descending() -> None:
    entries = [("a", 1.0), ("ab", 1.0), ("b", 0.5), ("B", 1.0), ("c", 2.0)]
    assert [d for d, _ in trec_order(entries)] == ["c", "ab", "a", "B", "b"]


def test_export_then_import_gives_the_run_back(settings, tmp_path: Path) -> None:
    store = RunStore.in_workspace(settings.workspace)
    native = run_retrieval(RunConfig("demo-qa", "bm25", limit=40), settings=settings,
                           store=store).run
    run_file, qrels = export_run(store, native.run_id, "trec", tmp_path / "bm25.trec")
    imported = import_trec(run_file, settings=settings, dataset="demo-qa", qrels=qrels,
                           top_k=10)
    assert imported.run.config.retriever == f"imported:bm25-{native.run_id}"
    assert imported.run.n_queries == 40 and imported.run.config.dataset == "demo-qa"
    for name in ("recall@1", "recall@10", "recall_micro@10", "hit@5", "mrr", "ndcg@10"):
        assert imported.run.metrics[name] == pytest.approx(native.metrics[name], abs=1e-12)
    before = {r.query_id: r for r in store.iter_results(native.run_id)}
    after = {r.query_id: r for r in store.iter_results(imported.run.run_id)}
    assert after.keys() == before.keys()
    untied = 0
    for query_id, result in before.items():
        scores = [round(s, 6) for _, s in result.ranked]
        got = after[query_id].ranked
        assert [s for _, s in got] == pytest.approx(sorted(scores, reverse=True), abs=1e-9)
        assert {k for k, _ in got} == {k for k, _ in result.ranked}
        if len(set(scores)) == len(scores):  # no tie: the very order comes back
            untied += 1
            assert [k for k, _ in got] == [k for k, _ in result.ranked]
    assert untied >= 10


def test_docids_resolve_by_export_name_table_id_or_quoted(settings, tmp_path: Path) -> None:
    from target_core.datasets import load_dataset

    dataset = load_dataset("demo-qa", settings)
    query, other = dataset.queries[0], dataset.queries[1]
    gold = query.gold[0]
    path = tmp_path / "r.trec"
    path.write_text(f"{query.query_id} Q0 {gold[1]} 1 3 t\n"  # a table_id alone
                    f"{query.query_id} Q0 {other.gold[0][0]}/{other.gold[0][1]} 2 2 t\n"
                    f"{query.query_id} Q0 nowhere/x 3 1 t\n")
    read = read_trec_run(path, dataset)
    assert [k for k, _ in read.lists[query.query_id]] == [gold, other.gold[0],
                                                          ("nowhere", "x")]
    assert read.unknown_docs == 1


@pytest.mark.parametrize(("content", "message"), [
    ("q1 Q0 d01 1 1.0\n", "line 1: expected 6 white-space separated columns"),
    ("q1 Q0 d01 1 high t\n", "line 1, field 'score': must be a number"),
    ("q1 Q0 d01 1 nan t\n", "line 1, field 'score': must be a finite number"),
    ("q1 Q0 d01 1 2 a\nq1 Q0 d02 2 1 b\n", "line 2, field 'tag': a second run tag 'b'"),
    ("q1 Q0 d01 1 2 a\nq1 Q0 d01 2 1 a\n", "line 2, field 'docid': docid 'd01' is listed "
                                           "twice for query 'q1' (first at line 1)"),
    ("q77 Q0 d01 1 2 a\n", "none of its 1 queries is in dataset 'beir-tiny'"),
    ("\n", "holds no run lines"),
])
def test_bad_run_files_are_refused_naming_file_and_line(settings, tmp_path: Path,
                                                        content: str, message: str) -> None:
    path = tmp_path / "bad.trec"
    path.write_text(content)
    with pytest.raises(DatasetError, match="bad.trec") as caught:
        import_trec(path, settings=settings, dataset=TINY)
    assert message in str(caught.value)


@pytest.mark.parametrize(("qrels", "message"), [
    ("q1 0 d01 1\nq1 0 d03 1\n", "query 'q1': the qrels' relevant documents differ"),
    ("q1 0 d77 1\n", "line 1, field 'docid': relevant docid 'd77' is not in"),
    ("q1 0 d01 yes\n", "line 1, field 'rel': must be an integer"),
    ("q77 0 d01 1\n", "judges none of the queries"),
])
def test_qrels_that_disagree_with_the_gold_are_refused(settings, tmp_path: Path,
                                                       qrels: str, message: str) -> None:
    path = tmp_path / "bad.qrels"
    path.write_text(qrels)
    with pytest.raises(DatasetError) as caught:
        import_trec(TREC / "handmade.run", settings=settings, dataset=TINY, qrels=path)
    assert message in str(caught.value) and "bad.qrels" in str(caught.value)
    assert RunStore.in_workspace(settings.workspace).list_runs() == []


def test_qrels_keep_only_the_queries_they_judge(settings, tmp_path: Path) -> None:
    path = tmp_path / "part.qrels"
    path.write_text("q1 0 d01 2\nq1 0 d19 1\nq2 0 d04 1\nq2 0 d05 1\nq2 0 d06 0\n")
    imported = import_trec(TREC / "handmade.run", settings=settings, dataset=TINY,
                           qrels=path)
    assert imported.run.n_queries == 2
    assert any("relevance is graded" in w for w in imported.warnings)


def test_cli_imports_a_trec_run_and_refuses_missing_flags(settings, capsys) -> None:
    workspace = str(settings.workspace)
    assert main(["import", str(TREC / "handmade.run"), "--format", "trec", "--dataset",
                 TINY, "--qrels", str(TREC / "handmade.qrels"), "--workspace", workspace,
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["retriever"] == "imported:handmade"
    assert out["metrics"]["mrr"] == pytest.approx(
        ORACLE["runs"]["handmade"]["mean"]["recip_rank"])
    assert main(["import", str(TREC / "handmade.run"), "--format", "trec",
                 "--workspace", workspace]) != 0
    assert "--format trec needs --dataset" in capsys.readouterr().err
    assert main(["import", str(TREC / "handmade.run"), "--qrels", "x",
                 "--workspace", workspace]) != 0
    assert "--qrels is for --format trec" in capsys.readouterr().err
