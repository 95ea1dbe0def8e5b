"""Scale: 100,000 tables and 5,000 queries, end to end (prints figures; not a test).

    .venv/bin/python -m benchmarks.scale [--tables 100000] [--queries 5000] [--skip-chroma]

Writes a synthetic folder dataset (benchmarks/synthetic.py), then runs each phase in its
own process so that each peak memory figure is that phase's alone:
* lexical: load the dataset, run bm25 over every query through the run engine (as
  `python -m target_core run` does), then bm25 without the title (the pair the Compare
  page shows); index build time, per-query retrieval time as stored with the run;
* chroma: precomputed vectors into Chroma, embedded and behind a `chroma run` server
  (benchmarks/scale_chroma.py);
* pages: the Overview, Query, Compare, Datasets and Failures pages in Streamlit's
  AppTest on those two runs (Failures: the one without the title),
  the first render in a fresh process (nothing cached) and the median of 3 after it.
Targets: BM25 median query <= 20 ms, Chroma query <= 20 ms, peak memory <= 4 GB,
pages <= 2 s.

    .venv/bin/python -m benchmarks.scale --bm25-only --tables 1000000 [--keep DIR]
        [--skip-build]

writes the corpus (streamed), then in fresh processes: the BM25 index build alone over
the corpus's texts (read one table at a time) with its query p50/p90 (`--skip-build`
leaves it out), the corpus index written a table at a time into a new workspace (as a
run or a page does for a large corpus never opened before: time, peak RSS), and a whole
`python -m target_core run --retriever bm25 --limit 1000` (time, peak RSS);
`--keep DIR` writes the corpus under DIR and leaves it there (or reuses it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.page_render import render_seconds
from benchmarks.synthetic import write_folder

MARK = "SCALE-RESULT "
PAGES = ("overview", "query", "compare", "datasets", "failures")
TARGETS = {"bm25_query_median_ms": 20, "chroma_query_median_ms": 20, "peak_mb": 4096,
           "page_s": 2.0}


def peak_mb() -> float:
    """This process's peak resident memory so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def emit(figures: dict[str, Any]) -> None:
    print(MARK + json.dumps(figures), flush=True)


def _environ(workdir: Path) -> None:
    os.environ["TARGET_WORKSPACE"] = str(workdir / "ws")
    os.environ["TARGET_DATASETS"] = str(workdir / "synthetic")


def phase_corpus(workdir: Path, n_tables: int, n_queries: int) -> None:
    started = time.perf_counter()
    write_folder(workdir / "synthetic", n_tables, n_queries)
    size = (workdir / "synthetic" / "corpus.jsonl").stat().st_size
    emit({"phase": "corpus", "seconds": time.perf_counter() - started,
          "corpus_mb": size / 2**20, "peak_mb": peak_mb()})


def phase_lexical(workdir: Path, title: bool) -> None:
    _environ(workdir)
    from target_core.config import load_settings
    from target_core.datasets import load_dataset
    from target_core.engine.runner import run_retrieval
    from target_core.engine.store import RunStore
    from target_core.run_config import RunConfig
    from target_core.table_view import TableView

    settings = load_settings()
    started = time.perf_counter()
    dataset = load_dataset("synthetic", settings)
    load_s = time.perf_counter() - started
    load_mb = peak_mb()
    started = time.perf_counter()
    run = run_retrieval(RunConfig("synthetic", "bm25", view=TableView(title=title)),
                        settings=settings).run
    run_s = time.perf_counter() - started
    ms = np.array([r.ms for r in RunStore.in_workspace(settings.workspace)
                   .iter_results(run.run_id)])
    emit({"phase": f"lexical{'' if title else '-no-title'}", "run_id": run.run_id,
          "tables": len(dataset.tables), "queries": len(ms), "load_s": load_s,
          "load_peak_mb": load_mb, "index_s": run.index_info["seconds"], "run_s": run_s,
          "query_median_ms": float(np.median(ms)), "query_p95_ms": float(np.percentile(ms, 95)),
          "recall_at_10": run.metrics.get("recall@10"), "peak_mb": peak_mb()})


