"""Your own retriever and generator (`py:MODULE:CLASS`, `py:PATH.py:CLASS`): both
retriever shapes through the whole engine (store, resume, reuse, an edited file), the
CLI, the pages, clear errors, and the check functions' reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import target_core
from target_core.config import Settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.errors import Cancelled, TargetError
from target_core.pyclass import spec_fingerprints
from target_core.registry import PluginError
from target_core.retrievers import build_retriever
from target_core.retrievers.plugin import adapt_retriever
from target_core.retrievers.target_plugin import TARGET_BATCH, target_table
from target_core.run_config import GenerationConfig, RunConfig
from target_core.table_view import TableView
from target_core.types import Table

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

TARGET_STYLE = '''
class Mine:
    """TARGET's shape, as a TARGET user writes it: no import of either project."""

    def __init__(self):
        self.seen = {}

    def embed_corpus(self, dataset_name, corpus):
        self.seen[dataset_name] = [
            (db, tid, " ".join(str(c) for row in table for c in row).lower())
            for batch in corpus
            for db, tid, table in zip(batch["database_id"], batch["table_id"], batch["table"])]

    def retrieve(self, query, dataset_name, top_k, **kwargs):
        words = set(query.lower().split())
        scored = [(-len(words & set(text.split())), i, db, tid)
                  for i, (db, tid, text) in enumerate(self.seen[dataset_name])]
        return [(db, tid) for s, i, db, tid in sorted(scored) if s < 0][:top_k]
'''

PROTOCOL_STYLE = '''
import numpy as np

class Mine:
    def index(self, texts, *, corpus_key):
        self.texts = [set(t.lower().split()) for t in texts]

    def score_all(self, query):
        words = set(query.lower().split())
        return np.array([float(len(words & t)) for t in self.texts])

    def search(self, queries, *, top_k):
        out = []
        for q in queries:
            s = self.score_all(q)
            order = sorted(range(len(s)), key=lambda i: (-s[i], i))
            out.append([(i, float(s[i])) for i in order[:top_k]])
        return out
'''


def _write(folder: Path, name: str, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(source, encoding="utf-8")
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the package holding a plugin of each shape."""
    folder = tmp_path / "my_plugins"
    _write(folder, "target_style.py", TARGET_STYLE)
    _write(folder, "protocol_style.py", PROTOCOL_STYLE)
    return folder


def _config(spec: str, handmade_dir: Path, **options) -> RunConfig:
    return RunConfig(dataset=str(handmade_dir), retriever=spec, **options)


@pytest.mark.parametrize("shape", ["target_style", "protocol_style"])
def test_a_plugin_outside_the_package_runs_is_stored_and_reused(
        shape: str, outside: Path, handmade_dir: Path, settings: Settings) -> None:
    spec = f"py:{outside / f'{shape}.py'}:Mine"
    result = run_retrieval(_config(spec, handmade_dir, top_k=2), settings=settings)
    run = result.run
    assert run.status == "complete" and run.n_done == run.n_queries == 3
    assert run.metrics["recall@2"] > 0
    assert run.index_info["plugin"] == "Mine"
    assert run.index_info["shape"] == ("target" if shape == "target_style" else "protocol")
    assert run.config.retriever == spec  # the spec as given is what the run stores
    assert run.config.label == f"py:{shape}.py:Mine"
    again = run_retrieval(_config(spec, handmade_dir, top_k=2), settings=settings)
    assert again.reused and again.run.run_id == run.run_id


def test_gold_ranks_beyond_k(outside: Path, handmade_dir: Path, settings: Settings) -> None:
    """The protocol shape ranks every table (score_all); TARGET's shape only its list."""
    store = RunStore.in_workspace(settings.workspace)
    ranks = {}
    for shape in ("target_style", "protocol_style"):
        spec = f"py:{outside / f'{shape}.py'}:Mine"
        run = run_retrieval(_config(spec, handmade_dir, top_k=1), settings=settings).run
        ranks[shape] = [rank for r in store.iter_results(run.run_id)
                        for rank in r.gold_ranks.values()]
        assert run.index_info["ranks_beyond_k"] is (shape == "protocol_style")
    assert any(rank is not None and rank > 1 for rank in ranks["protocol_style"])
    assert all(rank is None or rank <= 1 for rank in ranks["target_style"])


def test_a_protocol_plugins_prepare_queries_is_called_before_searching(
        outside: Path, handmade_dir: Path, settings: Settings) -> None:
    source = PROTOCOL_STYLE + '''
    def prepare_queries(self, queries, *, progress):
        self.prepared = list(queries)
        return {"prepared": len(queries)}

    def search(self, queries, *, top_k, _search=search):
        assert all(q in self.prepared for q in queries), "searched before prepared"
        return _search(self, queries, top_k=top_k)
