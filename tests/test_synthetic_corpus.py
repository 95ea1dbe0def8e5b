"""The synthetic benchmark corpus written streaming (for a million tables) is exactly the
corpus make_corpus builds in memory, in the folder format the folder loader reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import synthetic
from target_core.datasets.folder import load_folder


@pytest.mark.parametrize(("n_tables", "n_queries"), [(0, 3), (5, 40), (2_345, 300)])
def test_the_streamed_folder_is_make_corpus(tmp_path: Path, n_tables: int, n_queries: int,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(synthetic, "WRITE_CHUNK", 100)  # several chunks, one partial
    synthetic.write_folder(tmp_path / "s", n_tables, n_queries, seed=4)
    tables, queries = synthetic.make_corpus(n_tables, n_queries, seed=4)
    lines = (tmp_path / "s" / "corpus.jsonl").read_text().splitlines()
    assert lines == [json.dumps(synthetic.table_record(t)) for t in tables]
    written = [json.loads(line) for line in
               (tmp_path / "s" / "queries.jsonl").read_text().splitlines()]
    assert [(q["query_id"], q["query"], q["answer"], q["table_id"]) for q in written] == [
        (q.query_id, q.query, q.answer, q.gold[0][1]) for q in queries]
    if n_tables:
        loaded = load_folder(tmp_path / "s")
        assert [t.key for t in loaded.tables] == [t.key for t in tables]
        assert [q.query for q in loaded.queries] == [q.query for q in queries]
