"""docs/extending/retriever.md, as written there: the `titles` family is one module and
one registration, the registry's contract functions then cover its examples, its entry
prices its paid embedder, and a run of it goes through the engine like any retriever."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from docs_examples import code_blocks, page_module
from test_costs import WordCounter, retriever_cost_contract
from test_retrievers import HANDMADE, retriever_contract

from target_core.config import Settings, load_settings
from target_core.costs import estimate_run_cost
from target_core.datasets.folder import load_folder
from target_core.engine.runner import run_retrieval
from target_core.registry import Entry, Part
from target_core.retrievers import RETRIEVERS
from target_core.run_config import RunConfig

PAGE = Path(__file__).resolve().parent.parent / "docs" / "extending" / "retriever.md"


def _blocks() -> list[str]:
    """The page's worked example: the module, then the registration."""
    return code_blocks(PAGE, after="## Worked example", count=2)


def _module() -> ModuleType:
    """The module the page shows."""
    return page_module("docs_titles", _blocks()[0], PAGE)


@pytest.fixture
def titles() -> Iterator[Entry]:
    module = _module()
    exec(_blocks()[1], {"RETRIEVERS": RETRIEVERS, "titles": module})  # the line shown
    try:
        yield RETRIEVERS.get("titles")
    finally:
        RETRIEVERS.unregister("titles")


@pytest.fixture
def openai_settings(tmp_path: Path, fake_openai) -> Settings:
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "ws"),
                                  "OPENAI_API_KEY": "sk-test-contract",
                                  "OPENAI_BASE_URL": fake_openai.base_url})


def test_the_registry_contracts_cover_the_new_family(titles: Entry,
                                                     openai_settings: Settings) -> None:
    assert [e.name for e in RETRIEVERS][-1] == "titles"
    covered = [spec for entry in RETRIEVERS for spec in entry.examples]
    assert {"titles", "titles:openai"} <= set(covered)
    for spec in titles.examples:
        retriever_contract(spec, openai_settings)  # test_registry.py's test_contract
        retriever_cost_contract(spec)  # test_costs.py's, for every registered example
    assert RETRIEVERS.parts("titles") == (Part("embedder", "minilm"),)


def test_its_entry_prices_the_paid_embedder(titles: Entry,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """One word, one token (test_costs.WordCounter): the handmade titles and queries."""
    from target_core import pricing

    monkeypatch.setattr(pricing, "get_counter", lambda *a, **k: WordCounter())
    dataset = load_folder(HANDMADE)
    words = (sum(len((t.title or t.table_id).split()) for t in dataset.tables)
             + sum(len(q.query.split()) for q in dataset.queries))
    assert not estimate_run_cost(dataset, "titles", None, top_k=2, n_queries=3).lines
    line, = estimate_run_cost(dataset, "titles:openai", None, top_k=2, n_queries=3).lines
    assert (line.part, line.model) == (Part("embedder", "openai"), "text-embedding-3-small")
    assert line.what == f"{len(dataset.tables)} titles + 3 queries"
    assert line.tokens_in == words and line.usd == pytest.approx(words * 0.02 / 1e6)


def test_a_run_of_it_goes_through_the_engine(titles: Entry, settings: Settings) -> None:
    """The marathon questions find a marathon table by its title alone."""
    run = run_retrieval(RunConfig(str(HANDMADE), "titles", top_k=2), settings=settings).run
    assert run.config.retriever == "titles" and run.index_info["embedder"] == "minilm"
    assert run.metrics["recall@2"] > 0


def test_the_family_is_gone_after_the_tests() -> None:
    assert "titles" not in RETRIEVERS

