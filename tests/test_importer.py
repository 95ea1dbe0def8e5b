"""TARGET's downstream results out and in: a heuristic run exported as TARGET's two JSONL
files imports back with the same numbers, a downstream file imports alone, the CSV
export carries the answers, and bad lines name file, line and field."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from target_core.cli import main
from target_core.config import load_settings
from target_core.engine.export import export_run
from target_core.engine.importer import import_target_results
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import DatasetError
from target_core.run_config import GenerationConfig, RunConfig

RETRIEVAL_PREFIXES = ("recall", "capped_recall", "hit@", "mrr", "ndcg", "db_hit",
                      "retrieval_ms")


def downstream_of(metrics: dict[str, float]) -> dict[str, float]:
    """Downstream metrics a re-scoring reproduces exactly: not latencies, not VES (the
    import times the SQL again)."""
    return {k: v for k, v in metrics.items()
            if not k.startswith(RETRIEVAL_PREFIXES) and "_ms_" not in k
            and k.split("/")[0] != "ves"}


def retrieval_of(metrics: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in metrics.items()
            if k.startswith(RETRIEVAL_PREFIXES) and "_ms_" not in k}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Heuristic runs over bm25 on demo-sql and demo-qa, exported as TARGET files."""
    workspace = tmp_path_factory.mktemp("ws")
    settings = load_settings(workspace)
    store = RunStore.in_workspace(workspace)
    out = {}
    for dataset in ("demo-sql", "demo-qa"):
        run = run_retrieval(RunConfig(dataset, "bm25",
                                      generation=GenerationConfig("heuristic")),
                            settings=settings, store=store).run
        paths = export_run(store, run.run_id, "target",
                           tmp_path_factory.mktemp(dataset) / "out.jsonl")
        out[dataset] = (run, paths)
    return settings, store, out


def test_target_export_writes_retrieval_and_downstream_files(runs) -> None:
    _, store, out = runs
    run, (retrieval, downstream) = out["demo-sql"]
    assert retrieval.name == "out.jsonl" and downstream.name == "out.jsonl.downstream.jsonl"
    lines = [json.loads(line) for line in downstream.read_text().splitlines()]
    assert len(lines) == run.n_queries == 242
    results = {r.query_id: r for r in store.iter_results(run.run_id)}
    for line in lines:
        assert set(line) == {"dataset_name", "query_id", "generated_results"}
        assert line["dataset_name"] == "demo-sql"
        record = results[line["query_id"]].generation
        sql, database = line["generated_results"]
        assert sql == record["answer"] and database == (record["sql"]["database_id"] or "")
    _, (_, qa_downstream) = out["demo-qa"]
    first = json.loads(qa_downstream.read_text().splitlines()[0])
    assert isinstance(first["generated_results"], str)


@pytest.mark.parametrize("dataset", ["demo-sql", "demo-qa"])
def test_exported_files_import_to_the_same_numbers(runs, dataset: str) -> None:
    settings, store, out = runs
    run, (retrieval, downstream) = out[dataset]
    imported = import_target_results(str(retrieval), settings=settings,
                                     downstream=str(downstream), store=store)
    assert imported.status == "complete" and imported.n_done == run.n_queries
    assert imported.config.retriever == "imported:out"
    assert imported.config.generation.generator == "imported:out"
    assert downstream_of(imported.metrics) == downstream_of(run.metrics)
    assert retrieval_of(imported.metrics) == retrieval_of(run.metrics)
    assert not any("_ms_" in k for k in retrieval_of(imported.metrics))
    headline = "execution_accuracy" if dataset == "demo-sql" else "sacrebleu"
    assert imported.metrics[headline] > 0