def current_mb() -> float:
    """This process's resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def phase_bm25_build(workdir: Path, n_timed: int = 1_000) -> None:
    """BM25's index over the corpus's default-view texts (tables read one at a time), its
    build time and peak memory, and one query at a time over the first queries."""
    from benchmarks.synthetic import table_from_record
    from target_core.retrievers.bm25 import BM25Retriever
    from target_core.serialize import table_text
    from target_core.table_view import TableView

    folder = workdir / "synthetic"
    started = time.perf_counter()
    with (folder / "corpus.jsonl").open() as handle:
        texts = [table_text(table_from_record(json.loads(line)), TableView())
                 for line in handle]
    texts_s, texts_mb = time.perf_counter() - started, current_mb()
    retriever = BM25Retriever()
    started = time.perf_counter()
    info = retriever.index(texts, corpus_key="scale")
    build_s, build_peak = time.perf_counter() - started, peak_mb()
    index_mb = current_mb() - texts_mb
    with (folder / "queries.jsonl").open() as handle:
        queries = [json.loads(line)["query"] for line in itertools.islice(handle, n_timed)]
    ms = []
    for query in queries:
        started = time.perf_counter()
        retriever.search([query], top_k=10)
        ms.append((time.perf_counter() - started) * 1000)
    emit({"phase": "bm25-build", "tables": len(texts), "texts_s": texts_s,
          "texts_mb": texts_mb, "build_s": build_s, "build_peak_mb": build_peak,
          "index_mb": index_mb, "nonzeros": info.details["nonzeros"],
          "vocabulary": info.details["vocabulary_size"], "queries": len(ms),
          "query_p50_ms": float(np.percentile(ms, 50)),
          "query_p90_ms": float(np.percentile(ms, 90)), "peak_mb": peak_mb()})


def phase_corpus_index(workdir: Path) -> None:
    """The corpus index written a table at a time (datasets/corpus_stream.py) into a new
    workspace, as opening the dataset for a run or a page does: time and peak RSS."""
    from target_core.config import load_settings
    from target_core.datasets import open_lookup

    with tempfile.TemporaryDirectory(prefix="target-scale-ws-") as workspace:
        settings = load_settings(environ={"TARGET_WORKSPACE": workspace,
                                          "TARGET_DATASETS": str(workdir / "synthetic")})
        started = time.perf_counter()
        found = open_lookup("synthetic", settings)
        seconds = time.perf_counter() - started
        emit({"phase": "corpus-index", "seconds": seconds, "kind": type(found).__name__,
              "tables": found.n_tables, "peak_mb": peak_mb()})


def phase_cli_run(workdir: Path, limit: int = 1_000) -> None:
    """A whole `python -m target_core run --retriever bm25 --limit N` in a child process:
    wall time and the child's peak RSS."""
    _environ(workdir)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "target_core", "run", "--dataset",
                           "synthetic", "--retriever", "bm25", "--limit", str(limit), "--fresh",
                           "--json"], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"target_core run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    run = json.loads(done.stdout)
    emit({"phase": "cli-run", "queries": run["n_queries"], "seconds": seconds,
          "recall_at_10": run["metrics"].get("recall@10"), "peak_mb": child})


def phase_page(workdir: Path, page: str, runs: list[str]) -> None:
    """One page: its first render in this fresh process, then the median of 3 more."""
    _environ(workdir)
    params = {"overview": {},
              "query": {"run": runs[0], "query": f"q{2500:05d}"},
              "compare": {"runs": ",".join(runs)},
              "datasets": {"dataset": "synthetic"},
              "failures": {"run": runs[-1]}}[page]
    first = render_seconds(f"pages/{page}.py", params)
    again = statistics.median(render_seconds(f"pages/{page}.py", params) for _ in range(3))
    emit({"phase": f"page-{page}", "first_s": first, "again_s": again, "peak_mb": peak_mb()})


