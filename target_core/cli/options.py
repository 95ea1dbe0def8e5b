"""Every argument of the command line, declared once; the commands attach them by name.

As sqlite-utils shares its click option decorators, each flag is declared here once, with
its type, metavar, default and help, and a command lists the names it takes (the flag
without its dashes; a positional argument in capitals), in the order `--help` shows them:

    options.add(command, "dataset", "retriever:ablate", "top-k", *options.SAMPLE, ...)

`NAME:VARIANT` picks one of the declaration's named variants: the few differences between
commands (a required dataset or a filter, a default of the command's own) spelled out
beside the declaration they change. A flag that means different things in different
commands (`--format`, `--limit`, `--wait`, ...) says so where it is declared and has no
shared settings: each meaning is a variant with its own help. The groups below (COMMON,
SAMPLE, VIEW, GENERATION, launch) are the options several commands take together.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from target_core.run_config import CONTEXT_MODES
from target_core.table_view import FORMATS, VIEW_PRESETS

Settings = Mapping[str, Any]


@dataclass(frozen=True)
class Arg:
    """One argument: its flag (or a positional's name), the settings every command shares
    (None: the flag has several meanings, a variant names each) and the named variants."""

    flag: str
    shared: Settings | None
    variants: Mapping[str, Settings] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """How commands name it: `top-k` for --top-k, `RUN_ID` for the positional run_id."""
        return self.flag[2:] if self.flag.startswith("--") else self.flag.upper()

    def settings(self, variant: str = "") -> dict[str, Any]:
        if variant and variant not in self.variants:
            raise KeyError(f"{self.name} has no variant '{variant}' "
                           f"(it has: {', '.join(self.variants) or 'none'})")
        if not variant and self.shared is None:
            raise KeyError(f"{self.name} means different things: name one of its variants "
                           f"({', '.join(self.variants)})")
        settings = dict(self.shared or {}) | dict(self.variants.get(variant, {}))
        if callable(settings.get("help")):  # a help text read from a registry when attached
            settings["help"] = settings["help"]()
        return settings


def _retriever_help() -> str:
    from target_core.retrievers import RETRIEVERS

    return (f"a retriever spec of {', '.join(RETRIEVERS.names())} "
            "(`retrievers` lists each with its spec)")


DATASET_HELP = "dataset name or folder path"
_MISSING = ("launch the missing {} as jobs in worker processes: print their ids and return "
            "(follow them with `jobs`)")

ARGUMENTS: tuple[Arg, ...] = (
    # -- every command (COMMON)
    Arg("--workspace", {"metavar": "DIR", "help": "workspace directory (default: "
                        "data/workspace or TARGET_WORKSPACE)"}),
    Arg("--json", {"action": "store_true", "help": "machine-readable output on stdout"}),
    # -- positional arguments
    Arg("run_id", {"metavar": "RUN_ID", "help": "a run id (see `runs`)"}, {
        "attribution": {"help": "a run with a generator and retrieved context"}}),
    Arg("run_ids", {"nargs": "+", "metavar": "RUN_ID",
                    "help": "two or more runs on one dataset; the first is the baseline"}),
    Arg("query_id", {"metavar": "QUERY_ID", "help": "a query id of that run"}),
    Arg("job_id", {"metavar": "JOB_ID", "help": "a job id (see `jobs`)"}),
    Arg("dataset", {"help": DATASET_HELP}),  # haystack's: --dataset's meaning, positional
    Arg("path", {"help": "TARGET retrieval or downstream results (JSON Lines), or TARGET's "
                 "results folder (<dir>/<dataset_name>/<k>.jsonl); with --format trec a "
                 "TREC run file (qid Q0 docid rank score tag)"}),
    Arg("action", None, {  # two meanings: the subcommand of `datasets` and of `benchgen`
        "datasets": {"nargs": "?", "choices": ["add", "remove"],
                     "help": "add: register a dataset folder or a zip/tar archive of one in "
                             "the workspace (validated first); remove: forget an added "
                             "dataset (an unpacked archive is deleted, a folder is left)"},
        "benchgen": {"choices": ("sample", "drafts", "review", "export", "evaluate"),
                     "help": "sample: templates -> SQL -> questions; drafts: list drafts; "
                             "review DRAFT; export DRAFT; evaluate RUN"}}),
    Arg("target", None, {  # what the action above acts on
        "datasets": {"nargs": "?", "metavar": "PATH|NAME",
                     "help": "for add: a dataset folder or archive; for remove: its name"},
        "benchgen": {"nargs": "?",
                     "help": "the draft (review, export) or run (evaluate)"}}),
    # -- what a run runs on and retrieves with
    Arg("--dataset", {"required": True, "help": DATASET_HELP}, {
        "sql": {"help": "a text-to-SQL dataset or folder"},
        "filter": {"required": False, "help": "runs on this dataset's content, by any name"},
        "benchgen": {"required": False, "default": "demo-sql",
                     "help": "sample: dataset whose SQLite databases are sampled "
                             "(default demo-sql)"},
        "import": {"required": False, "action": "append", "metavar": "[NAME=]DATASET",
                   "help": "dataset name or path (default: the file's dataset_name; "
                           "TARGET's names fetaqa, ottqa, tabfact, spider-test and "
                           "bird-validation are its hub datasets unless a dataset here has "
                           "that name); NAME=DATASET, repeatable, gives the dataset of the "
                           "<NAME>/ folder of a results folder"}}),
    Arg("--retriever", {"help": _retriever_help}, {
        "ablate": {"required": True, "help": "retriever spec, e.g. bm25"},
        "haystack": {"action": "append",
                     "help": "a retriever spec; repeat for several (default: bm25)"},
        "sql": {"default": "bm25", "help": "a retriever spec (default bm25)"}}),
    Arg("--top-k", {"type": int, "default": 10, "help": "tables retrieved per query"}, {
        "import": {"default": None,  # not retrieved here: the k of the imported lists
                   "help": "the k the results were retrieved at (default: the file's name "
                           "<k>.jsonl, else the longest list, with a warning)"}}),
    # -- a seeded sample of the queries (SAMPLE)
    Arg("--limit", {"type": int, "help": "a seeded sample of N queries"}, {
        # judge's --limit is no sample: the first N answered queries
        "judge": {"help": "judge only the first N answered queries (in query order)"}}),
    Arg("--seed", {"type": int, "default": 0, "help": "seed of the --limit sample"}, {
        # not the query sample's seed in these two commands:
        "haystack": {"help": "seed of the distractor draw"},
        "benchgen": {"help": "sample: seed of the SQL draws"}}),
    # -- the table view of `run` (VIEW)
    Arg("--view", {"help": f"table view preset ({', '.join(VIEW_PRESETS)})"}),
    Arg("--view-context", {"metavar": "KEYS", "help": "context keys of each table added to "
                           "its text, comma-separated (primary_key, foreign_keys, "
                           "column_descriptions or any key of the corpus' context; 'schema' "
                           "for the three; '' for none)"}),
    Arg("--no-title", {"action": "store_true", "help": "drop the page title, section title "
                       "and table id from the text"}),
    Arg("--rows", None, {  # one number for a run; a list of settings for an ablation
        "view": {"type": int, "help": "serialize the first N rows (0: header only)"},
        "ablate": {"help": "rows settings, comma-separated: all, N, 0 (header only); "
                           "default all,100,0"}}),
    Arg("--format", None, {  # three meanings: a table's text, an export's and an import's file
        "view": {"choices": FORMATS, "help": "how each table is written as text (default: "
                                             "the view preset's)"},
        "export": {"required": True, "choices": ["target", "trec", "csv"],
                   "help": "target: TARGET JSONL; trec: a TREC run and its qrels; csv: one "
                           "row per query"},
        "import": {"choices": ("target", "trec"), "default": "target",
                   "help": "target: TARGET's results (default); trec: a TREC run file, "
                           "ordered as trec_eval orders it, on --dataset"}}),
    # -- answering (GENERATION)
    Arg("--generator", {"help": "answer each query too: heuristic (offline baseline) or "
                                "openai[:MODEL]"}, {
        "reproduce": {"help": "answer every query too (heuristic, openai[:MODEL], ...): the "
                              "downstream columns and No context"},
        "sql": {"default": "heuristic",
                "help": "heuristic (the toggles do not apply: it reads no prompt), "
                        "local:smollm2, openai[:MODEL], py:..."}}),
    Arg("--context", {"choices": CONTEXT_MODES, "help": "what the generator sees: the "
                      "retrieved tables (default), the gold tables (oracle) or nothing "
                      "(none)"}),
    Arg("--context-k", {"type": int, "help": "retrieved tables given to the generator "
                        "(default: --top-k)"}),
    Arg("--token-budget", {"type": int, "default": 8000, "help": "tokens of tables or "
                           "schema per prompt; rows are cut to fit"}),
    Arg("--sql-schema", {"choices": ["database", "tables"], "help": "text-to-SQL prompts "
                         "show each retrieved table's whole database (default) or only the "
                         "retrieved tables"}),
    Arg("--prompt-set", {"metavar": "NAME", "help": "the LLM generators' prompts: "
                         "appendix-d (TARGET's paper, default) or target-code (TARGET's "
                         "current code); the heuristic generators read no prompt"}, {
        "reproduce": {"default": "appendix-d"}}),
    # -- the rest of `run`
    Arg("--fresh", {"action": "store_true", "help": "run again although this configuration "
                    "is complete (both runs are kept)"}),
    Arg("--haystack", {"metavar": "N@SOURCE[,SOURCE][#SEED]", "help": "add N distractor "
                       "tables drawn from other datasets to the corpus (retrieval only), "
                       "e.g. 370@demo-fact,demo-sql"}),
    Arg("--preset", {"help": "a named pipeline: gtr-t (CSV tables, dense retrieval, SQL "
                     "generation and execution); flags override it"}),
    # -- working in the foreground or as jobs (launch)
    Arg("--progress", {"action": "store_true", "help": "draw the progress bar even when "
                       "stderr is not a terminal"}, {
        "benchgen": {"help": "sample: draw the progress bar even when stderr is not a "
                             "terminal"}}),
    Arg("--detach", {"action": "store_true", "help": "run as a job in a worker process: "
                     "print the job id and return (follow it with `jobs`, stop it with "
                     "`cancel`)"},
        {what: {"help": _MISSING.format(what)} for what in ("runs", "points", "variants")}),
    # -- show, export, compare, failures, attribution, explain
    Arg("--queries", {"action": "store_true", "help": "include per-query results"}),
    Arg("--k", {"type": int}, {  # a cutoff k everywhere; each command has its own default
        "show": {"default": None,
                 "help": "k for each query's `failed` (default: the run's top_k)"},
        "compare": {"help": "hit@k cutoff (default: the largest of 1, 3, 5, 10 within "
                            "every run's top_k)"},
        "failures": {"help": "cutoff (default: the run's top_k, at most 10)"},
        "attribution": {"help": "gold counts as retrieved within the first k tables "
                                "(default: the tables the generator was given)"}}),
    Arg("--out", None, {  # two meanings: export's file, and benchgen sample's extra copy
        "export": {"required": True, "help": "file to write"},
        "benchgen": {"help": "sample: also write the draft as JSON Lines here"}}),
    Arg("--html", {"metavar": "PATH", "help": "also write a standalone HTML report (plots "
                   "embedded, opens offline)"}),
    Arg("--csv", {"metavar": "PATH", "help": "also write per-query outcomes of every run "
                  "as CSV"}),
    Arg("--definitions", {"action": "store_true",
                          "help": "print each category's definition"}),
    Arg("--oracle", {"metavar": "RUN_ID", "help": "the oracle-context run of the same "
                     "generator (default: the newest one stored)"}),
    Arg("--against", {"metavar": "TABLE", "help": "the table compared with the gold, "
                      "DATABASE/TABLE (default: the table ranked first)"}),
    # -- ablate, reproduce, haystack, sql-ablate
    Arg("--schema", {"action": "store_true", "help": "also the base view with each table's "
                     "schema context (primary and foreign keys, column descriptions)"}),
    Arg("--formats", {"help": "formats, comma-separated (default markdown,csv,json; the "
                      "first rows setting with the title)"}),
    Arg("--paper", {"required": True, "help": "the paper's dataset to compare with: OTTQA, "
                    "FeTaQA, TabFact, Spider or BIRD"}),
    Arg("--embedder", {"default": "minilm", "help": "for the embedding and LlamaIndex rows "
                       "(the paper's: openai, text-embedding-3-small)"}),
    Arg("--summarizer", {"default": "heuristic",
                         "help": "generator of LlamaIndex's table summaries"}),
    Arg("--ours", {"action": "store_true", "help": "add our stronger settings as rows of "
                   "their own ('ours: bm25 over cells', embeddings with titles, ...)"}),
    Arg("--source", {"required": True, "help": "where distractors come from: dataset names "
                     "or folders, comma-separated (e.g. demo-fact,demo-sql)"}),
    Arg("--sizes", {"help": "numbers of distractors, comma-separated (e.g. 0,100,1k; "
                    "default: 0, 30, 100, 300, 1k, ... and the whole pool)"}),
    Arg("--few-shot", {"type": int, "default": 3,
                       "help": "few-shot pairs in the full system's prompt (default 3)"}),
    Arg("--answer", {"action": "store_true", "help": "also phrase each SQL result as a "
                     "sentence (scored where queries carry a reference_answer)"}),
    # -- judges: two meanings, the truthfulness judge and benchgen's question checker
    Arg("--judge", None, {
        "judge": {"required": True, "metavar": "SPEC",
                  "help": "openai[:MODEL], local:smollm2 (or local:PATH.gguf), or heuristic "
                          "(offline stand-in: ROUGE-1 recall >= 0.5, no model)"},
        "benchgen": {"default": "round-trip",
                     "help": "sample: round-trip (offline) or openai[:MODEL]"}}),
    # -- import
    Arg("--qrels", {"help": "with --format trec: TREC qrels (qid iter docid rel), checked "
                    "against the dataset's gold; the run keeps the queries they judge"}),
    Arg("--downstream", {"help": "TARGET downstream results of the same queries (a file, "
                         "or a folder like PATH), added to the retrieval results"}),
    Arg("--label", {"help": "name of the imported retriever (default: the folder holding "
                    "<dataset_name>/, else the file's name)"}),
    Arg("--partial", {"action": "store_true", "help": "when the downstream file holds other "
                      "queries than the retrieval file, import only the queries both hold "
                      "(default: refuse)"}),
    # -- jobs: --wait has two meanings
    Arg("--active", {"action": "store_true",
                     "help": "only queued, running and interrupted jobs"}),
    Arg("--wait", None, {
        "cancel": {"type": float, "default": 0, "metavar": "SECONDS",
                   "help": "wait up to SECONDS for a running job to stop"},
        "demo-suite": {"action": "store_true",
                       "help": "wait until every launched run has finished"}}),
    # -- datasets and benchgen: --name has two meanings
    Arg("--name", None, {
        "datasets": {"help": "for add: the name to register it under (default: the name in "
                             "its dataset.json, else its folder's)"},
        "benchgen": {"help": "export: the new dataset's name"}}),
    Arg("--remote", {"action": "store_true",
                     "help": "also list TARGET's hub datasets (not downloaded)"}),
    Arg("--database", {"help": "sample: only the templates of this database"}),
    Arg("--templates", {"help": "sample: template file or folder (default: the examples in "
                        "data/benchgen/templates)"}),
    Arg("--n", {"type": int, "default": 5, "help": "sample: queries kept per template"}),
    Arg("--reference-date", {"help": "sample: resolve relative time references against "
                             "this date (default: per template, from the data)"}),
    Arg("--writer", {"default": "template",
                     "help": "sample: template (offline baseline) or openai[:MODEL]"}),
    Arg("--draft", {"help": "sample: save the draft under this name for review"}),
    Arg("--replace", {"action": "store_true",
                      "help": "sample: replace a draft of the same name"}),
    Arg("--accept-automatic", {"action": "store_true", "help": "review: accept pending pairs "
                               "the automatic validation passed (the round trip, and the "
                               "judge when one ran), reject those it failed; a pair the "
                               "round trip failed is never accepted"}),
    Arg("--accept", {"type": int, "nargs": "+", "metavar": "PAIR",
                     "help": "review: accept these pair ids"}),
    Arg("--reject", {"type": int, "nargs": "+", "metavar": "PAIR",
                     "help": "review: reject these pair ids"}),
    Arg("--overwrite", {"action": "store_true",
                        "help": "export: replace an earlier export of the same name"}),
    # -- serve
    Arg("--port", {"type": int, "default": 8501, "help": "port (default 8501)"}),
    Arg("--address", {"default": "127.0.0.1",
                      "help": "address to listen on (default 127.0.0.1: this machine only)"}),
    Arg("--headless", {"action": "store_true", "help": "do not open a browser"}),
)


def _index(arguments: tuple[Arg, ...]) -> dict[str, Arg]:
    index: dict[str, Arg] = {}
    for argument in arguments:
        if index.setdefault(argument.name, argument) is not argument:
            raise ValueError(f"{argument.flag} is declared twice in cli/options.py")
    return index


BY_NAME = _index(ARGUMENTS)

COMMON = ("workspace", "json")
"""Every command's."""
SAMPLE = ("limit", "seed")
"""A seeded sample of the queries."""
VIEW = ("view", "view-context", "no-title", "rows:view", "format:view")
"""How `run` writes each table as text."""
GENERATION = ("generator", "context", "context-k", "token-budget", "sql-schema", "prompt-set")
"""What `run` answers with."""


def launch(what: str = "") -> tuple[str, str]:
    """--progress and --detach: `what` names the missing things a command launches as jobs
    (runs, points, variants); none: one run."""
    return ("progress", f"detach:{what}" if what else "detach")


def add(command: argparse.ArgumentParser, *names: str) -> None:
    """Attach the named arguments to `command` in this order (`NAME:VARIANT` for a
    variant)."""
    for name in names:
        key, _, variant = name.partition(":")
        argument = BY_NAME[key]
        command.add_argument(argument.flag, **argument.settings(variant))


CommandArguments = Mapping[str, tuple[str, ...]]
"""A module's commands and the arguments each takes, by name."""
