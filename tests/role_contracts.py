"""The contracts of the registries of chat backends and of the roles models play (the
truthfulness judge, the question writer, the question judge), for test_registry.py's
CONTRACTS: every example of every entry is built; an offline stand-in also runs once on
the demo workspace's data. A chat backend is built only (against the fake server that
test_registry's settings point at): building is where a missing key or model fails."""

from __future__ import annotations

from pathlib import Path

from target_core.benchgen.instantiate import SampledQuery, sample_queries
from target_core.benchgen.llm import QUESTION_JUDGES, WRITERS, make_judge, make_writer
from target_core.benchgen.questions import Verdict, Written
from target_core.benchgen.templates import EXAMPLE_TEMPLATES_DIR, Template, load_templates
from target_core.config import Settings
from target_core.datasets import load_dataset
from target_core.experiments.judge import TRUTH_JUDGES, Judgement, make_truth_judge
from target_core.llm.chat import ChatModel
from target_core.llm.models import CHAT_MODELS, chat_model
from target_core.registry import parse_spec


def chat_model_contract(spec: str, settings: Settings) -> None:
    """A ChatModel of the spec's family, with the workspace's response cache."""
    model = chat_model(spec, settings)
    assert isinstance(model, ChatModel) and model.cache is not None
    assert parse_spec(model.spec).name == parse_spec(spec).name and model.label
    assert CHAT_MODELS.parse(spec)[0].name == parse_spec(spec).name


def truth_judge_contract(spec: str, settings: Settings) -> None:
    """A judge with spec, label and concurrency; the stand-in rates a demo answer."""
    judge = make_truth_judge(spec, settings)
    assert parse_spec(judge.spec).name == parse_spec(spec).name
    assert judge.label and judge.concurrency >= 1
    if TRUTH_JUDGES.parse(spec)[0].self_contained:
        query = load_dataset("demo-qa", settings).queries[0]
        judgement = judge.rate(query.query, "Lake Vessel", "It is Lake Vessel.")
        assert judgement == Judgement(1, judgement.reason) and judgement.reason


def _demo_sql(settings: Settings) -> tuple[dict[str, Path], Template, SampledQuery]:
    """demo-sql's databases, and one query sampled from the bundled templates."""
    databases = dict(load_dataset("demo-sql", settings).databases)
    templates = {t.id: t for t in load_templates(EXAMPLE_TEMPLATES_DIR)}
    item = sample_queries(list(templates.values()), databases, n=1, seed=0).queries[0]
    return databases, templates[item.template_id], item


def question_writer_contract(spec: str, settings: Settings) -> None:
    """A writer with a label; the stand-in writes the template's questions."""
    databases, template, item = _demo_sql(settings)
    writer = make_writer(spec, settings, databases)
    assert writer.label and callable(writer.write)
    if WRITERS.parse(spec)[0].self_contained:
        written = writer.write(item, template)
        assert isinstance(written, Written) and written.error is None and written.questions


def question_judge_contract(spec: str, settings: Settings) -> None:
    """A judge; the stand-in passes a question the template writer wrote."""
    databases, template, item = _demo_sql(settings)
    judge = make_judge(spec, settings, databases)
    assert callable(judge.judge)
    if QUESTION_JUDGES.parse(spec)[0].self_contained:
        question = make_writer("template", settings, databases).write(item, template)
        verdict = judge.judge(question.questions[0].text, item, template)
        assert isinstance(verdict, Verdict) and verdict.passed is True and verdict.method
