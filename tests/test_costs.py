"""Cost estimates for paid runs: embeddings, answers and the summary retriever's table
summaries, for every paid part a registered spec uses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_retrievers import HANDMADE

from target_core import costs, pricing
from target_core.costs import embedding_cost, estimate_run_cost, paid_parts
from target_core.datasets.folder import load_folder
from target_core.errors import UnknownNameError
from target_core.generators import GENERATORS
from target_core.registry import Part
from target_core.retrievers import RETRIEVERS
from target_core.run_config import GenerationConfig
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.tokens import estimate_tokens
from target_core.types import Dataset, Query, Table


def test_paid_parts_follow_the_registries() -> None:
    assert paid_parts(Part("retriever", "dense:openai")) == [
        (Part("embedder", "openai"), "text-embedding-3-small")]
    assert paid_parts(Part("retriever", "hybrid:openai/text-embedding-3-large")) == [
        (Part("embedder", "openai/text-embedding-3-large"), "text-embedding-3-large")]
    assert paid_parts(Part("retriever", "summary:openai@openai:gpt-4o-mini")) == [
        (Part("embedder", "openai"), "text-embedding-3-small"),
        (Part("generator", "openai:gpt-4o-mini"), "gpt-4o-mini")]
    assert paid_parts(Part("retriever", "summary:minilm@openai")) == [
        (Part("generator", "openai"), "gpt-4o-mini")]
    for free in ("bm25", "dense:minilm", "hybrid", "summary:minilm", "no-context"):
        assert paid_parts(Part("retriever", free)) == []
    assert paid_parts(Part("generator", "heuristic")) == []
    with pytest.raises(UnknownNameError):
        paid_parts(Part("retriever", "dense2:openai"))


def retriever_cost_contract(spec: str) -> None:
    """The entry of `spec`'s family prices each paid part the spec uses, once (its
    Entry.cost), with input tokens and a line to show; a family without `cost` is free:
    none of its examples' parts is paid. estimate_run_cost bills exactly those lines."""
    dataset = load_folder(HANDMADE)
    queries = [q.query for q in dataset.queries]
    entry, arg = RETRIEVERS.parse(spec)
    paid = sorted(p for p, _ in paid_parts(Part("retriever", spec)))
    lines = entry.cost(dataset, entry.parts(arg), TableView(), queries, arg) if entry.cost else []
    assert sorted(line.part for line in lines) == paid, spec
    for line in lines:  # every example's paid model has a known price
        assert line.tokens_in > 0 and line.usd and line.describe().startswith(line.model)
    estimate = estimate_run_cost(dataset, spec, None, top_k=2, n_queries=len(queries))
    assert list(estimate.lines) == lines
    assert estimate.usd == pytest.approx(sum(line.usd or 0 for line in lines))
    if "openai" in spec:
        assert lines and estimate.usd > 0


@pytest.mark.parametrize("spec", RETRIEVERS.examples())
def test_every_retriever_example_is_priced_by_its_entry(spec: str) -> None:
    """A family registered with a paid part and no `cost` (or one that forgets a part)
    fails here; so does every example of a family registered later (tests/
    test_extending_retriever.py)."""
    retriever_cost_contract(spec)


def test_costs_keep_no_table_of_retriever_families() -> None:
    """costs.py prices a whole run from the entries: no family is named in its code."""
    source = Path(costs.__file__).read_text(encoding="utf-8")
    named = [e.name for e in RETRIEVERS if re.search(rf"[\"']{re.escape(e.name)}[\"']", source)]
    assert not named and not hasattr(costs, "RETRIEVER_COSTS")
    assert {e.name for e in RETRIEVERS if e.cost is not None} == {
        "dense", "hybrid", "summary", "rows", "hyse"}


@pytest.mark.parametrize("spec", GENERATORS.examples())
def test_every_generator_example_has_a_line_per_paid_part(spec: str, handmade_dir) -> None:
    dataset = load_folder(handmade_dir)
    estimate = estimate_run_cost(dataset, "bm25", GenerationConfig(spec), top_k=2,
                                 n_queries=3)
    paid = paid_parts(Part("generator", spec))
    assert [line.part for line in estimate.lines] == [p for p, _ in paid]
    assert all(line.tokens_in > 0 and line.tokens_out > 0 for line in estimate.lines)
    if "openai" in spec:
        assert estimate.lines and estimate.usd > 0


