"""Registries: the dataset registry (names, paths, TARGET_DATASETS, duplicates, typos),
then the component registries (target_core.registry): every entry of every kind through
its kind's contract, the spec grammar, duplicates and typos."""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from role_contracts import (
    question_judge_contract,
    question_writer_contract,
    truth_judge_contract,
)
from test_retrievers import HANDMADE, retriever_contract

import target_core
from conftest import query_record, table_record
from target_core.config import Settings, load_settings
from target_core.datasets import discover, list_datasets, load_dataset, resolve
from target_core.datasets.folder import load_folder
from target_core.embeddings import Embedder, get_embedder
from target_core.errors import ConfigError, DatasetError, TargetError, UnknownNameError
from target_core.generators import (
    Context,
    Generation,
    GenerationRequest,
    Generator,
    TableSummary,
    build_generator,
)
from target_core.generators.prompts import build_messages
from target_core.registry import DuplicateNameError, Entry, Part, Registry, Spec, parse_spec
from target_core.retrievers import RETRIEVERS
from target_core.serialize import table_text
from target_core.table_view import TableView


def _settings(tmp_path: Path, *extra: Path):
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "TARGET_DATASETS": os.pathsep.join(map(str, extra))})


def test_demo_and_hub_names_are_known(settings) -> None:
    known = discover(settings)
    assert {"demo-qa", "demo-fact", "demo-sql"} <= set(known)
    assert known["demo-qa"].kind == "demo"
    assert known["hub:fetaqa"].kind == "hub"


def test_path_resolves_like_a_name(handmade_dir: Path, settings) -> None:
    entry = resolve(str(handmade_dir), settings)
    assert entry.name == "handmade-qa" and entry.kind == "folder"
    assert load_dataset(handmade_dir, settings).name == "handmade-qa"


def test_datasets_path_holds_folders_or_parents(tmp_path: Path, write_dataset) -> None:
    parent = tmp_path / "mine"
    parent.mkdir()
    a = write_dataset(name="mine/alpha")
    write_dataset(name="mine/beta", meta={"name": "beta-renamed", "task": "qa"})
    single = write_dataset(name="gamma")
    known = discover(_settings(tmp_path, parent, single))
    assert {"alpha", "beta-renamed", "gamma"} <= set(known)
    assert known["alpha"].location == str(a)


def test_unknown_name_suggests_closest(settings) -> None:
    with pytest.raises(UnknownNameError) as info:
        resolve("demo-qq", settings)
    assert info.value.suggestion == "demo-qa"
    assert "did you mean 'demo-qa'?" in str(info.value)
    assert "demo-sql" in str(info.value) and "hub:spider" in str(info.value)


def test_path_that_is_not_a_dataset(tmp_path: Path, settings) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="not a dataset"):
        resolve(str(tmp_path / "empty"), settings)


def test_duplicate_names_are_rejected(tmp_path: Path, write_dataset) -> None:
    first = write_dataset(name="one/same")
    second = write_dataset(name="two/same")
    with pytest.raises(ConfigError, match="used twice") as info:
        discover(_settings(tmp_path, first.parent, second.parent))
    assert str(first) in str(info.value) and str(second) in str(info.value)


def test_list_reports_broken_dataset_without_hiding_others(tmp_path: Path,
                                                           write_dataset) -> None:
    write_dataset(name="lib/good")
    write_dataset(name="lib/bad", queries=[query_record("q1", "missing")])
    infos = {i.name: i for i in list_datasets(_settings(tmp_path, tmp_path / "lib"))}
    assert infos["good"].tables == 2 and infos["good"].error is None
    assert infos["bad"].tables is None and "not in the corpus" in infos["bad"].error


def test_reload_after_file_change(tmp_path: Path, write_dataset) -> None:
    folder = write_dataset(name="lib/live")
    settings = _settings(tmp_path, tmp_path / "lib")
    assert len(load_dataset("live", settings).tables) == 2
    corpus = folder / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + '{"database_id": "wiki", "table_id": "t3", '
                      '"table": [["x"]]}\n')
    assert len(load_dataset("live", settings).tables) == 3


