"""Paired comparison of runs: the statistics against scipy and hand values, compare_runs
on hand-built stores whose wins, losses and flips are known, and the CLI end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from target_core.analysis.compare import compare_runs
from target_core.analysis.stats import (
    bootstrap_ci,
    detectable,
    holm,
    mcnemar_exact,
    paired_randomization,
)
from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import QueryResult, RunStore
from target_core.errors import TargetError
from target_core.run_config import RunConfig

ROOT = Path(__file__).resolve().parent.parent


def _mean_diff(x, y, axis):
    return np.mean(x - y, axis=axis)


# --- statistics ---------------------------------------------------------------------------

@pytest.mark.parametrize(("b", "c"), [(3, 0), (5, 9), (10, 10), (1, 20), (40, 60), (0, 7)])
def test_mcnemar_matches_the_binomial_test(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue,
                                                rel=1e-12)


def test_mcnemar_hand_values() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(6, 0) == 2 / 64  # 2 · 0.5^6
    assert mcnemar_exact(1, 2) == 1.0  # 2 · (1 + 3) / 8 capped
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


@pytest.mark.parametrize("n", [2, 5, 10, 12])
def test_randomization_enumerates_exactly_like_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    a, b = rng.random(n), rng.random(n) * 0.8
    expected = stats.permutation_test((a, b), _mean_diff, permutation_type="samples",
                                      alternative="two-sided", n_resamples=10_000).pvalue
    assert paired_randomization(a, b) == pytest.approx(expected, abs=1e-12)


def test_randomization_hand_value_and_degenerate_input() -> None:
    # d = (1, 1, 1): of 8 sign vectors only all-plus and all-minus reach |sum| = 3
    assert paired_randomization([1, 1, 1], [0, 0, 0]) == 2 / 8
    assert paired_randomization([0.5, 0.2], [0.5, 0.2]) == 1.0
    assert paired_randomization([], []) == 1.0


def test_randomization_sampled_is_close_to_scipy() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(60)
    b = a - 0.05 + rng.normal(0, 0.3, 60)
    ours = paired_randomization(a, b, n_resamples=10_000, seed=1)
    theirs = stats.permutation_test((a, b), _mean_diff, permutation_type="samples",
                                    alternative="two-sided", n_resamples=10_000,
                                    rng=np.random.default_rng(2)).pvalue
    assert abs(ours - theirs) < 0.02
    assert ours == paired_randomization(a, b, n_resamples=10_000, seed=1)  # seeded


def test_bootstrap_matches_scipy_percentile() -> None:
    values = np.random.default_rng(3).random(80)
    low, high = bootstrap_ci(values)
    ref = stats.bootstrap((values,), np.mean, method="percentile", confidence_level=0.95,
                          n_resamples=10_000, rng=np.random.default_rng(0)).confidence_interval
    assert low < values.mean() < high
    assert low == pytest.approx(ref.low, abs=0.01) and high == pytest.approx(ref.high, abs=0.01)
    assert bootstrap_ci([0.25]) == (0.25, 0.25)
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_grouped_resampling_matches_scipy_on_few_distinct_values() -> None:
    # hits and reciprocal ranks take few distinct values: both functions then draw
    # counts per value (multinomial / binomial) instead of single items
    rng = np.random.default_rng(11)
    hits = (rng.random(400) < 0.6).astype(float)
    low, high = bootstrap_ci(hits)
    ref = stats.bootstrap((hits,), np.mean, method="percentile", confidence_level=0.95,
                          n_resamples=10_000, rng=np.random.default_rng(0)).confidence_interval
    assert low == pytest.approx(ref.low, abs=0.006) and high == pytest.approx(ref.high, abs=0.006)
    a = 1 / rng.integers(1, 6, 300) * (rng.random(300) < 0.7)
    b = 1 / rng.integers(1, 5, 300) * (rng.random(300) < 0.7)
    ours = paired_randomization(a, b, n_resamples=10_000, seed=1)
    theirs = stats.permutation_test((a, b), _mean_diff, permutation_type="samples",
                                    alternative="two-sided", n_resamples=10_000,
                                    rng=np.random.default_rng(2)).pvalue
    assert theirs > 0.001 and abs(ours - theirs) < 0.02
    # 64 equal differences: only the two all-same sign vectors (p = 2^-63) reach |sum| = 64
    assert paired_randomization([1.0] * 64, [0.0] * 64) == pytest.approx(1 / 10_001)


def test_holm_hand_values() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([0.02]) == [0.02]
    assert holm([]) == []


def test_detectable_warns_below_six_discordant_pairs() -> None:
    assert "cannot reach p < 0.05" in detectable(100, 5, 0)
    assert "cannot reach p < 0.05" in detectable(100, 0, 0)
    assert "only 4 queries" in detectable(4, 2, 2)
    assert detectable(100, 6, 0) is None
    assert mcnemar_exact(6, 0) < 0.05 <= mcnemar_exact(5, 0)


# --- compare_runs on hand-built stores -----------------------------------------------------

def _result(qid: str, position: int, rank: int | None, **extra: float) -> QueryResult:
    """One gold table at `rank` (None: never retrieved); metrics follow from it at k=10."""
    key = ("db", f"t-{qid}")
    metrics = {"hit@10": 1.0 if rank is not None and rank <= 10 else 0.0,
               "mrr": 1 / rank if rank is not None else 0.0, **extra}
    return QueryResult(query_id=qid, position=position, ranked=[], gold=[key],
                       gold_ranks={key: rank}, metrics=metrics, ms=1.0)


def _add_run(store: RunStore, retriever: str, ranks: dict[str, int | None], *,
             dataset: str = "demo-qa", top_k: int = 10, fingerprint: str | None = None,
             **per_query: list[float]) -> str:
    """A complete run; its dataset's content is `fingerprint`, by default one per name."""
    run, _ = store.start_run(RunConfig(dataset, retriever, top_k=top_k),
                             dataset_fingerprint=fingerprint or f"content-of-{dataset}",
                             task="qa", n_queries=len(ranks), versions={})
    results = [_result(q, i, r, **{m: v[i] for m, v in per_query.items()})
               for i, (q, r) in enumerate(ranks.items())]
    store.save_results(run.run_id, results)
    store.finish_run(run.run_id, {})
    return run.run_id