@pytest.mark.parametrize("dataset", ["demo-sql", "demo-qa"])
def test_a_downstream_file_imports_alone(runs, dataset: str) -> None:
    settings, store, out = runs
    run, (_, downstream) = out[dataset]
    imported = import_target_results(str(downstream), settings=settings, label="answers",
                                     store=store)
    assert imported.config.retriever == "imported:none"
    assert imported.config.generation.generator == "imported:answers"
    assert not any(k.startswith(RETRIEVAL_PREFIXES) for k in imported.metrics)
    # the SQL file names the database each query ran on, so nothing depends on retrieval
    assert downstream_of(imported.metrics) == downstream_of(run.metrics)
    results = list(store.iter_results(imported.run_id))
    assert len(results) == run.n_queries and all(r.ranked == [] for r in results)
    assert all(r.generation is not None for r in results)


def test_csv_export_carries_answers_and_sql_error_classes(runs, tmp_path: Path) -> None:
    _, store, out = runs
    sql_run, _ = out["demo-sql"]
    (path,) = export_run(store, sql_run.run_id, "csv", tmp_path / "sql.csv")
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 242
    assert {"answer", "generation_error", "error_class", "execution_match",
            "recall@10"} <= set(rows[0])
    results = {r.query_id: r for r in store.iter_results(sql_run.run_id)}
    for row in rows:
        record = results[row["query_id"]].generation
        assert row["answer"] == record["answer"]
        assert row["error_class"] == record["sql"]["error_class"]
        assert row["generation_error"] == ""
    qa_run, _ = out["demo-qa"]
    (path,) = export_run(store, qa_run.run_id, "csv", tmp_path / "qa.csv")
    header = next(csv.reader(path.open(encoding="utf-8")))
    assert "answer" in header and "sentence_bleu" in header and "error_class" not in header


