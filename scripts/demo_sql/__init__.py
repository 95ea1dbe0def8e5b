"""Generate the bundled text-to-SQL demo dataset `demo-sql` (folder format, task "sql").

Eight small SQLite databases from different domains, natural-language questions with gold
SQL, and retrieval failure modes built in on purpose so the dashboard has something real
to find (see framework.FAILURE_MODES). Everything is synthetic and comes from one seeded
Random per database and purpose, so a rerun writes byte-identical JSONL and databases with
equal `iterdump()`.

Modules: vocab (word lists), values (row types, cell-value helpers), schemas_public and
schemas_commercial (CREATE TABLE statements), data_public and data_commercial (row
generators), framework (Spec, Ctx, text and SQL helpers, the sampling and checking loop),
queries_<database> (question templates), databases (the registry in build order) and write
(SQLite files, corpus.jsonl, queries.jsonl, dataset.json).

Usage: python scripts/build_demo_data.py [OUT_ROOT], or from scripts/:
python -m demo_sql [OUT_ROOT]   (writes OUT_ROOT/demo-sql, default data/demo)
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

from .databases import GENERATORS, TEMPLATES
from .framework import Ctx, make_queries, query_record
from .values import Row
from .write import NAME, read_tables, repeated_names, write_database, write_dataset

__all__ = ["NAME", "build"]


def build(out_root: Path) -> None:
    """Write OUT_ROOT/demo-sql from scratch: databases, corpus, queries, dataset.json."""
    out = Path(out_root).resolve() / NAME  # absolute: databases are opened by file URI
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    corpus: list[Row] = []
    paths: dict[str, Path] = {}
    for database_id, generate in GENERATORS.items():
        paths[database_id] = out / "databases" / database_id / f"{database_id}.sqlite"
        write_database(paths[database_id], database_id,
                       generate(random.Random(f"{NAME}/{database_id}/data")))
        corpus += read_tables(database_id, paths[database_id])
    repeated = repeated_names(corpus)
    queries: list[Row] = []
    for database_id, path in paths.items():
        rows = {r["table_id"]: [dict(zip(r["table"][0], row, strict=True))
                                for row in r["table"][1:]]
                for r in corpus if r["database_id"] == database_id}
        conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True)
        try:
            ctx = Ctx(database_id, rows, conn, random.Random(f"{NAME}/{database_id}/queries"))
            specs = make_queries(ctx, TEMPLATES[database_id], repeated)
            queries += [query_record(database_id, s, repeated) for s in specs]
        finally:
            conn.close()
    for number, record in enumerate(queries, 1):
        record["query_id"] = f"{NAME}-{number:04d}"
    write_dataset(out, corpus, queries, repeated)
