"""TARGET's Table 2 as the paper prints it (seed 000), to set our figures beside.

Typed in from the paper: per method and dataset, the retrieval recall (R@10; R@1 at the
database level for text-to-SQL), the retrieval time in seconds and the downstream score
(sacreBLEU for QA, weighted P/R/F1 for fact verification, execution accuracy for
text-to-SQL). None where the paper prints "-". The corpus each figure came from is in
PAPER_DATASETS (the paper's Table 3, the split Table 2 uses).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAPER_DATASETS", "PAPER_METHODS", "PAPER_TABLE2", "PaperCell", "PaperDataset"]


@dataclass(frozen=True)
class PaperDataset:
    name: str
    task: str
    split: str
    corpus: str
    queries: str


PAPER_DATASETS: dict[str, PaperDataset] = {d.name: d for d in (
    PaperDataset("OTTQA", "qa", "validation", "789 tables", "2.2k"),
    PaperDataset("FeTaQA", "qa", "test", "2K tables", "2k"),
    PaperDataset("TabFact", "fact", "test", "1.7K tables", "12.8k"),
    PaperDataset("Spider", "sql", "test", "40 databases (1K tables)", "2.1k"),
    PaperDataset("BIRD", "sql", "validation", "11 databases (75 tables)", "1.5k"),
)}
"""The corpora behind Table 2 (Table 3 of the paper; OTTQA and BIRD have no test split,
so their validation split is used, as the paper says in Section 3)."""


@dataclass(frozen=True)
class PaperCell:
    """One method on one dataset in Table 2."""

    recall: float | None
    seconds: float | None
    downstream: tuple[float, ...] | None
    """(SB,) for QA, (P, R, F1) for fact verification, (EX,) for text-to-SQL."""


PAPER_METHODS: tuple[str, ...] = (
    "No context", "OTT-QA BM25", "OTT-QA BM25 w/o table title", "OTT-QA TF-IDF",
    "OTT-QA TF-IDF w/o table title", "LlamaIndex", "OpenAI embedding",
    "OpenAI embedding header only")

_ORDER = ("OTTQA", "FeTaQA", "TabFact", "Spider", "BIRD")


def _row(*cells: tuple[float | None, float | None, tuple[float, ...] | None]
         ) -> dict[str, PaperCell]:
    return {name: PaperCell(*cell) for name, cell in zip(_ORDER, cells, strict=True)}


PAPER_TABLE2: dict[str, dict[str, PaperCell]] = {
    "No context": _row((None, None, (0.414,)), (None, None, (12.495,)),
                       (None, None, (0.578, 0.42, 0.44)), (None, None, (0.0,)),
                       (None, None, (0.0,))),
    "OTT-QA BM25": _row((0.955, 0.001, (0.606,)), (0.082, 0.001, (1.631,)),
                        (0.338, 0.001, (0.75, 0.26, 0.39)), (0.635, 0.001, (0.385,)),
                        (0.709, 0.001, (0.181,))),
    "OTT-QA BM25 w/o table title": _row(
        (0.443, 0.001, (0.529,)), (0.084, 0.001, (1.555,)),
        (0.331, 0.001, (0.75, 0.26, 0.38)), (0.5, 0.001, (0.376,)),
        (0.535, 0.001, (0.164,))),
    "OTT-QA TF-IDF": _row((0.950, 0.001, (0.425,)), (0.083, 0.001, (1.639,)),
                          (0.336, 0.001, (0.75, 0.26, 0.38)), (0.622, 0.001, (0.474,)),
                          (0.640, 0.001, (0.227,))),
    "OTT-QA TF-IDF w/o table title": _row(
        (0.43, 0.001, (0.593,)), (0.083, 0.001, (1.527,)),
        (0.322, 0.001, (0.75, 0.25, 0.37)), (0.492, 0.001, (0.376,)),
        (0.491, 0.001, (0.164,))),
    "LlamaIndex": _row((0.458, 0.354, (0.507,)), (0.435, 0.396, (13.745,)),
                       (0.827, 0.297, (0.73, 0.34, 0.47)), (0.735, 0.198, (0.559,)),
                       (0.937, 0.228, (0.311,))),
    "OpenAI embedding": _row((0.950, 0.190, (0.599,)), (0.722, 0.200, (17.64,)),
                             (0.779, 0.189, (0.76, 0.51, 0.61)), (0.768, 0.193, (0.602,)),
                             (0.926, 0.199, (0.317,))),
    "OpenAI embedding header only": _row(
        (0.950, 0.189, (0.61,)), (0.718, 0.18, (17.66,)),
        (0.781, 0.187, (0.75, 0.48, 0.58)), (0.833, 0.175, (0.646,)),
        (0.958, 0.191, (0.323,))),
}
"""Method -> dataset -> its Table 2 cell, as printed in seed 000."""
