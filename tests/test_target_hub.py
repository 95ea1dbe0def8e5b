"""TARGET hub datasets: snapshots built in tmp_path in the hub's schema, and a bounded,
offline-safe download (closed port, black-hole server, slow hub; never the real hub)."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from target_core.config import Settings, load_settings
from target_core.datasets.hub_files import plain, read_records, split_files
from target_core.datasets.target_hub import (
    HUB_DATASETS,
    fact_label,
    hub_name_of_target,
    hub_spec,
    load_hub_dataset,
    load_hub_snapshot,
)
from target_core.errors import DatasetError, DatasetUnavailableError, UnknownNameError

HEADER = ["Year", "Title", "Role"]


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def corpus_row(table_id: str, *rows: list[str], db: str = "0",
               title: str = "Page") -> dict[str, Any]:
    return {"database_id": db, "table_id": table_id, "table": [HEADER, *map(list, rows)],
            "context": {"title": title, "section_title": "Filmography"}}


def make_qa(root: Path) -> tuple[Path, Path]:
    """fetaqa-like: corpus_<split>.parquet / queries_<split>.parquet, as on the hub."""
    corpus, queries = root / "fetaqa-corpus", root / "fetaqa-queries"
    write_parquet(corpus / "corpus_test.parquet", [
        corpus_row("totto_1", ["2001", "Shrek", "Donkey"], ["2004", "Shrek 2", "Donkey"],
                   title="Eddie Murphy"),
        corpus_row("totto_2", ["1999", "Matrix", "Neo"], title="Keanu Reeves"),
        corpus_row("totto_3", title="Empty Table"),
    ])
    write_parquet(corpus / "corpus_train.parquet", [corpus_row("train_only", ["1", "2", "3"])])
    (corpus / "README.md").write_text("# fetaqa corpus\n")
    write_parquet(queries / "queries_test.parquet", [
        {"query_id": 7, "query": "Who did Eddie Murphy voice in Shrek?",
         "answer": "Eddie Murphy voiced Donkey.", "table_id": "totto_1", "database_id": "0"},
        {"query_id": 8, "query": "What role did Keanu Reeves play in 1999?",
         "answer": "Neo.", "table_id": "totto_2", "database_id": "0"},
    ])
    write_parquet(queries / "queries_validation.parquet", [
        {"query_id": 1, "query": "?", "answer": "", "table_id": "nope", "database_id": "0"}])
    return corpus, queries


def make_fact(root: Path) -> tuple[Path, Path]:
    corpus, queries = root / "tabfact-corpus", root / "tabfact-queries"
    write_parquet(corpus / "corpus_test.parquet", [corpus_row("2-1", ["2001", "Shrek", "Donkey"])])
    statements = [("Donkey is in Shrek", "True"), ("Shrek came out in 1999", "False"),
                  ("The role is Neo", "FALSE"), ("Hard to say", "not enough info")]
    write_parquet(queries / "queries_test.parquet", [
        {"query_id": str(i), "query": q, "answer": a, "table_id": "2-1", "database_id": "0"}
        for i, (q, a) in enumerate(statements)])
    return corpus, queries


def make_sql(root: Path) -> tuple[Path, Path]:
    """spider-like: spider-corpus-test.json (dict of columns) + test_database/<db>/<db>.sqlite."""
    corpus, queries = root / "spider-corpus", root / "spider-queries"
    dbs = {"concert": {"singer": (["id", "name", "age"], [(1, "Joe", 52), (2, "Tim", 32)]),
                       "concert": (["id", "singer_id", "year"], [(1, 1, 2014)])},
           "pets": {"Pets": (["PetID", "PetType"], [(1, "cat")])}}
    columns: dict[str, list[Any]] = {"database_id": [], "table_id": [], "table": [],
                                     "context": []}
    for db, tables in dbs.items():
        (corpus / "test_database" / db).mkdir(parents=True)
        connection = sqlite3.connect(corpus / "test_database" / db / f"{db}.sqlite")
        for name, (header, rows) in tables.items():
            connection.execute(f'CREATE TABLE "{name}" ({", ".join(header)})')
            connection.executemany(f'INSERT INTO "{name}" VALUES ({",".join("?" * len(header))})',
                                   rows)
            columns["database_id"].append(db)
            columns["table_id"].append(name)
            columns["table"].append([header, *map(list, rows)])
            columns["context"].append({})
        connection.commit()
        connection.close()
    (corpus / "spider-corpus-test.json").write_text(json.dumps(columns))
    (corpus / "spider-corpus-train.json").write_text("not even JSON: must not be read")
    schema = pa.schema([("query_id", pa.int64()), ("query", pa.string()),
                        ("answer", pa.string()), ("table_id", pa.list_(pa.string())),
                        ("database_id", pa.string()), ("difficulty", pa.string())])
    write_parquet(queries / "queries_test.parquet", [
        {"query_id": 0, "query": "How many singers?", "answer": "SELECT count(*) FROM singer",
         "table_id": None, "database_id": "concert", "difficulty": "easy"},
        {"query_id": 1, "query": "Singers with concerts in 2014?",
         "answer": "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.singer_id "
                   "WHERE T2.year = 2014", "table_id": [], "database_id": "concert",
         "difficulty": "medium"},
        {"query_id": 2, "query": "Pet types?", "answer": "SELECT PetType FROM pets",
         "table_id": ["PETS"], "database_id": "pets", "difficulty": None},
    ], schema=schema)
    return corpus, queries


# --- load_hub_snapshot -------------------------------------------------------------------


def test_registry_mirrors_target() -> None:
    assert set(HUB_DATASETS) == {"hub:fetaqa", "hub:ottqa", "hub:tabfact", "hub:spider",
                                 "hub:bird"}
    assert hub_spec("ottqa") is HUB_DATASETS["hub:ottqa"]
    assert HUB_DATASETS["hub:ottqa"].split == "validation"
    assert HUB_DATASETS["hub:bird"].sql_corpus_file == "bird-corpus-validation.json"
    assert HUB_DATASETS["hub:spider"].database_dir == "test_database"
    # the repos and dataset names of TARGET 0.1.3's released loader
    assert (HUB_DATASETS["hub:spider"].corpus_repo, HUB_DATASETS["hub:spider"].queries_repo
            ) == ("target-benchmark/spider-corpus-test", "target-benchmark/spider-queries-test")
    assert {n: hub_name_of_target(n) for n in ("fetaqa", "ottqa", "tabfact", "spider-test",
                                               "bird-validation", "spider")} == {
        "fetaqa": "hub:fetaqa", "ottqa": "hub:ottqa", "tabfact": "hub:tabfact",
        "spider-test": "hub:spider", "bird-validation": "hub:bird", "spider": None}
    with pytest.raises(UnknownNameError, match="did you mean 'hub:fetaqa'"):
        hub_spec("hub:fetaq")


def test_qa_snapshot(tmp_path: Path) -> None:
    dataset = load_hub_snapshot(HUB_DATASETS["hub:fetaqa"], *make_qa(tmp_path))
    assert dataset.name == "hub:fetaqa" and dataset.task == "qa"
    assert [t.table_id for t in dataset.tables] == ["totto_1", "totto_2", "totto_3"]
    shrek = dataset.table(("0", "totto_1"))
    assert shrek.header == tuple(HEADER) and shrek.rows[1] == ("2004", "Shrek 2", "Donkey")
    assert shrek.title == "Eddie Murphy" and shrek.section_title == "Filmography"
    assert dataset.table(("0", "totto_3")).n_rows == 0
    first = dataset.queries[0]
    assert (first.query_id, first.answer, first.gold) == ("7", "Eddie Murphy voiced Donkey.",
                                                          (("0", "totto_1"),))
    assert first.label is None and first.sql is None and dataset.databases == {}


def test_sharded_corpus_and_jsonl_queries(tmp_path: Path) -> None:
    corpus, queries = tmp_path / "ottqa-corpus", tmp_path / "ottqa-queries"
    write_parquet(corpus / "data/validation-00000-of-00002.parquet",
                  [corpus_row("a", ["1", "2", "3"])])
    write_parquet(corpus / "data/validation-00001-of-00002.parquet", [corpus_row("b")])
    write_parquet(corpus / "data/train-00000-of-00001.parquet", [corpus_row("c")])
    queries.mkdir()
    lines = [{"query_id": "q1", "query": "A?", "answer": ["x", "y"], "table_id": "a",
              "database_id": "0"},
             {"query_id": "q2", "query": "B?", "answer": "z", "table_id": ["a", "b"],
              "database_id": "0"}]
    (queries / "validation.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    (queries / "train.jsonl").write_text("{broken\n")
    dataset = load_hub_snapshot(HUB_DATASETS["hub:ottqa"], corpus, queries)
    assert [t.table_id for t in dataset.tables] == ["a", "b"]
    assert dataset.queries[0].answer == ["x", "y"]
    assert dataset.queries[1].gold == (("0", "a"), ("0", "b"))


def test_fact_snapshot_reads_answers_as_target_does(tmp_path: Path) -> None:
    dataset = load_hub_snapshot(HUB_DATASETS["hub:tabfact"], *make_fact(tmp_path))
    assert dataset.task == "fact"
    assert [q.label for q in dataset.queries] == [True, False, False, None]
    assert dataset.queries[0].answer == "True"  # the answer itself is kept as given


def test_fact_label() -> None:
    assert [fact_label(a) for a in ("True", "true.", "False", "It is false", "refuted", None,
                                    True, False)] == [True, True, False, False, None, None,
                                                      True, False]


def test_sql_snapshot(tmp_path: Path) -> None:
    corpus, queries = make_sql(tmp_path)
    dataset = load_hub_snapshot(HUB_DATASETS["hub:spider"], corpus, queries)
    assert dataset.task == "sql"
    assert dataset.databases == {"concert": corpus / "test_database/concert/concert.sqlite",
                                 "pets": corpus / "test_database/pets/pets.sqlite"}
    assert dataset.table(("concert", "singer")).rows == ((1, "Joe", 52), (2, "Tim", 32))
    q0, q1, q2 = dataset.queries
    assert q0.query_id == "0" and q0.sql == q0.answer == "SELECT count(*) FROM singer"
    assert q0.gold == (("concert", "singer"),)  # no table_id: derived from the SQL
    assert q1.gold == (("concert", "singer"), ("concert", "concert"))  # [] counts as missing
    assert q2.gold == (("pets", "Pets"),)  # given as "PETS": the corpus spelling wins
    assert (q0.difficulty, q1.difficulty, q2.difficulty) == ("easy", "medium", None)


def test_plain_turns_numpy_cells_into_lists() -> None:
    np = pytest.importorskip("numpy")
    cell = np.array([np.array(["a", "b"], dtype=object), np.array(["c", "d"], dtype=object)],
                    dtype=object)
    assert plain({"table": cell, "n": np.int64(3), "x": (1, 2)}) == {
        "table": [["a", "b"], ["c", "d"]], "n": 3, "x": [1, 2]}
    assert type(plain(np.int64(3))) is int


def test_pandas_written_parquet_loads(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    corpus, queries = make_qa(tmp_path)
    frame = pd.DataFrame([corpus_row("totto_1", ["2001", "Shrek", "Donkey"])])
    frame.to_parquet(corpus / "corpus_test.parquet")  # written from numpy-backed cells
    pd.DataFrame([{"query_id": "1", "query": "Q?", "answer": "A", "table_id": "totto_1",
                   "database_id": "0"}]).to_parquet(queries / "queries_test.parquet")
    dataset = load_hub_snapshot(HUB_DATASETS["hub:fetaqa"], corpus, queries)
    assert dataset.tables[0].rows == (("2001", "Shrek", "Donkey"),)


@pytest.mark.parametrize(("files", "split", "expected"), [
    (["queries_test.parquet", "queries_train.parquet", "queries_validation.parquet"], "test",
     ["queries_test.parquet"]),
    (["queries_test.parquet", "queries_validation.parquet"], "validation",
     ["queries_validation.parquet"]),
    (["data/test-00000-of-00001.parquet", "data/train-00000-of-00001.parquet", "test.jsonl"],
     "test", ["data/test-00000-of-00001.parquet"]),
    (["test/a.parquet", "train/b.parquet", "test_x.parquet"], "test", ["test/a.parquet"]),
    (["dev.jsonl", "train.jsonl"], "validation", ["dev.jsonl"]),
    (["spider-corpus-test.json", "README.md", "test_database/x/x.sqlite"], "test",
     ["spider-corpus-test.json"]),
    ([".cache/test.parquet", "test.parquet"], "test", ["test.parquet"]),
    (["contest.parquet"], "test", []),
    (["contest.parquet"], "train", ["contest.parquet"]),
])
def test_split_files_follow_the_hub_rules(tmp_path: Path, files: list[str], split: str,
                                          expected: list[str]) -> None:
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in split_files(tmp_path, split)] == expected


@pytest.mark.parametrize("content", [
    '[{"a": 1}, {"a": 2}]',
    '{"a": [1, 2]}',
    '{"data": [{"a": 1}, {"a": 2}]}',
    '{"a": 1}\n{"a": 2}\n',
])
def test_json_files_in_every_shape(tmp_path: Path, content: str) -> None:
    path = tmp_path / "test.json"
    path.write_text(content)
    assert [(w.line, r) for w, r in read_records(path)] == [(1, {"a": 1}), (2, {"a": 2})]


def test_csv_with_nested_cells(tmp_path: Path) -> None:
    corpus, queries = make_qa(tmp_path)
    (corpus / "corpus_test.parquet").unlink()
    (corpus / "corpus_test.csv").write_text(
        'database_id,table_id,table,context\n'
        '0,totto_1,"[[""Year"", ""Title""], [""2001"", ""Shrek""]]","{""title"": ""Eddie""}"\n'
        "0,totto_2,\"[['Year', 'Title']]\",\n")
    dataset = load_hub_snapshot(HUB_DATASETS["hub:fetaqa"], corpus, queries)
    assert dataset.tables[0].rows == (("2001", "Shrek"),) and dataset.tables[0].title == "Eddie"
    assert dataset.tables[1].header == ("Year", "Title") and dict(dataset.tables[1].context) == {}


# --- errors ---------------------------------------------------------------------------------


def test_bad_corpus_record_names_file_record_and_field(tmp_path: Path) -> None:
    corpus, queries = make_qa(tmp_path)
    write_parquet(corpus / "corpus_test.parquet", [
        corpus_row("ok", ["1", "2", "3"]), corpus_row("bad", ["1", "2"])])
    with pytest.raises(DatasetError, match="row 1 has 2 cells but the header has 3") as info:
        load_hub_snapshot(HUB_DATASETS["hub:fetaqa"], corpus, queries)
    assert (info.value.path, info.value.line, info.value.field) == (
        str(corpus / "corpus_test.parquet"), 2, "table[1]")


def test_no_file_for_the_split(tmp_path: Path) -> None:
    corpus, queries = make_qa(tmp_path)
    (queries / "queries_test.parquet").unlink()
    with pytest.raises(DatasetError,
                       match="no data file for split 'test'.*queries_validation") as info:
        load_hub_snapshot(HUB_DATASETS["hub:fetaqa"], corpus, queries)
    assert info.value.path == str(queries)


def test_missing_sql_corpus_file(tmp_path: Path) -> None:
    corpus, queries = make_sql(tmp_path)
    (corpus / "spider-corpus-test.json").unlink()
    with pytest.raises(DatasetError, match="corpus file is missing") as info:
        load_hub_snapshot(HUB_DATASETS["hub:spider"], corpus, queries)
    assert info.value.path == str(corpus / "spider-corpus-test.json")


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"answer": "SELECT * FROM vets", "table_id": None}, "answer", "'vets' is not in the database"),
    ({"answer": "SELECT * FROM", "table_id": None}, "answer", "cannot parse SQL"),
    ({"database_id": "zoo"}, "database_id", "'zoo' has no tables in the corpus"),
    ({"answer": ""}, "answer", "must be the gold SQL"),
])
def test_bad_sql_query(tmp_path: Path, change: dict[str, Any], field: str, message: str) -> None:
    corpus, queries = make_sql(tmp_path)
    rows = pq.read_table(queries / "queries_test.parquet").to_pylist()
    rows[1].update(change)
    write_parquet(queries / "queries_test.parquet", rows)
    with pytest.raises(DatasetError, match=message) as info:
        load_hub_snapshot(HUB_DATASETS["hub:spider"], corpus, queries)
    assert (info.value.line, info.value.field) == (2, field)


def test_missing_sqlite_file(tmp_path: Path) -> None:
    corpus, queries = make_sql(tmp_path)
    (corpus / "test_database/pets/pets.sqlite").unlink()
    with pytest.raises(DatasetError, match="pets.sqlite does not exist"):
        load_hub_snapshot(HUB_DATASETS["hub:spider"], corpus, queries)


def test_unreadable_parquet(tmp_path: Path) -> None:
    corpus, queries = make_qa(tmp_path)
    (queries / "queries_test.parquet").write_bytes(b"PAR1 garbage")
    with pytest.raises(DatasetError, match="cannot read the file") as info:
        load_hub_snapshot(HUB_DATASETS["hub:fetaqa"], corpus, queries)
    assert info.value.path == str(queries / "queries_test.parquet")


# --- load_hub_dataset: cache first, bounded download ------------------------------------------


@pytest.fixture
def hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hugging Face home, so nothing cached on this machine leaks in."""
    home = tmp_path / "hf_home"
    home.mkdir()
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    return home


