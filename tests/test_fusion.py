"""Fusion: ranx's definitions (checked against its outputs), hybrid's spec options,
cross-fitted tuning that never uses a query's own gold, and the default hybrid against
its components on the demo sets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from target_core.config import load_settings
from target_core.errors import ConfigError
from target_core.registry import Part
from target_core.retrievers import RETRIEVERS
from target_core.retrievers.base import Hits, IndexInfo, Retriever
from target_core.retrievers.fusion import Fusion, fused_scores, parse_options, split_options
from target_core.retrievers.hybrid import DEFAULT_FUSION, HybridRetriever

FIXTURE = Path(__file__).parent / "fixtures" / "ranx_fusion.json"
RANX_METHOD = {"rrf": "rrf", "sum": "combsum", "mnz": "combmnz", "wsum": "wsum"}
RANX_NORM = {None: "none", "min-max": "min-max", "zmuv": "z-score", "rank": "rank"}


def _cases() -> list[dict]:
    return json.loads(FIXTURE.read_text())["cases"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c['method']}-{c['norm']}")
def test_matches_ranx(case: dict) -> None:
    runs = json.loads(FIXTURE.read_text())["runs"]
    params = case["params"]
    fusion = Fusion(RANX_METHOD[case["method"]], RANX_NORM[case["norm"]],
                    tuple(params.get("weights", (0.5, 0.5))), params.get("k", 60))
    for query, expected in case["fused"].items():
        names = sorted({d for run in runs for d in run[query]})
        rankings = [[(names.index(d), s) for d, s in run[query].items()] for run in runs]
        got = {names[i]: s for i, s in fused_scores(rankings, fusion).items()}
        assert got == pytest.approx(expected, abs=1e-9)


def test_hand_worked_min_max_wsum() -> None:
    # lexical 10, 5, 0 -> 1, .5, 0; dense .9, .1 -> 1, 0; 0.3/0.7
    fused = fused_scores([[(0, 10.0), (1, 5.0), (2, 0.0)], [(1, 0.9), (3, 0.1)]],
                         Fusion("wsum", "min-max", (0.3, 0.7)))
    assert fused == pytest.approx({0: 0.3, 1: 0.3 * 0.5 + 0.7, 2: 0.0, 3: 0.0})


def test_options_grammar() -> None:
    assert split_options("minilm:method=wsum,norm=min-max,w=0.3") == (
        "minilm", "method=wsum,norm=min-max,w=0.3")
    assert split_options("method=rrf,k=10") == ("", "method=rrf,k=10")
    assert split_options("openai/nomic-embed-text:v1.5") == ("openai/nomic-embed-text:v1.5", "")
    options = parse_options("method=wsum,norm=min-max,w=0.3", DEFAULT_FUSION)
    assert options.fusion == Fusion("wsum", "min-max", (0.3, 0.7))
    assert parse_options("tune=recall@10,folds=3", DEFAULT_FUSION).tune == 10
    assert parse_options("", DEFAULT_FUSION).fusion == DEFAULT_FUSION
    for bad in ("method=borda", "norm=max", "x=1", "tune=ndcg@10", "folds=1", "k=0"):
        with pytest.raises(ConfigError):
            parse_options(bad, DEFAULT_FUSION)
    assert RETRIEVERS.parts("hybrid:openai:method=rrf") == (Part("embedder", "openai"),)
    assert RETRIEVERS.parts("hybrid:method=rrf") == (Part("embedder", "minilm"),)


class _Fixed(Retriever):
    """Returns a fixed ranking per query text."""

    def __init__(self, lists: dict[str, Hits], spec: str = "fixed") -> None:
        self.lists = lists
        self.spec = spec
        self.embedder = self  # HybridRetriever names itself after dense.embedder.spec

    def index(self, texts: Sequence[str], *, corpus_key: str, progress=None) -> IndexInfo:
        return IndexInfo(len(texts), 0.0)

    def search(self, queries: Sequence[str], *, top_k: int) -> list[Hits]:
        return [self.lists[q][:top_k] for q in queries]

    def score_all(self, query: str) -> np.ndarray | None:
        return None


def test_tuning_never_uses_a_querys_own_gold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten queries whose gold only the dense side finds at 1, and one ('odd') whose gold
    only the lexical side finds. Tuned on its own gold, 'odd' would be retrieved with a
    lexical weight; cross-fitted, its weight comes from the dense-favouring queries."""
    lexical, dense, queries, relevant = {}, {}, [], []
    for n in range(10):
        q = f"q{n}"
        lexical[q] = [(1, 5.0), (0, 1.0)]
        dense[q] = [(0, 0.9), (1, 0.1)]
        queries.append(q)
        relevant.append({0})
    lexical["odd"] = [(1, 5.0), (0, 1.0)]
    dense["odd"] = [(0, 0.9), (1, 0.1)]
    queries.append("odd")
    relevant.append({1})
    hybrid = HybridRetriever(_Fixed(lexical), _Fixed(dense, "dense"),  # type: ignore[arg-type]
                             options=parse_options("tune=recall@1,folds=2", DEFAULT_FUSION))
    import target_core.retrievers.hybrid as hybrid_module

    seen: list[list] = []  # the gold each fold's weight was tuned on, in fold order
    real = hybrid_module.best_weight
    monkeypatch.setattr(hybrid_module, "best_weight",
                        lambda base, lists, rel, cutoff: seen.append(list(rel))
                        or real(base, lists, rel, cutoff))
    with pytest.raises(ConfigError, match="tunes its weights"):
        hybrid.search(["odd"], top_k=1)
    details = hybrid.tune(queries, relevant)
    odd_fold = details["cv_fold_of_query"][-1]
    assert not any(r is relevant[-1] for r in seen[odd_fold])
    assert any(r is relevant[-1] for r in seen[1 - odd_fold])
    assert details["cv_fold_weights"][odd_fold][0] <= 0.5  # not the lexical side's
    assert hybrid.search(["odd"], top_k=1)[0][0][0] == 0  # so 'odd' misses its gold
    assert len(details["cv_fold_of_query"]) == len(queries) and details["cv_folds"] == 2
    assert details["cv_heldout_recall@1"] == pytest.approx(10 / 11, abs=1e-4)


