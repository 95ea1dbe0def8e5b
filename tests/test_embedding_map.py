"""The embedding map (analysis/embedding_map.py, read_models/embedding_map.py and the Query and
Failures pages' section): seeded projections, PCA worked by hand, questions placed in
the map, the on-disk cache read instead of recomputed, sampling that always keeps the
marked points and their neighbours, rows averaged per table, and clear messages for a
run without vectors or a dataset that changed. Real MiniLM runs in real Chroma on the
4-table handmade dataset."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import FIXTURES
from target_core.analysis import embedding_map as em
from target_core.analysis.embedding_map import (
    MapError,
    NoEmbeddingsError,
    corpus_map,
    project,
    sample_around,
    table_vectors,
)
from target_core.analysis.failures import analyse_failures
from target_core.config import Settings, load_settings
from target_core.datasets import load_dataset
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunRecord, RunStore
from target_core.read_models.embedding_map import category_map_view, focus_ranges, query_map_view
from target_core.run_config import RunConfig
from target_core.vectorstore import VectorStore


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workspace for the module: a dense:minilm and a bm25 run of handmade-qa at
    k = 1 (q3 has two gold tables, so it always fails)."""
    ws = tmp_path_factory.mktemp("maps") / "ws"
    settings = load_settings(ws)
    for spec in ("dense:minilm", "bm25"):
        run_retrieval(RunConfig(str(FIXTURES / "handmade-qa"), spec, top_k=1),
                      settings=settings)
    return ws


def _runs(ws: Path) -> dict[str, RunRecord]:
    return {r.config.retriever: r for r in RunStore.in_workspace(ws).list_runs()}


def _query_ids(ws: Path, run: RunRecord) -> list[str]:
    return [s.query_id for s in RunStore.in_workspace(ws).query_scores(run.run_id)]


# --- projection ---------------------------------------------------------------------------

def test_pca_by_hand_places_tables_and_questions_on_the_two_widest_axes() -> None:
    """Variance 4.5 along x, 0.5 along y, none along z: the map is (x, y) up to sign, and
    a question is projected by the same linear map (its z is dropped)."""
    corpus = np.asarray([[3, 0, 0], [-3, 0, 0], [0, 1, 0], [0, -1, 0]], dtype=np.float32)
    xy, query_xy = project(corpus, np.asarray([[1.0, 0.5, 7.0]]), "pca")
    assert np.allclose(np.abs(xy), [[3, 0], [3, 0], [0, 1], [0, 1]], atol=1e-6)
    assert np.allclose(np.abs(query_xy), [[1.0, 0.5]], atol=1e-6)
    # the question sits on the same side as the table it leans towards
    assert np.sign(query_xy[0, 0]) == np.sign(xy[0, 0])


@pytest.mark.parametrize("method", ["tsne", "pca"])
def test_projection_is_seeded(method: str) -> None:
    rng = np.random.default_rng(7)
    corpus, queries = rng.normal(size=(60, 16)), rng.normal(size=(5, 16))
    first = project(corpus, queries, method)
    second = project(corpus, queries, method)
    assert first[0].shape == (60, 2) and first[1].shape == (5, 2)
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])


def test_tsne_keeps_a_question_beside_its_cluster() -> None:
    """Two tight clusters far apart; a question made from cluster B lands nearer B."""
    rng = np.random.default_rng(0)
    a = rng.normal(0, 0.05, size=(20, 8)) + np.eye(8)[0] * 5
    b = rng.normal(0, 0.05, size=(20, 8)) + np.eye(8)[1] * 5
    xy, query_xy = project(np.vstack([a, b]), b[:1] + 0.01, "tsne")
    to_a = np.linalg.norm(xy[:20] - query_xy[0], axis=1).mean()
    to_b = np.linalg.norm(xy[20:] - query_xy[0], axis=1).mean()
    assert to_b < to_a / 3


def test_unknown_method_is_named() -> None:
    with pytest.raises(MapError, match="unknown map method 'umap'"):
        project(np.ones((3, 2)), np.ones((0, 2)), "umap")


