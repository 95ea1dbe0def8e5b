"""TARGET's OTT-QA retriever (retrievers/drqa.py) against TARGET's own rankings.

tests/fixtures/target_ottqa_rankings.json holds what TARGET 0.1.3's OTTQARetriever
returned at k = 10 on demo-qa and demo-sql (see tests/fixtures/README): per setting and
query, the tables (by corpus index) and their scores. Ours must give the same scores at
every rank, the same tables wherever scores differ, and the same set of tables within
each run of equal scores (TARGET orders ties by numpy's partition, we by corpus order);
a tie cut by k may hold any of the tied tables, so TARGET's must be among ours. Such
cut ties move recall: on demo-qa without the table id (siblings share header and section
title), TARGET's own lists find 94 of 272 gold tables at k = 10 and ours 99.
"""

from __future__ import annotations

import json
import math
from itertools import groupby
from pathlib import Path

import numpy as np
import pytest

from target_core.config import load_settings
from target_core.datasets.registry import load_dataset
from target_core.errors import ConfigError
from target_core.retrievers import build_retriever
from target_core.retrievers.drqa import DrQARetriever, hashed, ngrams, words
from target_core.serialize import table_text
from target_core.table_view import VIEW_PRESETS, TableView
from target_core.types import Table

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "target_ottqa_rankings.json")
                     .read_text())
SETTINGS = {"bm25 withtitle=true": ("ottqa:bm25", "ottqa-withtitle"),
            "bm25 withtitle=false": ("ottqa:bm25", "ottqa-notitle"),
            "tfidf withtitle=true": ("ottqa:tfidf", "ottqa-withtitle"),
            "tfidf withtitle=false": ("ottqa:tfidf", "ottqa-notitle")}


def _same_score(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=2e-6, abs_tol=1e-9)


@pytest.mark.parametrize("dataset", sorted(FIXTURE["datasets"]))
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_rankings_equal_targets_own(dataset: str, setting: str) -> None:
    spec, view = SETTINGS[setting]
    data = load_dataset(dataset, load_settings())
    expected = FIXTURE["datasets"][dataset]["rankings"][setting]
    assert FIXTURE["datasets"][dataset]["tables"] == len(data.tables)
    retriever = build_retriever(spec, load_settings())
    texts = retriever.prepare_texts(data.tables, VIEW_PRESETS[view])
    retriever.index(texts, corpus_key="test")
    k = FIXTURE["k"]
    for query in data.queries:
        theirs = expected[query.query_id]
        (ours,) = retriever.search([query.query], top_k=k)
        assert len(ours) == len(theirs), query.query_id
        for (_, score), (_, their_score) in zip(ours, theirs, strict=True):
            assert _same_score(score, their_score), (query.query_id, score, their_score)
        scores = retriever.score_all(query.query)
        groups = [list(g) for _, g in groupby(theirs, key=lambda t: round(t[1], 4))]
        start = 0
        for n, group in enumerate(groups):
            their_tables = {t for t, _ in group}
            our_tables = {i for i, _ in ours[start:start + len(group)]}
            tied = set(np.flatnonzero(np.isclose(scores, group[0][1], rtol=2e-6)))
            if n < len(groups) - 1 or len(tied) == len(group):
                assert their_tables == our_tables, (query.query_id, group)
            else:  # the last run of ties continues past k: any of the tied may be in
                assert their_tables <= tied and our_tables <= tied, query.query_id
            start += len(group)


def test_tokens_and_ngrams_follow_drqa() -> None:
    # NFD splits the accent into a mark that stays in the word; "|" is a symbol, kept;
    # "," is punctuation and every stop word goes, with any bigram holding one
    assert words("Café | Men's race, 2002") == ["cafe\u0301", "|", "men", "'", "s",
                                                "race", ",", "2002"]
    assert ngrams("the population of Paris | Men's race") == [
        "population", "paris", "paris |", "|", "| men", "men", "race"]
    assert sum(hashed("a b b").values()) == 3  # "b", "b b", "b": "a" is a stop word
    assert hashed("") == {}


