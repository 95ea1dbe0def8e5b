"""One registry per extension point (retriever, generator, embedder) and one spec grammar.

A spec names a registered family, then optionally an argument after the family's
separator (':' for retrievers and generators, '/' for embedders):

    bm25                               family "bm25", no argument
    dense:openai/text-embedding-3-large  family "dense", argument "openai/text-embedding-3-large"
    openai/nomic-embed-text:v1.5       embedder family "openai", argument "nomic-embed-text:v1.5"

`parse_spec` is that grammar: the first separator splits, and the argument keeps any
later separator. A family whose argument holds other specs (dense's embedder, summary's
EMBEDDER[@GENERATOR]) interprets it once, in its entry's `parts`, which says which
registered components the spec uses; cost estimates and tests read `parts` instead of
parsing specs again.

    RETRIEVERS.build("summary:openai@openai:gpt-4o-mini", settings)
    RETRIEVERS.parts("summary:openai@openai:gpt-4o-mini")
    # (Part("embedder", "openai"), Part("generator", "openai:gpt-4o-mini"))

`py:MODULE:CLASS` and `py:PATH.py:CLASS` name a user's own class; loading it (file or
module, constructor arguments, code fingerprint, clear errors) is target_core/pyclass.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from target_core.config import Settings
from target_core.errors import ConfigError, UnknownNameError
from target_core.table_view import TableView
from target_core.types import Dataset

T = TypeVar("T")


class DuplicateNameError(ConfigError):
    """A second entry under a name a registry already holds (it would replace the first)."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"{kind} '{name}' is registered twice")


@dataclass(frozen=True)
class Spec:
    """A parsed spec: the family name and its argument ("" when there is none)."""

    name: str
    arg: str = ""


def parse_spec(text: str, separator: str = ":") -> Spec:
    """Split `text` at the first `separator`: "dense:openai/m" -> Spec("dense", "openai/m").

    Both parts are stripped of surrounding spaces; the argument may contain `separator`
    again (it belongs to a nested spec or a model name)."""
    name, _, arg = text.strip().partition(separator)
    return Spec(name.strip(), arg.strip())


def split_options(arg: str) -> tuple[str, str]:
    """(argument, options text) of an argument whose options (`NAME=VALUE,...`) follow
    its last ':' (hybrid, hyse, py): "minilm:method=rrf,k=60" -> ("minilm",
    "method=rrf,k=60"); "openai/nomic-embed-text:v1.5" has none (no '=' after the ':')."""
    head, sep, tail = arg.rpartition(":")
    if "=" in tail:
        return (head if sep else "").strip(), tail.strip()
    return arg.strip(), ""


class Part(NamedTuple):
    """A registered component a spec uses: its registry kind and its full spec."""

    kind: str
    spec: str


def no_parts(arg: str) -> tuple[Part, ...]:
    """For families that use no other registered component."""
    return ()


def no_paid_model(arg: str) -> str | None:
    """For families that run locally: nothing is billed per token."""
    return None


@dataclass(frozen=True)
class CostLine:
    """One paid part of a run: which registered component, for what, tokens and price
    (what an entry's `cost` returns, one per paid part; costs.py adds the run's answers)."""

    part: Part
    """The paid component: Part("embedder", "openai/...") or Part("generator", "openai:...")."""
    model: str
    what: str
    """What the tokens buy: "12 tables + 30 queries", "12 table summaries", "30 queries"."""
    tokens_in: int
    tokens_out: int
    """Reply tokens (assumed lengths); 0 for embeddings."""
    usd: float | None
    """None when the model has no known price (a local or unknown model)."""
    exact: bool
    """False when the input tokens are a tiktoken-free estimate."""

    def describe(self) -> str:
        """One line: model, tokens, what for, price, and what is not paid twice."""
        if self.part.kind == "embedder":
            tokens = f"{self.tokens_in:,} tokens to embed {self.what}"
            free = "embeddings already in Chroma are free"
        else:
            tokens = (f"{self.tokens_in:,} prompt + {self.tokens_out:,} reply tokens "
                      f"for {self.what}")
            free = "cached replies are free"
        price = "no known price" if self.usd is None else f"about ${self.usd:,.4f}"
        return f"{self.model}: {tokens} ({price}; {free})"


