"""The bad input suite: every malformed dataset in tests/bad_datasets, and a few made at
test time (a 1 MB cell, 10,000 columns, deep nesting, symlinks out of the folder), is
refused with one DatasetError naming file, line and field, or loads with a documented
safe handling. The CLI lists them all and the pages show an error, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT, make_sqlite, query_record, table_record, write_jsonl
from target_core import cli
from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.errors import DatasetError
from target_core.types import Dataset

BAD_DIR = Path(__file__).parent / "bad_datasets"
MAX_COMMITTED_BYTES = 50_000
HUGE_CELL = 1_000_000
WIDE = 10_000


@dataclass(frozen=True)
class Refused:
    """What the DatasetError must name: the file (relative to the case), line, field, and
    words of the reason."""

    file: str
    line: int | None
    field: str | None
    reason: str


REFUSED: dict[str, Refused] = {
    "truncated-jsonl": Refused("corpus.jsonl", 2, None, "malformed JSON: Expecting"),
    "not-json-line": Refused("queries.jsonl", 2, None, "malformed JSON: Expecting value"),
    "line-is-list": Refused("corpus.jsonl", 2, None, "must be a JSON object, got list"),
    "table-not-list": Refused("corpus.jsonl", 2, "table", "must be a list of rows"),
    "rows-not-lists": Refused("corpus.jsonl", 2, "table", "each a list of cells"),
    "row-length-mismatch": Refused("corpus.jsonl", 2, "table[1]",
                                   "row 1 has 3 cells but the header has 2"),
    "cell-is-object": Refused("corpus.jsonl", 2, "table[1]", "got dict"),
    "context-not-object": Refused("corpus.jsonl", 2, "context", "must be a JSON object"),
    "query-not-string": Refused("queries.jsonl", 2, "query", "must be a non-empty string"),
    "label-not-bool": Refused("queries.jsonl", 2, "label", "must be true or false, got 'yes'"),
    "id-wrong-type": Refused("corpus.jsonl", 2, "table_id", "must be a string, got float"),
    "missing-query-id": Refused("queries.jsonl", 2, "query_id", "required field is missing"),
    "missing-table": Refused("corpus.jsonl", 2, "table", "required field is missing"),
    "empty-query-id": Refused("queries.jsonl", 2, "query_id", "must not be empty"),
    "empty-table-id": Refused("corpus.jsonl", 2, "table_id", "must not be empty"),
    "duplicate-query-id": Refused("queries.jsonl", 2, "query_id",
                                  "duplicate query_id 'q1'; first defined at line 1"),
    "duplicate-table": Refused("corpus.jsonl", 2, "table_id",
                               "duplicate table ('wiki', 't1'); first defined at line 1"),
    "gold-not-in-corpus": Refused("queries.jsonl", 2, "table_id",
                                  "gold table ('wiki', 't3') is not in the corpus"),
    "empty-corpus": Refused("corpus.jsonl", None, None, "the corpus is empty"),
    "blank-corpus": Refused("corpus.jsonl", None, None, "the corpus is empty"),
    "empty-queries": Refused("queries.jsonl", None, None, "there are no queries"),
    "missing-queries-file": Refused("queries.jsonl", None, None, "file not found"),
    "table-empty-list": Refused("corpus.jsonl", 2, "table", "the table has no header"),
    "huge-integer": Refused("queries.jsonl", 2, None, "limit (4300 digits)"),
    "lone-surrogate": Refused("queries.jsonl", 2, "query",
                              "holds the escape \\ud800, half of a UTF-16 surrogate pair"),
    "not-utf8": Refused("queries.jsonl", 2, None, "not valid UTF-8 (byte 0xe9 at column 66)"),
    "raw-control-char": Refused("corpus.jsonl", 2, None,
                                "malformed JSON: Invalid control character at column"),
    "meta-not-json": Refused("dataset.json", 2, None, "malformed JSON: Expecting value"),
    "meta-not-object": Refused("dataset.json", None, None, "must be a JSON object"),
    "meta-unknown-task": Refused("dataset.json", None, "task", "unknown task 'ranking'"),
    "meta-sql-without-databases": Refused("databases", None, None,
                                          "task is 'sql' but there is no databases/"),
    "sqlite-not-database": Refused("queries.jsonl", 1, "database_id",
                                   "db1/db1.sqlite is not a SQLite database"),
    "sqlite-corrupt": Refused("queries.jsonl", 1, "database_id",
                              "db1/db1.sqlite cannot be read as a SQLite database"),
    # made at test time (see `make_generated`)
    "deep-nesting": Refused("corpus.jsonl", 3, None, "malformed JSON: nested too deeply"),
    "symlink-corpus-outside": Refused("corpus.jsonl", None, None,
                                      "outside the dataset folder"),
    "symlink-meta-outside": Refused("dataset.json", None, None, "outside the dataset folder"),
    "symlink-database-outside": Refused("databases/db1/db1.sqlite", None, None,
                                        "outside the dataset folder"),
}


def _integer_ids(dataset: Dataset) -> None:
    assert [t.key for t in dataset.tables] == [("0", "1"), ("0", "2")]
    assert [(q.query_id, q.gold) for q in dataset.queries] == [("1", (("0", "1"),)),
                                                               ("2", (("0", "2"),))]


def _header_only(dataset: Dataset) -> None:
    table = dataset.table(("wiki", "t2"))
    assert table.header == ("lake", "area") and table.n_rows == 0


def _unicode_intact(dataset: Dataset) -> None:
    table = dataset.table(("wiki", "t2"))
    assert table.rows == (("Mjøsa\x00", 369), ("\u05d9\u05b8\u05dd \u202eevil", "e\u0301\u0301"))
    assert table.title == "Lakes \U0001f30a"  # an escaped surrogate *pair* is one character
    assert dataset.query("q2").query == ("\u202bכמה גדול\u202c Mjøsa? "
                                         "\u0627\u0644\u0628\u062d\u064a\u0631\u0629 \U0001f30a")


def _bom(dataset: Dataset) -> None:
    assert dataset.name == "bom" and dataset.task == "qa"
    assert dataset.tables[0].key == ("wiki", "t1") and dataset.queries[0].query_id == "q1"


def _huge_cell(dataset: Dataset) -> None:
    assert len(dataset.table(("wiki", "big")).rows[0][1]) == HUGE_CELL


def _wide_table(dataset: Dataset) -> None:
    table = dataset.table(("wiki", "wide"))
    assert table.n_cols == WIDE and table.rows[0][-1] == WIDE - 1


def _symlink_inside(dataset: Dataset) -> None:
    assert [t.table_id for t in dataset.tables] == ["t1", "t2"]


LOADS: dict[str, Callable[[Dataset], None]] = {
    "integer-ids": _integer_ids,
    "table-header-only": _header_only,
    "unicode-intact": _unicode_intact,
    "bom": _bom,
    # made at test time
    "huge-cell": _huge_cell,
    "wide-table": _wide_table,
    "symlink-inside": _symlink_inside,
    "linked-folder": _symlink_inside,  # the dataset folder itself is a symlink
}

GENERATED = {"deep-nesting", "symlink-corpus-outside", "symlink-meta-outside",
             "symlink-database-outside", "huge-cell", "wide-table", "symlink-inside",
             "linked-folder"}

SQL_TABLE = table_record("singer", [["id", "name"], [1, "Ada"]], database_id="db1")
SQL_QUERY = query_record("s1", "singer", database_id="db1", sql="SELECT name FROM singer")


def _plain(folder: Path, corpus: list | None = None, queries: list | None = None) -> Path:
    folder.mkdir(parents=True)
    write_jsonl(folder / "corpus.jsonl", corpus or [table_record("t1"), table_record("t2")])
    write_jsonl(folder / "queries.jsonl", queries or [query_record("q1", "t1")])
    return folder


def make_generated(cases: Path, outside: Path) -> None:
    """The cases too big to commit, and those whose symlinks need an absolute target."""
    _plain(cases / "huge-cell", [table_record("big", [["name", "text"], ["x", "a" * HUGE_CELL]])],
           [query_record("q1", "big")])
    _plain(cases / "wide-table",
           [table_record("wide", [[f"c{i}" for i in range(WIDE)], list(range(WIDE))])],
           [query_record("q1", "wide")])
    deep = _plain(cases / "deep-nesting")
    with (deep / "corpus.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"database_id": "wiki", "table_id": "t3", "table": [["a"]], "context": '
                     + '{"x": ' * 100_000 + "1" + "}" * 100_001 + "\n")

    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    corpus_out = _plain(cases / "symlink-corpus-outside")
    (corpus_out / "corpus.jsonl").unlink()
    os.symlink(outside / "passwd", corpus_out / "corpus.jsonl")
    meta_out = _plain(cases / "symlink-meta-outside")
    (outside / "dataset.json").write_text('{"name": "stolen", "task": "qa"}', encoding="utf-8")
    os.symlink(outside / "dataset.json", meta_out / "dataset.json")
    db_out = _plain(cases / "symlink-database-outside", [SQL_TABLE], [SQL_QUERY])
    make_sqlite(outside / "db1.sqlite", ["CREATE TABLE singer (id INTEGER, name TEXT)",
                                         "INSERT INTO singer VALUES (1, 'Ada')"])
    (db_out / "databases" / "db1").mkdir(parents=True)
    os.symlink(outside / "db1.sqlite", db_out / "databases" / "db1" / "db1.sqlite")

    inner = _plain(cases / "symlink-inside")
    (inner / "data").mkdir()
    (inner / "corpus.jsonl").rename(inner / "data" / "corpus.jsonl")
    os.symlink(Path("data") / "corpus.jsonl", inner / "corpus.jsonl")
    os.symlink(_plain(outside / "real-dataset"), cases / "linked-folder")


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding every case, committed and generated, one subfolder each."""
    root = tmp_path_factory.mktemp("bad")
    shutil.copytree(BAD_DIR, root / "cases", symlinks=True)
    make_generated(root / "cases", root / "outside")
    return root / "cases"