def settings_for(endpoint: str, tmp_path: Path, timeout: str = "2") -> Settings:
    return load_settings(environ={"HF_ENDPOINT": endpoint, "TARGET_HUB_TIMEOUT": timeout,
                                  "TARGET_WORKSPACE": str(tmp_path / "workspace")})


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unknown_hub_name(tmp_path: Path, hf_home: Path) -> None:
    with pytest.raises(UnknownNameError):
        load_hub_dataset("hub:wikisql", settings_for("http://127.0.0.1:1", tmp_path),
                         cache_dir=hf_home / "hub")


def test_cached_snapshot_loads_without_network(tmp_path: Path, hf_home: Path) -> None:
    corpus, queries = make_qa(tmp_path / "src")
    for repo, source in (("fetaqa-corpus", corpus), ("fetaqa-queries", queries)):
        storage = hf_home / "hub" / f"datasets--target-benchmark--{repo}"
        sha = "a" * 40
        (storage / "refs").mkdir(parents=True)
        (storage / "refs/main").write_text(sha)
        (storage / "snapshots").mkdir()
        source.rename(storage / "snapshots" / sha)
    settings = settings_for(f"http://127.0.0.1:{closed_port()}", tmp_path)
    started = time.monotonic()
    dataset = load_hub_dataset("hub:fetaqa", settings, cache_dir=hf_home / "hub")
    assert time.monotonic() - started < 5
    assert len(dataset.tables) == 3 and len(dataset.queries) == 2