def test_remote_listing_includes_hub_without_counts(settings) -> None:
    infos = {i.name: i for i in list_datasets(settings, remote=True)}
    assert infos["hub:bird"].tables is None and infos["hub:bird"].kind == "hub"
    assert "hub:bird" not in {i.name for i in list_datasets(settings)}


def test_table_record_helper_shape() -> None:
    assert table_record("t")["table"][0] == ["a", "b"]


def test_spider_folder_by_path_and_by_name(tmp_path: Path) -> None:
    from test_spider_loader import make_spider

    spider = make_spider(tmp_path / "lib" / "my_spider")
    settings = _settings(tmp_path, tmp_path / "lib")
    assert discover(settings)["my_spider"].kind == "spider"
    by_name = load_dataset("my_spider", settings)
    by_path = load_dataset(str(spider), settings)
    assert by_name.task == by_path.task == "sql"
    # the registry indexes the split's databases only, as TARGET's per-split corpora do
    used = {q.database_id for q in by_name.queries}
    assert {t.database_id for t in by_name.tables} == used


# --- component registries -------------------------------------------------------------------

def generator_contract(spec: str, settings: Settings) -> None:
    """Build `spec`, answer one QA request and summarize one table through the protocol."""
    generator = build_generator(spec, settings)
    assert isinstance(generator, Generator)
    assert parse_spec(generator.spec).name == parse_spec(spec).name
    assert generator.label and generator.concurrency >= 1
    dataset = load_folder(HANDMADE)
    table, query = dataset.tables[0], dataset.queries[0].query
    text = table_text(table, TableView())
    request = GenerationRequest("qa", query, Context("retrieved", (table,), text=text),
                                build_messages("qa", query, text))
    generation = generator.generate(request)
    assert isinstance(generation, Generation) and generation.error is None
    assert isinstance(generation.answer, str)
    summary = generator.summarize(table, rows=2)
    assert isinstance(summary, TableSummary) and summary.name


def embedder_contract(spec: str, settings: Settings) -> None:
    """Build `spec` and embed two texts: unit float32 rows of the stated dimension."""
    embedder = get_embedder(spec, settings)
    assert isinstance(embedder, Embedder)
    assert parse_spec(embedder.spec, "/").name == parse_spec(spec, "/").name
    assert re.fullmatch(r"[A-Za-z0-9._-]+", embedder.fingerprint())
    assert isinstance(embedder.backend, str) and embedder.max_tokens > 0
    vectors = embedder.embed(["Lakes of Norland by depth", "marathon results"],
                             kind="document")
    assert vectors.dtype == np.float32 and vectors.shape == (2, embedder.dimension)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.last_truncated == 0
    with pytest.raises(TypeError):
        embedder.embed("a single string", kind="query")


CONTRACTS: dict[str, Callable[[str, Settings], None]] = {
    "retriever": retriever_contract,
    "generator": generator_contract,
    "embedder": embedder_contract,
    "truthfulness judge": truth_judge_contract,
    "question writer": question_writer_contract,
    "question judge": question_judge_contract,
}
"""Every registry kind's contract; a kind without one fails test_every_kind_has_a_contract."""


def _all_registries() -> dict[str, Registry]:
    """Every Registry held at module level anywhere in target_core, by kind."""
    found: dict[str, Registry] = {}
    for info in pkgutil.walk_packages(target_core.__path__, "target_core."):
        if info.name.rpartition(".")[2] == "__main__":
            continue
        for value in vars(importlib.import_module(info.name)).values():
            if isinstance(value, Registry):
                assert found.setdefault(value.kind, value) is value, f"two {value.kind} registries"
    return found


REGISTRIES = _all_registries()
EXAMPLES = [(kind, spec) for kind, registry in REGISTRIES.items()
            for spec in registry.examples()]


