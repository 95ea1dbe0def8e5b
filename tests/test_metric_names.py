"""One name per number (issue 25, item 1): bm25 and tfidf on demo-qa, every page and
command that shows a run-level metric of them read as (run, label, value), and no label
may carry two values for one run, nor a value other than the one its definition gives
(metrics.labels). Before the fix bm25's "R@10" read 0.952 on the Overview (TARGET's
micro recall) and 0.950 on the Ablations page (the mean over queries)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from target_core.cli.main import main
from target_core.config import load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunRecord, RunStore
from target_core.metrics.labels import definition, label, metric_of
from target_core.run_config import RunConfig

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"^-?\d+(?:\.(\d+))?")
Seen = list[tuple[str, str, str, float, int]]
"""(where, run_id, label, value, decimals shown; 9 when unrounded)."""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict]]:
    path = tmp_path_factory.mktemp("names") / "ws"
    settings = load_settings(path)
    runs = {spec: run_retrieval(RunConfig("demo-qa", spec), settings=settings).run
            for spec in ("bm25", "tfidf")}
    import streamlit as st

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TARGET_WORKSPACE", str(path))
        patch.delenv("TARGET_DATASETS", raising=False)
        patch.chdir(ROOT)
        # the pages' caches outlive an AppTest: another test's store or lists in this
        # worker process must not reach these pages
        st.cache_resource.clear()
        st.cache_data.clear()
        yield path, runs


def _value(cell: Any) -> tuple[float, int] | None:
    """A shown number and its decimals ("0.950 [0.92, 0.97]" -> (0.95, 3))."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, int | float):
        if pd.isna(cell):
            return None
        decimals = repr(float(cell)).partition(".")[2]  # a frame may hold rounded values
        return float(cell), min(9, len(decimals)) if "e" not in decimals else 9
    match = NUMBER.match(str(cell).strip())
    return (float(match.group(0)), len(match.group(1) or "")) if match else None


def _frame_pairs(where: str, frame: pd.DataFrame, run_of_row: Any) -> Seen:
    seen: Seen = []
    for index, row in frame.iterrows():
        run_id = run_of_row(index, row)
        for column, cell in row.items():
            name = column[-1] if isinstance(column, tuple) else str(column)
            if run_id and (shown := _value(cell)) is not None:
                seen.append((where, run_id, name, *shown))
    return seen


