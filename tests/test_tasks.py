"""metrics/tasks.py: the per-task rules cover every task of the folder format, and the
failure rule's last gold rank is the same in Python and in the run store's SQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from target_core.engine.store import QueryResult, RunStore
from target_core.errors import UnknownNameError
from target_core.metrics.downstream import TASK_METRICS
from target_core.metrics.tasks import (
    ANSWER_TASKS,
    RULES,
    failed_at,
    last_gold_rank,
    missing_gold,
    task_rules,
)
from target_core.run_config import RunConfig
from target_core.types import TASKS


def test_every_task_has_rules() -> None:
    assert set(RULES) == set(TASKS)
    assert ANSWER_TASKS == ("qa", "fact", "sql")
    with pytest.raises(UnknownNameError, match="did you mean 'sql'"):
        task_rules("sq")


def test_answer_metrics_are_metrics_the_task_reports() -> None:
    for task in ANSWER_TASKS:
        rules = task_rules(task)
        named = {rules.answer_metric, *(m for _, m in rules.table2_answers)}
        assert named <= set(TASK_METRICS[task]), task


@pytest.mark.parametrize("ranks,last,failed_at_3", [
    ({}, 0, False),                                   # no gold: nothing to find
    ({("d", "a"): 1}, 1, False),
    ({("d", "a"): 4}, 4, True),
    ({("d", "a"): 1, ("d", "b"): 3}, 3, False),
    ({("d", "a"): 1, ("d", "b"): 5}, 5, True),        # partial: one gold beyond k
    ({("d", "a"): 1, ("d", "b"): None}, None, True),  # one gold never ranked
    ({("d", "a"): None}, None, True),
])
def test_last_gold_rank_in_python_and_sql(tmp_path: Path, ranks, last, failed_at_3) -> None:
    assert last_gold_rank(ranks) == last
    assert failed_at(last, 3) is failed_at_3
    assert bool(missing_gold(list(ranks), ranks, 3)) is failed_at_3
    store = RunStore(tmp_path / "runs.sqlite")
    run, _ = store.start_run(RunConfig("demo-qa", "bm25"), dataset_fingerprint="f",
                             task="qa", n_queries=1, versions={})
    store.save_results(run.run_id, [QueryResult("q", 0, [], list(ranks), ranks, {}, 0.0)])
    (score,) = store.query_scores(run.run_id)
    (result,) = store.iter_results(run.run_id)
    assert score.last_rank == result.last_rank == last
    assert score.failed_at(3) is result.failed_at(3) is failed_at_3
