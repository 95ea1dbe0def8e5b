"""Synthetic corpora for speed and scale benchmarks: realistic-ish tables and queries.

Words come from a generated vocabulary of ~30,000 pronounceable non-words with Zipfian
frequencies (s = 1.07, like English). Each table has a topic (a handful of
mid-frequency words) that shows up in its title, section title, some headers and some
cells; other cells are common words, counts, years and decimals. A query names a column,
a cell value of its gold table and, usually, a topic word, padded with a common word:
lexical retrievers find most gold tables, but not all, as on real data.

    tables, queries = make_corpus(10_000, 1_000, seed=0)   # a few seconds
    write_folder(Path("/tmp/synthetic"), 1_000_000, 5_000)  # the same, streamed to disk

The same arguments always give the same corpus (numpy's PCG64 generator), in memory or
streamed: `StreamedCorpus` makes the tables one at a time, then the queries from the
gold tables it is handed back, so a folder of a million tables is written holding one
table (and the few thousand gold ones) at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from target_core.textproc import STOPWORDS
from target_core.types import Cell, Query, Table

VOCABULARY_SIZE = 30_000
ZIPF_EXPONENT = 1.07
TOPIC_MIN_RANK = 200
"""Topic words are drawn from ranks above this: frequent enough to be shared, not
so frequent that they say nothing."""
DATABASE_ID = "synthetic"

_ONSETS = ("b c d f g h j k l m n p r s t v w z br ch dr fl gr kl pr sh st th tr"
           .split())
_VOWELS = "a e i o u ai ea ia io ou".split()
_CODAS = ["", "", "", "n", "r", "s", "l", "m", "nd", "rt", "st"]
_QUESTIONS = ("what is the {header} of {cell} in {topic}",
              "which {header} did {cell} have {topic}",
              "{topic} {cell} {header}",
              "how many {header} for {cell} at {topic} {common}")


def make_vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """`size` distinct pronounceable non-words of 2-4 syllables, none a stop word."""
    words: dict[str, None] = {}
    while len(words) < size:
        n = 2 * (size - len(words)) + 64
        syllables = rng.integers(2, 5, n)
        onsets = rng.integers(0, len(_ONSETS), (n, 4))
        vowels = rng.integers(0, len(_VOWELS), (n, 4))
        codas = rng.integers(0, len(_CODAS), n)
        for i in range(n):
            word = "".join(_ONSETS[onsets[i, j]] + _VOWELS[vowels[i, j]]
                           for j in range(syllables[i])) + _CODAS[codas[i]]
            if word not in STOPWORDS:
                words[word] = None
                if len(words) == size:
                    break
    return list(words)


class _Zipf:
    """Draws word ids by rank with probability proportional to 1 / rank**s."""

    def __init__(self, size: int, exponent: float, min_rank: int = 0) -> None:
        weights = 1.0 / np.arange(1, size + 1) ** exponent
        weights[:min_rank] = 0.0
        self.cdf = np.cumsum(weights) / weights.sum()

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, rng.random(n), side="right"),
                          self.cdf.size - 1)


_KINDS = ("words", "topic", "int", "year", "decimal")
_KIND_CDF = np.cumsum([0.3, 0.2, 0.25, 0.1, 0.15])


def _column_kinds(rng: np.random.Generator, n_cols: int) -> list[str]:
    # the first column names the rows, as in most web tables
    picks = np.searchsorted(_KIND_CDF, rng.random(n_cols - 1), side="right")
    return ["topic"] + [_KINDS[min(k, len(_KINDS) - 1)] for k in picks.tolist()]


def _column(kind: str, n_rows: int, rng: np.random.Generator, words: Sequence[str],
            common: _Zipf, topic: np.ndarray) -> list[Cell]:
    if kind == "int":
        return rng.zipf(1.5, n_rows).tolist()
    if kind == "year":
        return rng.integers(1900, 2025, n_rows).tolist()
    if kind == "decimal":
        return np.round(rng.gamma(2.0, 20.0, n_rows), 1).tolist()
    lengths = rng.integers(1, 3, n_rows).tolist()
    ids = common.draw(rng, sum(lengths))
    if kind == "topic":  # about one word in two is the table's own
        own = rng.random(ids.size) < 0.5
        ids[own] = topic[rng.integers(0, topic.size, int(own.sum()))]
    cell_words = [words[i] for i in ids.tolist()]
    cells: list[Cell] = []
    start = 0
    for length in lengths:
        cells.append(cell_words[start] if length == 1
                     else cell_words[start] + " " + cell_words[start + 1])
        start += length
    return cells


def make_table(index: int, rng: np.random.Generator, words: Sequence[str],
               common: _Zipf, topical: _Zipf, headers: _Zipf) -> Table:
    """One table: a title and section from its topic, 3-7 columns, 5-30 rows."""
    topic = topical.draw(rng, 6)
    n_cols = int(rng.integers(3, 8))
    n_rows = int(rng.integers(5, 31))
    kinds = _column_kinds(rng, n_cols)
    header_ids = headers.draw(rng, n_cols)
    header = tuple(
        words[topic[0]] + " " + words[h] if kind == "topic" and c > 0 else words[h]
        for c, (kind, h) in enumerate(zip(kinds, header_ids, strict=True)))
    columns = [_column(kind, n_rows, rng, words, common, topic) for kind in kinds]
    rows = tuple(zip(*columns, strict=True))
    title = " ".join(words[i] for i in topic[: int(rng.integers(2, 5))])
    section = " ".join(words[i] for i in (topic[-1], common.draw(rng, 1)[0]))
    return Table(database_id=DATABASE_ID, table_id=f"t{index:05d}", header=header,
                 rows=rows, context={"title": title.title(), "section_title": section})


def make_query(index: int, table: Table, rng: np.random.Generator,
               words: Sequence[str], common: _Zipf) -> Query:
    """A question naming a column, a cell of `table` and usually a word of its title."""
    text_columns = [c for c, v in enumerate(table.rows[0]) if isinstance(v, str)]
    column = text_columns[int(rng.integers(0, len(text_columns)))]
    row = table.rows[int(rng.integers(0, table.n_rows))]
    answer_column = int(rng.integers(0, table.n_cols))
    title_words = table.title.lower().split()
    topic = title_words[int(rng.integers(0, len(title_words)))] if rng.random() < 0.7 else ""
    template = _QUESTIONS[int(rng.integers(0, len(_QUESTIONS)))]
    text = template.format(header=table.header[answer_column], cell=row[column], topic=topic,
                           common=words[common.draw(rng, 1)[0]])
    if not topic:
        text = text.removesuffix(" in ")
    return Query(query_id=f"q{index:05d}", query=" ".join(text.split()),
                 answer=row[answer_column], gold=(table.key,), database_id=DATABASE_ID)


class StreamedCorpus:
    """make_corpus's corpus made piecewise: iterate `tables()` to its end, then `queries`
    with the tables at `gold()` (the same Table values, e.g. read back from disk)."""

    def __init__(self, n_tables: int, n_queries: int, seed: int = 0) -> None:
        self.n_tables, self.n_queries = n_tables, n_queries
        self.rng = np.random.default_rng(seed)
        self.words = make_vocabulary(VOCABULARY_SIZE, self.rng)
        self.common = _Zipf(VOCABULARY_SIZE, ZIPF_EXPONENT)
        self.topical = _Zipf(VOCABULARY_SIZE, ZIPF_EXPONENT, min_rank=TOPIC_MIN_RANK)
        self.headers = _Zipf(2_000, 1.2)  # column names repeat across tables: "name", "year"
        self._gold: list[int] | None = None

    def tables(self) -> Iterator[Table]:
        for i in range(self.n_tables):
            yield make_table(i, self.rng, self.words, self.common, self.topical, self.headers)

    def gold(self) -> list[int]:
        """Each query's gold table (by index), drawn once all tables are made."""
        if self._gold is None:
            self._gold = (self.rng.integers(0, self.n_tables, self.n_queries).tolist()
                          if self.n_tables else [])
        return self._gold

    def queries(self, tables: Mapping[int, Table]) -> list[Query]:
        """The queries, given at least the gold tables by index."""
        return [make_query(j, tables[g], self.rng, self.words, self.common)
                for j, g in enumerate(self.gold())]


