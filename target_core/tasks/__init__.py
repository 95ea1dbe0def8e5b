"""The task registry: every task (qa, fact, sql, retrieval, or one a user adds) is one
entry (`TaskRules`, tasks/base.py) in one module, registered here.

Everything that depends on a task asks its entry: `task_rules(dataset.task)`. Adding a
task is one module defining its `TaskRules` and one `register(...)` line (see
docs/extending/task.md). How runs are judged lives in tasks/judging.py, the one
definition of a retrieval failure in tasks/failure.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeGuard, overload

from target_core.errors import ConfigError, UnknownNameError
from target_core.tasks import fact, qa, retrieval, sql
from target_core.tasks.base import TaskRules

__all__ = ["ANSWER_TASKS", "TASKS", "TaskRules", "all_tasks", "is_task", "register",
           "task_rules", "unregister"]

_REGISTRY: dict[str, TaskRules] = {}


def register(entry: TaskRules, *, replace: bool = False) -> TaskRules:
    """Add a task; registering a taken name again raises ConfigError unless `replace`."""
    if entry.task in _REGISTRY and not replace and _REGISTRY[entry.task] != entry:
        raise ConfigError(f"task {entry.task!r} is registered already")
    _REGISTRY[entry.task] = entry
    return entry


def unregister(name: str) -> None:
    """Remove a task added with `register` (tests, notebooks); unknown: UnknownNameError."""
    task_rules(name)
    del _REGISTRY[name]


def task_rules(task: str) -> TaskRules:
    """The entry of `task`; an unknown task raises UnknownNameError."""
    try:
        return _REGISTRY[task]
    except KeyError:
        raise UnknownNameError("task", task, _REGISTRY) from None


def all_tasks() -> tuple[TaskRules, ...]:
    """Every registered task, in registration order."""
    return tuple(_REGISTRY.values())


def is_task(value: object) -> TypeGuard[str]:
    """Whether `value` names a registered task."""
    return isinstance(value, str) and value in _REGISTRY


class _Names(Sequence[str]):
    """The names of the registered tasks that pass a test, read when asked (a task
    registered later is in it)."""

    def __init__(self, keep: Callable[[TaskRules], bool]) -> None:
        self._keep = keep

    def _names(self) -> tuple[str, ...]:
        return tuple(name for name, entry in _REGISTRY.items() if self._keep(entry))

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __repr__(self) -> str:
        return repr(self._names())


TASKS: Sequence[str] = _Names(lambda entry: True)
"""The names of every registered task (the folder format's "task")."""
ANSWER_TASKS: Sequence[str] = _Names(lambda entry: entry.answers)
"""The tasks whose queries a generator answers (and metrics then score)."""

register(qa.TASK)
register(fact.TASK)
register(sql.TASK)
register(retrieval.TASK)