def run_phase(args: Sequence[str]) -> list[dict[str, Any]]:
    """Run `python -m MODULE args...` and collect the figures it emitted."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          check=False, cwd=Path(__file__).resolve().parent.parent)
    if done.returncode:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    figures = [json.loads(line.removeprefix(MARK)) for line in done.stdout.splitlines()
               if line.startswith(MARK)]
    figures = figures or [json.loads(line) for line in done.stdout.splitlines()
                          if line.startswith("{")]
    what = args[args.index("--phase") + 1] if "--phase" in args else args[0]
    print(f"  {what}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return figures


def _check(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"


def report(results: dict[str, dict[str, Any]], tables: int, queries: int) -> list[str]:
    lex, notitle = results["lexical"], results["lexical-no-title"]
    lines = [f"{tables:,} tables ({results['corpus']['corpus_mb']:.0f} MB of JSONL), "
             f"{queries:,} queries",
             f"dataset load, full: {lex['load_s']:.1f} s, {lex['load_peak_mb']:.0f} MB",
             f"bm25 index build: {lex['index_s']:.1f} s; whole run {lex['run_s']:.0f} s",
             f"bm25 query median {lex['query_median_ms']:.2f} ms, p95 "
             f"{lex['query_p95_ms']:.2f} ms (target <= 20 ms: "
             f"{_check(lex['query_median_ms'], 20)}); recall@10 {lex['recall_at_10']:.3f}, "
             f"without title {notitle['recall_at_10']:.3f}"]
    peaks = [("bm25 run", max(lex["peak_mb"], notitle["peak_mb"]))]
    for mode in ("embedded", "server"):
        chroma = results.get(f"chroma-{mode}")
        if chroma is None:
            continue
        lines.append(f"chroma {mode}: add {chroma['add_s']:.0f} s, query median "
                     f"{chroma['query_median_ms']:.2f} ms, p95 {chroma['query_p95_ms']:.2f} ms "
                     f"(target <= 20 ms: {_check(chroma['query_median_ms'], 20)}), gold in "
                     f"the top 10 {chroma['hit_at_10']:.3f}; index again, all cached: "
                     f"{chroma['cached_index_s']:.2f} s")
        peaks.append((f"chroma {mode} client", chroma["client_peak_mb"]))
        if chroma.get("server_peak_mb"):
            peaks.append(("chroma server", chroma["server_peak_mb"]))
    for page in PAGES:
        figures = results[f"page-{page}"]
        lines.append(f"{page} page: first render {figures['first_s']:.2f} s, then "
                     f"{figures['again_s']:.2f} s (target <= 2 s: "
                     f"{_check(max(figures['first_s'], figures['again_s']), 2.0)})")
        peaks.append((f"{page} page process", figures["peak_mb"]))
    lines += [f"peak memory, {name}: {mb:,.0f} MB (target <= 4,096 MB: {_check(mb, 4096)})"
              for name, mb in peaks]
    return lines


def bm25_only(tables: int, queries: int, keep: Path | None, build: bool = True
              ) -> list[str]:
    """The corpus, BM25's build alone, the corpus index and a whole CLI run, each in a
    fresh process."""
    with tempfile.TemporaryDirectory(prefix="target-scale-") as tmp:
        workdir = keep or Path(tmp)
        common = ["benchmarks.scale", "--workdir", str(workdir), "--tables", str(tables),
                  "--queries", str(queries)]
        lines = [f"load before: {Path('/proc/loadavg').read_text().strip()}"]
        if not (workdir / "synthetic" / "queries.jsonl").is_file():
            corpus = run_phase([*common, "--phase", "corpus"])[0]
            lines.append(f"corpus: {corpus['seconds']:.0f} s, {corpus['corpus_mb']:,.0f} MB, "
                         f"peak {corpus['peak_mb']:,.0f} MB")
        if build:
            built = run_phase([*common, "--phase", "bm25-build"])[0]
            lines.append(
                f"{built['tables']:,} texts read in {built['texts_s']:.0f} s "
                f"({built['texts_mb']:,.0f} MB); bm25 build {built['build_s']:.1f} s, peak "
                f"{built['build_peak_mb']:,.0f} MB, index {built['index_mb']:,.0f} MB "
                f"({built['nonzeros']:,} weights, {built['vocabulary']:,} terms); query "
                f"p50 {built['query_p50_ms']:.2f} ms, p90 {built['query_p90_ms']:.2f} ms")
        index = run_phase([*common, "--phase", "corpus-index"])[0]
        lines.append(f"corpus index written a table at a time ({index['kind']}, "
                     f"{index['tables']:,} tables): {index['seconds']:.0f} s, peak "
                     f"{index['peak_mb']:,.0f} MB")
        lines.append(f"load before the run: {Path('/proc/loadavg').read_text().strip()}")
        run = run_phase([*common, "--phase", "cli-run"])[0]
        lines.append(f"target_core run, bm25, {run['queries']:,} queries: {run['seconds']:.0f} s, "
                     f"peak {run['peak_mb']:,.0f} MB, recall@10 {run['recall_at_10']:.3f}")
        lines.append(f"load after: {Path('/proc/loadavg').read_text().strip()}")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--skip-chroma", action="store_true")
    parser.add_argument("--bm25-only", action="store_true",
                        help="corpus, BM25 build alone and a whole CLI run of 1,000 queries")
    parser.add_argument("--keep", type=Path, help="write (or reuse) the corpus in this folder")
    parser.add_argument("--skip-build", action="store_true",
                        help="with --bm25-only: leave out BM25's build alone")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--runs", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    phases: dict[str, Callable[[], None]] = {
        "corpus": lambda: phase_corpus(args.workdir, args.tables, args.queries),
        "lexical": lambda: phase_lexical(args.workdir, title=True),
        "lexical-no-title": lambda: phase_lexical(args.workdir, title=False),
        "bm25-build": lambda: phase_bm25_build(args.workdir),
        "corpus-index": lambda: phase_corpus_index(args.workdir),
        "cli-run": lambda: phase_cli_run(args.workdir),
        **{f"page-{p}": (lambda p=p: phase_page(args.workdir, p, args.runs.split(",")))
           for p in PAGES}}
    if args.phase:
        phases[args.phase]()
        return
    results: dict[str, dict[str, Any]] = {}
    if args.bm25_only:
        print("\n".join(bm25_only(args.tables, args.queries, args.keep,
                                   build=not args.skip_build)))
        return
    with tempfile.TemporaryDirectory(prefix="target-scale-") as tmp:
        common = ["benchmarks.scale", "--workdir", tmp, "--tables", str(args.tables),
                  "--queries", str(args.queries)]
        for phase in ("corpus", "lexical", "lexical-no-title"):
            results[phase] = run_phase([*common, "--phase", phase])[0]
        runs = f"{results['lexical']['run_id']},{results['lexical-no-title']['run_id']}"
        for page in PAGES:
            results[f"page-{page}"] = run_phase([*common, "--phase", f"page-{page}",
                                                 "--runs", runs])[0]
    if not args.skip_chroma:
        for figures in run_phase(["benchmarks.scale_chroma", "--vectors", str(args.tables),
                                  "--queries", str(args.queries), "--mode", "both",
                                  "--json"]):
            results[f"chroma-{figures['mode']}"] = figures
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print("\n".join(report(results, args.tables, args.queries)))


if __name__ == "__main__":
    main()