@pytest.fixture
def component_settings(tmp_path: Path, fake_openai) -> Settings:
    """OpenAI parts talk to the fake server on loopback, with a dummy key."""
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "OPENAI_API_KEY": "sk-test-contract",
                                  "OPENAI_BASE_URL": fake_openai.base_url})


def test_every_kind_has_a_contract() -> None:
    assert {"retriever", "generator", "embedder"} <= set(REGISTRIES)
    assert set(REGISTRIES) == set(CONTRACTS)


@pytest.mark.parametrize(("kind", "spec"), EXAMPLES, ids=[f"{k}-{s}" for k, s in EXAMPLES])
def test_contract(kind: str, spec: str, component_settings: Settings) -> None:
    CONTRACTS[kind](spec, component_settings)


def test_every_entry_has_examples_of_its_own_family() -> None:
    for registry in REGISTRIES.values():
        for entry in registry:
            assert entry.description and entry.examples, (registry.kind, entry.name)
            assert registry.separator not in entry.name
            for spec in entry.examples:
                assert registry.parse(spec) == (entry, parse_spec(spec, registry.separator).arg)


def test_parts_name_registered_specs() -> None:
    """Every part of every example is a valid spec of a registered kind."""
    for registry in REGISTRIES.values():
        for spec in registry.examples():
            for part in registry.parts(spec):
                REGISTRIES[part.kind].parse(part.spec)


def test_parts_fill_in_defaults() -> None:
    assert RETRIEVERS.parts("summary:openai@openai:gpt-4o-mini") == (
        Part("embedder", "openai"), Part("generator", "openai:gpt-4o-mini"))
    assert RETRIEVERS.parts("summary") == (Part("embedder", "minilm"),
                                           Part("generator", "heuristic"))
    assert RETRIEVERS.parts("summary:@openai") == (Part("embedder", "minilm"),
                                                   Part("generator", "openai"))
    assert RETRIEVERS.parts("hybrid:openai") == (Part("embedder", "openai"),)
    assert RETRIEVERS.parts("hybrid") == (Part("embedder", "minilm"),)
    assert RETRIEVERS.parts("dense:openai/text-embedding-3-large") == (
        Part("embedder", "openai/text-embedding-3-large"),)
    assert RETRIEVERS.parts("bm25") == ()


def test_spec_grammar() -> None:
    assert parse_spec("bm25") == Spec("bm25", "")
    assert parse_spec(" dense : openai/m ") == Spec("dense", "openai/m")
    assert parse_spec("summary:openai@openai:gpt-4o") == Spec("summary", "openai@openai:gpt-4o")
    assert parse_spec("openai/nomic-embed-text:v1.5", "/") == Spec("openai",
                                                                  "nomic-embed-text:v1.5")
    assert parse_spec("openai@openai:gpt-4o", "@") == Spec("openai", "openai:gpt-4o")
    assert parse_spec("") == Spec("", "")


def _entry(name: str) -> Entry[str]:
    return Entry(name, f"the {name} thing", lambda arg, settings: f"{name}({arg})", (name,))


def test_duplicate_registration_raises() -> None:
    registry: Registry[str] = Registry("thing", [_entry("a")])
    first = registry.get("a")
    with pytest.raises(DuplicateNameError, match="thing 'a' is registered twice") as info:
        registry.register(_entry("a"))
    assert isinstance(info.value, TargetError)
    assert registry.get("a") is first and len(registry) == 1
    with pytest.raises(DuplicateNameError):
        Registry("thing", [_entry("b"), _entry("b")])


def test_unknown_names_suggest_the_closest() -> None:
    registry: Registry[str] = Registry("thing", [_entry("alpha"), _entry("beta")])
    with pytest.raises(UnknownNameError, match="did you mean 'alpha'") as info:
        registry.get("alpah")
    assert info.value.kind == "thing"
    with pytest.raises(UnknownNameError, match="unknown thing 'bet:x'; did you mean 'beta'"):
        registry.build("bet:x", load_settings(environ={}))
    assert registry.build("beta:x", load_settings(environ={})) == "beta(x)"
    assert [e.name for e in registry] == registry.names() == ["alpha", "beta"]
    assert "alpha" in registry and "gamma" not in registry