'''
    path = _write(outside, "preparing.py", source)
    run = run_retrieval(_config(f"py:{path}:Mine", handmade_dir), settings=settings).run
    assert run.status == "complete" and run.index_info["prepared"] == 3
    broken = _write(outside, "broken.py", PROTOCOL_STYLE + '''
    def prepare_queries(self, queries, *, progress):
        return 3
''')
    with pytest.raises(TargetError, match="prepare_queries.*must return a dict or None"):
        run_retrieval(_config(f"py:{broken}:Mine", handmade_dir), settings=settings)


def test_an_interrupted_plugin_run_resumes(outside: Path, handmade_dir: Path,
                                           settings: Settings) -> None:
    config = _config(f"py:{outside / 'target_style.py'}:Mine", handmade_dir)

    def stop_after_one(done: int, total: int, what: str) -> None:
        if done >= 2 and what == "retrieving":  # the first query is saved by then
            raise Cancelled("stopped")

    with pytest.raises(Cancelled):
        run_retrieval(config, settings=settings, progress=stop_after_one, batch_size=1)
    resumed = run_retrieval(config, settings=settings)
    assert resumed.resumed and resumed.n_new == 2 and resumed.run.status == "complete"


def test_an_edited_plugin_is_a_new_run(outside: Path, handmade_dir: Path,
                                       settings: Settings) -> None:
    path = outside / "target_style.py"
    config = _config(f"py:{path}:Mine", handmade_dir)
    first = run_retrieval(config, settings=settings)
    before = spec_fingerprints([config.retriever])
    path.write_text(TARGET_STYLE + "\n# tuned\n", encoding="utf-8")
    assert spec_fingerprints([config.retriever]) != before
    second = run_retrieval(config, settings=settings)
    assert not second.reused and second.run.run_id != first.run.run_id
    assert second.run.index_info["code"] != first.run.index_info["code"]
    # runs of built-in retrievers keep their keys: no fingerprint for them
    assert spec_fingerprints(["bm25", "summary:minilm@heuristic"]) == {}


def test_a_module_on_the_python_path(outside: Path, handmade_dir: Path, settings: Settings,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _write(outside / "plugin_pkg_for_test", "__init__.py", "")
    _write(outside / "plugin_pkg_for_test", "ranker.py", PROTOCOL_STYLE)
    monkeypatch.syspath_prepend(str(outside))
    spec = "py:plugin_pkg_for_test.ranker:Mine"
    run = run_retrieval(_config(spec, handmade_dir), settings=settings).run
    assert run.status == "complete" and run.index_info["code"]
    assert spec_fingerprints([spec]) == {"plugin_pkg_for_test.ranker:Mine":
                                         run.index_info["code"]}


def test_the_corpus_is_handed_over_as_target_does(settings: Settings) -> None:
    seen: dict[str, object] = {}

    class Recorder:
        expected_corpus_format = "dictionary"

        def embed_corpus(self, dataset_name, corpus):  # noqa: ANN001, ANN201
            seen["name"] = dataset_name
            seen["batches"] = list(corpus)

        def retrieve(self, query, dataset_name, top_k, **kwargs):  # noqa: ANN001, ANN201
            return [["db", "1"], ("db", "1"), ("db", 0)]  # lists, repeats, non-str ids

    tables = [Table("db", str(i), ("a", "b"), ((i, "x"),), {"title": f"T{i}"})
              for i in range(TARGET_BATCH + 1)]
    retriever = adapt_retriever(Recorder(), spec="py:x.py:Recorder", code="c0de")
    texts = retriever.prepare_texts(tables, TableView())
    retriever.index(texts, corpus_key="abc")
    batches = seen["batches"]
    assert seen["name"] == "corpus-abc-c0de"
    assert [len(b["table_id"]) for b in batches] == [TARGET_BATCH, 1]
    assert set(batches[0]) == {"database_id", "table_id", "table", "context"}
    assert batches[0]["table"][1] == [{"a": "1", "b": "x"}]  # cells as TARGET gives them
    assert batches[0]["context"][1] == {"title": "T1"}
    assert retriever.search(["q"], top_k=5) == [[(1, 1.0), (0, 0.5)]]
    assert retriever.score_all("q") is None
    assert target_table(tables[2]) == [["a", "b"], ["2", "x"]]
    assert list(target_table(tables[2], "dataframe").columns) == ["a", "b"]


def test_cli_runs_both_shapes_and_lists_py(outside: Path, tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TARGET_")}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "target_core", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, env=base)

    ws = str(tmp_path / "ws")
    for spec in (f"py:{outside / 'target_style.py'}:Mine",
                 "py:examples/protocol_retriever.py:OverlapRetriever"):
        result = cli("run", "--dataset", "demo-qa", "--retriever", spec, "--limit", "20",
                     "--workspace", ws, "--json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["metrics"]["recall@10"] > 0
    listing = cli("retrievers")
    assert any(line.startswith("py ") and "TARGET's custom retriever" in line
               for line in listing.stdout.splitlines())
    missing = cli("run", "--dataset", "demo-qa", "--retriever",
                  "py:examples/protocol_retriever.py:OverlapRetrievr", "--workspace", ws)
    assert missing.returncode != 0
    assert "did you mean 'OverlapRetriever'" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_errors_name_the_value(outside: Path, settings: Settings) -> None:
    def error(spec: str) -> str:
        with pytest.raises(PluginError) as info:
            build_retriever(spec, settings)
        assert isinstance(info.value, TargetError)
        return str(info.value)

    assert "no file" in error(f"py:{outside / 'nope.py'}:Mine")
    assert "did you mean" in error(f"py:{outside / 'target_styl.py'}:Mine")
    assert "has no 'Yours'" in error(f"py:{outside / 'target_style.py'}:Yours")
    assert "no module 'no_such_module_x'" in error("py:no_such_module_x:Mine")
    assert "expected py:MODULE:CLASS" in error("py:just_a_name")
    _write(outside, "neither.py", "class Mine:\n    def run(self):\n        pass\n")
    message = error(f"py:{outside / 'neither.py'}:Mine")
    assert "fits no retriever shape" in message and "embed_corpus, retrieve" in message
    _write(outside, "needs_args.py", "class Mine:\n    def __init__(self, model):\n"
           "        pass\n")
    assert "cannot be built with Mine(): missing a required argument: 'model' (it takes " \
        "model)" in error(f"py:{outside / 'needs_args.py'}:Mine")
    _write(outside, "broken.py", "import not_installed_anywhere_x\n")
    assert "importing" in error(f"py:{outside / 'broken.py'}:Mine")


def test_a_broken_result_fails_the_run_with_the_class_named(
        outside: Path, handmade_dir: Path, settings: Settings) -> None:
    _write(outside, "unknown_ids.py", TARGET_STYLE.replace(
        "return [(db, tid)", "return [(db, tid + '-typo')"))
    config = _config(f"py:{outside / 'unknown_ids.py'}:Mine", handmade_dir)
    with pytest.raises(PluginError, match=r"Mine\.retrieve returned .*not a table"):
        run_retrieval(config, settings=settings)
    run = RunStore.in_workspace(settings.workspace).list_runs()[0]
    assert run.status == "failed" and "Mine.retrieve" in (run.error or "")


def test_check_reports() -> None:
    good = target_core.check_retriever(
        "py:examples/target_style_retriever.py:KeywordRetriever")
    assert good.ok and "TARGET's custom retriever shape" in good.subject
    assert any("not ranked" in note for note in good.notes)
    assert target_core.check_retriever("py:examples/protocol_retriever.py:OverlapRetriever").ok

    class Unsorted:
        def index(self, texts, *, corpus_key):  # noqa: ANN001, ANN201
            pass

        def search(self, queries, *, top_k):  # noqa: ANN001, ANN201
            return [[(0, 0.1), (1, 0.9)] for _ in queries]

    report = target_core.check_retriever(Unsorted())
    assert not report.ok and "not best first" in report.problems[0]
    with pytest.raises(PluginError, match="not best first"):
        report.raise_for_problems()

    class Greedy(Unsorted):
        def search(self, queries, *, top_k):  # noqa: ANN001, ANN201
            return [[(i, 1.0 - i / 100) for i in range(top_k + 2)] for _ in queries]

    report = target_core.check_retriever(Greedy())  # more than asked: refused, not cut
    assert not report.ok and "hits for top_k" in report.problems[0]

    class Moody:
        calls = 0

        def embed_corpus(self, dataset_name, corpus):  # noqa: ANN001, ANN201
            self.keys = [(d, t) for b in corpus for d, t in zip(b["database_id"],
                                                                 b["table_id"], strict=True)]

        def retrieve(self, query, dataset_name, top_k, **kwargs):  # noqa: ANN001, ANN201
            self.calls += 1
            return self.keys[self.calls % 2:][:top_k]

    assert any("deterministic" in p for p in target_core.check_retriever(Moody()).problems)
    assert "fits no retriever shape" in str(target_core.check_retriever(object()))
    assert "did you mean 'OverlapRetriever'" in str(target_core.check_retriever(
        "py:examples/protocol_retriever.py:OverlapRetrievr"))


def test_generator_plugin_run_and_check(handmade_dir: Path, settings: Settings) -> None:
    spec = "py:examples/echo_generator.py:EchoGenerator"
    assert target_core.check_generator(spec).ok
    config = RunConfig(dataset=str(handmade_dir), retriever="bm25",
                       generation=GenerationConfig(spec))
    run = run_retrieval(config, settings=settings).run
    assert run.status == "complete" and run.metrics["n_generated"] == 3
    assert run.index_info["generator"].startswith("echo (example")
    results = list(RunStore.in_workspace(settings.workspace).iter_results(run.run_id))
    assert all(r.generation and r.generation["answer"] for r in results)

    class Flaky:
        def generate(self, request):  # noqa: ANN001, ANN201
            raise RuntimeError("model fell over")

    report = target_core.check_generator(Flaky())
    assert not report.ok and "model fell over" in report.problems[0]
    assert "no generate" in str(target_core.check_generator(object()))


def test_pages_open_a_plugin_run(app, outside: Path) -> None:
    from target_core.config import load_settings

    settings = load_settings(Path(os.environ["TARGET_WORKSPACE"]))
    runs = [run_retrieval(RunConfig("handmade-qa", f"py:{outside / f'{shape}.py'}:Mine",
                                    top_k=1), settings=settings).run
            for shape in ("target_style", "protocol_style")]
    store = RunStore.in_workspace(settings.workspace)
    for run in runs:
        for query_id, *_ in store.query_metrics(run.run_id):
            at = app(page="pages/query.py", run=run.run_id, query=query_id)
            assert not at.error, at.error
            where = " ".join(at.dataframe[0].value["where"])
            if "not ranked" in where and run.index_info["shape"] == "target":
                assert "not in the retriever's list" in where
        at = app(page="pages/failures.py", run=run.run_id)
        assert not at.error, at.error
    at = app(page="pages/overview.py")
    assert not at.error
    assert "py:target_style.py:Mine" in at.markdown[0].value or any(
        "py:target_style.py:Mine" in str(frame.value.to_dict()) for frame in at.dataframe)


def test_run_page_takes_py_specs(app, tmp_path: Path) -> None:
    """A py: spec typed in the Run page's retriever box: a wrong one is a clear error at
    launch; a right one runs as a job (in a worker process, from the project's folder)
    and its run is listed under the file's name."""
    from jobs_support import wait_for_jobs

    at = app(page="pages/run.py", dataset="handmade-qa")
    launch = next(b for b in at.button if b.label == "Launch")
    at.multiselect(key="run-specs").set_value(["py:examples/protocol_retrievr.py:Mine"])
    launch.click().run()
    assert not at.exception
    assert "did you mean 'examples/protocol_retriever.py'" in at.error[0].value
    spec = "py:examples/protocol_retriever.py:OverlapRetriever"
    at.multiselect(key="run-specs").set_value([spec])
    next(b for b in at.button if b.label == "Launch").click().run()
    assert not at.exception and "1 job(s) launched" in at.success[0].value
    (job,) = wait_for_jobs(tmp_path / "ws")
    assert job.status == "done", job
    (run,) = RunStore.in_workspace(tmp_path / "ws").list_runs()
    assert run.status == "complete" and run.config.retriever == spec
    at.run()
    assert "py:protocol_retriever.py:OverlapRetriever" in at.dataframe[-1].value.to_string()


RANKINGS = """
import json, sys
sys.path.insert(0, "examples")
from target_style_retriever import KeywordRetriever
from target_core.config import load_settings
from target_core.datasets import load_dataset

dataset = load_dataset("demo-qa", load_settings())
tables = [t for t in dataset.tables]
retriever = KeywordRetriever()
retriever.embed_corpus("demo-qa", [{
    "database_id": [t.database_id for t in tables], "table_id": [t.table_id for t in tables],
    "table": [[list(t.header), *map(list, t.rows)] for t in tables],
    "context": [dict(t.context) for t in tables]}])
print(json.dumps([retriever.retrieve(q.query, "demo-qa", 10) for q in dataset.queries]))
"""


def test_the_example_target_retriever_ranks_alike_in_every_process() -> None:
    """Its sums were over a set, whose order follows each process's hash seed: 23 of
    260 lists differed between two processes before math.fsum."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    outputs = [subprocess.run([sys.executable, "-c", RANKINGS], cwd=root, check=True,
                              capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed,
                                   "PYTHONPATH": str(root)}).stdout
               for seed in ("1", "2", "3")]
    assert outputs[0] and outputs[0] == outputs[1] == outputs[2]
