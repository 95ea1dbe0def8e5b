"""Settings: the only module that reads environment variables.

Settings are data (name, environment variable, default, help), in the manner of
datasette's SETTINGS, so the CLI, the sidebar and docs/settings.md can all list them and a
test can check that each one is documented.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from target_core.errors import ConfigError
from target_core.tasks import all_tasks

PROJECT_ROOT = Path(__file__).resolve().parent.parent
"""The directory holding target_core: the repository, or site-packages once installed."""
_BUNDLED = Path(__file__).resolve().parent / "_app"
INSTALLED = (_BUNDLED / "app.py").is_file()
"""True in an installed wheel: setup.py copies app.py, pages/ and data/{demo,benchgen}
into target_core/_app/ when it builds one; a checkout (or an editable install) has none."""
APP_DIR = _BUNDLED if INSTALLED else PROJECT_ROOT
"""Where app.py and pages/ are (what `target-explorer serve` runs)."""
DATA_DIR = APP_DIR / "data"
DEMO_DIR = DATA_DIR / "demo"
DEFAULT_WORKSPACE = (Path.home() / ".local" / "share" / "target-explorer" if INSTALLED
                     else PROJECT_ROOT / "data" / "workspace")
"""A checkout keeps its runs in data/workspace; an installed package in the user's data
folder, so every directory it is run from sees the same runs."""


MAX_TOKENS = {**{t.task: t.max_tokens for t in all_tasks() if t.answers},
              "summary": 256, "writer": 768, "judge": 256, "hyse": 512}
"""Default reply tokens per task (its entry's max_tokens) and per other model call (the
TARGET_MAX_TOKENS_<TASK> settings)."""
_TASK_REPLIES = {**{t.task: t.reply_note for t in all_tasks() if t.answers},
                 "summary": "a table's name and summary",
                 "writer": "the benchmark writer's questions",
                 "judge": "the benchmark judge's verdict",
                 "hyse": "HySE's hypothetical tables for a query"}


SAMPLING_RANGES = {"temperature": (0.0, 2.0), "frequency_penalty": (-2.0, 2.0),
                   "presence_penalty": (-2.0, 2.0), "repeat_penalty": (0.0, 10.0),
                   "dry_multiplier": (0.0, 10.0)}
"""The sampling settings (named as the servers' APIs name them) and their ranges."""
SAMPLING_DEFAULTS = {"temperature": 0.0, "dry_multiplier": 0.8}


@dataclass(frozen=True)
class Setting:
    name: str
    env: str
    default: str | None
    help: str
    secret: bool = False


SETTINGS: tuple[Setting, ...] = (
    Setting("workspace", "TARGET_WORKSPACE", str(DEFAULT_WORKSPACE),
            "Directory for the run store, the Chroma index and caches."),
    Setting("datasets_path", "TARGET_DATASETS", None,
            "Extra dataset folders, separated by ':' (os.pathsep); each is a folder-format "
            "dataset, a Spider-layout folder, or a directory holding such folders."),
    Setting("upload_max_mb", "TARGET_UPLOAD_MAX_MB", "200",
            "Largest dataset archive (zip or tar) `datasets add` and the Datasets page "
            "take, in MB; it may unpack to at most 10 times that."),
    Setting("chroma_host", "TARGET_CHROMA_HOST", None,
            "Host of a Chroma server (`chroma run`); unset means a persistent client "
            "under the workspace."),
    Setting("chroma_port", "TARGET_CHROMA_PORT", "8000", "Port of the Chroma server."),
    Setting("openai_api_key", "OPENAI_API_KEY", None,
            "Key for OpenAI or an OpenAI-compatible server. Never stored or shown.",
            secret=True),
    Setting("openai_base_url", "OPENAI_BASE_URL", None,
            "Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp)."),
    Setting("openai_timeout", "TARGET_OPENAI_TIMEOUT", "60",
            "Seconds one request to an OpenAI-compatible server (chat or embeddings) may "
            "take; past it the call fails and is not sent again, since the server may "
            "still be computing it."),
    Setting("openai_retries", "TARGET_OPENAI_RETRIES", "2",
            "Times a request is sent again after a transient failure (HTTP 429, 502, 503, "
            "504, or a refused connection), waiting as the server's retry-after says; 0 "
            "never retries. Other errors and timeouts are never retried."),
    Setting("generation_concurrency", "TARGET_GENERATION_CONCURRENCY", None,
            "Chat requests a run keeps in flight at once, capped by the server's slots "
            "when it reports them (llama.cpp's /props); unset: the server's slots, else 1 "
            "for a server on this machine, else 4."),
    Setting("context_window", "TARGET_CONTEXT_WINDOW", "8192",
            "Context window, in tokens, assumed for a chat model whose server does not "
            "report it (llama.cpp's /props and vLLM's models list do; OpenAI's models are "
            "known); prompts are fitted to it minus the reply's max tokens."),
    Setting("embedding_max_tokens", "TARGET_EMBEDDING_MAX_TOKENS", None,
            "Tokens an embedding input is cut to; unset: the server's limit (llama.cpp: "
            "its physical batch, named by the server when it refuses a longer input), "
            "8191 for OpenAI's models, else 512."),
    *(Setting(f"max_tokens_{task}", f"TARGET_MAX_TOKENS_{task.upper()}", str(tokens),
              f"Most tokens a model may write for {_TASK_REPLIES[task]} (sent as "
              "max_tokens; a longer reply is cut by the server and recorded as truncated).")
      for task, tokens in MAX_TOKENS.items()),
    Setting("temperature", "TARGET_TEMPERATURE", "0",
            "Sampling temperature of every chat request (0 to 2; 0, TARGET's, is greedy)."),
    Setting("frequency_penalty", "TARGET_FREQUENCY_PENALTY", None,
            "OpenAI's frequency_penalty (-2 to 2) sent with every chat request; unset: not "
            "sent (the server's default)."),
    Setting("presence_penalty", "TARGET_PRESENCE_PENALTY", None,
            "OpenAI's presence_penalty (-2 to 2) sent with every chat request; unset: not "
            "sent."),
    Setting("repeat_penalty", "TARGET_REPEAT_PENALTY", None,
            "llama.cpp's repeat_penalty (1 is off), sent only to a llama.cpp server that "
            "lists it in /props; unset: not sent."),
    Setting("dry_multiplier", "TARGET_DRY_MULTIPLIER", "0.8",
            "llama.cpp's DRY repetition penalty (0 is off), sent only to a llama.cpp server "
            "(`local:` and external alike) that lists it in /props: it keeps a small model "
            "from repeating a phrase until max_tokens."),
    Setting("hf_endpoint", "HF_ENDPOINT", "https://huggingface.co",
            "Hugging Face hub endpoint used by the TARGET hub loader."),
    Setting("hub_timeout", "TARGET_HUB_TIMEOUT", "10",
            "Seconds the hub loader may spend before it gives up with a clear error."),
    Setting("token_timeout", "TARGET_TOKEN_TIMEOUT", "3",
            "Seconds allowed to load a tiktoken encoding before counts fall back to an "
            "estimate."),
    Setting("sql_timeout", "TARGET_SQL_TIMEOUT", "30",
            "Seconds one SQL query (gold or generated) may run when a run is scored; 30 is "
            "BIRD's evaluation script's limit. A query past it counts as `timeout`."),
    Setting("sql_row_cap", "TARGET_SQL_ROW_CAP", "1000000",
            "Rows a SQL result may hold when a run is scored; results are compared whole, "
            "and a larger one is marked `not_comparable` (never compared by its prefix)."),
    Setting("ves_repeats", "TARGET_VES_REPEATS", "10",
            "Times each execution-correct text-to-SQL prediction and its gold query are "
            "timed for VES (BIRD's script: 100); outliers beyond mean ± 3σ are dropped."),
    Setting("max_jobs", "TARGET_MAX_JOBS", "2",
            "Launched runs (jobs) that work at once; more wait in the queue."),
    Setting("local_context", "TARGET_LOCAL_CONTEXT", "2048",
            "Context window, in tokens, of each slot of a `local:` model's llama.cpp server "
            "(started in this process); a longer prompt is fitted to it."),
    Setting("local_slots", "TARGET_LOCAL_SLOTS", "2",
            "Requests a `local:` model's server works on at once (each slot holds "
            "TARGET_LOCAL_CONTEXT tokens)."),
    Setting("local_threads", "TARGET_LOCAL_THREADS", None,
            "CPU threads of a `local:` model's server; unset: one fewer than the CPUs "
            "(at least 1), so the app and the retriever keep one."),
    Setting("chunk_size", "TARGET_CHUNK_SIZE", "1000",
            "Characters per passage when a dataset's documents.jsonl is cut into chunks "
            "(at word boundaries); part of the dataset's fingerprint, so runs made with "
            "another size are other runs."),
    Setting("chunk_overlap", "TARGET_CHUNK_OVERLAP", "200",
            "Characters each passage repeats from the end of the one before (0 or more, "
            "less than TARGET_CHUNK_SIZE)."),
    Setting("max_failed_generations", "TARGET_MAX_FAILED_GENERATIONS", "0.5",
            "Share of an LLM-backed step's calls that may fail (a run's generations, "
            "HySE's tables, summaries, the benchmark builder's questions and judgements, "
            "a judge's ratings) before the step is marked failed instead of complete; a "
            "step whose every call failed is always failed. 0 fails a step on any error."),
)


@dataclass(frozen=True)
class Settings:
    workspace: Path
    datasets_path: tuple[Path, ...]
    chroma_host: str | None
    chroma_port: int
    openai_api_key: str | None
    openai_base_url: str | None
    openai_timeout: float
    generation_concurrency: int | None
    hf_endpoint: str
    hub_timeout: float
    token_timeout: float
    sql_timeout: float
    sql_row_cap: int
    max_jobs: int = 2
    openai_retries: int = 2
    context_window: int = 8192
    embedding_max_tokens: int | None = None
    max_tokens: Mapping[str, int] = field(default_factory=lambda: dict(MAX_TOKENS))
    """Reply tokens per task: qa, fact, sql, summary, writer, judge, hyse."""
    local_context: int = 2048
    local_slots: int = 2
    local_threads: int | None = None
    max_failed_generations: float = 0.5
    ves_repeats: int = 10
    chunk_size: int = 1000
    chunk_overlap: int = 200
    upload_max_mb: int = 200
    sampling: Mapping[str, float] = field(default_factory=lambda: dict(SAMPLING_DEFAULTS))
    """Sampling settings sent with chat requests, by their API name (those set only)."""

    def __repr__(self) -> str:  # keeps the API key out of logs and tracebacks
        key = "set" if self.openai_api_key else "unset"
        return (f"Settings(workspace={str(self.workspace)!r}, chroma_host={self.chroma_host!r}, "
                f"openai_api_key=<{key}>)")


def _raw(setting: Setting, environ: dict[str, str]) -> str | None:
    value = environ.get(setting.env)
    return value if value not in (None, "") else setting.default


def _required(setting: Setting, environ: dict[str, str]) -> str:
    """The value of a setting that has a default, so is never unset."""
    value = _raw(setting, environ)
    if value is None:
        raise ConfigError(f"{setting.env} is not set and has no default")
    return value


def _number(setting: Setting, environ: dict[str, str], kind: type) -> float | int:
    raw = _raw(setting, environ)
    try:
        value = kind(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{setting.env}={raw!r} is not a valid {kind.__name__}") from None
    if value <= 0:
        raise ConfigError(f"{setting.env}={raw!r} must be positive")
    return value


def _share(setting: Setting, environ: dict[str, str]) -> float:
    raw = _raw(setting, environ)
    try:
        value = float(raw or "")
    except ValueError:
        raise ConfigError(f"{setting.env}={raw!r} is not a number") from None
    if not 0 <= value <= 1:
        raise ConfigError(f"{setting.env}={raw!r} must be a share between 0 and 1")
    return value


def _sampling(by_name: Mapping[str, Setting], environ: dict[str, str]) -> dict[str, float]:
    """The sampling settings that are set, each within its range."""
    chosen = {}
    for name, (low, high) in SAMPLING_RANGES.items():
        setting = by_name[name]
        raw = _raw(setting, environ)
        if raw is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{setting.env}={raw!r} is not a number") from None
        if not low <= value <= high:
            raise ConfigError(f"{setting.env}={raw!r} must be between {low:g} and {high:g}")
        chosen[name] = value
    return chosen


def _optional(setting: Setting, environ: dict[str, str]) -> int | None:
    """A positive integer, or None when unset (the setting has no default)."""
    if _raw(setting, environ) is None:
        return None
    return int(_number(setting, environ, int))


def _count(setting: Setting, environ: dict[str, str]) -> int:
    """A non-negative integer (0 allowed)."""
    raw = _raw(setting, environ)
    try:
        value = int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(f"{setting.env}={raw!r} is not a valid int") from None
    if value < 0:
        raise ConfigError(f"{setting.env}={raw!r} must be 0 or more")
    return value


def load_settings(workspace: str | Path | None = None,
                  environ: dict[str, str] | None = None) -> Settings:
    """Settings from the environment; an explicit `workspace` wins over TARGET_WORKSPACE."""
    env = dict(os.environ if environ is None else environ)
    by_name = {s.name: s for s in SETTINGS}
    paths = _raw(by_name["datasets_path"], env)
    chunk_size = int(_number(by_name["chunk_size"], env, int))
    chunk_overlap = _count(by_name["chunk_overlap"], env)
    if chunk_overlap >= chunk_size:
        raise ConfigError(f"TARGET_CHUNK_OVERLAP={chunk_overlap} must be less than "
                          f"TARGET_CHUNK_SIZE={chunk_size}")
    return Settings(
        workspace=Path(workspace or _required(by_name["workspace"], env)).expanduser(),
        datasets_path=tuple(Path(p).expanduser() for p in (paths or "").split(os.pathsep) if p),
        chroma_host=_raw(by_name["chroma_host"], env),
        chroma_port=int(_number(by_name["chroma_port"], env, int)),
        openai_api_key=_raw(by_name["openai_api_key"], env),
        openai_base_url=_raw(by_name["openai_base_url"], env),
        openai_timeout=float(_number(by_name["openai_timeout"], env, float)),
        generation_concurrency=_optional(by_name["generation_concurrency"], env),
        hf_endpoint=_required(by_name["hf_endpoint"], env),
        hub_timeout=float(_number(by_name["hub_timeout"], env, float)),
        token_timeout=float(_number(by_name["token_timeout"], env, float)),
        sql_timeout=float(_number(by_name["sql_timeout"], env, float)),
        sql_row_cap=int(_number(by_name["sql_row_cap"], env, int)),
        max_jobs=int(_number(by_name["max_jobs"], env, int)),
        openai_retries=_count(by_name["openai_retries"], env),
        context_window=int(_number(by_name["context_window"], env, int)),
        embedding_max_tokens=_optional(by_name["embedding_max_tokens"], env),
        max_tokens={task: int(_number(by_name[f"max_tokens_{task}"], env, int))
                    for task in MAX_TOKENS},
        local_context=int(_number(by_name["local_context"], env, int)),
        local_slots=int(_number(by_name["local_slots"], env, int)),
        local_threads=(int(_number(by_name["local_threads"], env, int))
                       if _raw(by_name["local_threads"], env) is not None else None),
        max_failed_generations=_share(by_name["max_failed_generations"], env),
        ves_repeats=int(_number(by_name["ves_repeats"], env, int)),
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        upload_max_mb=int(_number(by_name["upload_max_mb"], env, int)),
        sampling=_sampling(by_name, env),
    )