def test_cli_import_with_downstream_prints_the_run_summary(runs, capsys) -> None:
    settings, _, out = runs
    run, (retrieval, downstream) = out["demo-qa"]
    code = main(["import", str(retrieval), "--downstream", str(downstream), "--label", "cli",
                 "--workspace", str(settings.workspace), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    assert set(summary) == {"run_id", "dataset", "task", "retriever", "config", "n_queries",
                            "metrics"}
    assert summary["dataset"] == "demo-qa" and summary["task"] == "qa"
    assert summary["retriever"] == "imported:cli" and summary["n_queries"] == 260
    assert summary["config"]["generation"]["generator"] == "imported:cli"
    assert downstream_of(summary["metrics"]) == downstream_of(run.metrics)


# --- bad input ------------------------------------------------------------------------------

def _line(query_id: str, answer) -> str:
    return json.dumps({"dataset_name": "x", "query_id": query_id,
                       "generated_results": answer}) + "\n"


@pytest.mark.parametrize(("dataset", "second", "field", "reason"), [
    ("demo-qa", _line("nope", "an answer"), "query_id", "not in dataset"),
    ("demo-qa", _line("qa-0002", 42), "generated_results", "must be a string"),
    ("demo-qa", _line("qa-0002", ["two", "parts"]), "generated_results", "must be a string"),
    ("demo-qa", _line("qa-0001", "again"), "query_id", "appears twice"),
    ("demo-qa", '{"dataset_name": "x", "query_id": "qa-0002"}\n', "generated_results",
     "missing"),
    ("demo-sql", _line("demo-sql-0002", "SELECT 1"), "generated_results",
     "[sql, database_id]"),
    ("demo-sql", _line("demo-sql-0002", ["SELECT 1"]), "generated_results",
     "[sql, database_id]"),
    ("demo-sql", _line("demo-sql-0002", ["SELECT 1", 3]), "generated_results",
     "[sql, database_id]"),
])
def test_bad_downstream_lines_name_file_line_and_field(settings, tmp_path: Path,
                                                       dataset: str, second: str, field: str,
                                                       reason: str) -> None:
    first = (_line("qa-0001", "fine") if dataset == "demo-qa"
             else _line("demo-sql-0001", ["SELECT 1", "university"]))
    path = tmp_path / "bad.jsonl"
    path.write_text(first + second, encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        import_target_results(str(path), settings=settings, dataset=dataset)
    error = info.value
    assert error.path == str(path) and error.line == 2 and error.field == field
    assert reason in str(error) and str(path) in str(error)
    assert "line 2" in str(error) and f"field '{field}'" in str(error)
    assert not (settings.workspace / "runs.sqlite").exists()  # nothing was stored


def test_empty_files_are_dataset_errors(settings, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no results in the file") as info:
        import_target_results(str(empty), settings=settings, dataset="demo-qa")
    assert info.value.path == str(empty)
    retrieval = tmp_path / "retrieval.jsonl"
    retrieval.write_text(json.dumps({"dataset_name": "demo-qa", "query_id": "qa-0001",
                                     "retrieval_results": [["wiki", "x"]]}) + "\n")
    with pytest.raises(DatasetError, match="no results in the file") as info:
        import_target_results(str(retrieval), settings=settings, downstream=str(empty))
    assert info.value.path == str(empty)
    with pytest.raises(DatasetError, match="pass --dataset") as info:  # no name to go by
        import_target_results(str(empty), settings=settings)
    assert info.value.line == 1 and info.value.field == "dataset_name"


def test_a_file_with_a_byte_order_mark_is_recognised(settings, tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({
        "dataset_name": "demo-qa", "query_id": "qa-0001",
        "generated_results": "an answer"}).encode() + b"\n")
    imported = import_target_results(str(path), settings=settings)
    assert imported.config.retriever == "imported:none" and imported.n_done == 1
    assert set(imported.metrics) >= {"sacrebleu", "rouge_l"}


def test_missing_file_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    from target_core.cli import main

    code = main(["import", str(tmp_path / "nope.jsonl"), "--workspace", str(tmp_path / "ws")])
    err = capsys.readouterr().err
    assert code == 2 and "nope.jsonl: file not found" in err and len(err.splitlines()) == 1


# --- TARGET's results folder: <dir>/<dataset_name>/<k>.jsonl -------------------------------

def target_line(dataset: str, query_id, pairs) -> str:
    """One line as TARGET's pydantic models write it (`model_dump_json`: no spaces)."""
    return json.dumps({"dataset_name": dataset, "query_id": query_id,
                       "retrieval_results": [list(p) for p in pairs]},
                      separators=(",", ":")) + "\n"


def target_recalls(lists: dict[str, list], gold: dict[str, tuple]) -> tuple[float, float]:
    """TARGET 0.1.3's recall and capped_recall (tasks/AbsTask.py), restated."""
    overlap = total = capped = 0
    for query_id, retrieved in lists.items():
        golds = set(gold[query_id])
        overlap += len(golds & {tuple(p) for p in retrieved})
        total += len(golds)
        capped += min(len(golds), len(retrieved))
    return overlap / total, overlap / capped


@pytest.fixture(scope="module")
def target_dir(runs, tmp_path_factory):
    """bm25's demo-qa lists written as TARGET's evaluator would at k = 5 and 10, under
    <root>/mine/demo-qa/<k>.jsonl, and answers at k = 10 under <root>/answers/."""
    _, store, out = runs
    run, _ = out["demo-qa"]
    root = tmp_path_factory.mktemp("target-results")
    lists = {r.query_id: [k for k, _ in r.ranked] for r in store.iter_results(run.run_id)}
    answers = {r.query_id: r.generation["answer"] for r in store.iter_results(run.run_id)}
    for k in (5, 10):
        folder = root / "mine" / "demo-qa"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{k}.jsonl").write_text("".join(
            target_line("demo-qa", q, keys[:k]) for q, keys in lists.items()))
    down = root / "answers" / "demo-qa"
    down.mkdir(parents=True)
    (down / "10.jsonl").write_text("".join(json.dumps(
        {"dataset_name": "demo-qa", "query_id": q, "generated_results": a},
        separators=(",", ":")) + "\n" for q, a in answers.items()))
    return root, lists


def test_a_target_results_folder_imports_one_run_per_file(runs, target_dir) -> None:
    from target_core.engine.importer import import_target

    settings, store, _ = runs
    root, lists = target_dir
    imported = import_target(str(root / "mine"), settings=settings, store=store,
                             downstream=str(root / "answers"))
    assert [(i.run.config.retriever, i.run.config.top_k) for i in imported] == [
        ("imported:mine", 5), ("imported:mine", 10)]
    assert all(i.warnings == () for i in imported)
    five, ten = (i.run for i in imported)
    assert five.config.generation is None
    assert ten.config.generation.generator == "imported:mine"
    assert ten.metrics["sacrebleu"] > 0
    gold = {q.query_id: q.gold for q in _demo(settings, "demo-qa").queries}
    for run, k in ((five, 5), (ten, 10)):
        recall, capped = target_recalls({q: keys[:k] for q, keys in lists.items()}, gold)
        assert run.metrics[f"recall_micro@{k}"] == recall  # bit for bit, as TARGET's
        assert run.metrics[f"capped_recall@{k}"] == capped
    # one dataset's folder imports the same way
    alone = import_target(str(root / "mine" / "demo-qa"), settings=settings, store=store)
    assert [i.run.config.label for i in alone] == ["imported:mine", "imported:mine"]


def test_cli_imports_a_target_results_folder_in_one_command(runs, target_dir,
                                                            capsys) -> None:
    settings, _, _ = runs
    root, _ = target_dir
    code = main(["import", str(root / "mine"), "--downstream", str(root / "answers"),
                 "--label", "bm25-target", "--workspace", str(settings.workspace), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summaries = json.loads(captured.out)
    assert [(s["retriever"], s["config"]["top_k"]) for s in summaries] == [
        ("imported:bm25-target", 5), ("imported:bm25-target", 10)]
    assert "capped_recall@10" in summaries[1]["metrics"] and captured.err == ""
    code = main(["import", str(root / "mine"), "--workspace", str(settings.workspace)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and len(lines) == 2
    assert "imported:mine at k = 5 on demo-qa, 260 queries; R@5 " in lines[0]
    assert "capped R@5 " in lines[0] and "mean recall@5 " in lines[0]  # metrics.labels


def _demo(settings, name: str):
    from target_core.datasets import load_dataset

    return load_dataset(name, settings)


def test_a_folder_without_target_files_says_what_it_expects(settings, tmp_path: Path
                                                            ) -> None:
    from target_core.engine.importer import import_target

    (tmp_path / "empty" / "demo-qa").mkdir(parents=True)
    with pytest.raises(DatasetError, match=r"no <dataset_name>/<k>.jsonl files"):
        import_target(str(tmp_path / "empty"), settings=settings)


# --- top_k ----------------------------------------------------------------------------------

def test_top_k_is_given_not_guessed(settings, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(target_line("demo-qa", "qa-0001", [("wiki", "a"), ("wiki", "b")])
                    + target_line("demo-qa", "qa-0002", [("wiki", "c")]))
    run = import_target_results(str(path), settings=settings, top_k=5)
    assert run.config.top_k == 5 and "recall@5" in run.metrics
    from target_core.engine.importer import import_file

    guessed = import_file(str(path), settings=settings, label="guess")
    assert guessed.run.config.top_k == 2
    assert any("took top_k = 2 from the longest list; pass --top-k" in w
               for w in guessed.warnings)
    # more than k: stored (TARGET counts every entry, tests/test_plugins_target.py) and said
    over = import_file(str(path), settings=settings, top_k=1, label="over")
    assert any("1 query list more than k = 1 tables (1 extra entry)" in w
               for w in over.warnings), over.warnings


# --- partial files ----------------------------------------------------------------------------

def test_a_downstream_file_missing_queries_is_refused_unless_partial(runs, tmp_path: Path,
                                                                      capsys) -> None:
    settings, store, out = runs
    _, (retrieval, downstream) = out["demo-qa"]
    five = tmp_path / "five.jsonl"
    five.write_text("".join(downstream.read_text().splitlines(keepends=True)[:5]))
    with pytest.raises(DatasetError, match=r"answers 5 queries, 5 of the 260 in .*--partial"):
        import_target_results(str(retrieval), settings=settings, downstream=str(five),
                              store=store)
    from target_core.engine.importer import import_file

    imported = import_file(str(retrieval), settings=settings, downstream=str(five),
                           store=store, partial=True, label="five")
    assert imported.run.n_queries == imported.run.n_done == 5
    assert any("imported the 5 both hold" in w for w in imported.warnings)
    assert any("holds 5 of the 260 queries of demo-qa" in w for w in imported.warnings)
    # the CLI says so on stderr, loudly, and the downstream file alone is a 5-query run
    code = main(["import", str(five), "--workspace", str(settings.workspace)])
    err = capsys.readouterr().err
    assert code == 0 and "warning: " in err and "5 of the 260 queries" in err


# --- TARGET's dataset names -------------------------------------------------------------------

def test_target_dataset_names_resolve_to_a_dataset_here_or_its_hub_dataset(
        settings, tmp_path: Path, monkeypatch) -> None:
    import target_core.engine.import_files as import_files
    from target_core.engine.import_files import resolve_target_dataset

    # a dataset here named like TARGET's wins
    folder = settings.workspace / "datasets" / "fetaqa"
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps(
        {"database_id": "0", "table_id": "t", "table": [["a"], ["1"]]}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps(
        {"query_id": "1", "query": "q?", "answer": "1", "table_id": "t",
         "database_id": "0"}) + "\n")
    assert resolve_target_dataset("fetaqa", settings, source="x").source == str(folder)
    # else TARGET's name is its hub dataset (spider-test is hub:spider)
    asked = []
    demo = _demo(settings, "demo-sql")
    monkeypatch.setattr(import_files, "load_dataset",
                        lambda name, _settings: asked.append(name) or demo)
    assert resolve_target_dataset("spider-test", settings, source="x") is demo
    assert asked == ["hub:spider"]
    with pytest.raises(DatasetError, match="pass --dataset with its name or folder") as info:
        resolve_target_dataset("my-own-set", settings, source="results.jsonl")
    assert "spider-test" in str(info.value) and info.value.path == "results.jsonl"


def test_an_unreachable_hub_dataset_says_which_dataset_to_pass(tmp_path: Path,
                                                               monkeypatch) -> None:
    import socket

    from target_core.errors import DatasetUnavailableError

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                      "HF_ENDPOINT": f"http://127.0.0.1:{port}",
                                      "TARGET_HUB_TIMEOUT": "2"})
    path = tmp_path / "tabfact" / "10.jsonl"
    path.parent.mkdir()
    path.write_text(target_line("tabfact", 0, [("0", "t")]))
    with pytest.raises(DatasetUnavailableError) as info:
        import_target_results(str(path), settings=settings)
    message = str(info.value)
    assert "TARGET's 'tabfact', which is hub:tabfact here" in message
    assert "Pass --dataset" in message and str(path) in message


# --- parity at the seams: all or nothing, datasets per folder, nothing silent -----------------

def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _two_queries(settings, dataset_name: str = "demo-qa") -> list[str]:
    """Two lines on demo-qa's first two queries, each listing its gold tables."""
    data = _demo(settings, "demo-qa")
    return [target_line(dataset_name, q.query_id, q.gold) for q in data.queries[:2]]


def _run_count(settings) -> int:
    path = settings.workspace / "runs.sqlite"
    return len(RunStore(path).list_runs()) if path.exists() else 0


def test_a_folder_with_an_unknown_dataset_stores_nothing(settings, tmp_path: Path,
                                                         capsys) -> None:
    from target_core.engine.importer import import_target

    root = tmp_path / "results" / "mine"
    _write(root / "demo-qa" / "10.jsonl", _two_queries(settings))
    nosuch = _write(root / "nosuch" / "10.jsonl", _two_queries(settings, "nosuch"))
    with pytest.raises(DatasetError, match="'nosuch'") as info:
        import_target(str(root), settings=settings)
    assert info.value.path == str(nosuch)
    assert _run_count(settings) == 0  # demo-qa/ came first and was not stored either
    # the CLI says so in one line and stores nothing either
    code = main(["import", str(root), "--workspace", str(settings.workspace)])
    err = capsys.readouterr().err
    assert code == 2 and "nosuch" in err and len(err.splitlines()) == 1
    assert _run_count(settings) == 0
    # a bad line in the last file stores nothing either
    nosuch.unlink()
    bad = _write(root / "demo-qa" / "20.jsonl", [_two_queries(settings)[0], "not json\n"])
    with pytest.raises(DatasetError) as info:
        import_target(str(root), settings=settings)
    assert info.value.path == str(bad) and info.value.line == 2
    assert _run_count(settings) == 0


def test_a_folder_of_target_names_resolves_them_as_a_file_does(settings, tmp_path: Path,
                                                               monkeypatch) -> None:
    import target_core.engine.import_files as import_files
    from target_core.engine.importer import import_target

    demo = _demo(settings, "demo-sql")
    asked = []
    monkeypatch.setattr(import_files, "load_dataset",
                        lambda name, _settings: asked.append(name) or demo)
    root = tmp_path / "mine"
    _write(root / "spider-test" / "10.jsonl",
           [target_line("spider-test", q.query_id, q.gold) for q in demo.queries[:2]])
    (imported,) = import_target(str(root), settings=settings)
    assert asked == ["hub:spider"] and imported.run.config.dataset == "demo-sql"


def test_dataset_name_equals_path_maps_a_folder_to_a_dataset(settings, tmp_path: Path,
                                                             capsys) -> None:
    root = tmp_path / "results" / "mine"
    _write(root / "demo-qa" / "10.jsonl", _two_queries(settings))
    _write(root / "nosuch" / "5.jsonl", _two_queries(settings, "nosuch"))
    workspace = str(settings.workspace)
    code = main(["import", str(root), "--dataset", "typo=demo-qa", "--workspace", workspace])
    err = capsys.readouterr().err
    assert code == 2 and "--dataset typo=demo-qa" in err and "demo-qa, nosuch" in err
    code = main(["import", str(root), "--dataset", "demo-qa", "--dataset", "data/x",
                 "--workspace", workspace])
    assert code == 2 and "one plain --dataset at most" in capsys.readouterr().err
    assert _run_count(settings) == 0
    demo = str(Path(_demo(settings, "demo-qa").source))  # a folder path works as a name
    code = main(["import", str(root), "--dataset", f"nosuch={demo}",
                 "--workspace", workspace, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summaries = json.loads(captured.out)
    assert [(s["config"]["dataset"], s["config"]["top_k"], s["n_queries"])
            for s in summaries] == [("demo-qa", 10, 2), (demo, 5, 2)]
    assert summaries[1]["metrics"]["recall@5"] == 1.0  # the lists are the gold
    # a plain --dataset keeps its meaning for a single file
    single = _write(tmp_path / "single.jsonl", _two_queries(settings, "whatever"))
    code = main(["import", str(single), "--dataset", "demo-qa", "--top-k", "3",
                 "--workspace", workspace, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["dataset"] == "demo-qa"


def test_tables_not_in_the_corpus_are_counted_and_warned(settings, tmp_path: Path) -> None:
    from target_core.engine.importer import import_file

    data = _demo(settings, "demo-qa")
    first, second, third = data.queries[:3]
    path = _write(tmp_path / "run.jsonl", [
        target_line("demo-qa", first.query_id, [*first.gold, ("wiki", "nope-1"),
                                                 ("wiki", "nope-2")]),
        target_line("demo-qa", second.query_id, [("elsewhere", "nope-3")]),
        target_line("demo-qa", third.query_id, third.gold)])
    imported = import_file(str(path), settings=settings, top_k=10)
    warning = (f'{path}: 3 retrieved tables in 2 queries are not in demo-qa\'s corpus, '
               f'e.g. ["wiki", "nope-1"], ["wiki", "nope-2"], ["elsewhere", "nope-3"]')
    assert any(w.startswith(warning) for w in imported.warnings), imported.warnings
    run = imported.run
    assert any(w.startswith(warning) for w in run.index_info["import_warnings"])
    assert run.index_info["table_checks"]["unknown_tables"] == 3
    assert run.index_info["table_checks"]["unknown_queries"] == 2
    # they stay in the list, as TARGET counts them: they just never match gold
    ranked = {r.query_id: [k for k, _ in r.ranked]
              for r in RunStore.in_workspace(settings.workspace).iter_results(run.run_id)}
    assert ranked[first.query_id][-2:] == [("wiki", "nope-1"), ("wiki", "nope-2")]
    assert ranked[second.query_id] == [("elsewhere", "nope-3")]


def test_repeated_tables_in_a_list_are_counted_and_warned(settings, tmp_path: Path) -> None:
    from target_core.engine.importer import import_file

    data = _demo(settings, "demo-qa")
    first, second = data.queries[:2]
    other = next(t.key for t in data.tables if t.key not in first.gold)
    gold = first.gold[0]
    path = _write(tmp_path / "run.jsonl", [
        target_line("demo-qa", first.query_id, [gold, other, gold, other, gold]),
        target_line("demo-qa", second.query_id, second.gold)])
    imported = import_file(str(path), settings=settings, top_k=10)
    warning = (f"{path}: 3 repeated tables in 1 query, e.g. {json.dumps(list(gold))}; ranks "
               "use each table's first place, recall_micro@k and capped_recall@k count the "
               "lists as written, as TARGET does")
    assert any(w.startswith(warning) for w in imported.warnings), imported.warnings
    assert imported.run.index_info["table_checks"]["repeated_tables"] == 3
    assert any(w.startswith(warning) for w in imported.run.index_info["import_warnings"])
    ranked = {r.query_id: [k for k, _ in r.ranked] for r in
              RunStore.in_workspace(settings.workspace).iter_results(imported.run.run_id)}
    assert ranked[first.query_id] == [gold, other]  # ranked at each first place
    # a clean file warns of nothing
    clean = _write(tmp_path / "clean.jsonl", _two_queries(settings))
    assert import_file(str(clean), settings=settings, top_k=10).warnings == (
        f"{clean}: holds 2 of the 260 queries of demo-qa; the run's numbers are over "
        "those 2 only",)


def test_the_same_file_imported_twice_is_one_run(settings, tmp_path: Path, capsys) -> None:
    from target_core.engine.importer import import_file

    path = _write(tmp_path / "mine" / "demo-qa" / "5.jsonl", _two_queries(settings))
    first = import_file(str(path), settings=settings)
    again = import_file(str(path), settings=settings)
    assert not first.existing and again.existing
    assert again.run.run_id == first.run.run_id and _run_count(settings) == 1
    assert again.warnings[0].startswith(f"{path}: already imported as run "
                                        f"{first.run.run_id}")
    code = main(["import", str(tmp_path / "mine"), "--workspace", str(settings.workspace)])
    captured = capsys.readouterr()
    assert code == 0 and _run_count(settings) == 1
    assert captured.out.startswith(f"already imported as run {first.run.run_id}: ")
    assert "warning: " in captured.err and "already imported" in captured.err
    # another label, other bytes or another dataset make another run
    assert not import_file(str(path), settings=settings, label="other").existing
    path.write_text(path.read_text() + target_line("demo-qa", "qa-0003", []))
    assert not import_file(str(path), settings=settings).existing
    assert _run_count(settings) == 3
