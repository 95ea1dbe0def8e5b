"""The haystack (TARGET's needle in a haystack): the spec and its errors, the seeded
superset draw, distractor keys that can never be gold, run keys of other runs unchanged,
a bm25 run on handmade-qa with hand-reasoned ranks, the curve read from stored runs, the
`haystack` command, and the Ablations and Query pages on haystack runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from jobs_support import wait_for_jobs

from conftest import query_record, table_record
from target_core.cli import main
from target_core.config import load_settings
from target_core.datasets import load_dataset
from target_core.engine.haystack import (
    Distractors,
    Haystack,
    distractor_source,
    draw,
    haystack_distractors,
    resolve_haystack,
    run_corpus,
    with_distractors,
)
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore, config_key
from target_core.errors import ConfigError, TargetError, UnknownNameError
from target_core.figures.recall import haystack_figure
from target_core.read_models.haystack import (
    default_sizes,
    haystack_curve,
    parse_sizes,
)
from target_core.read_models.query import ranked_frame
from target_core.run_config import GenerationConfig, RunConfig

DEEP = ("haystack[distractors]wiki", "Deepest_lakes_0")
"""The distractor written to outrank q1's gold table: "deepest" is only in its title."""


@pytest.fixture
def source(write_dataset) -> Path:
    """Six tables, five of them distractors: one has the key of a handmade-qa table with
    other content, one equals handmade-qa's Empty_Results_0 (left out of the pool)."""
    corpus = [
        {"database_id": "wiki", "table_id": "Deepest_lakes_0",
         "table": [["Lake", "Max depth (m)"], ["Orin", 102], ["Vessa", 48]],
         "context": {"title": "Deepest lakes of Norland", "section_title": "Deepest"}},
        table_record("Lakes_of_Norland_0", [["River", "Length"], ["Aran", 40]],
                     title="Rivers of Sorland"),
        {"database_id": "other", "table_id": "Empty", "table": [["Year", "Winner"]],
         "context": {}},
        table_record("Mountains_0", [["Peak", "Height"], ["Kel", 2100]]),
        table_record("Birds_0", [["Bird", "Wingspan"], ["Heron", 1.8]]),
        table_record("Ferries_0", [["Route", "Minutes"], ["Aran-Kel", 35]]),
    ]
    return write_dataset(corpus, [query_record("s1", "Mountains_0")],
                         meta={"name": "distractors", "task": "qa"}, name="distractors")


# --- the spec ------------------------------------------------------------------------

def test_the_spec_parses_and_prints_back() -> None:
    haystack = Haystack.parse(" 370@demo-fact, demo-sql ")
    assert haystack == Haystack(370, ("demo-fact", "demo-sql"), 0)
    assert haystack.spec == "370@demo-fact,demo-sql"
    assert Haystack.parse("5@data/x#3") == Haystack(5, ("data/x",), 3)
    assert Haystack.parse("5@data/x#3").spec == "5@data/x#3"


@pytest.mark.parametrize(("spec", "named"), [
    ("demo-fact", "'demo-fact' is not of the form N@SOURCE"),
    ("x@demo-fact", "size 'x' in 'x@demo-fact' is not a non-negative integer"),
    ("-1@demo-fact", "size '-1'"),
    ("1.5@demo-fact", "size '1.5'"),
    ("5@", "names no source dataset"),
    ("5@a,,b", "empty source between commas"),
    ("5@a#z", "seed 'z' in '5@a#z' is not an integer"),
    ("5@a,a", "sources repeat: a, a"),
])
def test_a_bad_spec_says_which_part(spec: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace(".", r"\.")):
        Haystack.parse(spec)