def test_registry_errors_are_target_errors() -> None:
    assert issubclass(DuplicateNameError, ConfigError)


def test_self_contained_specs_build_with_nothing_from_outside(settings) -> None:
    """A launcher skips building a self-contained spec before it queues the job
    (engine/workers.py): every example it says so of builds with no API key or server,
    and every spec needing a key, a model file or user code is not one."""
    from dataclasses import replace

    from target_core.retrievers import self_contained

    bare = replace(settings, openai_api_key=None)
    contained = [s for s in RETRIEVERS.examples() if self_contained(s)]
    assert {"bm25", "tfidf", "ottqa:bm25", "dense:minilm", "hybrid", "summary:minilm",
            "rows", "hyse"} <= set(contained)
    for spec in contained:
        RETRIEVERS.build(spec, bare)
    for spec in ("dense:openai", "hybrid:openai", "rows:openai", "dense:local/smollm2",
                 "summary:openai@openai:gpt-4o-mini", "summary:minilm@local:smollm2",
                 "hyse:minilm@openai", "py:examples/protocol_retriever.py:OverlapRetriever",
                 "pyenv:python3:examples/target_style_retriever.py:KeywordRetriever"):
        assert not self_contained(spec), spec
    with pytest.raises(UnknownNameError):
        self_contained("bm52")


def test_a_launch_builds_what_is_not_self_contained(settings) -> None:
    """dense:openai with no key is refused before any job exists; bm25 is queued."""
    from dataclasses import replace

    from target_core.engine.jobs import JobStore
    from target_core.engine.workers import launch_run
    from target_core.run_config import RunConfig

    bare = replace(settings, openai_api_key=None)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        launch_run(RunConfig("demo-qa", "dense:openai"), settings=bare, spawn=False)
    assert JobStore.in_workspace(bare.workspace).list_jobs() == []
    assert launch_run(RunConfig("demo-qa", "bm25", limit=3), settings=bare,
                      spawn=False).job is not None


def test_family_traits_are_registry_data() -> None:
    """Which families index the view text lexically (the embedding map borrows a dense
    run's vectors for them) and which score tables by rows (the Query page shows the
    matched rows) is said by their entries, not by name lists in the modules that ask."""
    assert {e.name for e in RETRIEVERS if e.lexical_view_text} == {"bm25", "tfidf"}
    assert {e.name for e in RETRIEVERS if e.scores_rows} == {"rows"}
    assert {e.name for e in RETRIEVERS if e.embeds_view} == {"dense", "hybrid"}
    assert not any(e.lexical_view_text and e.embeds_view for e in RETRIEVERS)



def test_two_threads_opening_one_dataset_load_it_once(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's warm-up and a first page (or two sessions) opening the same dataset
    at once: the second waits for the first and gets the same object, no second load."""
    import threading
    import time

    from target_core.datasets import open_lookup, registry

    settings = load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws")})
    real, loads = registry._load_entry, []

    def slow_load(entry, settings):  # type: ignore[no-untyped-def]
        loads.append(entry.name)
        time.sleep(0.3)  # long enough for the other thread to arrive meanwhile
        return real(entry, settings)

    monkeypatch.setattr(registry, "_load_entry", slow_load)
    registry._cache.clear()
    registry._lookups.clear()
    start = threading.Barrier(2)
    found: list[object] = []

    def open_it(how: str) -> None:
        start.wait()
        found.append(open_lookup("demo-qa", settings) if how == "open" else
                     load_dataset("demo-qa", settings))

    threads = [threading.Thread(target=open_it, args=(how,)) for how in ("open", "load")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == ["demo-qa"] and found[0] is found[1]
