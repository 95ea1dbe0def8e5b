"""A retriever in TARGET's custom-retriever shape, with no import of TARGET or of this
project: TARGET Explorer adapts it as it is.

    python -m target_core run --dataset demo-qa \
        --retriever py:examples/target_style_retriever.py:KeywordRetriever

TARGET calls `embed_corpus(dataset_name, corpus)` once, then `retrieve(query,
dataset_name, top_k)` per query. `corpus` is an iterable of batches, each a dict of
lists under "database_id", "table_id", "table" (a nested array, header row first) and
"context" (a dict such as {"title": ...}). `retrieve` returns (database_id, table_id)
pairs, best first, and no scores.

This one counts the query's words found in a table's title, header and cells, each
word weighted by how rare it is in the corpus (an inverse document frequency).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 1}


class KeywordRetriever:
    """Rare query words found in a table (title, header, cells), summed by weight."""

    def __init__(self) -> None:
        self.corpora: dict[str, tuple[list[tuple[str, str]], list[set[str]], Counter[str]]] = {}

    def embed_corpus(self, dataset_name: str, corpus: Iterable[dict[str, list[Any]]]) -> None:
        keys: list[tuple[str, str]] = []
        bags: list[set[str]] = []
        for batch in corpus:
            for database_id, table_id, table, context in zip(
                    batch["database_id"], batch["table_id"], batch["table"],
                    batch["context"], strict=True):
                text = " ".join([str(context.get("title", "")), str(table_id)]
                                + [str(cell) for row in table for cell in row])
                keys.append((database_id, table_id))
                bags.append(words(text))
        frequency = Counter(w for bag in bags for w in bag)
        self.corpora[dataset_name] = (keys, bags, frequency)

    def retrieve(self, query: str, dataset_name: str, top_k: int,
                 **kwargs: Any) -> list[tuple[str, str]]:
        keys, bags, frequency = self.corpora[dataset_name]
        weight = {w: math.log(1 + len(bags) / frequency[w]) for w in words(query)
                  if frequency[w]}
        # fsum is exact whatever the order: a plain sum over a set's order (which changes
        # with each process's hash seed) rounded ties differently in 23 of 260 lists
        scores = [math.fsum(weight[w] for w in weight if w in bag) for bag in bags]
        # best first; ties go to the table met first, so results are deterministic
        order = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
        return [keys[i] for i in order[:top_k]]