CostEstimator = Callable[[Dataset, Sequence[Part], TableView, list[str], str], list[CostLine]]
"""cost(dataset, parts, view, queries, arg): one CostLine per paid part of a spec of the
family (parts: the entry's parts(arg); queries: the run's query texts; arg: the spec's
argument), as target_core/pricing.py counts and prices them."""


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One family of a registry."""

    name: str
    description: str
    """One line, shown by the CLI's listing commands."""
    build: Callable[[str, Settings], T]
    """build(argument after the separator, or "" when none, settings); configuration
    errors (e.g. no API key) raise here, before any work."""
    examples: tuple[str, ...]
    """Full specs of this family: offered in the UI, suggested on a typo, and each one
    built by the contract test of the registry's kind."""
    parts: Callable[[str], tuple[Part, ...]] = no_parts
    """parts(argument): the registered components a spec of this family uses, with
    defaults filled in ("hybrid" -> (Part("embedder", "minilm"),))."""
    paid_model: Callable[[str], str | None] = no_paid_model
    """paid_model(argument): the model an API bills per token for this spec (priced in
    costs.py when known), or None when it runs locally."""
    cost: CostEstimator | None = None
    """How a spec of this family uses its paid parts (CostEstimator): the line items of
    its bill before a run (costs.estimate_run_cost). None: the family is free, it uses
    no paid part (tests/test_registry.py checks that of every example)."""
    embeds_view: bool = False
    """Each table's view text, whole, is embedded by the spec's embedder part (dense,
    hybrid's dense side): so that embedder's input window decides what of a table it
    read (analysis/dense_window.py). Not so for summaries, rows or hypothetical tables."""
    lexical_view_text: bool = False
    """Each table's view text, whole, is indexed lexically, with no vectors of its own
    (bm25, tfidf): a dense run of the same view embedded exactly these texts, so the
    embedding map may borrow its vectors (analysis/embedding_map.py)."""
    scores_rows: bool = False
    """A table is scored by its best row, and the run keeps which row matched (rows:
    the Query page shows the matched rows, read_models/matched_rows.py)."""
    self_contained: bool = False
    """Building a spec of this family needs nothing from outside this package: no API
    key, server, model file named by the spec or user code (the spec's parts must be
    self-contained too). A launcher may then skip building it before queueing a job: it
    cannot fail for want of its environment (engine/workers.py, launch_run)."""
    version: str = ""
    """Set (or bumped) when this family's results change for the same spec, e.g. a new
    default; part of a run's key, so a run made by the old code is never reused or
    resumed as one of the new. Empty: keys are as they always were."""


class Registry(Generic[T]):
    """Entries of one kind by name, in registration order; a name is registered once."""

    def __init__(self, kind: str, entries: Iterable[Entry[T]] = (), *,
                 separator: str = ":") -> None:
        self.kind = kind
        """Singular noun used in messages: "retriever", "generator", "embedder"."""
        self.separator = separator
        self._entries: dict[str, Entry[T]] = {}
        for entry in entries:
            self.register(entry)

    def register(self, entry: Entry[T]) -> Entry[T]:
        """Add `entry`; a name already registered raises DuplicateNameError."""
        if entry.name in self._entries:
            raise DuplicateNameError(self.kind, entry.name)
        self._entries[entry.name] = entry
        return entry

    def unregister(self, name: str) -> Entry[T]:
        """Remove and return the entry called `name` (a test's throwaway family); an
        unknown name raises UnknownNameError."""
        entry = self.get(name)
        del self._entries[name]
        return entry

    def get(self, name: str) -> Entry[T]:
        """The entry called `name`; an unknown name raises UnknownNameError, which
        suggests the closest registered name."""
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._entries) from None

    def parse(self, spec: str) -> tuple[Entry[T], str]:
        """The entry `spec` names and its argument. An unknown family raises
        UnknownNameError naming the whole spec and suggesting the closest example."""
        parsed = parse_spec(spec, self.separator)
        entry = self._entries.get(parsed.name)
        if entry is None:
            raise UnknownNameError(self.kind, spec.strip(), self.examples())
        return entry, parsed.arg

    def build(self, spec: str, settings: Settings) -> T:
        """A fresh component for `spec`."""
        entry, arg = self.parse(spec)
        return entry.build(arg, settings)

    def parts(self, spec: str) -> tuple[Part, ...]:
        """The registered components `spec` uses (see Entry.parts)."""
        entry, arg = self.parse(spec)
        return entry.parts(arg)

    def paid_model(self, spec: str) -> str | None:
        """The model billed per token for `spec` itself (not its parts), or None."""
        entry, arg = self.parse(spec)
        return entry.paid_model(arg)

    def version(self, spec: str) -> str:
        """The version of the family `spec` names (see Entry.version); "" for an
        unknown family (building it reports that)."""
        entry = self._entries.get(parse_spec(spec, self.separator).name)
        return entry.version if entry is not None else ""

    def names(self) -> list[str]:
        return list(self._entries)

    def examples(self) -> tuple[str, ...]:
        """Every entry's example specs, in registration order."""
        return tuple(spec for entry in self._entries.values() for spec in entry.examples)

    def __iter__(self) -> Iterator[Entry[T]]:
        """The entries in registration order (the CLI lists them)."""
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"


# --- py: a user's own class -------------------------------------------------------------
#
# `py:MODULE:CLASS[:NAME=VALUE,...]`: loading the class (file or module, constructor
# arguments, code fingerprint) is target_core/pyclass.py; its family name and error are here.

PLUGIN = "py"
"""The family name of a user's own class, in every registry that accepts one."""


class PluginError(ConfigError):
    """A py: spec whose file, module or class cannot be loaded, or a class that fits no
    accepted shape, or one that broke its contract while running."""


@dataclass(frozen=True)
class CheckReport:
    """What checking a class against its kind's contract found (check_retriever,
    check_generator): `problems` break runs, `warnings` make results doubtful, `notes`
    say what the engine will do with it."""

    subject: str
    """The spec or class checked, and the shape it was taken for."""
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        verdict = "OK" if self.ok else f"{len(self.problems)} problem(s)"
        lines = [f"{self.subject}: {verdict}"]
        for title, items in (("problem", self.problems), ("warning", self.warnings),
                             ("note", self.notes)):
            lines += [f"  {title}: {item}" for item in items]
        return "\n".join(lines)

    def raise_for_problems(self) -> CheckReport:
        """PluginError carrying the whole report when there is a problem, else self."""
        if self.problems:
            raise PluginError(str(self))
        return self
