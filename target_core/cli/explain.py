"""The `explain` command: why the winner beat the gold for one query of a run
(analysis/explain.py). --json prints exactly what explain() returns, which is what the
Query page's "Why this ranking?" draws.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from target_core.cli import options
from target_core.cli.format import format_rows
from target_core.config import load_settings


def _number(value: Any) -> str:
    return "—" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def lexical_lines(section: dict[str, Any]) -> list[str]:
    """The lexical section as text: the per-term table, the sums, the gap, the notes."""
    if "error" in section:
        return [f"lexical: {section['error']}"]
    tables = section["tables"]
    names = [f"{t['role']}" for t in tables]
    lines = [f"lexical ({section['scorer']}): {section['formula']}"]
    rows = [{"term": row["term"],
             **{f"{names[i]}": _number(c) for i, c in enumerate(row["contributions"])},
             **{f"tf {names[i]}": _number(p.get("tf")) for i, p in enumerate(row["parts"])}}
            for row in section["terms"]]
    columns = ["term", *names, *(f"tf {n}" for n in names)]
    lines += [format_rows(rows, columns)]
    for t in tables:
        lines.append(f"{t['role']} {t['table']} (rank {_number(t['rank'])}): terms sum "
                     f"to {t['sum']:.6f}, its lexical score {t['lexical_score']:.6f}"
                     + (f", fused {t['fused']:.6f}" if "fused" in t else "")
                     + (f", stored score {t['stored_score']:.6f}"
                        if t.get("stored_score") is not None else ""))
    if section["only_other"]:
        lines.append(f"only the {names[1]} has: {', '.join(section['only_other'])}")
    gap = section["gap"]["missing"]
    if gap:
        lines.append("the gold lacks: " + "; ".join(
            m["term"] + (f" (nearest: {', '.join(m['nearest'])})" if m["nearest"] else "")
            for m in gap))
    if (fusion := section.get("fusion")) is not None:
        for side, lead in zip(fusion["sides"], fusion["leads"], strict=True):
            lines.append(f"{side} side: the {names[1]} leads by {lead['lead']:+.4f}")
        lines.append(f"decided by: {fusion['decided_by'] or 'neither side (the gold leads)'}"
                     f" ({fusion['method']})")
    return lines + [f"note: {n}" for n in section["notes"]]


def cmd_explain(args: argparse.Namespace) -> int:
    from target_core.analysis.explain import explain
    from target_core.engine.store import RunStore

    settings = load_settings(args.workspace)
    store = RunStore.in_workspace(settings.workspace)
    explained = explain(store, settings, args.run_id, args.query_id, args.against)
    if args.json:
        print(json.dumps(explained, indent=2, ensure_ascii=False))
        return 0
    run, query = explained["run"], explained["query"]
    print(f"run {run['id']} · {run['retriever']} on {run['dataset']} · k = {run['k']}")
    print(f"query {query['id']}: {query['text']}")
    print(format_rows([{k: _number(v) for k, v in t.items()} for t in explained["tables"]],
                      ["role", "table", "rank", "score"]))
    if explained["lexical"] is not None:
        print("\n".join(lexical_lines(explained["lexical"])))
    for name in ("dense", "sql"):
        if explained[name] is not None:
            print(f"{name}: " + (explained[name].get("summary")
                                 or "see --json for this section"))
    if all(explained[name] is None for name in ("lexical", "dense", "sql")):
        print("no explanation applies to this run's retriever and task")
    return 0


EXPLAIN_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "explain": ("why the winner beat the gold for one query: each query term's share of "
                "both tables' scores, what the embedder saw, the schema links", cmd_explain),
}


EXPLAIN_ARGUMENTS: options.CommandArguments = {"explain": ("RUN_ID", "QUERY_ID", "against")}