@pytest.fixture(scope="module")
def demo_components(tmp_path_factory: pytest.TempPathFactory) -> list:
    from benchmarks.fusion_choice import DEMO_SETS, WEAK_VIEWS, components

    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path_factory.mktemp("ws"))})
    return ([components(name, settings) for name in DEMO_SETS]
            + [components(name, settings, view=view) for name, view in WEAK_VIEWS])


TOLERANCE = 0.0


def test_default_hybrid_is_at_least_its_better_component(demo_components: list) -> None:
    """Table 2 recall (recall_micro@10; db_hit@1 for demo-sql), tolerance 0, on each
    demo set and on the views that weaken one side (schema-only SQL, untitled QA)."""
    from benchmarks.fusion_choice import fused, table2_recall

    for parts in demo_components:
        better = max(table2_recall(parts, parts.lexical), table2_recall(parts, parts.dense))
        assert table2_recall(parts, fused(parts, DEFAULT_FUSION)) >= better - TOLERANCE, \
            parts.name


def test_runner_hook_maps_gold_keys_to_corpus_indices() -> None:
    from target_core.types import Query

    lists = {f"q{n}": [(1, 5.0), (0, 1.0)] for n in range(4)}
    dense = {f"q{n}": [(0, 0.9), (1, 0.1)] for n in range(4)}
    position = {("db", "t0"): 0, ("db", "t1"): 1}
    queries = [Query(f"id{n}", f"q{n}", None, (("db", "t0"),), "db") for n in range(4)]
    untuned = HybridRetriever(_Fixed(lists), _Fixed(dense))  # type: ignore[arg-type]
    assert untuned.tune_on_gold(queries, position) == {}
    tuned = HybridRetriever(_Fixed(lists), _Fixed(dense),  # type: ignore[arg-type]
                            options=parse_options("tune=recall@1,folds=2", DEFAULT_FUSION))
    details = tuned.tune_on_gold(queries, position)
    assert details["cv_heldout_recall@1"] == 1.0  # gold t0 is dense's first: w <= 0.5
    assert all(w[0] <= 0.5 for w in details["cv_fold_weights"])


def test_a_tuned_hybrid_run_tunes_through_the_runner(tmp_path: Path) -> None:
    """The runner calls tune_on_gold after indexing: a tune= run completes, each query
    scored with weights tuned on the other folds, the split stored with the run. Header
    only: the runner's path does not depend on the view, and 440 full tables took ~50 s
    to embed on 2 busy cores (header-only texts: a few seconds)."""
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import RunConfig
    from target_core.table_view import TableView

    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig("demo-qa", "hybrid:tune=recall@10,folds=2",
                                  TableView.preset("header-only"), limit=20),
                        settings=settings).run
    assert run.status == "complete"
    stored = json.dumps(run.index_info)
    assert "fold" in stored and run.metrics["recall@10"] > 0


def test_a_run_of_the_old_hybrid_default_is_not_reused_as_the_new() -> None:
    import hashlib

    from target_core.engine.store import config_key
    from target_core.run_config import RunConfig

    # the key of a family without a version is what it always was (sha of config + data)

    plain = RunConfig("demo-qa", "bm25")
    expected = hashlib.sha256(json.dumps([plain.to_dict(), "f"], sort_keys=True)
                              .encode()).hexdigest()[:20]
    assert config_key(plain, "f") == expected
    versioned = RunConfig("demo-qa", "hybrid")
    old_key = hashlib.sha256(json.dumps([versioned.to_dict(), "f"], sort_keys=True)
                             .encode()).hexdigest()[:20]
    assert config_key(versioned, "f") != old_key  # RRF-era hybrid runs: a new run