def test_unknown_source_too_large_and_own_dataset(settings, handmade_dir, source) -> None:
    data = load_dataset(handmade_dir, settings)
    with pytest.raises(UnknownNameError, match="haystack source dataset 'nope'"):
        haystack_distractors(data, "2@nope", settings)
    with pytest.raises(ConfigError, match=r"6 distractors asked for, but .*distractors "
                                          r"holds only 5 tables not in handmade-qa"):
        haystack_distractors(data, f"6@{source}", settings)
    with pytest.raises(ConfigError, match="the run's own dataset"):
        haystack_distractors(data, f"1@{handmade_dir}", settings)
    with pytest.raises(ConfigError, match="retrieval-only"):
        RunConfig("demo-qa", "bm25", haystack="1@demo-fact",
                  generation=GenerationConfig("heuristic"))


# --- the draw ------------------------------------------------------------------------

def test_the_draw_is_seeded_and_a_larger_n_a_superset() -> None:
    assert draw(5, 5, 0) == [0, 1, 2, 3, 4]
    assert draw(5, 0, 0) == []
    assert draw(100, 10, 7) == draw(100, 10, 7)
    for seed in range(5):
        smaller, larger = set(draw(100, 10, seed)), set(draw(100, 40, seed))
        assert smaller < larger and len(larger) == 40
    assert draw(100, 10, 0) != draw(100, 10, 1)
    with pytest.raises(ConfigError, match="size 6 is larger than the pool"):
        draw(5, 6, 0)


def test_a_runs_corpus_is_defined_once(settings, handmade_dir, source) -> None:
    """The dataset's tables, then the distractors: run_corpus (reopened runs, the
    embedding map) and Distractors.corpus (the runner) are the one definition, and no
    other module of the library puts distractors after a dataset's tables itself."""
    import re

    import target_core

    data = load_dataset(handmade_dir, settings)
    drawn = haystack_distractors(data, f"3@{source}", settings)
    corpus = run_corpus(data, f"3@{source}", settings)
    assert corpus == data.tables + drawn.tables and len(drawn.tables) == 3
    assert run_corpus(data, None, settings) == data.tables
    assert Distractors().corpus(data.tables) is data.tables  # a lazy corpus stays lazy
    package = Path(target_core.__file__).parent
    built = [str(path.relative_to(package)) for path in sorted(package.rglob("*.py"))
             if path.name != "haystack.py"
             and re.search(r"\.tables\s*\+\s*\w*distractors|distractors\.tables\)",
                           path.read_text(encoding="utf-8"))]
    assert not built, f"a corpus with distractors built outside engine/haystack.py: {built}"


def test_distractors_have_keys_of_their_own(settings, handmade_dir, source) -> None:
    data = load_dataset(handmade_dir, settings)
    three = haystack_distractors(data, f"3@{source}", settings)
    five = haystack_distractors(data, f"5@{source}", settings)
    assert haystack_distractors(data, f"3@{source}", settings) == three
    keys = [t.key for t in five.tables]
    assert {t.key for t in three.tables} < set(keys)
    # the copy of Empty_Results_0 is left out; the clash of keys is renamed
    assert ("haystack[distractors]other", "Empty") not in keys
    assert ("haystack[distractors]wiki", "Lakes_of_Norland_0") in keys
    assert not set(keys) & set(data.table_index)
    assert {distractor_source(k) for k in keys} == {"distractors"}
    assert distractor_source(("wiki", "Lakes_of_Norland_0")) is None
    info = five.info["haystack"]
    assert (info["size"], info["pool"], info["sources"]) == (5, 5, [str(source)])
    assert info["source_fingerprints"] == {
        str(source): load_dataset(source, settings).corpus_fingerprint}
    assert resolve_haystack(f"0@{source}", settings) is None  # N = 0 is the plain run
    assert resolve_haystack("3@demo-fact,demo-sql#2", settings) == "3@demo-fact,demo-sql#2"