def assert_unavailable(name: str, settings: Settings, cache_dir: Path, *fragments: str) -> float:
    started = time.monotonic()
    with pytest.raises(DatasetUnavailableError) as info:
        load_hub_dataset(name, settings, cache_dir=cache_dir)
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert "\n" not in message
    for fragment in ("TARGET_DATASETS", "Connect to the internet", *fragments):
        assert fragment in message
    return elapsed


def test_closed_port_fails_fast(tmp_path: Path, hf_home: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    elapsed = assert_unavailable("hub:fetaqa", settings_for(endpoint, tmp_path), hf_home / "hub",
                                 "target-benchmark/fetaqa-corpus", endpoint,
                                 "could not be reached within 2 s")
    assert elapsed < 10


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    stop = threading.Event()
    accepted: list[socket.socket] = []

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=2)
    for connection in accepted:
        connection.close()
    server.close()


def test_black_hole_is_bounded_by_hub_timeout(tmp_path: Path, hf_home: Path,
                                              black_hole: str) -> None:
    elapsed = assert_unavailable("hub:spider", settings_for(black_hole, tmp_path),
                                 hf_home / "hub", "target-benchmark/spider-corpus-test",
                                 "could not be reached within 2 s")
    assert 1.5 <= elapsed < 10


@pytest.fixture
def slow_hub() -> Iterator[str]:
    """Answers repo metadata, then stalls every other request (until teardown).

    At teardown stalled requests get a 404, which the abandoned download does not
    retry, so its thread ends before the server goes (else it retries against a
    closed port and logs after the test is over).
    """
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if stop.is_set():
                self.send_error(404)
            elif self.path.startswith("/api/datasets/") and "/tree/" not in self.path:
                repo = self.path.removeprefix("/api/datasets/").split("/revision/")[0]
                body = json.dumps({"id": repo, "sha": "b" * 40}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                stop.wait(timeout=30)
                self.send_error(404)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    stop.set()
    for worker in threading.enumerate():
        if worker.name.startswith("hub-download-"):
            worker.join(timeout=10)
    server.shutdown()
    server.server_close()
    thread.join(timeout=2)


def test_slow_download_says_the_hub_answered(tmp_path: Path, hf_home: Path,
                                             slow_hub: str) -> None:
    elapsed = assert_unavailable("hub:tabfact", settings_for(slow_hub, tmp_path),
                                 hf_home / "hub", "answered but the download did not finish "
                                 "within 2 s", "TARGET_HUB_TIMEOUT")
    assert elapsed < 10


# --- TARGET's text-to-SQL layout as a folder: the gold SQL in `answer` ----------------------


def _sql_folder(root: Path, meta: dict[str, Any] | None = None,
                answer: str = "SELECT name FROM singer WHERE age > 30") -> Path:
    from conftest import make_sqlite, query_record, table_record, write_jsonl

    root.mkdir()
    make_sqlite(root / "databases" / "concert" / "concert.sqlite", [
        "CREATE TABLE singer (name TEXT, age INTEGER)",
        "INSERT INTO singer VALUES ('Ann', 41), ('Bo', 22)"])
    write_jsonl(root / "corpus.jsonl", [table_record(
        "singer", [["name", "age"], ["Ann", 41], ["Bo", 22]], database_id="concert")])
    write_jsonl(root / "queries.jsonl", [  # TARGET's shape: no `sql` field
        query_record("0", "singer", database_id="concert") | {"answer": answer},
        query_record("1", "singer", database_id="concert")
        | {"answer": "with old as (select * from singer) select count(*) from old"}])
    if meta is not None:
        (root / "dataset.json").write_text(json.dumps(meta))
    return root


def test_a_target_layout_sql_folder_loads_as_text_to_sql(tmp_path: Path) -> None:
    from target_core.datasets.folder import load_folder

    dataset = load_folder(_sql_folder(tmp_path / "spider-like"))
    assert dataset.task == "sql"
    assert [q.sql for q in dataset.queries] == [q.answer for q in dataset.queries]
    assert dataset.queries[0].sql == "SELECT name FROM singer WHERE age > 30"
    # a declared task takes any answer as the SQL; answers that are not SQL stay QA
    declared = load_folder(_sql_folder(tmp_path / "declared", {"task": "sql"},
                                       answer="  select 1"))
    assert declared.task == "sql" and declared.queries[0].sql == "  select 1"
    prose = load_folder(_sql_folder(tmp_path / "prose", answer="Ann is over 30."))
    assert prose.task == "qa" and all(q.sql is None for q in prose.queries)


def test_a_target_layout_sql_folder_runs_sql_generation(tmp_path: Path) -> None:
    from target_core.engine.runner import run_retrieval
    from target_core.run_config import GenerationConfig, RunConfig

    folder = _sql_folder(tmp_path / "spider-like")
    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    run = run_retrieval(RunConfig(str(folder), "bm25", top_k=1,
                                  generation=GenerationConfig("heuristic")),
                        settings=settings).run
    assert run.task == "sql" and "execution_accuracy" in run.metrics
