"""The analysis commands of the CLI: compare, ablate, failures, attribution.

Like the rest of the CLI they only parse, call target_core.analysis and print.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from target_core.cli import options
from target_core.cli.format import ProgressBar, format_rows
from target_core.config import load_settings
from target_core.errors import ConfigError


def _missing(value: float | None) -> bool:
    return value is None or value != value  # NaN from a DataFrame cell


def _p(value: float | None) -> str:
    return "" if _missing(value) else f"{value:.4g}"


def _num(value: float | None, digits: int = 4) -> str:
    return "" if _missing(value) else f"{value:.{digits}f}"


def _store(args: argparse.Namespace) -> Any:
    from target_core.engine.store import RunStore

    return RunStore.in_workspace(load_settings(args.workspace).workspace)


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def cmd_compare(args: argparse.Namespace) -> int:
    from target_core.analysis.compare import compare_runs

    if len(args.run_ids) < 2:
        raise ConfigError("compare needs at least two run ids (the first is the baseline)")
    store = _store(args)
    result = compare_runs(store, args.run_ids, k=args.k)
    _write_compare_files(store, args, result)
    if args.json:
        _print_json(result.to_dict())
        return 0
    print(f"{result.dataset}: {result.n_queries} queries in common, {result.hit_key}")
    print(format_rows([{"run_id": r.run_id, "pipeline": r.label, "metric": m,
                        "mean": f"{mean:.4f}", "95% CI": f"[{low:.4f}, {high:.4f}]"}
                       for r in result.runs for m, (mean, low, high) in r.cis.items()],
                      ["run_id", "pipeline", "metric", "mean", "95% CI"]))
    for pair in result.pairs:
        print(f"\n{pair.other} vs baseline {pair.baseline} (win/tie/loss of {pair.other})")
        print(format_rows([{"metric": t.metric, "baseline": f"{t.mean_baseline:.4f}",
                            "other": f"{t.mean_other:.4f}",
                            "win/tie/loss": f"{t.wins}/{t.ties}/{t.losses}",
                            "test": t.test, "p": _p(t.p_value), "p (Holm)": _p(t.p_holm)}
                           for t in pair.tests],
                          ["metric", "baseline", "other", "win/tie/loss", "test", "p",
                           "p (Holm)"]))
        if pair.warning:
            print(f"warning: {pair.warning}")
        if pair.flipped:
            print(f"flipped queries ({len(pair.flipped)}, top 10 by reciprocal-rank change):")
            print(format_rows([{"query_id": f.query_id,
                                "baseline": "found" if f.hit_baseline else "failed",
                                "other": "found" if f.hit_other else "failed",
                                "all gold by (baseline)": f.last_rank_baseline,
                                "all gold by (other)": f.last_rank_other,
                                "rr change": f"{f.rr_other - f.rr_baseline:+.3f}"}
                               for f in pair.flipped[:10]],
                              ["query_id", "baseline", "other", "all gold by (baseline)",
                               "all gold by (other)", "rr change"]))
    return 0


def _write_compare_files(store: Any, args: argparse.Namespace, result: Any) -> None:
    """--html: the standalone report; --csv: per-query outcomes (paths go to stderr)."""
    from pathlib import Path

    from target_core.analysis.significance import outcomes_frame
    from target_core.figures.report import report_html

    if not (args.html or args.csv):
        return
    outcomes = outcomes_frame(store, args.run_ids, result.k)
    for path, write in ((args.html, lambda p: p.write_text(report_html(
            result, outcomes, [store.get_run(r) for r in args.run_ids]), encoding="utf-8")),
                        (args.csv, lambda p: outcomes.to_csv(p, index=False))):
        if path:
            out = Path(path)
            out.parent.mkdir(parents=True, exist_ok=True)
            write(out)
            print(f"wrote {out}", file=sys.stderr)


def _rows_list(text: str | None) -> tuple[int | None, ...] | None:
    if text is None:
        return None
    values: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part == "all":
            values.append(None)
        elif part.isdigit():
            values.append(int(part))
        else:
            raise ConfigError(f"--rows: '{part}' is not 'all' or a number of rows "
                              "(e.g. --rows all,100,0)")
    return tuple(values)


class _VariantProgress:
    """Prints "variant i/n: name" on stderr (the runs' own bars follow when enabled)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, i: int, n: int, name: str) -> None:
        if not self.quiet:
            print(f"variant {i + 1}/{n}: {name}", file=sys.stderr, flush=True)


def cmd_ablate(args: argparse.Namespace) -> int:
    from target_core.actions.experiments import run_ablation
    from target_core.experiments.ablation import DEFAULT_ROWS
    from target_core.read_models.ablation import ablation_variants
    from target_core.table_view import TEXT_FORMATS

    settings = load_settings(args.workspace)
    rows = _rows_list(args.rows)
    formats = tuple(f.strip() for f in args.formats.split(",")) if args.formats else None
    variants = ablation_variants(rows or DEFAULT_ROWS, formats or TEXT_FORMATS,
                                 schema=args.schema)
    if args.detach:
        from target_core.cli.jobs import print_launches
        from target_core.engine.workers import launch_run
        from target_core.experiments.ablation import ablation_configs

        configs = ablation_configs(args.dataset, args.retriever, variants, top_k=args.top_k,
                                   limit=args.limit, seed=args.seed)
        return print_launches(args, [launch_run(c, settings=settings) for c in configs])
    report = run_ablation(_store(args), settings, args.dataset, args.retriever,
                          top_k=args.top_k, limit=args.limit, seed=args.seed,
                          variants=variants,
                          progress=ProgressBar(sys.stderr.isatty() or args.progress),
                          on_variant=_VariantProgress(args.json and not args.progress))
    if args.json:
        _print_json(report.to_dict())
        return 0
    table = report.table()
    italic = set(report.italic_rows())
    print(f"{args.retriever} on {report.dataset}: {len(report.hits)} queries, paired "
          f"McNemar on hit@{report.k} against the first row (Holm); * marks Table 2's "
          "italic rows")
    print(format_rows(
        [{"variant": ("  * " if i in italic else "") + str(row["variant"]),
          **{column: _num(row[column], 3) for column, _ in report.recall_columns},
          "ms": _num(row["ms"], 2), "p vs base": _p(row["p vs base"]), "run": row["run"]}
         for i, row in table.iterrows()],
        ["variant", *(column for column, _ in report.recall_columns), "ms", "p vs base",
         "run"]))
    print("\nper-query sensitivity:")
    for label, ids in report.sensitivity().items():
        shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
        print(f"  {label:<24} {len(ids):>4}  {shown}")
    return 0


def cmd_failures(args: argparse.Namespace) -> int:
    from target_core.analysis.failures import CATEGORIES, analyse_failures
    from target_core.datasets import load_dataset

    settings = load_settings(args.workspace)
    store = _store(args)
    run = store.get_run(args.run_id)
    report = analyse_failures(store, load_dataset(run.config.dataset, settings), run.run_id,
                              k=args.k)
    if args.json:
        _print_json(report.to_dict())
        return 0
    print(f"run {report.run_id} ({run.config.label}, view {run.config.view.label}) on "
          f"{report.dataset}: {report.n_failed} of {report.n_queries} queries miss a gold "
          f"table within k = {report.k}")
    for name, count in report.counts.items():
        examples = ", ".join(c.query_id for c in report.in_category(name)[:5])
        print(f"  {name:<22} {count:>5}  {examples}")
        if args.definitions:
            print(f"      {CATEGORIES[name]}")
    tags = report.by_tag()
    if tags:
        print("\nby the queries' failure_mode tag:")
        names = [n for n, c in report.counts.items() if c]
        print(format_rows([{"tag": tag, **{n: counts[n] for n in names}}
                           for tag, counts in tags.items()], ["tag", *names]))
    for note in report.notes:
        print(f"note: {note}")
    return 0


def cmd_attribution(args: argparse.Namespace) -> int:
    from target_core.analysis.attribution import attribution, rank_quality

    store = _store(args)
    split = attribution(store, args.run_id, oracle_run_id=args.oracle, k=args.k)
    quality = rank_quality(store, args.run_id)
    if args.json:
        _print_json({"attribution": split.to_dict(), "rank_quality": quality.to_dict()})
        return 0
    counts = split.counts
    print(f"run {split.run_id} ({split.generator} on {split.dataset}): {split.n_queries} "
          f"queries; gold retrieved = every gold table in the top {split.k}; right = "
          f"{split.correct_rule}")
    print(format_rows([
        {"": "gold retrieved", "right": counts["retrieved_correct"],
         "wrong": counts["retrieved_wrong"]},
        {"": "gold missed", "right": counts["missed_correct"],
         "wrong": counts["missed_wrong"]}], ["", "right", "wrong"]))
    if split.oracle is None:
        print("no oracle-context run of this generator: run it with --context oracle to "
              "split the wrong answers into retrieval- and generation-caused")
    else:
        o = split.oracle
        print(f"\nagainst oracle run {o.oracle_run_id} ({o.n_common} queries in common, "
              f"{o.n_wrong} wrong with retrieved tables):")
        print(f"  retrieval-caused   {len(o.retrieval_caused):>5}  (right with the gold "
              "tables)")
        print(f"  generation-caused  {len(o.generation_caused):>5}  (wrong with the gold "
              "tables too)")
        print(f"  oracle worse       {len(o.oracle_worse):>5}  (right only with retrieved "
              "tables)")
    print(f"\n{quality.metric} by best gold rank (Spearman rho "
          f"{_num(quality.rho, 3) or 'n/a'}, p {_p(quality.p_value) or 'n/a'}, "
          f"n {quality.n}):")
    print(format_rows([{"gold rank": b.label, "queries": b.n, "mean": _num(b.mean, 3)}
                       for b in quality.bins], ["gold rank", "queries", "mean"]))
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    import pandas as pd

    from target_core.datasets import load_dataset
    from target_core.experiments.reproduce import reproduce
    from target_core.generators.prompts import prompt_set
    from target_core.read_models.reproduce import corpus_note, paper_dataset, reproduction_frame

    settings = load_settings(args.workspace)
    paper_dataset(args.paper)  # an unknown name fails before any run
    prompt_set(args.prompt_set)
    data = load_dataset(args.dataset, settings)
    if args.detach:
        from target_core.cli.jobs import print_launches
        from target_core.experiments.reproduce import launch_missing

        return print_launches(args, launch_missing(
            settings, data, generator=args.generator, embedder=args.embedder,
            summarizer=args.summarizer, ours=args.ours, limit=args.limit, seed=args.seed,
            prompt_set=args.prompt_set))
    bar = ProgressBar(args.progress or sys.stderr.isatty())
    done = reproduce(settings, args.dataset, generator=args.generator,
                     embedder=args.embedder, summarizer=args.summarizer, ours=args.ours,
                     limit=args.limit, seed=args.seed, progress=bar, prompt_set=args.prompt_set,
                     on_method=lambda i, n, m: print(f"[{i + 1}/{n}] {m}", file=sys.stderr)
                     if bar.enabled else None)
    frame = reproduction_frame(done, args.paper)
    note = corpus_note(data.name, len(data.tables),
                       args.limit or len(data.queries), args.paper)
    if args.json:
        rows = frame.drop(columns=["open"]).astype(object).where(frame.notna(), None)
        print(json.dumps({"paper": args.paper, "dataset": data.name, "note": note,
                          "rows": rows.to_dict(orient="records")}, indent=2,
                         ensure_ascii=False))
        return 0
    print(note)
    text = [{c: ("" if (v := row[c]) is None or v is pd.NA else
                 f"{v:+.3f}" if c.startswith("Δ") and isinstance(v, float) else
                 f"{v:.3f}" if isinstance(v, float) else v)
             for c in frame.columns if c != "open"} for row in frame.to_dict("records")]
    print(format_rows(text, [c for c in frame.columns if c != "open"]))
    return 0


ANALYSIS_COMMANDS: dict[str, tuple[str, Callable[[argparse.Namespace], int]]] = {
    "compare": ("paired comparison of runs on one dataset: win/tie/loss, p-values, CIs, "
                "flipped queries", cmd_compare),
    "ablate": ("run one retriever over table-view variants (title, rows, format) and show "
               "the paired ablation table", cmd_ablate),
    "failures": ("categorise a run's failed queries (near/deep miss, sibling confusion, "
                 "lexical overlap, title, truncation, multi-table, database)", cmd_failures),
    "attribution": ("for a run with a generator: gold retrieved × answer right, retrieval- "
                    "vs generation-caused errors (oracle run), quality by gold rank",
                    cmd_attribution),
    "reproduce": ("run TARGET's Table 2 baselines on a dataset in the paper's settings and "
                  "show each figure beside the paper's", cmd_reproduce),
}


ANALYSIS_ARGUMENTS: options.CommandArguments = {
    "compare": ("RUN_IDS", "k:compare", "html", "csv"),
    "ablate": ("dataset", "retriever:ablate", "top-k", *options.SAMPLE, "rows:ablate",
               "schema", "formats", *options.launch("runs")),
    "failures": ("RUN_ID", "k:failures", "definitions"),
    "reproduce": ("dataset", "paper", "generator:reproduce", "embedder", "summarizer",
                  "prompt-set:reproduce", "ours", *options.SAMPLE, *options.launch("runs")),
    "attribution": ("RUN_ID:attribution", "oracle", "k:attribution"),
}
