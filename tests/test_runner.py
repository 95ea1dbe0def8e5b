"""The run engine end to end on demo data: metrics, views that change results, seeded
samples, gold ranks beyond k, and a run killed with SIGKILL that resumes exactly."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from target_core.config import load_settings
from target_core.engine.runner import run_retrieval, select_queries
from target_core.engine.store import RunStore
from target_core.errors import UnknownNameError
from target_core.metrics.retrieval import default_ks
from target_core.progress import no_progress
from target_core.retrievers.base import IndexInfo, Retriever
from target_core.run_config import RunConfig
from target_core.table_view import TableView

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})


def test_metric_cutoffs() -> None:
    assert default_ks(10) == (1, 3, 5, 10)
    assert default_ks(4) == (1, 3, 4)
    assert default_ks(20) == (1, 3, 5, 10, 20)


def test_bm25_run_on_demo_qa(settings) -> None:
    result = run_retrieval(RunConfig("demo-qa", "bm25", top_k=10), settings=settings)
    run = result.run
    assert run.status == "complete" and run.n_done == run.n_queries == 260
    m = run.metrics
    for name in ("recall@1", "recall@10", "recall_micro@10", "hit@10", "mrr", "ndcg@10",
                 "retrieval_ms_mean", "retrieval_ms_p50", "retrieval_ms_p95"):
        assert name in m
    assert 0 < m["recall@1"] <= m["recall@5"] <= m["recall@10"] <= 1
    assert "db_hit@1" not in m
    assert run.text_fingerprint and run.text_example.startswith("Title: ")
    assert run.index_info["n_texts"] == 440


def test_views_change_the_numbers(settings) -> None:
    full = run_retrieval(RunConfig("demo-qa", "bm25"), settings=settings).run.metrics
    no_title = run_retrieval(RunConfig("demo-qa", "bm25", TableView(title=False,
                             section_title=False)), settings=settings).run.metrics
    header = run_retrieval(RunConfig("demo-qa", "bm25", TableView(rows=0)),
                           settings=settings).run.metrics
    assert full["recall@10"] != no_title["recall@10"]
    assert full["recall@10"] != header["recall@10"]


def test_sql_runs_report_db_hit(settings) -> None:
    metrics = run_retrieval(RunConfig("demo-sql", "tfidf", top_k=5), settings=settings
                            ).run.metrics
    assert 0 < metrics["db_hit@1"] <= 1 and "recall@5" in metrics


def test_gold_rank_beyond_k_is_recorded(settings) -> None:
    run = run_retrieval(RunConfig("demo-qa", "bm25", top_k=1, limit=60), settings=settings).run
    store = RunStore.in_workspace(settings.workspace)
    ranks = [rank for r in store.iter_results(run.run_id) for rank in r.gold_ranks.values()]
    assert any(rank is not None and rank > 1 for rank in ranks)
    assert all(rank is None or rank >= 1 for rank in ranks)


def test_limit_is_a_seeded_sample_in_dataset_order(settings) -> None:
    from target_core.datasets import load_dataset

    dataset = load_dataset("demo-qa", settings)
    a = [q.query_id for q in select_queries(dataset, 20, seed=1)]
    assert a == [q.query_id for q in select_queries(dataset, 20, seed=1)]
    assert a != [q.query_id for q in select_queries(dataset, 20, seed=2)]
    order = [q.query_id for q in dataset.queries]
    assert a == sorted(a, key=order.index)
    assert len(select_queries(dataset, 10_000, seed=0)) == len(dataset.queries)


def test_unknown_names_fail_before_any_work(settings) -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'bm25'"):
        run_retrieval(RunConfig("demo-qa", "bm52"), settings=settings)
    with pytest.raises(UnknownNameError, match="demo-qa"):
        run_retrieval(RunConfig("demo-qaa", "bm25"), settings=settings)
    assert not (settings.workspace / "runs.sqlite").exists()


KILLER = textwrap.dedent("""
    import os, signal, sys
    from target_core.config import load_settings
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import RunConfig

    def progress(done, total, what):
        if what == "retrieving" and done == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)

    run_retrieval(RunConfig("demo-qa", "bm25", top_k=10),
                  settings=load_settings(sys.argv[1]), progress=progress, batch_size=32)
