"""The task registry (target_core.tasks): every registered task honours its contract, no
module outside the registry branches on a task's name, the worked example of
docs/extending/task.md registers and runs as the page shows, and the failure rule's last
gold rank is the same in Python and in the run store's SQL."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_examples import code_blocks, page_module

from target_core.cli import main
from target_core.engine.store import QueryResult, RunStore
from target_core.errors import ConfigError, UnknownNameError
from target_core.metrics.downstream import (
    DownstreamOutcome,
    per_query_downstream,
    task_metrics,
)
from target_core.metrics.gtr import aggregate_gtr, gtr_query_metrics
from target_core.metrics.retrieval import default_ks, metric_names
from target_core.run_config import RunConfig
from target_core.tasks import (
    ANSWER_TASKS,
    TASKS,
    all_tasks,
    register,
    task_rules,
    unregister,
)
from target_core.tasks.base import TaskRules
from target_core.tasks.failure import failed_at, last_gold_rank, missing_gold
from target_core.tasks.judging import table2_recall_columns

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "target_core" / "tasks"
PAGE = ROOT / "docs" / "extending" / "task.md"


# --- no branch on a task's name outside the registry ---------------------------------------

def _names_task(node: ast.expr) -> bool:
    return ((isinstance(node, ast.Name) and node.id == "task")
            or (isinstance(node, ast.Attribute) and node.attr == "task"))


def _is_name_constant(node: ast.expr) -> bool:
    def text(n: ast.expr) -> bool:
        return isinstance(n, ast.Constant) and isinstance(n.value, str)
    return text(node) or (isinstance(node, (ast.Tuple, ast.Set, ast.List)) and bool(node.elts)
                          and all(text(e) for e in node.elts))


def _holds_task(node: ast.expr) -> bool:
    """A tuple/set/list with a task name among its items: `"sql" in (run.task, ...)`."""
    return (isinstance(node, (ast.Tuple, ast.Set, ast.List))
            and any(_names_task(e) for e in node.elts))


def task_branches(source: str, where: str) -> list[str]:
    """Comparisons (==, !=, in, not in) of a `task` name or `.task` attribute with a
    string constant or a tuple/set/list of them: `where:line: the comparison`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                continue
            left, right = operands[i], operands[i + 1]
            if ((_names_task(left) and _is_name_constant(right))
                    or (_names_task(right) and _is_name_constant(left))
                    or (_is_name_constant(left) and _holds_task(right))):
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return found


def _app_sources() -> Iterator[Path]:
    yield ROOT / "app.py"
    yield from sorted((ROOT / "pages").rglob("*.py"))
    yield from sorted(p for p in (ROOT / "target_core").rglob("*.py")
                      if REGISTRY not in p.parents)


def test_nothing_outside_the_registry_branches_on_a_task_name() -> None:
    found = [hit for path in _app_sources()
             for hit in task_branches(path.read_text(encoding="utf-8"),
                                      str(path.relative_to(ROOT)))]
    assert not found, "ask the task's entry (task_rules) instead:\n" + "\n".join(found)


def test_the_branch_finder_catches_each_form() -> None:
    planted = ('if dataset.task == "sql":\n    pass\n'
               'ok = task != "fact"\n'
               'x = run.task in ("qa", "fact")\n'
               'y = "qa" == task\n'
               'z = task not in {"sql"}\n'
               'w = "sql" not in (run.task, dataset.task)\n'
               'fine = task == other.task\n'
               'also_fine = rules.reply == "sql"\n')
    found = task_branches(planted, "planted.py")
    assert [hit.split(":")[1] for hit in found] == ["1", "3", "4", "5", "6", "7"], found


# --- the registry -------------------------------------------------------------------------

def test_the_registry_holds_the_four_tasks() -> None:
    assert tuple(TASKS) == ("qa", "fact", "sql", "retrieval")
    assert tuple(ANSWER_TASKS) == ("qa", "fact", "sql")
    assert "sql" in TASKS and "lookup" not in TASKS
    with pytest.raises(UnknownNameError, match="did you mean 'sql'"):
        task_rules("sq")
    with pytest.raises(ConfigError, match="'qa' is registered already"):
        register(TaskRules("qa", "another qa", None, "", None, None, 10, ()))


def test_an_entry_checks_its_facts() -> None:
    with pytest.raises(ValueError, match="reply 'prose'"):
        TaskRules("x", "x", "m", "M", None, None, 10, (), reply="prose", scoring="exact")
    with pytest.raises(ValueError, match="has a reply and a headline"):
        TaskRules("x", "x", None, "", None, None, 10, (), reply="text")


def _per_query_keys(task: str) -> set[str]:
    """What metrics.downstream stores per query for `task` (a failed outcome scores
    every key without a scoring library)."""
    reference = None if task_rules(task).reference == "label" else "x"
    return set(per_query_downstream(DownstreamOutcome("q", task, None, "", reference,
                                                      failed=True)))


def _gtr_keys() -> set[str]:
    row = gtr_query_metrics("a b", "a b", failed=True, ms=1.0)
    return set(row) | set(aggregate_gtr([row | {"sas": 0.0}])) | {"truthfulness"}


