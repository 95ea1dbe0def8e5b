"""The bundled wiki demo datasets (data/demo/demo-qa, data/demo/demo-fact) keep their promises.

They are loaded through the project's own validator (load_folder), then checked for the
sizes, topics, label balance and built-in retrieval failure modes that the dashboard's demo
relies on, and finally rebuilt with the generator package scripts/demo_wiki/ to prove the
committed files are exactly what it writes. The failure-mode names, the deep-row boundary and
the stopword list come from the generator, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from target_core.datasets.folder import load_folder
from target_core.types import Dataset, Query, Table

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
SCRIPTS = ROOT / "scripts"
NAMES = ("demo-qa", "demo-fact")
FILES = ("dataset.json", "corpus.jsonl", "queries.jsonl")


def load_script(name: str = "demo_wiki") -> ModuleType:
    """The generator package scripts/demo_wiki/ or one of its modules, imported by name
    (scripts/ is no package)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)


MODES: tuple[str, ...] = tuple(load_script("demo_wiki.selection").FAILURE_MODES)
DEEP_ROW: int = load_script("demo_wiki.model").DEEP_ROW
STOPWORDS: frozenset[str] = load_script("demo_wiki.text").STOPWORDS


def tokens(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def content_words(text: str) -> set[str]:
    """Tokens minus stopwords, plural "s" stripped (so "parks" counts as "park")."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in tokens(text) if w not in STOPWORDS}


def cell_text(cell: object) -> str:
    return "" if cell is None else str(cell)


def gold_tables(ds: Dataset, query: Query) -> list[Table]:
    return [ds.table(key) for key in query.gold]


def mode_of(query: Query) -> str | None:
    return query.meta.get("failure_mode")


def evidence_cells(ds: Dataset, query: Query) -> list[tuple[Table, int, str]]:
    """(table, data row, column) for each evidence entry; two-table queries name the table."""
    out = []
    for entry in query.meta["evidence"]:
        table_id = entry.get("table_id", query.gold[0][1])
        out.append((ds.table(("wiki", table_id)), entry["row"], entry["column"]))
    return out


@pytest.fixture(scope="module", params=NAMES)
def dataset(request: pytest.FixtureRequest) -> Dataset:
    return load_folder(DEMO / request.param)


@pytest.fixture(scope="module")
def qa() -> Dataset:
    return load_folder(DEMO / "demo-qa")


@pytest.fixture(scope="module")
def fact() -> Dataset:
    return load_folder(DEMO / "demo-fact")


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script()


def test_metadata(dataset: Dataset) -> None:
    assert dataset.task == ("qa" if dataset.name == "demo-qa" else "fact")
    assert dataset.license and "CC0" in dataset.license and "demo_wiki/" in dataset.license
    for word in (*MODES, "failure_mode", "evidence"):
        assert word in dataset.description


def test_qa_sizes(qa: Dataset) -> None:
    assert len(qa.tables) >= 420
    assert len(qa.queries) >= 220
    rows = [t.n_rows for t in qa.tables]
    assert sum(30 <= n <= 80 for n in rows) >= 40
    assert sum(5 <= n <= 20 for n in rows) > len(rows) / 2
    assert sum(len(q.gold) > 1 for q in qa.queries) >= 10


def test_fact_sizes_and_labels(fact: Dataset) -> None:
    assert len(fact.tables) >= 300
    assert len(fact.queries) >= 320
    assert all(q.label is not None and q.answer is q.label for q in fact.queries)
    true_share = sum(q.label for q in fact.queries) / len(fact.queries)
    assert 0.45 <= true_share <= 0.55


def test_tables_are_wiki_shaped(dataset: Dataset) -> None:
    assert all(t.database_id == "wiki" for t in dataset.tables)
    assert all(3 <= t.n_cols <= 9 for t in dataset.tables)
    assert all(re.fullmatch(re.escape(t.title.replace(" ", "_")) + r"_\d+", t.table_id)
               for t in dataset.tables)
    assert all(t.title and t.section_title for t in dataset.tables)
    cells = [c for t in dataset.tables for r in t.rows for c in r]
    assert any(c is None for c in cells)
    assert any(isinstance(c, str) for c in cells) and any(isinstance(c, int) for c in cells)
    assert (DEMO / dataset.name / "corpus.jsonl").stat().st_size < 3_000_000


def test_topics(dataset: Dataset) -> None:
    topics = Counter(q.meta["topic"] for q in dataset.queries)
    assert len(topics) >= 8


def test_failure_mode_mix(dataset: Dataset) -> None:
    modes = Counter(mode_of(q) for q in dataset.queries)
    assert set(modes) == {None, *MODES}
    assert all(modes[m] >= 15 for m in MODES)
    assert 0.3 <= modes[None] / len(dataset.queries) <= 0.5
    assert all(len(q.gold) == 1 or mode_of(q) == "sibling" for q in dataset.queries)


def test_sibling_gold_has_identical_headers(dataset: Dataset) -> None:
    headers = Counter(t.header for t in dataset.tables)
    for query in dataset.queries:
        if mode_of(query) == "sibling":
            for table in gold_tables(dataset, query):
                assert headers[table.header] >= 3, query.query_id


def test_title_only_word_is_only_in_the_title(dataset: Dataset) -> None:
    for query in dataset.queries:
        if mode_of(query) != "title-only":
            continue
        word = query.meta["decisive"].lower()
        (table,) = gold_tables(dataset, query)
        inside = set().union(*(tokens(h) for h in table.header),
                             *(tokens(cell_text(c)) for r in table.rows for c in r))
        assert word in tokens(f"{table.title} {table.section_title}"), query.query_id
        assert word not in inside, query.query_id
        assert word in tokens(query.query), query.query_id


def test_deep_row_evidence_is_deep(dataset: Dataset) -> None:
    for query in dataset.queries:
        if mode_of(query) == "deep-row":
            rows = [row for _, row, _ in evidence_cells(dataset, query)]
            assert rows and min(rows) >= DEEP_ROW, query.query_id


def test_paraphrases_share_at_most_one_word(dataset: Dataset) -> None:
    for query in dataset.queries:
        if mode_of(query) == "paraphrase":
            (table,) = gold_tables(dataset, query)
            label = " ".join([table.title, table.section_title, *table.header])
            shared = content_words(query.query) & content_words(label)
            assert len(shared) <= 1, (query.query_id, shared)


def test_evidence_cells_exist(dataset: Dataset) -> None:
    for query in dataset.queries:
        cells = evidence_cells(dataset, query)
        assert cells, query.query_id
        for table, row, column in cells:
            assert table.key in query.gold
            assert 0 <= row < table.n_rows and column in table.header, query.query_id
            assert table.rows[row][table.header.index(column)] is not None, query.query_id


def test_qa_answers_mention_their_evidence(qa: Dataset) -> None:
    """A single evidence cell, and every cell of a lookup/superlative/comparison, is quoted."""
    for query in qa.queries:
        cells = evidence_cells(qa, query)
        if len(cells) == 1 or query.meta["kind"] in ("lookup", "superlative", "comparison"):
            for table, row, column in cells:
                value = cell_text(table.rows[row][table.header.index(column)])
                assert value in query.answer, (query.query_id, value)
        assert isinstance(query.answer, str) and query.answer.endswith(".")


def test_rebuild_is_byte_identical(script: ModuleType, tmp_path: Path) -> None:
    script.build(tmp_path)
    for name in NAMES:
        for file in FILES:
            assert (tmp_path / name / file).read_bytes() == (DEMO / name / file).read_bytes(), \
                f"{name}/{file} differs from a fresh build; rerun scripts/build_demo_data.py"
