"""FeTaQA's release (github.com/Yale-LILY/FeTaQA, data/fetaQA-v1_test.jsonl) as a dataset
folder of this project: corpus.jsonl, queries.jsonl, dataset.json.

    python scripts/fetaqa_folder.py fetaQA-v1_test.jsonl OUT_DIR [--queries N]

Every distinct table of the file is in the corpus, sorted by id (database_id "fetaqa"; table_id the
page title, then " (2)", " (3)" for later tables of the same page; context: page title,
section title, Wikipedia URL); the first N questions (all
by default) are the queries, each with its one gold table, the reference answer and its
highlighted cells as `evidence` ([{"row", "column"}], row the 0-based data row: FeTaQA's
highlighted_cell_ids count the header as row 0; highlighted header cells are left out).
Nothing is downloaded: give it the file. It is how the figures of `reproduce` on a real
FeTaQA set in the README were made.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def evidence(record: dict) -> list[dict]:
    """FeTaQA's highlighted_cell_ids ([row, column] into table_array, header = row 0) as
    this project's `evidence` annotation: the 0-based data row and the column's name."""
    header = record["table_array"][0]
    return [{"row": r - 1, "column": header[c] if c < len(header) else str(c)}
            for r, c in record.get("highlighted_cell_ids") or () if r >= 1]


def convert(source: Path, out: Path, n_queries: int | None) -> tuple[int, int]:
    """Write the folder; returns (tables, queries)."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    out.mkdir(parents=True, exist_ok=True)
    ids: dict[str, int] = {}
    table_of: dict[str, str] = {}  # the same table shared by questions: one corpus entry
    entries = []
    for record in records:
        content = json.dumps([record["table_page_title"], record["table_section_title"],
                              record["table_array"]])
        if content in table_of:
            continue
        title = record["table_page_title"]
        ids[title] = ids.get(title, 0) + 1
        table_id = title if ids[title] == 1 else f"{title} ({ids[title]})"
        table_of[content] = table_id
        entries.append({"database_id": "fetaqa", "table_id": table_id,
                        "table": record["table_array"],
                        "context": {"title": title,
                                    "section_title": record["table_section_title"],
                                    "url": record["page_wikipedia_url"]}})
    # sorted by id, so the corpus order says nothing of which tables the first questions
    # ask about (retrievers break ties by corpus order)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for entry in sorted(entries, key=lambda e: e["table_id"]):
            corpus.write(json.dumps(entry, ensure_ascii=False) + "\n")
    chosen = records[:n_queries] if n_queries else records
    with (out / "queries.jsonl").open("w", encoding="utf-8") as queries:
        for record in chosen:
            content = json.dumps([record["table_page_title"], record["table_section_title"],
                                  record["table_array"]])
            queries.write(json.dumps({
                "query_id": f"feta-{record['feta_id']}", "query": record["question"],
                "answer": record["answer"], "database_id": "fetaqa",
                "table_id": table_of[content], "evidence": evidence(record)},
                ensure_ascii=False) + "\n")
    (out / "dataset.json").write_text(json.dumps({
        "name": out.name, "task": "qa",
        "description": f"FeTaQA ({source.name}): {len(table_of)} tables, {len(chosen)} "
                       "questions with free-text answers."}, indent=2) + "\n")
    return len(table_of), len(chosen)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="FeTaQA's fetaQA-v1_<split>.jsonl")
    parser.add_argument("out", type=Path, help="the dataset folder to write")
    parser.add_argument("--queries", type=int, help="keep the first N questions")
    args = parser.parse_args(argv)
    tables, queries = convert(args.source, args.out, args.queries)
    print(f"{args.out}: {tables} tables, {queries} queries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