def _text_pairs(where: str, text: str, runs: dict[str, RunRecord]) -> Seen:
    """Pairs from a CLI table (columns at the header's offsets, a run id in each row)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = next(line for line in lines if line.startswith("run_id"))
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", header)]
    names = [header[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
    ids = {r.run_id for r in runs.values()}
    seen: Seen = []
    for line in lines[lines.index(header) + 1:]:
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        row = dict(zip(names, cells, strict=True))
        if row.get("run_id") not in ids:
            break
        for name, cell in row.items():
            if (shown := _value(cell)) is not None and name not in ("run_id", "k"):
                seen.append((where, row["run_id"], name, *shown))
    return seen


def _pages(runs: dict[str, RunRecord]) -> Seen:
    from streamlit.testing.v1 import AppTest

    bm25, tfidf = runs["bm25"].run_id, runs["tfidf"].run_id
    by_name = {spec: r.run_id for spec, r in runs.items()}

    def start(page: str, **params: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.switch_page(page)
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception, at.exception
        return at

    seen: Seen = []
    board = start("pages/overview.py").dataframe[0].value  # one dataset: flat columns
    seen += _frame_pairs("Overview", board.drop(columns=[c for c in board.columns
                                                         if c != "R@10"]),
                         lambda index, row: by_name.get(board.at[index, "retriever"]))
    run_page = start("pages/run.py")
    for listed in (d.value for d in run_page.dataframe if "run" in d.value.columns):
        # the run column is its Query page link ("query?run=ID"); both runs have k = 10
        ids = listed["run"].str.partition("run=")[2]
        listed = listed.rename(columns={"R@k": "R@10"}).drop(columns=["run", "k"],
                                                            errors="ignore")
        seen += _frame_pairs("Run page", listed,
                             lambda index, row, ids=ids: ids.at[index])
    compare = start("pages/compare.py", runs=f"{bm25},{tfidf}")
    headline = compare.dataframe[0].value
    seen += _frame_pairs("Compare", headline.drop(columns=["run_id"]),
                         lambda index, row: headline.at[index, "run_id"])
    for _, row in compare.dataframe[1].value.iterrows():
        for run_id, column in ((bm25, "baseline mean"), (tfidf, "compared mean")):
            seen.append(("Compare tests", run_id, row["metric"], *_value(row[column])))
    ablation = start("pages/ablations.py", run=bm25)
    table = ablation.table[0].value
    seen += _frame_pairs("Ablations", table.drop(columns=["run", "p vs base"]),
                         lambda index, row: table.at[index, "run"])
    points = next(d.value for d in ablation.dataframe if "N" in d.value.columns)
    seen += _frame_pairs("Haystack", points[points["N"] == 0].drop(
        columns=["N", "corpus", "n_queries", "run_id"]),
        lambda index, row: points.at[index, "run_id"])
    return seen


def _commands(workspace: Path, runs: dict[str, RunRecord],
              capsys: pytest.CaptureFixture[str]) -> Seen:
    def out(*argv: str) -> str:
        assert main([*argv, "--workspace", str(workspace)]) == 0
        return capsys.readouterr().out

    bm25, tfidf = runs["bm25"].run_id, runs["tfidf"].run_id
    seen = _text_pairs("runs", out("runs").replace("R@k", "R@10"), runs)
    for run in runs.values():
        for line in out("show", run.run_id).splitlines():
            parts = re.split(r"\s{2,}", line.strip())
            if line.startswith("  ") and len(parts) >= 2 and (shown := _value(parts[1])):
                seen.append(("show", run.run_id, parts[0], *shown))
    compared = out("compare", bm25, tfidf)
    for line in compared.splitlines():
        cells = line.split()
        if cells and cells[0] in (bm25, tfidf) and len(cells) >= 4:
            seen.append(("compare", cells[0], cells[2], *_value(cells[3])))
    ablate = out("ablate", "--dataset", "demo-qa", "--retriever", "bm25", "--formats",
                 "markdown,csv,json")
    header = next(line for line in ablate.splitlines() if line.startswith("variant"))
    row = next(line for line in ablate.splitlines() if bm25 in line)
    for name, cell in zip(header.split()[1:], row.split()[2:], strict=False):  # "all rows"
        if name.startswith("R@") and (shown := _value(cell)) is not None:
            seen.append(("ablate", bm25, name, *shown))
    return seen


def _import(workspace: Path, run: RunRecord, capsys: pytest.CaptureFixture[str]
            ) -> tuple[RunRecord, Seen]:
    """bm25 exported in TARGET's format and imported back: the summary's pairs."""
    path = workspace.parent / "bm25.jsonl"
    assert main(["export", run.run_id, "--format", "target", "--out", str(path),
                 "--workspace", str(workspace)]) == 0
    capsys.readouterr()
    assert main(["import", str(path), "--dataset", "demo-qa", "--label", "again",
                 "--workspace", str(workspace)]) == 0
    summary = capsys.readouterr().out
    run_id = re.search(r"run (\S+):", summary).group(1)  # type: ignore[union-attr]
    pairs = re.findall(r"([A-Za-z ]*R@\d+|mean recall@\d+) (\d\.\d+)", summary.split(";")[1])
    imported = RunStore.in_workspace(workspace).get_run(run_id)
    return imported, [("import", run_id, name.strip(), *_value(value)) for name, value in pairs]


def _conflicts(seen: Seen, runs: dict[str, RunRecord]) -> list[str]:
    """Two values under one label for one run, or a value its label's definition denies."""
    problems = []
    by_key: dict[tuple[str, str], list[tuple[str, float, int]]] = {}
    for where, run_id, name, value, decimals in seen:
        by_key.setdefault((run_id, name), []).append((where, value, decimals))
    for (run_id, name), values in by_key.items():
        run = runs[run_id]
        metric = metric_of(name, run.task)
        expected = [("definition", run.metrics[metric], 9)] if metric in run.metrics else []
        for i, (where_a, a, da) in enumerate(values + expected):
            for where_b, b, db in (values + expected)[i + 1:]:
                if abs(a - b) > 0.5 * 10 ** -min(da, db) + 1e-9:
                    problems.append(f"{run_id} {name}: {a} on {where_a}, {b} on {where_b}")
    return problems


def test_every_page_and_command_gives_one_value_per_name(
        workspace: tuple[Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    path, runs = workspace
    seen = _pages(runs) + _commands(path, runs, capsys)
    imported, from_import = _import(path, runs["bm25"], capsys)
    everything = {r.run_id: r for r in runs.values()} | {imported.run_id: imported}
    names = {(where, name) for where, _, name, _, _ in seen + from_import}
    # every surface was read, and each shows TARGET's recall under "R@10"
    assert {where for where, name in names if name == "R@10"} == {
        "Overview", "Run page", "Ablations", "runs", "show", "ablate", "import"}
    assert ("Haystack", "mean recall@10") in names and ("import", "mean recall@10") in names
    assert not _conflicts(seen + from_import, everything)
    bm25 = runs["bm25"].metrics  # demo-qa has queries with two gold tables: they differ
    assert round(bm25["recall_micro@10"], 3) == 0.952 and round(bm25["recall@10"], 3) == 0.95


def test_labels_are_one_name_per_definition() -> None:
    assert (label("recall_micro@10"), label("recall@10"), label("capped_recall@5")) == (
        "R@10", "mean recall@10", "capped R@5")
    assert label("recall_micro@10", "qa") == "R@10" and label("db_hit@1", "sql") == "R@1"
    assert label("recall_micro@1", "sql") == "R@1 tables" and label("sacrebleu", "qa") == "SB"
    assert metric_of("R@10") == "recall_micro@10" and metric_of("R@1", "sql") == "db_hit@1"
    assert metric_of("mean recall@3") == "recall@3" and metric_of("nope") is None
    assert "micro" in definition("recall_micro@10") and "mean" in definition("recall@10")
    keys = [f"{m}@{k}" for m in ("recall", "recall_micro", "capped_recall", "hit")
            for k in (1, 3, 5, 10)] + ["mrr", "ndcg@10"]
    for task in (None, "qa", "fact", "sql", "retrieval"):
        shown = [label(key, task) for key in keys]
        assert len(set(shown)) == len(shown), task  # two metrics never share a label
