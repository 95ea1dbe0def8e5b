"""SQL: run generated SQL read-only, compare results, exact-set-match, query structure.

Callers import from `target_core.sql`; the modules import only downward
(structure <- execute <- compare, structure <- exact_match).
"""

from target_core.sql.compare import (
    DIFF_ROW_CAP,
    ERROR_CLASSES,
    RETRIEVAL_ERROR_CLASSES,
    Comparison,
    ExecutionDiff,
    classify,
    compare_results,
    database_class,
    error_blame,
    has_top_level_order,
)
from target_core.sql.exact_match import exact_set_match
from target_core.sql.execute import (
    DEFAULT_ROW_CAP,
    DEFAULT_TIMEOUT_S,
    EVAL_ROW_CAP,
    EVAL_TIMEOUT_S,
    SqlExecutionError,
    SqlLimits,
    SqlResult,
    connect_readonly,
    execute,
    json_safe_rows,
    json_safe_value,
)

__all__ = [
    "DEFAULT_ROW_CAP", "DEFAULT_TIMEOUT_S", "DIFF_ROW_CAP", "ERROR_CLASSES", "EVAL_ROW_CAP",
    "EVAL_TIMEOUT_S", "RETRIEVAL_ERROR_CLASSES", "Comparison", "SqlLimits",
    "ExecutionDiff", "SqlExecutionError", "SqlResult", "classify", "compare_results",
    "connect_readonly", "database_class", "error_blame", "exact_set_match", "execute",
    "has_top_level_order", "json_safe_rows", "json_safe_value",
]