# q1: both hit (rank 1 vs 2) · q2: baseline only (rank 3 vs miss) · q3: other only
# (miss vs rank 1) · q4: other only (rank 20 vs 4) · q5: both miss
BASE = {"q1": 1, "q2": 3, "q3": None, "q4": 20, "q5": None}
OTHER = {"q1": 2, "q2": None, "q3": 1, "q4": 4, "q5": None}


def test_compare_two_runs_by_hand(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    a = _add_run(store, "bm25", BASE)
    b = _add_run(store, "tfidf", OTHER | {"q6": 1})  # q6 is not in the baseline: dropped
    result = compare_runs(store, [a, b])
    assert result.k == 10 and result.n_queries == 5 and result.dataset == "demo-qa"
    (pair,) = result.pairs
    hit, rr = pair.tests
    assert (hit.metric, hit.test) == ("hit@10", "mcnemar")
    assert (hit.wins, hit.ties, hit.losses) == (2, 2, 1)
    assert hit.p_value == mcnemar_exact(1, 2) and hit.p_holm is None
    assert (rr.metric, rr.test) == ("mrr", "randomization")
    assert (rr.wins, rr.ties, rr.losses) == (2, 1, 2)  # q3, q4 up; q1, q2 down; q5 tied
    assert rr.mean_baseline == pytest.approx((1 + 1 / 3 + 1 / 20) / 5)
    # |Δrr|: q3 1.0, q2 1/3, q4 0.2
    assert [f.query_id for f in pair.flipped] == ["q3", "q2", "q4"]
    q3 = pair.flipped[0]
    assert (q3.hit_baseline, q3.hit_other, q3.rank_baseline, q3.rank_other) == (
        False, True, None, 1)
    assert pair.warning.startswith("only 5 queries in common")
    low, high = result.runs[0].cis["hit@10"][1:]
    assert 0 <= low <= 0.4 <= high <= 1
    data = json.loads(json.dumps(result.to_dict()))
    assert set(data) == {"dataset", "k", "hit_key", "n_queries", "runs", "pairs"}


def test_k_defaults_to_a_standard_cutoff_within_the_smallest_top_k(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    hit3 = {"hit@3": [1.0, 1.0, 0.0, 0.0, 0.0]}
    a = _add_run(store, "bm25", BASE, top_k=4, **hit3)
    b = _add_run(store, "tfidf", OTHER, **{"hit@3": [1.0, 0.0, 1.0, 0.0, 0.0]})
    result = compare_runs(store, [a, b])
    assert result.k == 3 and result.pairs[0].tests[0].metric == "hit@3"
    assert [f.query_id for f in result.pairs[0].flipped] == ["q3", "q2"]


def test_default_k_and_holm(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    bleu = {"sentence_bleu": [10.0, 20.0, 0.0, 5.0, 0.0]}
    a = _add_run(store, "bm25", BASE, **bleu)
    b = _add_run(store, "tfidf", OTHER, **bleu)
    c = _add_run(store, "no-context", BASE)
    result = compare_runs(store, [a, b, c])
    first, second = result.pairs
    assert [t.metric for t in first.tests] == ["hit@10", "mrr", "sentence_bleu"]
    assert [t.metric for t in second.tests] == ["hit@10", "mrr"]
    assert "sentence_bleu" in result.runs[0].cis and "sentence_bleu" not in result.runs[2].cis
    for i in range(2):
        hit_ps = [first.tests[i].p_value, second.tests[i].p_value]
        assert [first.tests[i].p_holm, second.tests[i].p_holm] == holm(hit_ps)
    assert first.tests[2].p_holm == first.tests[2].p_value  # a family of one
    assert second.tests[0].p_value == 1.0 and second.flipped == []


def test_compare_refuses_bad_input(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    a = _add_run(store, "bm25", BASE)
    other = _add_run(store, "tfidf", OTHER, dataset="demo-fact")
    with pytest.raises(TargetError, match="not on the same dataset") as info:
        compare_runs(store, [a, other])
    assert "\n" not in str(info.value)
    with pytest.raises(TargetError, match="at least two"):
        compare_runs(store, [a])
    with pytest.raises(TargetError, match="listed twice"):
        compare_runs(store, [a, a])
    b = _add_run(store, "tfidf", OTHER)
    with pytest.raises(TargetError, match="between 1 and"):
        compare_runs(store, [a, b], k=20)
    with pytest.raises(TargetError, match="no per-query hit@5"):
        compare_runs(store, [a, b], k=5)
    disjoint = _add_run(store, "no-context", {"z1": 1})
    with pytest.raises(TargetError, match="no query in common"):
        compare_runs(store, [a, disjoint])
    changed = _add_run(store, "tfidf", OTHER, fingerprint="new-content")  # same name
    with pytest.raises(TargetError, match="content changed.*content new-cont"):
        compare_runs(store, [a, changed])


def test_runs_by_path_and_by_name_of_one_dataset_compare(tmp_path: Path) -> None:
    """A dataset is its content: a run started with the folder's path and one started
    with the name are listed together on the Compare page, under the name."""
    from target_core.read_models.compare import compare_choices

    store = RunStore(tmp_path / "runs.sqlite")
    stale = _add_run(store, "bm25", BASE, fingerprint="older")  # the name, older data
    by_name = _add_run(store, "bm25", BASE, fingerprint="same")
    by_path = _add_run(store, "tfidf", OTHER, dataset="data/demo/demo-qa",
                       fingerprint="same")
    result = compare_runs(store, [by_path, by_name])
    assert result.dataset == "demo-qa" and result.n_queries == 5
    choices = compare_choices(store)
    assert {name: [r.run_id for r in runs] for name, runs in choices.by_dataset.items()} == {
        "demo-qa": [by_path, by_name], "demo-qa (older)": [stale]}
    assert choices.eligible == ["demo-qa"]
    assert choices.dataset_of([by_path]) == "demo-qa"
    labels = choices.labels("demo-qa")
    assert "· data/demo/demo-qa ·" in labels[by_path] and "data/" not in labels[by_name]


def test_every_name_of_one_content_lists_and_compares_its_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Regression (issue 25, item 7): `runs --dataset NAME` missed the runs made on the
    same content by path or under another name, and the Compare page named the group
    after its newest run's dataset, refusing the others."""
    from target_core.cli.main import main
    from target_core.read_models.compare import compare_choices

    workspace = tmp_path / "ws"
    store = RunStore.in_workspace(workspace)
    stale = _add_run(store, "bm25", BASE, fingerprint="older")
    by_name = _add_run(store, "bm25", BASE, fingerprint="same")
    by_path = _add_run(store, "tfidf", OTHER, dataset=str(tmp_path / "qa"), fingerprint="same")
    copy = _add_run(store, "bm25", OTHER, dataset="qa-copy", fingerprint="same")
    _add_run(store, "bm25", BASE, dataset="demo-sql")  # other content: never listed

    def listed(*args: str) -> list[str]:
        assert main(["runs", *args, "--json", "--workspace", str(workspace)]) == 0
        return [run["run_id"] for run in json.loads(capsys.readouterr().out)]

    group = [copy, by_path, by_name]
    assert listed("--dataset", "demo-qa") == [*group, stale]
    assert listed("--dataset", str(ROOT / "data" / "demo" / "demo-qa")) == [*group, stale]
    assert listed("--dataset", "qa-copy") == group
    assert listed("--dataset", str(tmp_path / "qa")) == group
    for name in ("demo-qa", "qa-copy"):  # the group is shown under the name asked for
        choices = compare_choices(store, name)
        assert [r.run_id for r in choices.by_dataset[name]] == group
        assert choices.eligible == [name] and choices.dataset_of([by_path]) == name
    assert "qa-copy" in compare_choices(store).by_dataset  # unasked: the newest run's name


# --- CLI end to end ------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TARGET_")}
    return subprocess.run([sys.executable, "-m", "target_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)


def test_cli_compare_bm25_vs_tfidf(tmp_path: Path) -> None:
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path)})
    ids = [run_retrieval(RunConfig("demo-qa", name, limit=60), settings=settings).run.run_id
           for name in ("bm25", "tfidf")]
    result = _cli("compare", *ids, "--json", "--workspace", str(tmp_path))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["n_queries"] == 60 and data["hit_key"] == "hit@10"
    (pair,) = data["pairs"]
    assert {t["metric"] for t in pair["tests"]} == {"hit@10", "mrr"}
    hit = pair["tests"][0]
    assert hit["wins"] + hit["ties"] + hit["losses"] == 60
    assert hit["wins"] + hit["losses"] == len(pair["flipped"])
    text = _cli("compare", *ids, "--workspace", str(tmp_path))
    assert text.returncode == 0 and "win/tie/loss" in text.stdout
    one = _cli("compare", ids[0], "--workspace", str(tmp_path))
    assert one.returncode == 2 and one.stdout == ""
    assert len(one.stderr.strip().splitlines()) == 1 and "at least two" in one.stderr
    # the report and the per-query outcomes, written next to the printed comparison
    html_path, csv_path = tmp_path / "out" / "report.html", tmp_path / "out" / "q.csv"
    files = _cli("compare", *ids, "--workspace", str(tmp_path), "--html", str(html_path),
                 "--csv", str(csv_path), "--json")
    assert files.returncode == 0 and json.loads(files.stdout)["n_queries"] == 60
    page = html_path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and ids[1] in page
    assert "<script src=" not in page  # plotly.js is inlined, not fetched from a CDN
    header, *rows = csv_path.read_text(encoding="utf-8").splitlines()
    assert header.startswith("query_id,") and f"{ids[0]}:hit" in header and len(rows) == 60