# --- sampling -----------------------------------------------------------------------------

def test_sampling_keeps_every_marked_point_and_its_nearest_neighbours() -> None:
    rng = np.random.default_rng(1)
    xy = rng.uniform(0, 100, size=(2_000, 2))
    marked = {0, 5, 1999, 1234}
    around = np.asarray([[50.0, 50.0]])
    chosen = sample_around(xy, marked, limit=200, neighbours=5, around=around)
    assert len(chosen) == 200 and len(set(chosen.tolist())) == 200
    assert marked <= set(chosen.tolist())
    for centre in [xy[i] for i in marked] + [around[0]]:
        nearest = np.argsort(np.linalg.norm(xy - centre, axis=1))[:6]
        assert set(nearest.tolist()) <= set(chosen.tolist())
    assert np.array_equal(chosen, sample_around(xy, marked, limit=200, neighbours=5,
                                                around=around))  # seeded
    assert np.array_equal(sample_around(xy[:150], marked - {1999, 1234}, limit=200),
                          np.arange(150))  # few enough: all of them


def test_sampling_never_drops_a_marked_point_even_beyond_the_limit() -> None:
    xy = np.random.default_rng(2).uniform(size=(500, 2))
    marked = set(range(0, 500, 5))  # 100 marked, limit 50
    chosen = sample_around(xy, marked, limit=50)
    assert set(chosen.tolist()) == marked


def test_the_query_map_zooms_only_to_a_small_group_of_marked_points() -> None:
    everything = np.asarray([[0, 0], [100, 100], [10, 10], [20, 15]], dtype=float)
    # the marked points span 10 × 5 of 100 × 100: padded by max(a fifth, 4% of the map)
    assert focus_ranges(everything, everything[2:]) == ([6.0, 24.0], [6.0, 19.0])
    assert focus_ranges(everything, everything[[0, 2]]) == ([-4.0, 14.0], [-4.0, 14.0])
    assert focus_ranges(everything, everything[[2, 1]]) is None  # 90 × 90: the whole map


# --- a real run ---------------------------------------------------------------------------