TEXTS = ["q", "q w", "q w x z", "e1", "e2", "e3", "e4", "e5"]
"""Three tables hold "q"; their lengths (kept unigrams and bigrams) are 1, 3 and 7."""


def _expected(partner: list[int]) -> list[float]:
    """BM25 of the query "q" on tables 0-2 when table i is given the length of
    table partner[i]: the query's weight idf (its n-gram counted once) times the
    table's, idf * tf * 2.5 / (tf + ratio) with tf 1, so idf comes in twice."""
    lengths = [1, 3, 7, 1, 1, 1, 1, 1]
    avg = sum(lengths) / 8
    idf = math.log((8 - 3 + 0.5) / (3 + 0.5))
    ratio = [1.5 * (1 - 0.75 + 0.75 * n / avg) for n in lengths]
    return [idf * idf * 2.5 / (1 + ratio[p]) for p in partner]


def _scores(encoding: str, names: list[str] | None = None) -> list[float]:
    retriever = DrQARetriever(encoding)
    if names is not None:
        tables = [Table("db", name, ("h",), ()) for name in names]
        retriever.prepare_texts(tables, VIEW_PRESETS["ottqa-notitle"])
    retriever.index(TEXTS, corpus_key="t")
    return list(retriever.scores("q")[:3])


def test_bm25_pairs_lengths_as_targets_code_does() -> None:
    # the formula as written: each table its own length
    assert _scores("bm25-own-length") == pytest.approx(_expected([0, 1, 2]))
    # TARGET's code: in "q"'s row (tables 0, 1, 2 in TARGET's order) the i-th table
    # gets the length of the i-th from the end
    assert _scores("bm25") == pytest.approx(_expected([2, 1, 0]))
    # TARGET's order is that of str((database_id, table_id)): names b, a, c, ... put
    # table 1 first, so the row is (1, 0, 2) and table 0 is its own mirror
    names = ["b", "a", "c", "d", "e", "f", "g", "h"]
    assert _scores("bm25", names) == pytest.approx(_expected([0, 2, 1]))
    assert _scores("tfidf", names) == _scores("tfidf")  # no lengths in TF-IDF


def test_a_query_without_ngrams_retrieves_nothing() -> None:
    retriever = DrQARetriever("bm25")
    retriever.index(TEXTS, corpus_key="t")
    assert retriever.scores("zzz").tolist() == [0.0] * 8
    assert retriever.search(["zzz", "the of ?"], top_k=3) == [[], []]  # DrQA raises


def test_unknown_encoding_names_it() -> None:
    with pytest.raises(ConfigError, match="'bm26'"):
        build_retriever("ottqa:bm26", load_settings())


def test_ottqa_view_text_is_targets() -> None:
    table = Table("wiki", "2002_Tarwick_Marathon_1", ("Position", "Athlete"),
                  ((1, "Henrik"),), {"title": "2002 Tarwick Marathon",
                                     "section_title": "Men's race"})
    assert table_text(table, VIEW_PRESETS["ottqa-withtitle"]) == \
        "2002_Tarwick_Marathon_1 | Men's race | Position Athlete"
    assert table_text(table, VIEW_PRESETS["ottqa-notitle"]) == \
        " | Men's race | Position Athlete"
    with pytest.raises(ConfigError, match="ottqa format"):
        TableView(format="ottqa")  # all rows and the page title: not TARGET's text


def test_target_markdown_is_targets_markdown_table_str() -> None:
    table = Table("wiki", "t", ("a", "b"), ((1, None), (2, "x|y")), {"title": "T"})
    bare = TableView(title=False, section_title=False, format="target-markdown")
    assert table_text(table, bare.with_(rows=0)) == "| a | b |\n"
    assert table_text(table, bare.with_(rows=1)) == "| a | b |\n| --- | --- |\n| 1 |  |\n"
    # all rows: TARGET writes no separator then (num_rows=None), and escapes nothing
    assert table_text(table, bare) == "| a | b |\n| 1 |  |\n| 2 | x|y |\n"