def test_a_curves_specs_look_each_source_up_once(settings, source, monkeypatch) -> None:
    """resolve_haystacks gives resolve_haystack's answer for each spec and scans the
    dataset folders once per source, not once per size (the Ablations page's curve)."""
    from target_core.datasets import registry
    from target_core.engine.haystack import resolve_haystacks

    specs = [None, f"0@{source}", f"3@{source},demo-fact", f"30@demo-fact,{source}#1"]
    expected = [resolve_haystack(spec, settings) for spec in specs]
    scans: list[object] = []
    real = registry.discover
    monkeypatch.setattr(registry, "discover", lambda s: scans.append(s) or real(s))
    assert resolve_haystacks(specs, settings) == expected
    assert len(scans) == 2  # the folder and demo-fact


def test_a_corpus_without_queries_is_a_source(settings, handmade_dir, tmp_path) -> None:
    """As TARGET's haystack sets: a folder with corpus.jsonl only gives its tables."""
    corpus = tmp_path / "gittables-like"
    corpus.mkdir()
    (corpus / "corpus.jsonl").write_text("".join(
        json.dumps(table_record(f"T{i}", database_id="git")) + "\n" for i in range(4)))
    data = load_dataset(handmade_dir, settings)
    drawn = haystack_distractors(data, f"3@{corpus}", settings)
    assert len(drawn.tables) == 3 and drawn.info["haystack"]["pool"] == 4
    assert {distractor_source(t.key) for t in drawn.tables} == {"gittables-like"}
    (corpus / "corpus.jsonl").write_text("{not json\n")
    with pytest.raises(TargetError, match="corpus.jsonl"):
        haystack_distractors(data, f"3@{corpus}", settings)


def test_run_keys_without_a_haystack_are_unchanged() -> None:
    """Computed before RunConfig had a haystack: stored runs keep resuming and reusing."""
    config = RunConfig("demo-qa", "bm25")
    assert "haystack" not in config.to_dict()
    assert config_key(config, "fp0123") == "60fe91ce0d9e4d91f07a"
    assert config_key(RunConfig("demo-qa", "dense:minilm", top_k=5, limit=20, seed=3),
                      "fp0123") == "3b838c2c733326719ca7"
    with_one = RunConfig("demo-qa", "bm25", haystack="370@demo-fact,demo-sql")
    assert config_key(with_one, "fp0123") != config_key(config, "fp0123")
    assert RunConfig.from_dict(with_one.to_dict()) == with_one
    assert with_one.label == "bm25 + 370 distractors"


# --- runs ----------------------------------------------------------------------------

def test_a_distractor_is_never_gold(settings, handmade_dir, source) -> None:
    """bm25 on handmade-qa: q1 ("Which lake in Norland is deepest?") finds its table
    first alone; with the five distractors "Deepest lakes of Norland" (a distractor)
    ranks first, so the gold table falls to rank 2 and q1 fails at k = 1."""
    store = RunStore.in_workspace(settings.workspace)
    plain = run_retrieval(RunConfig(str(handmade_dir), "bm25"), settings=settings,
                          store=store).run
    haystack = run_retrieval(RunConfig(str(handmade_dir), "bm25", haystack=f"5@{source}"),
                             settings=settings, store=store).run
    assert haystack.config.haystack == f"5@{source}"
    assert haystack.index_info["n_texts"] == 4 + 5
    assert haystack.index_info["haystack"]["pool"] == 5
    before = store.get_result(plain.run_id, "q1")
    after = store.get_result(haystack.run_id, "q1")
    assert before.ranked[0][0] == ("wiki", "Lakes_of_Norland_0")
    assert after.ranked[0][0] == DEEP
    assert after.gold == [("wiki", "Lakes_of_Norland_0")]
    assert after.gold_ranks == {("wiki", "Lakes_of_Norland_0"): 2}
    assert after.metrics["recall@1"] == 0.0 and before.metrics["recall@1"] == 1.0
    for result in store.iter_results(haystack.run_id):  # no distractor is ever counted
        assert not {k for k, _ in result.ranked if distractor_source(k)} & set(result.gold)
    for k in (1, 3, 5, 10):
        assert haystack.metrics[f"recall@{k}"] <= plain.metrics[f"recall@{k}"]
    assert haystack.metrics["recall@1"] < plain.metrics["recall@1"]
    # the same configuration again is the stored run
    again = run_retrieval(RunConfig(str(handmade_dir), "bm25", haystack=f"5@{source}"),
                          settings=settings, store=store)
    assert again.reused and again.run.run_id == haystack.run_id
    # the Query page's read model names the distractor and opens it
    lookup = with_distractors(load_dataset(handmade_dir, settings), haystack.config.haystack,
                              settings)
    frame = ranked_frame(lookup, after)
    assert frame.iloc[0]["title"] == "distractor from distractors: Deepest lakes of Norland"
    assert not frame.iloc[0]["gold"] and frame.iloc[1]["gold"]
    assert lookup.table(DEEP).title == "Deepest lakes of Norland"
    bare = ranked_frame(load_dataset(handmade_dir, settings), after)
    assert bare.iloc[0]["title"] == "distractor from distractors"