def make_corpus(n_tables: int, n_queries: int, seed: int = 0) -> tuple[list[Table], list[Query]]:
    """`n_tables` tables and `n_queries` queries, each query with one gold table."""
    stream = StreamedCorpus(n_tables, n_queries, seed)
    tables = list(stream.tables())
    return tables, stream.queries(dict(enumerate(tables)))


WRITE_CHUNK = 1_000
"""Tables serialized between two writes of the streamed folder."""


def table_record(table: Table) -> dict[str, object]:
    """A table as one line of a folder dataset's corpus.jsonl."""
    return {"database_id": table.database_id, "table_id": table.table_id,
            "table": [list(table.header), *map(list, table.rows)],
            "context": dict(table.context)}


def table_from_record(record: dict[str, object]) -> Table:
    """The Table of one corpus.jsonl line written by write_folder (table_record)."""
    header, *rows = record["table"]  # type: ignore[misc]
    return Table(database_id=str(record["database_id"]), table_id=str(record["table_id"]),
                 header=tuple(header), rows=tuple(map(tuple, rows)),
                 context=dict(record["context"]))  # type: ignore[call-overload]


def write_folder(path: Path, n_tables: int, n_queries: int, seed: int = 0) -> None:
    """make_corpus(n_tables, n_queries, seed) as a folder dataset ("synthetic") at `path`
    (created), streamed: tables are written a chunk at a time and the gold tables read
    back from the file for the queries, so memory does not grow with `n_tables`."""
    stream = StreamedCorpus(n_tables, n_queries, seed)
    path.mkdir(parents=True)
    (path / "dataset.json").write_text(json.dumps({"name": "synthetic", "task": "qa"}))
    corpus = path / "corpus.jsonl"
    with corpus.open("w") as handle:
        lines: list[str] = []
        for table in stream.tables():
            lines.append(json.dumps(table_record(table)) + "\n")
            if len(lines) >= WRITE_CHUNK:
                handle.write("".join(lines))
                lines = []
        handle.write("".join(lines))
    wanted = set(stream.gold())
    gold: dict[int, Table] = {}
    with corpus.open() as handle:
        for i, line in enumerate(handle):
            if i in wanted:
                gold[i] = table_from_record(json.loads(line))
    with (path / "queries.jsonl").open("w") as handle:
        for q in stream.queries(gold):
            handle.write(json.dumps({"query_id": q.query_id, "query": q.query,
                                     "answer": q.answer, "table_id": q.gold[0][1],
                                     "database_id": q.database_id}) + "\n")
