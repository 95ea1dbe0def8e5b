"""Why the winner beat the gold (analysis/explain.py, explain_lexical.py): each query
term's share of a lexical score sums to the score the retriever computed, bm25's
against rank-bm25 itself; hybrid's parts recombine to its fused score; the CLI's
--json is explain()'s output; the Query page draws the section for a failed query."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from target_core.analysis.explain import explain
from target_core.analysis.explain_lexical import nearest_words
from target_core.config import Settings, load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.read_models.query import failed_query_ids
from target_core.retrievers.base import LexicalScoring, rank_in
from target_core.retrievers.bm25 import BM25Retriever
from target_core.retrievers.drqa import DrQARetriever
from target_core.retrievers.fusion import METHODS, Fusion, fused_scores, fusion_parts
from target_core.retrievers.tfidf import TfidfRetriever
from target_core.run_config import RunConfig
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.textproc import tokenize
from target_core.types import parse_table_ref
from tests.test_cli import run_cli

LEXICAL = {"bm25": BM25Retriever, "tfidf": TfidfRetriever,
           "ottqa:bm25": lambda: DrQARetriever("bm25"),
           "ottqa:tfidf": lambda: DrQARetriever("tfidf"),
           "ottqa:bm25-own-length": lambda: DrQARetriever("bm25-own-length")}


@pytest.fixture(scope="module")
def demo() -> tuple[list[str], list[str]]:
    dataset = load_dataset("demo-qa", load_settings(environ={}))
    return ([table_text(t, TableView()) for t in dataset.tables],
            [q.query for q in dataset.queries[:25]])


@pytest.mark.parametrize("spec", list(LEXICAL))
def test_term_shares_sum_to_every_tables_score(spec: str, demo) -> None:
    texts, queries = demo
    retriever: LexicalScoring = LEXICAL[spec]()
    retriever.index(texts, corpus_key="test")
    for query in queries:
        scores = retriever.scores(query)
        best = np.argsort(-scores)[:3].tolist()
        for index in best + [int(np.argmin(scores)), len(texts) - 1]:
            shares = retriever.term_contributions(query, index, texts[index])
            assert sum(t.contribution for t in shares) == pytest.approx(
                scores[index], abs=1e-9), (query, index)
        assert any(t.contribution > 0 for t in
                   retriever.term_contributions(query, best[0], texts[best[0]]))


def test_bm25_shares_equal_rank_bm25_term_by_term(demo) -> None:
    """Each token's share is rank-bm25's score for that token alone (repeats as in the
    query); their sum is rank-bm25's get_scores for the whole query."""
    texts, queries = demo
    reference = BM25Okapi([tokenize(t) for t in texts])
    retriever = BM25Retriever()
    retriever.index(texts, corpus_key="test")
    query = queries[0] + " " + tokenize(queries[0])[0]  # a repeated token
    expected = reference.get_scores(tokenize(query))
    for index in np.argsort(-expected)[:5].tolist():
        shares = retriever.term_contributions(query, index)
        assert sum(t.contribution for t in shares) == pytest.approx(expected[index], abs=1e-9)
        for share in shares:
            alone = reference.get_scores([share.term] * share.parts["query_count"])[index]
            assert share.contribution == pytest.approx(alone, abs=1e-9), share.term
    assert any(t.parts["query_count"] == 2 for t in retriever.term_contributions(query, 0))


def test_bm25_names_the_floored_idf() -> None:
    texts = ["river lake", "river lake", "river", "lake delta"]
    retriever = BM25Retriever()
    retriever.index(texts, corpus_key="test")
    reference = BM25Okapi([tokenize(t) for t in texts])
    river = retriever.term_contributions("river", 0)[0]
    assert river.parts["idf_floored"] and river.parts["tf"] == 1
    assert river.parts["idf"] == pytest.approx(reference.idf["river"], abs=1e-12)
    assert river.contribution == pytest.approx(reference.get_scores(["river"])[0], abs=1e-12)
    assert retriever.term_contributions("delta", 3)[0].parts["idf_floored"] is False


def test_ottqa_names_a_hash_collision() -> None:
    """wanpb and wanrj share murmurhash bucket 4701100 of 2**24: a query for one
    matches a table holding the other, and the share says through which n-gram."""
    retriever = DrQARetriever("tfidf")
    texts = ["wanrj records", "other words", "more other words"]
    retriever.index(texts, corpus_key="test")
    share = retriever.term_contributions("wanpb", 0, texts[0])[0]
    assert share.contribution > 0 and share.parts["bucket"] == 4701100
    assert share.parts["table_ngrams"] == ["wanrj"]
    assert retriever.scores("wanpb")[0] == pytest.approx(share.contribution, abs=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_fusion_parts_recombine_to_the_fused_score(method: str) -> None:
    lexical = [(3, 9.0), (1, 4.0), (0, 2.5)]
    dense = [(1, 0.8), (2, 0.7), (3, 0.1)]
    fusion = Fusion(method, "z-score", weights=(0.3, 0.7))
    fused = fused_scores([lexical, dense], fusion)
    for index in (0, 1, 2, 3):
        parts = fusion_parts([lexical, dense], fusion, index)
        assert parts["fused"] == pytest.approx(fused[index], abs=1e-12)
        assert sum(c["share"] for c in parts["components"]) * parts["multiplier"] == \
            pytest.approx(fused[index], abs=1e-12)
    assert fusion_parts([lexical, dense], fusion, 2)["components"][0]["rank"] is None


def test_nearest_words_use_character_trigrams() -> None:
    assert nearest_words("medals", {"medal", "metal", "gold", "meddle"})[0] == "medal"
    assert nearest_words("xyz", {"medal"}) == []


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, RunStore]:
    root = tmp_path_factory.mktemp("explain")
    settings = load_settings(environ={"TARGET_WORKSPACE": str(root / "ws")})
    return settings, RunStore.in_workspace(settings.workspace)