def test_the_map_is_computed_once_then_read_from_the_cache(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings(workspace)
    dense = _runs(workspace)["dense:minilm"]
    dataset = load_dataset(dense.config.dataset, settings)
    ids = _query_ids(workspace, dense)
    first = corpus_map(dense, dataset, ids, settings, method="pca")
    assert first.computed and first.path.exists()
    assert first.path.parent == workspace / "maps"
    assert first.path.name.startswith(f"{dense.index_info['collection']}-pca-")
    assert first.keys == tuple(t.key for t in dataset.tables)
    mtime = first.path.stat().st_mtime_ns

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached map was computed again")

    monkeypatch.setattr(em, "project", fail)
    monkeypatch.setattr(em, "table_vectors", fail)
    second = corpus_map(dense, dataset, ids, settings, method="pca")
    assert not second.computed and second.path.stat().st_mtime_ns == mtime
    assert np.array_equal(first.xy, second.xy) and np.array_equal(first.query_xy,
                                                                  second.query_xy)
    assert second.keys == first.keys and second.query_ids == tuple(ids)
    # other questions are another fit: not this file
    with pytest.raises(AssertionError, match="computed again"):
        corpus_map(dense, dataset, ids[:1], settings, method="pca")


def test_the_question_is_placed_where_its_embedding_projects(workspace: Path) -> None:
    """PCA: the question's point is the PCA of its MiniLM vector, fitted on the tables'
    stored vectors (worked again here with scikit-learn directly)."""
    from sklearn.decomposition import PCA

    from target_core.embeddings import get_embedder

    settings = load_settings(workspace)
    dense = _runs(workspace)["dense:minilm"]
    dataset = load_dataset(dense.config.dataset, settings)
    cmap = corpus_map(dense, dataset, _query_ids(workspace, dense), settings, method="pca")
    vectors = table_vectors(dense.index_info["collection"], len(dataset.tables), settings)
    q1 = get_embedder("minilm", settings).embed([dataset.query("q1").query], kind="query")
    pca = PCA(n_components=2, random_state=0).fit(vectors)
    assert np.allclose(cmap.query_xy[cmap.query_index()["q1"]], pca.transform(q1)[0],
                       atol=1e-4)
    view = query_map_view(RunStore.in_workspace(workspace), dataset, dataset, settings,
                          dense.run_id, "q1", method="pca")
    traces = {t.name: t for t in view.figure.data}
    assert np.allclose([traces["question"].x[0], traces["question"].y[0]],
                       cmap.query_xy[cmap.query_index()["q1"]])
    gold = cmap.positions()[("wiki", "Lakes_of_Norland_0")]
    assert np.allclose([traces["gold"].x[0], traces["gold"].y[0]], cmap.xy[gold])
    assert view.n_tables == view.n_shown == 4 and "all 4 tables" in view.caption
    # q1's top 1 is its gold table: one marked point (labelled rank 1), three in grey
    assert list(traces["gold"].text) == ["1"] and "retrieved (rank)" not in traces
    assert len(traces["other tables"].x) == 3


def test_category_map_marks_its_questions_and_their_golds(workspace: Path) -> None:
    settings = load_settings(workspace)
    store = RunStore.in_workspace(workspace)
    dense = _runs(workspace)["dense:minilm"]
    dataset = load_dataset(dense.config.dataset, settings)
    report = analyse_failures(store, dataset, dense.run_id, k=1)
    assert "q3" in [c.query_id for c in report.in_category("partial-multi-table")]
    view = category_map_view(store, dataset, dataset, settings, report,
                             "partial-multi-table")
    traces = {t.name: t for t in view.figure.data}
    assert list(traces["partial-multi-table questions"].customdata) == [
        "q3: Did Ada Berg run faster in 2020 than in 2019?"]
    assert len(traces["gold tables"].x) == 2  # q3's two marathon tables
    assert len(traces["question → gold"].x) == 2 * 3  # two segments, NaN-separated
    assert "the 1 questions in partial-multi-table at k = 1" in view.caption


def test_a_bm25_run_has_no_map_of_its_own_but_may_borrow_dense_minilms(
        workspace: Path) -> None:
    settings = load_settings(workspace)
    runs = _runs(workspace)
    bm25, dense = runs["bm25"], runs["dense:minilm"]
    dataset = load_dataset(bm25.config.dataset, settings)
    ids = _query_ids(workspace, bm25)
    with pytest.raises(NoEmbeddingsError, match=r"no embeddings for this run \(bm25\)"):
        corpus_map(bm25, dataset, ids, settings)
    # the same view gives the same texts: the dense run's collection holds their vectors
    assert bm25.text_fingerprint == dense.text_fingerprint
    borrowed = corpus_map(bm25, dataset, ids, settings, method="pca", borrow=True)
    own = corpus_map(dense, dataset, ids, settings, method="pca")
    assert borrowed.borrowed and not own.borrowed
    assert borrowed.collection == dense.index_info["collection"]
    assert np.array_equal(borrowed.xy, own.xy)
    view = query_map_view(RunStore.in_workspace(workspace), dataset, dataset, settings,
                          bm25.run_id, "q1", method="pca", borrow=True)
    assert view.caption.startswith("PCA map of dense:minilm vectors of the run's texts")


def test_borrowing_needs_a_dense_run_of_the_same_texts(write_dataset, tmp_path: Path
                                                       ) -> None:
    folder = write_dataset()
    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig(str(folder), "bm25", top_k=1), settings=settings).run
    with pytest.raises(MapError, match="no dense:minilm vectors of this run's texts yet: "
                                       "run dense:minilm on"):
        corpus_map(run, load_dataset(str(folder), settings), ["q1"], settings, borrow=True)