@dataclass(frozen=True)
class WordCounter:
    """A token counter for hand-computed numbers: one token per whitespace-separated word."""

    exact: bool = False

    def count(self, text: str) -> int:
        return len(text.split())

    def count_many(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]


def test_summary_estimate_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """summary:openai@openai:gpt-4o-mini on two tables and two queries, counting words.

    Summary prompts: the system message and the instructions (their own word counts, P),
    then "Table: " + the table as the summary sees it, header and first 3 rows:
      lakes: "Title: Lakes" 2, "Table: lakes" 2, header 5 ("| Lake | Depth |"),
             separator 5, 3 of its 4 rows x 5                         = 29
      runs:  "Table: runs" 2 (no title), header 5, separator 5, 1 row 5 = 17
    replies 80 tokens each (SUMMARY_TOKENS). Embeddings: each summary 80 tokens, plus the
    queries "how deep is vessa" 4 and "who ran" 2.
    """
    from target_core.generators.prompts import SUMMARY_INSTRUCTION, SUMMARY_SYSTEM

    monkeypatch.setattr(pricing, "get_counter", lambda *a, **k: WordCounter())
    dataset = Dataset("tiny", "qa", (
        Table("db", "lakes", ("Lake", "Depth"),
              (("Vessa", 48), ("Orin", 102), ("Tamm", 12), ("Ulm", 7)), {"title": "Lakes"}),
        Table("db", "runs", ("Runner", "Time"), (("Ada", "2:11"),))),
        (Query("q1", "how deep is vessa", "48", (("db", "lakes"),), "db"),
         Query("q2", "who ran", "Ada", (("db", "runs"),), "db")))
    prompt = (len(SUMMARY_SYSTEM.split())
              + len(SUMMARY_INSTRUCTION.format(table_contents="").split()))
    estimate = estimate_run_cost(dataset, "summary:openai@openai:gpt-4o-mini", None,
                                 top_k=1, n_queries=2)
    summaries, = (line for line in estimate.lines if line.part.kind == "generator")
    assert summaries.model == "gpt-4o-mini" and summaries.what == "2 table summaries"
    assert summaries.tokens_in == 2 * prompt + 29 + 17
    assert summaries.tokens_out == 2 * 80
    assert summaries.usd == pytest.approx(((2 * prompt + 46) * 0.15 + 160 * 0.60) / 1e6)
    embeddings, = (line for line in estimate.lines if line.part.kind == "embedder")
    assert embeddings.model == "text-embedding-3-small"
    assert embeddings.tokens_in == 2 * 80 + 4 + 2 and embeddings.tokens_out == 0
    assert embeddings.usd == pytest.approx(166 * 0.02 / 1e6)
    assert not embeddings.exact  # the summaries' length is assumed
    assert estimate.usd == pytest.approx(summaries.usd + embeddings.usd)
    assert summaries.describe() == (
        f"gpt-4o-mini: {2 * prompt + 46:,} prompt + 160 reply tokens for 2 table summaries "
        f"(about ${summaries.usd:,.4f}; cached replies are free)")
    assert embeddings.describe().startswith(
        "text-embedding-3-small: 166 tokens to embed 2 table summaries + 2 queries")


def test_run_estimate_adds_answers_and_counts_the_run_queries(handmade_dir,
                                                              monkeypatch) -> None:
    monkeypatch.setattr(pricing, "get_counter", lambda *a, **k: WordCounter())
    dataset = load_folder(handmade_dir)
    generation = GenerationConfig("openai:gpt-4o", context="none")
    estimate = estimate_run_cost(dataset, "dense:openai", generation, top_k=2, n_queries=1)
    embed, answers = estimate.lines
    tables = sum(len(table_text(t, TableView()).split()) for t in dataset.tables)
    assert embed.tokens_in == tables + len(dataset.queries[0].query.split())
    assert answers.part == Part("generator", "openai:gpt-4o") and answers.what == "1 query"
    assert (answers.tokens_in, answers.tokens_out) == (250, 60)  # no context: the overhead
    local = estimate_run_cost(dataset, "dense:openai/my-local-model", None, top_k=2,
                              n_queries=1)
    assert local.lines[0].usd is None and local.unpriced == ("my-local-model",)
    assert "no known price" in local.lines[0].describe()


