"""Our BM25 against bm25s and rank-bm25, side by side in one process (prints figures).

    .venv/bin/python -m benchmarks.bm25_vs_bm25s --fetaqa /path/to/fetaqa-folder
    .venv/bin/python -m benchmarks.bm25_vs_bm25s --tables 100000 [--queries 1000]
    .venv/bin/python -m benchmarks.bm25_vs_bm25s --folder DIR --rank-bm25-queries 20

Same texts (TableView()'s default) and same tokens (`textproc.tokenize`) for all three:
bm25s is given the token ids of our tokenizer (`bm25s.tokenization.Tokenized`), and
rank-bm25 the token lists. One query at a time at top-10, the query's tokenizing timed
inside each; ours and bm25s alternate per query (and which goes first alternates too).
bm25s (method "robertson", k1 1.5, b 0.75, numpy backend) is timed through
`BM25._get_top_k_results`, what its `retrieve` runs per query without its batching and
progress bar. rank-bm25 is timed on a subset (it scores every table in Python); on that
subset our top-10 ids are compared with rank-bm25's, ranked by the project's rule
(`top_k_hits`: score descending, ties to the lower corpus index, score 0 = no match).

bm25s is not a project dependency: the script installs the pinned version into a
scratch folder under /tmp (`pip install --target DIR --no-deps`; numpy and scipy come
from this venv). Build times include tokenizing the corpus for every library. Peak RSS
(resource.getrusage) is read right after the texts are made and after our build, before
the other libraries run. Above 200,000 tables the synthetic texts are made streaming
(only the gold tables of the queries are kept as tables); `--folder` reads a folder
dataset's texts one table at a time (e.g. a million tables written by
`benchmarks.scale --bm25-only --keep DIR`, at DIR/synthetic). rank-bm25 is given its
token lists one document at a time (a generator, each token interned): at a million
tables every list at once would not fit in memory; its build time includes interning.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from benchmarks import synthetic
from target_core.datasets.folder import load_folder
from target_core.retrievers.base import Hits, top_k_hits
from target_core.retrievers.bm25 import BM25Retriever
from target_core.retrievers.tfidf import TfidfRetriever
from target_core.serialize import table_text
from target_core.table_view import TableView
from target_core.textproc import tokenize

BM25S_VERSION = "0.3.16"
SCRATCH = Path("/tmp/target-bench-bm25s")
TOP_K = 10
STREAMING_ABOVE = 200_000


def bm25s_module(version: str = BM25S_VERSION) -> ModuleType:
    """bm25s==version, installed once into a scratch folder and put on sys.path."""
    target = SCRATCH / version
    if not (target / "bm25s" / "__init__.py").is_file():
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--target", str(target), f"bm25s=={version}"], check=True)
    sys.path.insert(0, str(target))
    module = importlib.import_module("bm25s")
    assert Path(module.__file__ or "").is_relative_to(target), module.__file__
    return module


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fetaqa_corpus(path: str) -> tuple[str, list[str], list[str]]:
    dataset = load_folder(path)
    texts = [table_text(t, TableView()) for t in dataset.tables]
    return (f"real FeTaQA, {len(texts):,} tables", texts,
            [q.query for q in dataset.queries])


def folder_corpus(path: str) -> tuple[str, list[str], list[str]]:
    """A folder dataset's texts, its tables read one at a time (never all as Tables)."""
    folder = Path(path)
    with (folder / "corpus.jsonl").open() as handle:
        texts = [table_text(synthetic.table_from_record(json.loads(line)), TableView())
                 for line in handle]
    with (folder / "queries.jsonl").open() as handle:
        queries = [json.loads(line)["query"] for line in handle]
    return f"{folder.name} folder, {len(texts):,} tables", texts, queries


def synthetic_corpus(n_tables: int, n_queries: int, seed: int) -> tuple[str, list[str],
                                                                        list[str]]:
    """make_corpus(n_tables, n_queries, seed)'s texts and query texts, the same ones;
    above STREAMING_ABOVE tables without holding every table (they are made twice)."""
    name = f"synthetic, {n_tables:,} tables"
    if n_tables <= STREAMING_ABOVE:
        tables, queries = synthetic.make_corpus(n_tables, n_queries, seed)
        return name, [table_text(t, TableView()) for t in tables], [q.query for q in queries]
    stream = synthetic.StreamedCorpus(n_tables, n_queries, seed)
    texts = [table_text(t, TableView()) for t in stream.tables()]
    wanted = set(stream.gold())
    again = synthetic.StreamedCorpus(n_tables, 0, seed).tables()
    kept = {i: t for i, t in enumerate(again) if i in wanted}
    return name, texts, [q.query for q in stream.queries(kept)]


def timed(call: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float]:
    """call(*args, **kwargs) and its wall time in milliseconds."""
    started = time.perf_counter()
    out = call(*args, **kwargs)
    return out, (time.perf_counter() - started) * 1000


def reference_hits(scores: np.ndarray) -> Hits:
    """rank-bm25's scores ranked by the project's rule (0 = no match, ties lower index)."""
    return top_k_hits(np.where(scores != 0, scores, -np.inf), TOP_K)


def compare_top10(ours: Hits, expected: Hits) -> str:
    """"same" (ids equal), "tie" (ids differ only inside a tie at the cut: same scores)
    or "differs"."""
    if [i for i, _ in ours] == [i for i, _ in expected]:
        return "same"
    if np.allclose([s for _, s in ours], [s for _, s in expected], rtol=0, atol=1e-9):
        return "tie"
    return "differs"