def test_every_committed_case_is_expected_and_small() -> None:
    committed = {p.name for p in BAD_DIR.iterdir() if p.is_dir()}
    assert committed == (set(REFUSED) | set(LOADS)) - GENERATED
    assert len(committed) >= 15
    for path in BAD_DIR.rglob("*"):
        assert path.is_dir() or path.stat().st_size < MAX_COMMITTED_BYTES, path


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_case_is_refused_naming_file_line_and_field(name: str, cases: Path,
                                                    settings: Settings) -> None:
    expected = REFUSED[name]
    with pytest.raises(DatasetError) as info:
        load_dataset(cases / name, settings)
    error = info.value
    assert error.path == str(cases / name / expected.file), error
    assert (error.line, error.field) == (expected.line, expected.field), error
    message = str(error)
    assert "\n" not in message and expected.reason in message, message
    assert f"{name}/{expected.file}" in message
    if expected.line is not None:
        assert f"line {expected.line}" in message
    if expected.field is not None:
        assert f"field '{expected.field}'" in message
    assert "root:x" not in message  # a refused link's target is never read, let alone shown


@pytest.mark.parametrize("name", sorted(LOADS))
def test_case_loads_with_safe_handling(name: str, cases: Path, settings: Settings) -> None:
    LOADS[name](load_dataset(cases / name, settings))