def test_estimate_adds_texts_and_queries_and_prices_known_models() -> None:
    texts, queries = ["| Lake | Depth |", "a b c"], ["which lake?"]
    expected = sum(estimate_tokens(t) for t in texts + queries)
    estimate = embedding_cost(texts, queries, "text-embedding-3-small")
    if not estimate.exact:  # offline: the labelled estimate
        assert estimate.tokens == expected
    assert estimate.usd == pytest.approx(estimate.tokens * 0.02 / 1e6)
    assert embedding_cost(texts, queries, "my-local-model").usd is None


def test_run_estimate_counts_the_view(handmade_dir) -> None:
    from target_core.costs import run_embedding_cost
    from target_core.datasets.folder import load_folder
    from target_core.table_view import TableView

    dataset = load_folder(handmade_dir)
    full = run_embedding_cost(dataset, TableView(), "text-embedding-3-small")
    header = run_embedding_cost(dataset, TableView(rows=0), "text-embedding-3-small")
    assert 0 < header.tokens < full.tokens


def test_chat_model_from_generator_spec() -> None:
    from target_core.costs import chat_model

    assert chat_model("openai") == "gpt-4o-mini" and chat_model("openai:gpt-4o") == "gpt-4o"
    assert chat_model("heuristic") is None


def test_generation_estimate_by_context_mode(handmade_dir, monkeypatch) -> None:
    """Per query: 250 tokens of prompt plus the context, capped at the budget; replies
    assumed 60 tokens for QA. Hand-computed from the handmade tables' own counts."""
    from target_core.datasets.folder import load_folder
    from target_core.generators.context import prompt_view
    from target_core.run_config import GenerationConfig
    from target_core.serialize import table_text
    from target_core.table_view import TableView
    from target_core.tokens import TokenCounter

    counter = TokenCounter("test", False)  # the estimate: deterministic offline and online
    monkeypatch.setattr(costs, "get_counter", lambda *a, **k: counter)
    dataset = load_folder(handmade_dir)
    tokens = {t.key: counter.count(table_text(t, prompt_view(TableView())))
              for t in dataset.tables}
    mean = sum(tokens.values()) / len(tokens)
    n = len(dataset.queries)

    def estimate(**options):
        return costs.generation_cost(dataset, GenerationConfig("openai", **options), top_k=2,
                                     n_queries=n, model="gpt-4o-mini")

    retrieved = estimate()
    assert retrieved.tokens_in == int((250 + 2 * mean) * n)
    assert retrieved.tokens_out == 60 * n
    assert retrieved.usd == pytest.approx((retrieved.tokens_in * 0.15 + 60 * n * 0.60) / 1e6)
    oracle = estimate(context="oracle")
    gold = sum(sum(tokens[g] for g in q.gold) for q in dataset.queries) / n
    assert oracle.tokens_in == int((250 + gold) * n)
    assert estimate(context="none").tokens_in == 250 * n
    assert estimate(token_budget=100).tokens_in == 350 * n  # 2 tables > 100 tokens: capped
    unknown = costs.generation_cost(dataset, GenerationConfig("openai:local-llama"), top_k=2,
                                    n_queries=n, model="local-llama")
    assert unknown.usd is None


def test_run_page_shows_each_line_item(app) -> None:
    at = app(page="pages/run.py", dataset="handmade-qa")
    at.multiselect(key="run-specs").set_value(["bm25", "summary:openai@openai:gpt-4o-mini",
                                               "dense:opneai"]).run()
    assert not at.exception
    notes = [i.value for i in at.info if "estimated cost" in i.value]
    assert len(notes) == 1 and notes[0].startswith("`summary:openai@openai:gpt-4o-mini`")
    assert "gpt-4o-mini:" in notes[0] and "table summaries (about \\$" in notes[0]
    assert "text-embedding-3-small:" in notes[0]
    assert any("dense:opneai" in e.value and "did you mean" in e.value for e in at.error)