def _failed_run(workspace, dataset: str, spec: str) -> tuple[str, str]:
    settings, store = workspace
    run = run_retrieval(RunConfig(dataset, spec, top_k=3), settings=settings).run
    return run.run_id, failed_query_ids(store, run)[0]


@pytest.mark.parametrize(("dataset", "spec"), [("demo-qa", "bm25"), ("demo-qa", "tfidf"),
                                               ("demo-fact", "ottqa:bm25"),
                                               ("demo-qa", "ottqa:tfidf")])
def test_explain_sums_to_the_stored_scores_of_both_tables(workspace, dataset: str,
                                                          spec: str) -> None:
    settings, store = workspace
    run_id, query_id = _failed_run(workspace, dataset, spec)
    explained = explain(store, settings, run_id, query_id)
    gold, other = explained["tables"]
    assert gold["role"] == "gold" and other["role"] in ("winner", "chosen")
    lexical = explained["lexical"]
    result = store.get_result(run_id, query_id)
    stored = dict(result.ranked)
    for row in lexical["tables"]:
        assert row["sum"] == pytest.approx(row["lexical_score"], abs=1e-9)
        key = parse_table_ref(row["table"])
        if key in stored:  # in the run's list: its stored score
            assert row["sum"] == pytest.approx(stored[key], abs=1e-9)
    assert parse_table_ref(other["table"]) in stored
    # the gold beyond the list: the recomputed scores give it its stored rank
    from target_core.engine.reopen import open_run

    opened = open_run(store.get_run(run_id), settings)
    key = parse_table_ref(gold["table"])
    rank = rank_in(opened.retriever.score_all(explained["query"]["text"]),
                   opened.position[key])
    assert rank == result.gold_ranks[key] == gold["rank"]
    assert [t["term"] for t in lexical["terms"]]
    assert json.loads(json.dumps(explained)) == explained


def test_explain_against_a_chosen_table_and_an_unknown_one(workspace) -> None:
    settings, store = workspace
    run_id, query_id = _failed_run(workspace, "demo-qa", "bm25")
    result = store.get_result(run_id, query_id)
    third = "/".join(result.ranked[2][0])
    explained = explain(store, settings, run_id, query_id, against=third)
    assert explained["tables"][1] == {"table": third, "role": "chosen", "rank": 3,
                                      "score": result.ranked[2][1]}
    from target_core.errors import TargetError

    with pytest.raises(TargetError, match="wiki/no_such_table"):
        explain(store, settings, run_id, query_id, against="wiki/no_such_table")


def test_hybrid_parts_recombine_to_its_stored_score(workspace) -> None:
    settings, store = workspace
    run = run_retrieval(RunConfig("demo-qa", "hybrid:minilm:method=wsum,norm=min-max,w=0.3",
                                  top_k=3, view=TableView(rows=0), limit=20),
                        settings=settings).run
    query_id = store.query_metrics(run.run_id)[0][0]
    explained = explain(store, settings, run.run_id, query_id)
    lexical = explained["lexical"]
    fusion = lexical["fusion"]
    stored = {"/".join(k): s for k, s in store.get_result(run.run_id, query_id).ranked}
    for row, parts in zip(lexical["tables"], fusion["tables"], strict=True):
        assert row["sum"] == pytest.approx(row["lexical_score"], abs=1e-9)
        assert sum(c["share"] for c in parts["components"]) * parts["multiplier"] == \
            pytest.approx(parts["fused"], abs=1e-12)
        if row["table"] in stored:
            assert parts["fused"] == pytest.approx(stored[row["table"]], abs=1e-9)
        assert [c["weight"] for c in parts["components"]] == [0.3, 0.7]
    assert fusion["decided_by"] in ("lexical", "dense", None)


def test_cli_json_is_explain(workspace) -> None:
    settings, store = workspace
    run_id, query_id = _failed_run(workspace, "demo-qa", "bm25")
    result = run_cli("explain", run_id, query_id, "--json", "--workspace",
                     str(settings.workspace))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == explain(store, settings, run_id, query_id)
    text = run_cli("explain", run_id, query_id, "--workspace", str(settings.workspace))
    assert text.returncode == 0 and "terms sum to" in text.stdout
    bad = run_cli("explain", run_id, query_id, "--against", "wiki/nope", "--workspace",
                  str(settings.workspace))
    assert bad.returncode == 2 and "wiki/nope" in bad.stderr and not bad.stdout


def test_query_page_explains_a_failed_query(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig("demo-qa", "bm25", top_k=3), settings=settings).run
    store = RunStore.in_workspace(tmp_path / "ws")
    query_id = failed_query_ids(store, run)[0]
    at = app(page="pages/query.py", run=run.run_id, query=query_id)
    at.toggle(key="why-on").set_value(True).run()  # off until asked
    assert "Why this ranking?" in [s.value for s in at.subheader]
    assert not at.exception and not at.warning
    frames = [d.value for d in at.dataframe]
    terms = [f for f in frames if list(f.columns[:2]) == ["term", "gold"]]
    text = load_dataset("demo-qa", settings).query(query_id).query
    assert terms and list(terms[0]["term"]) == list(dict.fromkeys(tokenize(text)))
    assert terms[0].columns[2] in ("winner", "chosen")
    captions = " ".join(c.value for c in at.caption)
    assert "terms sum to" in captions