def _cli(*args: str, datasets: Path, workspace: Path) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TARGET_")}
    return subprocess.run([sys.executable, "-m", "target_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**base, "TARGET_DATASETS": str(datasets),
                               "TARGET_WORKSPACE": str(workspace)})


def test_cli_lists_every_case_with_its_error(cases: Path, tmp_path: Path) -> None:
    result = _cli("datasets", "--json", datasets=cases, workspace=tmp_path / "ws")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    infos = {d["name"]: d for d in json.loads(result.stdout) if d["kind"] == "folder"}
    assert set(infos) == set(REFUSED) | set(LOADS)
    for name, expected in REFUSED.items():
        error = infos[name]["error"]
        assert error and f"{name}/{expected.file}" in error and expected.reason in error, error
        assert infos[name]["tables"] is None
    for name in LOADS:
        assert infos[name]["error"] is None and infos[name]["tables"] >= 1, infos[name]


def test_cli_text_listing_names_every_broken_case(cases: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TARGET_DATASETS", str(cases))
    assert cli.main(["datasets", "--workspace", str(tmp_path / "ws")]) == 0
    err = capsys.readouterr().err
    for name in REFUSED:
        assert f"\n{name}: cannot be loaded: " in err


@pytest.mark.parametrize(("dataset", "reason"), [
    ("lone-surrogate", "lone-surrogate/queries.jsonl, line 2, field 'query': holds the escape"),
    ("symlink-corpus-outside", "symlink-corpus-outside/corpus.jsonl: resolves to "),
])
def test_cli_run_on_a_bad_dataset_exits_2_with_one_line(dataset: str, reason: str,
                                                        cases: Path, tmp_path: Path) -> None:
    # by name for the first, by path for the second: both ways of naming a dataset
    spec = dataset if dataset == "lone-surrogate" else str(cases / dataset)
    result = _cli("run", "--dataset", spec, "--retriever", "bm25", datasets=cases,
                  workspace=tmp_path / "ws")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and reason in lines[0], lines


@pytest.fixture
def bad_app(app: Callable, cases: Path, monkeypatch: pytest.MonkeyPatch) -> Callable:
    """The `app` fixture with TARGET_DATASETS on the folder of all cases."""
    monkeypatch.setenv("TARGET_DATASETS", str(cases))
    return app


@pytest.mark.parametrize("name", ["truncated-jsonl", "lone-surrogate", "not-utf8",
                                  "sqlite-corrupt", "meta-unknown-task",
                                  "symlink-corpus-outside"])
def test_datasets_page_shows_the_error(name: str, bad_app: Callable) -> None:
    at = bad_app("pages/datasets.py", dataset=name)  # asserts no exception
    errors = [e.value for e in at.error]
    expected = REFUSED[name]
    assert any(f"Cannot load dataset '{name}'" in e and f"{name}/{expected.file}" in e
               and expected.reason in e for e in errors), errors


@pytest.mark.parametrize(("name", "table"), [("huge-cell", "wiki/big"),
                                             ("wide-table", "wiki/wide"),
                                             ("unicode-intact", "wiki/t2")])
def test_datasets_page_shows_edge_case_tables(name: str, table: str,
                                              bad_app: Callable) -> None:
    at = bad_app("pages/datasets.py", dataset=name, section="Tables", table=table)
    assert not at.error
    assert at.dataframe[-1].value.shape[1] == (WIDE if name == "wide-table" else 2)


def test_home_page_lists_every_case(bad_app: Callable) -> None:
    at = bad_app("pages/home.py")
    frame = at.dataframe[0].value.set_index("name")
    for name, expected in REFUSED.items():
        assert f"{name}/{expected.file}" in frame.loc[name, "error"]
    for name in LOADS:
        assert frame.loc[name, "error"] == "", name  # empty, not "None"



def test_home_page_survives_twin_names(app: Callable, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for twin in ("twin-a", "twin-b"):
        (_plain(tmp_path / "twins" / twin) / "dataset.json").write_text('{"name": "twin"}')
    monkeypatch.setenv("TARGET_DATASETS", str(tmp_path / "twins"))
    at = app("pages/home.py")  # asserts that the page raised nothing
    assert any("used twice" in e.value for e in at.error)
