"""Generate the bundled Wikipedia-style demo datasets `demo-qa` and `demo-fact` (folder format).

demo-qa holds FeTaQA-style questions with full-sentence answers, demo-fact TabFact-style
statements labelled true or false. Both sit on a corpus of fictional but plausible
Wikipedia tables (league seasons, elections, film awards, discographies, medal tables,
mountain peaks, city populations, space missions, national parks, marathons, cycling
stages, TV episodes, rivers, cup finals). Retrieval failure modes are built in on purpose
and every query says which one it exercises (`failure_mode`, see selection.FAILURE_MODES),
so the dashboard has something real to find.

Every answer and label is computed from the gold table's own cells, and every false
statement is a perturbation that is re-checked against those cells (see claims.Claim).
Everything comes from seeded `random.Random` instances, so a rerun writes byte-identical
files.

Modules: vocab (word lists), text (tokens, template filling, sentences), values (cell
values, number formats, perturbations), model (Measure, Attr, Topic, Tab), claims (Claim,
Item), items (Gen, the candidate items of one table), topics_sport, topics_culture and
topics_places (how each kind of table is talked about), world (fictional names, never
reused), tables_sport, tables_culture and tables_places (the table builders), selection
(failure modes, Selector, query records), plans (the two datasets and build_plan) and write
(dataset.json, corpus.jsonl, queries.jsonl).

Usage: python scripts/build_demo_data.py [OUT_ROOT], or from scripts/:
python -m demo_wiki [OUT_ROOT]   (writes OUT_ROOT/demo-qa and OUT_ROOT/demo-fact, default
data/demo under the repository root)
"""

from __future__ import annotations

from pathlib import Path

from .plans import PLANS
from .write import write_plan

__all__ = ["PLANS", "build"]


def build(out_root: Path) -> None:
    """Write OUT_ROOT/demo-qa and OUT_ROOT/demo-fact (byte-identical on every run)."""
    root = Path(out_root).resolve()
    for plan in PLANS:
        write_plan(plan, root)