def ms(times: Sequence[float]) -> str:
    return f"p50 {np.percentile(times, 50):7.3f} ms  p90 {np.percentile(times, 90):7.3f} ms"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--fetaqa", metavar="PATH", help="a FeTaQA folder dataset")
    source.add_argument("--tables", type=int, help="a synthetic corpus of this many tables")
    source.add_argument("--folder", metavar="DIR", help="a folder dataset, read streaming")
    parser.add_argument("--queries", type=int, default=1_000,
                        help="synthetic queries (a real dataset uses all of its own)")
    parser.add_argument("--rank-bm25-queries", type=int, default=100,
                        help="queries also run with rank-bm25 and compared (slow)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bm25s-version", default=BM25S_VERSION)
    parser.add_argument("--no-tfidf", action="store_true", help="skip our TF-IDF line")
    args = parser.parse_args(argv)
    bm25s = bm25s_module(args.bm25s_version)

    started = time.perf_counter()
    if args.fetaqa:
        name, texts, queries = fetaqa_corpus(args.fetaqa)
    elif args.folder:
        name, texts, queries = folder_corpus(args.folder)
        queries = queries[: args.queries]
    else:
        name, texts, queries = synthetic_corpus(args.tables, args.queries, args.seed)
    rss_texts = peak_rss_mb()
    print(f"corpus: {name}, {len(queries):,} queries (made in "
          f"{time.perf_counter() - started:.1f} s); load {os.getloadavg()[0]:.2f}; "
          f"bm25s {bm25s.__version__ if hasattr(bm25s, '__version__') else args.bm25s_version}")

    ours = BM25Retriever()
    info, build_ours = timed(lambda: ours.index(texts, corpus_key="benchmark"))
    rss_ours = peak_rss_mb()
    print(f"peak RSS: {rss_texts:,.0f} MB with the texts, {rss_ours:,.0f} MB after our "
          f"build (+{rss_ours - rss_texts:,.0f} MB)")

    def build_bm25s() -> Any:
        vocabulary: dict[str, int] = {}
        assign = vocabulary.setdefault
        ids = [[assign(t, len(vocabulary)) for t in tokenize(text)] for text in texts]
        model = bm25s.BM25(method="robertson", k1=1.5, b=0.75, backend="numpy")
        model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocabulary),
                    show_progress=False)
        return model

    other, build_other = timed(build_bm25s)

    def run_ours(query: str) -> Hits:
        return ours.search([query], top_k=TOP_K)[0]

    def run_bm25s(query: str) -> Any:
        return other._get_top_k_results(tokenize(query), k=TOP_K, backend="numpy",
                                        sorted=True)

    for query in queries[:20]:  # warm both
        run_ours(query), run_bm25s(query)
    ours_ms, other_ms, ours_hits = [], [], []
    for n, query in enumerate(queries):
        if n % 2:
            t_other = timed(run_bm25s, query)[1]
            hits, t_ours = timed(run_ours, query)
        else:
            hits, t_ours = timed(run_ours, query)
            t_other = timed(run_bm25s, query)[1]
        ours_ms.append(t_ours)
        other_ms.append(t_other)
        ours_hits.append(hits)
    other = None  # free it before rank-bm25 builds

    reference, build_reference = timed(lambda: BM25Okapi(
        [sys.intern(token) for token in tokenize(t)] for t in texts))
    subset = queries[: args.rank_bm25_queries]
    reference_ms, verdicts, worst = [], {"same": 0, "tie": 0, "differs": 0}, 0.0
    for query, hits in zip(subset, ours_hits, strict=False):
        expected, t_ref = timed(lambda q: reference_hits(reference.get_scores(tokenize(q))),
                                query)
        reference_ms.append(t_ref)
        verdicts[compare_top10(hits, expected)] += 1
        scores = reference.get_scores(tokenize(query))
        worst = max([worst] + [abs(s - scores[i]) for i, s in hits])

    ratio = np.median(other_ms) / np.median(ours_ms)
    print(f"ours (bm25)  build {build_ours / 1000:6.2f} s   {ms(ours_ms)}   "
          f"({len(queries)} queries, vocabulary {info.details['vocabulary_size']:,}, "
          f"{info.details['nonzeros']:,} weights)")
    print(f"bm25s        build {build_other / 1000:6.2f} s   {ms(other_ms)}")
    print(f"rank-bm25    build {build_reference / 1000:6.2f} s   {ms(reference_ms)}   "
          f"({len(reference_ms)} queries)")
    print(f"bm25s/ours at p50: {ratio:.2f}   top-10 against rank-bm25 on "
          f"{len(reference_ms)} queries: {verdicts['same']} identical, {verdicts['tie']} "
          f"differing only inside a tie at the cut, {verdicts['differs']} different; "
          f"max |score difference| {worst:.1e}")
    if not args.no_tfidf:
        del reference
        tfidf = TfidfRetriever()
        tf_info, build_tfidf = timed(lambda: tfidf.index(texts, corpus_key="benchmark"))
        tf_ms = [timed(tfidf.search, [q], top_k=TOP_K)[1] for q in queries]
        print(f"ours (tfidf) build {build_tfidf / 1000:6.2f} s   {ms(tf_ms)}   "
              f"(vocabulary {tf_info.details['vocabulary_size']:,})")
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