def test_an_unfinished_run_is_not_mapped(workspace: Path) -> None:
    """Its questions are part of the t-SNE fit: a run still adding them has no map yet."""
    from dataclasses import replace

    settings = load_settings(workspace)
    dense = replace(_runs(workspace)["dense:minilm"], status="running")
    dataset = load_dataset(dense.config.dataset, settings)
    with pytest.raises(MapError, match=f"run {dense.run_id} is running"):
        corpus_map(dense, dataset, ["q1"], settings)


def test_a_changed_dataset_is_not_mapped_onto_old_vectors(write_dataset, tmp_path: Path
                                                          ) -> None:
    from conftest import query_record, table_record, write_jsonl

    folder = write_dataset(corpus=[table_record("t1"), table_record("t2"),
                                   table_record("t3")],
                           queries=[query_record("q1", "t1")])
    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig(str(folder), "dense:minilm", top_k=2),
                        settings=settings).run
    write_jsonl(folder / "corpus.jsonl", [table_record("t1"), table_record("t2")])
    (folder / "queries.jsonl").write_text(json.dumps(query_record("q1", "t1")) + "\n")
    with pytest.raises(MapError, match=f"made on dataset version {run.dataset_fingerprint}"):
        corpus_map(run, load_dataset(str(folder), settings), ["q1"], settings)


def test_a_rows_collection_gives_one_point_per_table_the_mean_of_its_rows(
        settings: Settings) -> None:
    store = VectorStore.from_settings(settings)
    collection = store.collection("target-rows-by-hand", {})
    store.add(collection, ["0:0", "0:1", "1:0"],
              np.asarray([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32))
    got = table_vectors("target-rows-by-hand", 2, settings)
    assert np.allclose(got, [[2 ** -0.5, 2 ** -0.5, 0], [0, 0, 1]], atol=1e-6)
    with pytest.raises(MapError, match="vectors of 2 tables, the run's corpus has 3"):
        table_vectors("target-rows-by-hand", 3, settings)


# --- the pages ----------------------------------------------------------------------------

def test_query_and_failures_pages_draw_the_map(app, tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "ws")
    dense = run_retrieval(RunConfig("handmade-qa", "dense:minilm", top_k=1),
                          settings=settings).run
    bm25 = run_retrieval(RunConfig("handmade-qa", "bm25", top_k=1), settings=settings).run
    at = app(page="pages/query.py", run=dense.run_id, query="q3")
    assert not at.get("plotly_chart")  # off until asked: it loads the whole dataset
    at.toggle(key="map-on-query").set_value(True).run()
    assert at.toggle(key="map-on-query").label.startswith("Embedding map")
    assert not at.get("plotly_chart")  # not computed yet: a button asks for it
    at.button(key="map-go-query").click().run()
    assert not at.exception and not at.warning
    assert len(at.get("plotly_chart")) == 1
    assert not [b for b in at.button if b.key == "map-go-query"]  # asked: no button left
    assert any("t-SNE map of the run's vectors: all 4 tables" in c.value for c in at.caption)
    # the fit holds every question of the run: the Failures page reads the same file
    at = app(page="pages/failures.py", run=dense.run_id, k="1",
             category="partial-multi-table")
    at.toggle(key="map-on-failures").set_value(True).run()
    assert not at.exception and not at.warning
    assert at.toggle(key="map-on-failures").label.startswith(
        "Embedding map: where the partial-multi-table")
    assert any("Stars: the 1 questions in partial-multi-table" in c.value for c in at.caption)
    # bm25 has no vectors; the dense run's t-SNE map of the same texts and questions is
    # on disk, so the page draws it, saying whose vectors they are
    at = app(page="pages/query.py", run=bm25.run_id, query="q1")
    at.toggle(key="map-on-query").set_value(True).run()
    assert not at.exception and not at.warning
    shown = " ".join(i.value for i in at.info)
    assert "no embeddings" not in shown.lower()  # not above a map drawn from vectors
    assert "bm25 stores no vectors of its own: this map uses dense:minilm's vectors" in shown
    assert any(c.value.startswith("t-SNE map of dense:minilm vectors of the run's texts")
               for c in at.caption)
    assert len(at.get("plotly_chart")) == 1