@pytest.mark.parametrize("task", list(TASKS))
def test_each_task_honours_its_contract(task: str) -> None:
    rules = task_rules(task)
    recall = table2_recall_columns(task, 10)
    assert recall and all(name and metric for name, metric in recall)
    assert {metric for _, metric in recall} <= set(metric_names(default_ks(10), task=task))
    assert len({name for name, _ in [*recall, *rules.table2_answers]}) == len(
        [*recall, *rules.table2_answers]), "Table 2 column names repeat"
    if not rules.answers:
        assert not (rules.table2_answers or rules.answer_columns or rules.answer_extras)
        return
    run_level = set(task_metrics(task))
    per_query = _per_query_keys(task)
    assert rules.answer_metric in run_level
    assert {metric for _, metric in rules.table2_answers} <= run_level
    assert rules.score_metric in per_query
    assert rules.right_metric is None or rules.right_metric in per_query
    assert {metric for _, metric in rules.answer_columns} <= per_query
    extras = {metric for _, metric in rules.answer_extras}
    assert extras <= per_query | run_level | (_gtr_keys() if rules.gtr else set())


def _demo_of(task: str) -> str | None:
    for meta in sorted((ROOT / "data" / "demo").glob("*/dataset.json")):
        if json.loads(meta.read_text(encoding="utf-8")).get("task") == task:
            return meta.parent.name
    return None


def _run(capsys, workspace: Path, dataset: str, *flags: str) -> dict:
    code = main(["run", "--dataset", dataset, "--workspace", str(workspace), "--json",
                 "--retriever", "bm25", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("task", list(TASKS))
def test_each_tasks_demo_runs_end_to_end(task: str, tmp_path: Path, capsys) -> None:
    demo = _demo_of(task)
    if demo is None:
        pytest.skip(f"no bundled demo dataset has task {task!r}")
    rules = task_rules(task)
    generator = ["--generator", "heuristic"] if rules.answers else []
    result = _run(capsys, tmp_path, demo, "--limit", "6", *generator)
    assert result["task"] == task
    headline = rules.answer_metric or table2_recall_columns(task, 10)[0][1]
    assert headline in result["metrics"]


# --- the worked example of docs/extending/task.md ------------------------------------------

def _page_blocks() -> list[str]:
    return code_blocks(PAGE, count=2)


@pytest.fixture
def lookup_task() -> Iterator[TaskRules]:
    """The page's module executed, then registered with the page's own line."""
    module_text, registration = _page_blocks()
    module = page_module("lookup", module_text, PAGE)
    exec(compile(registration, str(PAGE), "exec"),  # noqa: S102
         {"register": register, "lookup": module})
    try:
        yield task_rules("lookup")
    finally:
        unregister("lookup")


def test_the_page_shows_one_module_and_one_registration() -> None:
    module_text, registration = _page_blocks()
    assert registration.strip() == "register(lookup.TASK)"
    assert "TASK = TaskRules(" in module_text


LAKES = [["lake", "depth_m", "country"], ["Lake Baikal", 1642, "Russia"],
         ["Lake Tanganyika", 1470, "Tanzania"], ["Caspian Sea", 1025, "Iran"]]
RIVERS = [["river", "length_km", "continent"], ["Nile", 6650, "Africa"],
          ["Amazon", 6400, "South America"], ["Yangtze", 6300, "Asia"]]


def _lookup_dataset(root: Path) -> Path:
    root.mkdir()
    (root / "dataset.json").write_text(json.dumps({"name": "lookups", "task": "lookup"}))
    tables = [{"database_id": "geo", "table_id": "lakes", "table": LAKES,
               "context": {"title": "Deepest lakes"}},
              {"database_id": "geo", "table_id": "rivers", "table": RIVERS,
               "context": {"title": "Longest rivers"}}]
    queries = [("q1", "What is the depth_m of Lake Baikal?", "1642", "lakes"),
               ("q2", "What is the length_km of the Amazon river?", "6400", "rivers"),
               ("q3", "Which continent is the Yangtze river in?", "Asia", "rivers")]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(t) for t in tables) + "\n")
    (root / "queries.jsonl").write_text("\n".join(
        json.dumps({"query_id": q, "query": text, "answer": answer, "table_id": table,
                    "database_id": "geo"}) for q, text, answer, table in queries) + "\n")
    return root


def test_the_worked_example_registers_and_runs_end_to_end(
        lookup_task: TaskRules, tmp_path: Path, capsys) -> None:
    assert "lookup" in TASKS and "lookup" in ANSWER_TASKS
    assert lookup_task.answer_metric == "exact_match"
    result = _run(capsys, tmp_path / "ws", str(_lookup_dataset(tmp_path / "lookups")),
                  "--generator", "heuristic", "--context", "oracle")
    assert result["task"] == "lookup"
    assert result["metrics"]["exact_match"] > 0  # the heuristic's bare cells match
    store = RunStore(tmp_path / "ws" / "runs.sqlite")
    rows = {r.query_id: r for r in store.iter_results(result["run_id"])}
    assert rows["q1"].generation is not None and rows["q1"].generation["answer"] == "1642"
    assert rows["q1"].metrics["exact_match"] == 1.0


# --- the failure rule -----------------------------------------------------------------------

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


def test_all_tasks_lists_the_entries_in_order() -> None:
    assert [rules.task for rules in all_tasks()] == list(TASKS)
