"""What a run says about itself is true: `--fresh` always starts a new run, a fact run
whose replies name no label fails, and a model on a server other than OpenAI's is never
priced as OpenAI's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, start_fake_openai

from target_core.config import Settings, load_settings
from target_core.engine.runner import run_retrieval
from target_core.engine.store import RunStore
from target_core.metrics.facts import map_prediction, names_a_label
from target_core.run_config import GenerationConfig, RunConfig


def fake_settings(tmp_path: Path, server: FakeOpenAI, **extra: str) -> Settings:
    return load_settings(environ={"TARGET_WORKSPACE": str(tmp_path / "workspace"),
                                  "OPENAI_API_KEY": "sk-test",
                                  "OPENAI_BASE_URL": server.base_url, **extra})


def fact_config(limit: int = 4, model: str = "m") -> RunConfig:
    return RunConfig("demo-fact", "bm25", limit=limit,
                     generation=GenerationConfig(generator=f"openai:{model}", context_k=1))


@pytest.mark.parametrize(("reply", "named"), [
    ("True", True), ("false.", True), ("Not Enough Information", True),
    ("The statement is not true", True), ("I cannot say.", False), ("", False),
    ("Yes", False)])
def test_names_a_label(reply: str, named: bool) -> None:
    assert names_a_label(reply) is named
    if not named:  # what TARGET's rule would have read: Not Enough Information
        assert map_prediction(reply) == -1


def test_a_fact_run_whose_replies_name_no_label_fails(tmp_path: Path,
                                                      fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_responder = lambda body: "I would rather not say."
    settings = fake_settings(tmp_path, fake_openai)
    result = run_retrieval(fact_config(), settings=settings)
    run = result.run
    assert result.failed and run.error is not None
    assert run.error.startswith("4 of 4 generations failed (malformed 4); the first, query ")
    assert "names no label" in run.error
    store = RunStore.in_workspace(settings.workspace)
    records = [r.generation for r in store.iter_results(run.run_id)]
    assert all(r is not None and r["error_class"] == "malformed" for r in records)
    assert all(r["reasoning"] == "I would rather not say." for r in records)  # kept
    assert run.metrics["fact_accuracy"] == pytest.approx(0.0)

    # the reply is cached (the call succeeded): asking again gives the same verdict
    again = run_retrieval(fact_config(), settings=settings)
    assert again.resumed and again.run.status == "failed"
    # a model that names labels is complete
    fake_openai.chat_responder = lambda body: "True"
    answered = run_retrieval(fact_config(model="other"), settings=settings)
    assert answered.run.status == "complete" and answered.run.error is None


def test_fresh_never_resumes_a_failed_run(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_responder = lambda body: "no idea"
    settings = fake_settings(tmp_path, fake_openai)
    failed = run_retrieval(fact_config(2), settings=settings).run
    assert failed.status == "failed"
    fresh = run_retrieval(fact_config(2), settings=settings, fresh=True)
    assert not fresh.resumed and fresh.run.run_id != failed.run_id
    runs = RunStore.in_workspace(settings.workspace).list_runs()
    assert {r.run_id for r in runs} == {failed.run_id, fresh.run.run_id}
    # without --fresh the newest unfinished one is resumed, not the first
    resumed = run_retrieval(fact_config(2), settings=settings)
    assert resumed.resumed and resumed.run.run_id == fresh.run.run_id


@pytest.mark.parametrize(("base_url", "priced"), [
    (None, True), ("https://api.openai.com/v1", True), ("http://127.0.0.1:8080/v1", False),
    ("https://my-vllm.example/v1", False)])
def test_only_openai_is_priced(monkeypatch: pytest.MonkeyPatch, base_url: str | None,
                               priced: bool) -> None:
    from target_core.embeddings import EMBEDDERS
    from target_core.generators import GENERATORS

    if base_url is None:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    else:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    expected: dict[str, Any] = {"openai": "gpt-4o-mini", "openai:gpt-4o": "gpt-4o"}
    for spec, model in expected.items():
        assert GENERATORS.paid_model(spec) == (model if priced else None)
    assert EMBEDDERS.paid_model("openai") == ("text-embedding-3-small" if priced else None)
    assert GENERATORS.paid_model("local:smollm2") is None


def test_openai_without_a_model_asks_for_the_servers_own(tmp_path: Path,
                                                         fake_openai: FakeOpenAI) -> None:
    from target_core.generators import build_generator
    from target_core.llm.models import chat_model

    fake_openai.models = [{"id": "qwen2.5-7b-instruct", "object": "model"}]
    settings = fake_settings(tmp_path, fake_openai)
    generator = build_generator("openai", settings)
    assert generator.label.startswith("qwen2.5-7b-instruct (OpenAI-compatible, 127.0.0.1:")
    judge = chat_model("openai", settings)
    assert judge is not None and judge.model == "qwen2.5-7b-instruct"
    fake_openai.chat_responder = lambda body: "True"
    run = run_retrieval(RunConfig("demo-fact", "bm25", limit=2, generation=GenerationConfig(
        generator="openai", context_k=1)), settings=settings).run
    assert run.index_info["generator"].startswith("qwen2.5-7b-instruct (")
    assert {r.body["model"] for r in fake_openai.chat_requests()} == {"qwen2.5-7b-instruct"}
    # named, it is asked for as named; several listed and none named: gpt-4o-mini
    assert build_generator("openai:other", settings).model == "other"
    several = start_fake_openai(models=[{"id": "a"}, {"id": "b"}])
    try:
        assert build_generator("openai", fake_settings(tmp_path / "2", several)).model == \
            "gpt-4o-mini"
    finally:
        several.stop()


def test_openais_published_window_is_only_openais(tmp_path: Path,
                                                  fake_openai: FakeOpenAI) -> None:
    from target_core.llm.chat import ChatModel

    limit = ChatModel(fake_settings(tmp_path, fake_openai), "gpt-4o-mini").prompt_limit("qa")
    assert (limit.window, limit.source) == (8192, "TARGET_CONTEXT_WINDOW")


def test_a_run_resumed_under_other_reply_settings_refuses(tmp_path: Path,
                                                          fake_openai: FakeOpenAI) -> None:
    from target_core.errors import ConfigError

    fake_openai.chat_responder = lambda body: "True"
    settings = fake_settings(tmp_path, fake_openai)
    config = fact_config(4)
    fake_openai.fail_next(2, "500")  # two queries to ask again: the run is resumable
    first = run_retrieval(config, settings=settings).run
    assert first.status == "complete" and first.metrics["generation_errors"] == 2
    assert first.index_info["server"]["max_tokens"]["fact"] == 64
    assert first.index_info["server"]["sampling"] == {"temperature": 0.0}

    store = RunStore.in_workspace(settings.workspace)
    store.fail_run(first.run_id, "stopped")  # as a killed run: resumable
    longer = fake_settings(tmp_path, fake_openai, TARGET_MAX_TOKENS_FACT="128",
                           TARGET_TEMPERATURE="0.5")
    with pytest.raises(ConfigError, match=r"\(sampling temperature 0.0 -> 0.5; max_tokens "
                                          r"fact 64 -> 128\).*--fresh"):
        run_retrieval(config, settings=longer)
    assert store.get_run(first.run_id).status == "failed"
    asked = len(fake_openai.chat_requests())
    fresh = run_retrieval(config, settings=longer, fresh=True).run  # a new run: fine
    assert fresh.run_id != first.run_id and fresh.status == "complete"
    assert len(fake_openai.chat_requests()) == asked + 4  # other settings: other replies
    assert fresh.index_info["server"]["max_tokens"]["fact"] == 128


def test_a_run_resumed_under_its_own_settings_goes_on(tmp_path: Path,
                                                     fake_openai: FakeOpenAI) -> None:
    fake_openai.chat_responder = lambda body: "True"
    settings = fake_settings(tmp_path, fake_openai)
    fake_openai.fail_next(3, "500")
    first = run_retrieval(fact_config(4), settings=settings).run
    assert first.status == "failed"  # 3 of 4: more than half
    again = run_retrieval(fact_config(4), settings=settings)
    assert again.resumed and again.run.run_id == first.run_id
    assert again.run.status == "complete"