# --- the curve -----------------------------------------------------------------------

def test_parse_and_default_sizes() -> None:
    assert parse_sizes("100, 0,1k,100") == (0, 100, 1000)
    with pytest.raises(ConfigError, match="haystack size 'ten'"):
        parse_sizes("0,ten")
    assert default_sizes(370) == (0, 30, 100, 370)
    assert default_sizes(5) == (0, 5)
    assert default_sizes(20_000) == (0, 30, 100, 300, 1000, 3000, 10_000, 20_000)


def test_the_curve_reads_the_stored_points(tmp_path, handmade_dir, source) -> None:
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "workspace"),
                                      "TARGET_DATASETS": str(handmade_dir)})
    store = RunStore.in_workspace(settings.workspace)
    data = load_dataset(handmade_dir, settings)
    runs = {n: run_retrieval(RunConfig(data.name, "bm25", haystack=f"{n}@{source}"
                                       if n else None), settings=settings, store=store).run
            for n in (0, 2, 5)}
    # another seed and another retriever are other curves
    run_retrieval(RunConfig(data.name, "bm25", haystack=f"3@{source}#1"), settings=settings,
                  store=store)
    curve = haystack_curve(store, settings, data, ["bm25", "tfidf"], [str(source)],
                           sizes=(0, 2))
    assert curve.pool == 5 and curve.n_tables == 4
    frame = curve.frame()
    bm25 = frame[frame["retriever"] == "bm25"].set_index("N")
    assert list(bm25.index) == [0, 2, 5]  # 5 is stored, so it is drawn too
    for n, run in runs.items():
        assert bm25.loc[n, "run_id"] == run.run_id
        assert bm25.loc[n, "recall@1"] == run.metrics["recall@1"]
        assert bm25.loc[n, "corpus"] == 4 + n and bm25.loc[n, "n_queries"] == 3
        assert bm25.loc[n, "open"] == f"query?run={run.run_id}"
    tfidf = frame[frame["retriever"] == "tfidf"]
    assert tfidf["run_id"].isna().all() and math.isnan(tfidf["recall@10"].iloc[0])
    assert [(c.retriever, c.haystack) for c in curve.missing()] == [
        ("tfidf", None), ("tfidf", f"2@{source}"), ("tfidf", f"5@{source}")]
    figure = haystack_figure(frame)
    assert [t.name for t in figure.data] == ["bm25 mean recall@1", "bm25 mean recall@10"]
    assert list(figure.data[1].x) == [0, 2, 5] and figure.layout.xaxis.type is None
    with pytest.raises(ConfigError, match="haystack size 9 is larger than the pool"):
        haystack_curve(store, settings, data, ["bm25"], [str(source)], sizes=(0, 9))


def test_the_figure_is_log_when_sizes_span_decades() -> None:
    import pandas as pd

    frame = pd.DataFrame({"retriever": ["bm25"] * 3, "N": [0, 10, 1000],
                          "corpus": [5, 15, 1005], "recall@1": [0.9, 0.8, 0.5],
                          "recall@10": [1.0, 0.9, 0.7], "run_id": ["a", "b", "c"]})
    figure = haystack_figure(frame)
    assert figure.layout.xaxis.type == "log"
    assert list(figure.data[0].x) == [10 / 3, 10, 1000]  # N = 0 one step left of 10
    assert list(figure.layout.xaxis.ticktext) == ["0", "10", "1,000"]