""")


def test_sigkill_mid_run_resumes_with_nothing_lost_or_duplicated(tmp_path: Path) -> None:
    workspace = tmp_path / "killed"
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.run([sys.executable, str(script), str(workspace), "70"], env=env,
                             cwd=ROOT, capture_output=True, timeout=120)
    assert process.returncode == -9, process.stderr.decode()[-2000:]

    settings = load_settings(workspace)
    store = RunStore.in_workspace(workspace)
    (partial,) = store.list_runs()
    assert partial.status == "running" and partial.n_done == 64  # two batches of 32 saved

    resumed = run_retrieval(RunConfig("demo-qa", "bm25", top_k=10), settings=settings)
    assert resumed.resumed and resumed.run.run_id == partial.run_id
    assert resumed.n_new == 260 - 64
    assert store.integrity_check() == "ok"
    ids = [r.query_id for r in store.iter_results(partial.run_id)]
    assert len(ids) == len(set(ids)) == 260

    clean = run_retrieval(RunConfig("demo-qa", "bm25", top_k=10),
                          settings=load_settings(tmp_path / "clean")).run.metrics
    quality = {k: v for k, v in clean.items() if not k.startswith("retrieval_ms")}
    assert {k: resumed.run.metrics[k] for k in quality} == quality


def test_text_to_sql_context_defaults_to_the_papers_k_1(tmp_path: Path) -> None:
    """TARGET gives the text-to-SQL generator the schema of the top table's database
    (k = 1); the stored configuration says so, and other tasks keep the run's k."""
    from target_core.run_config import GenerationConfig

    settings = load_settings(tmp_path)
    sql = run_retrieval(RunConfig("demo-sql", "bm25", limit=12,
                                  generation=GenerationConfig("heuristic")),
                        settings=settings).run
    assert sql.config.generation is not None and sql.config.generation.context_k == 1
    for result in RunStore.in_workspace(tmp_path).iter_results(sql.run_id):
        assert result.generation is not None
        # one database: the top table's, whose whole schema is in the prompt
        assert result.generation["databases"] == [result.ranked[0][0][0]]
        assert {d for d, _ in result.generation["context_keys"]} == {result.ranked[0][0][0]}
    qa = run_retrieval(RunConfig("demo-qa", "bm25", limit=5,
                                 generation=GenerationConfig("heuristic")),
                       settings=settings).run
    assert qa.config.generation is not None and qa.config.generation.context_k is None
    asked = run_retrieval(RunConfig("demo-sql", "bm25", limit=12, generation=GenerationConfig(
        "heuristic", context_k=3)), settings=settings).run
    assert asked.config.generation is not None and asked.config.generation.context_k == 3


class _NeverFinds(Retriever):
    """Retrieves nothing, so every gold table is ranked by score_all, which is slow."""

    spec = "never-finds"

    def __init__(self) -> None:
        self.n, self.scored = 0, 0

    def index(self, texts, *, corpus_key, progress=no_progress) -> IndexInfo:
        self.n = len(texts)
        return IndexInfo(len(texts), 0.0)

    def search(self, queries, *, top_k):
        return [[] for _ in queries]

    def score_all(self, query: str) -> np.ndarray:
        self.scored += 1
        time.sleep(0.05)
        return np.zeros(self.n)


def test_gold_rank_scoring_is_not_timed(settings, monkeypatch) -> None:
    """The stored per-query time (the run's latency p50) is the search alone: ranking a
    missed gold table against every text is bookkeeping of the benchmark."""
    from target_core.engine import runner

    retriever = _NeverFinds()
    monkeypatch.setattr(runner, "build_retriever", lambda spec, settings: retriever)
    run = run_retrieval(RunConfig("demo-qa", "bm25", limit=5), settings=settings).run
    assert retriever.scored == 5
    assert all(r.ms < 25 for r in RunStore.in_workspace(settings.workspace)
               .iter_results(run.run_id))


class _HashedWords:
    """A tiny deterministic embedder that counts the queries it embeds."""

    spec, dimension, max_tokens, last_truncated, backend = "hashed", 64, 512, 0, "numpy"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def load(self) -> None:
        pass

    def fingerprint(self) -> str:
        return "hashed-words-v1"

    def embed(self, texts, *, kind, progress=no_progress) -> np.ndarray:
        if kind == "query":
            self.queries.extend(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % self.dimension] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def test_a_dense_run_embeds_each_query_once(settings, monkeypatch) -> None:
    """Gold-rank scoring of a missed query reuses the vector its search embedded."""
    from target_core.engine import runner
    from target_core.retrievers.dense import DenseRetriever
    from target_core.vectorstore import VectorStore

    embedder = _HashedWords()
    retriever = DenseRetriever(embedder, VectorStore.ephemeral())
    scored: list[str] = []
    score_all = retriever.score_all
    monkeypatch.setattr(retriever, "score_all", lambda q: scored.append(q) or score_all(q))
    monkeypatch.setattr(runner, "build_retriever", lambda spec, settings: retriever)
    run = run_retrieval(RunConfig("demo-qa", "dense:minilm", TableView(rows=0), limit=30),
                        settings=settings).run
    assert run.n_done == 30 and len(embedder.queries) == 30 and scored


def test_a_dataset_given_by_its_folder_runs_under_its_name(tmp_path: Path) -> None:
    """Runs of one dataset carry one name whichever way it was given: a run by the
    folder's path is stored as the registered name, and a run by name reuses it (they
    list, reuse and compare together). A folder outside the registry keeps its path."""
    import shutil

    from target_core.config import PROJECT_ROOT

    settings = load_settings(tmp_path / "ws")
    by_path = run_retrieval(RunConfig(str(PROJECT_ROOT / "data" / "demo" / "demo-qa"), "bm25",
                                      limit=5), settings=settings)
    assert by_path.run.config.dataset == "demo-qa"
    by_name = run_retrieval(RunConfig("demo-qa", "bm25", limit=5), settings=settings)
    assert by_name.reused and by_name.run.run_id == by_path.run.run_id
    copy = tmp_path / "elsewhere"
    shutil.copytree(PROJECT_ROOT / "data" / "demo" / "demo-qa", copy)
    outside = run_retrieval(RunConfig(str(copy), "bm25", limit=5), settings=settings)
    assert outside.run.config.dataset == str(copy)