# --- the command and the pages -------------------------------------------------------

def test_the_haystack_command(tmp_path, handmade_dir, source, capsys) -> None:
    workspace = str(tmp_path / "cli-ws")
    argv = ["haystack", str(handmade_dir), "--workspace", workspace, "--source",
            str(source), "--sizes", "0,5", "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["pool"] == 5 and first["tables"] == 4
    assert [(p["retriever"], p["N"]) for p in first["points"]] == [("bm25", 0), ("bm25", 5)]
    assert first["points"][1]["recall@1"] < first["points"][0]["recall@1"]
    assert main(argv) == 0  # every point is complete: nothing runs again
    assert json.loads(capsys.readouterr().out)["points"] == first["points"]
    assert main(argv[:-3] + ["--sizes", "0,9"]) == 2
    assert "haystack size 9 is larger than the pool" in capsys.readouterr().err
    assert main(["run", "--workspace", workspace, "--dataset", str(handmade_dir),
                 "--retriever", "bm25", "--haystack", "x@demo-fact"]) == 2
    assert "haystack size 'x'" in capsys.readouterr().err
    assert main(["run", "--workspace", workspace, "--dataset", str(handmade_dir),
                 "--retriever", "bm25", "--haystack", f"2@{source}", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["config"]["haystack"] == f"2@{source}"


def test_the_ablations_page_draws_the_curve(app, tmp_path) -> None:
    start = app
    settings = load_settings(tmp_path / "ws")
    sources = "demo-fact,demo-qa,demo-sql"  # the other local datasets, the page's default
    ids = [run_retrieval(RunConfig("handmade-qa", "bm25",
                                   haystack=f"{n}@{sources}" if n else None),
                         settings=settings).run.run_id for n in (0, 30)]
    at = start("pages/ablations.py", dataset="handmade-qa", retriever="bm25")
    assert "Haystack" in [h.value for h in at.subheader]
    at.multiselect(key="haystack-retrievers").set_value(["bm25"])
    at.text_input(key="haystack-sizes").set_value("0,30")
    at.run()
    assert not at.exception and not at.error
    points = at.dataframe[-1].value
    assert list(points["run_id"]) == ids and list(points["N"]) == [0, 30]
    button = next(b for b in at.button if b.key == "haystack-run")
    assert button.label == "All points are stored" and button.disabled
    at.text_input(key="haystack-sizes").set_value("0,30,100")
    at.run()
    button = next(b for b in at.button if b.key == "haystack-run")
    assert button.label == "Run 1 missing point(s)"
    button.click()
    at.run(timeout=120)
    assert any("Launched 1 point(s)" in s.value for s in at.success)
    jobs = wait_for_jobs(settings.workspace)
    assert [j.status for j in jobs] == ["done"]
    at.run()
    assert list(at.dataframe[-1].value["N"]) == [0, 30, 100]
    assert at.dataframe[-1].value["run_id"].notna().all()


def test_the_query_page_opens_a_distractor(app, tmp_path, handmade_dir, source) -> None:
    start = app
    settings = load_settings(tmp_path / "ws")
    run = run_retrieval(RunConfig("handmade-qa", "bm25", haystack=f"5@{source}"),
                        settings=settings).run
    at = start("pages/query.py", run=run.run_id, query="q1",
               table=f"{DEEP[0]}/{DEEP[1]}")
    assert not at.exception and not at.error
    ranked = next(d.value for d in at.dataframe if "score" in d.value.columns)
    assert ranked.iloc[0]["title"].startswith("distractor from distractors")
    assert any("Deepest lakes of Norland" in m.value for m in at.markdown)
