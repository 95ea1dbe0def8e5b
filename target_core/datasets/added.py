"""The workspace's list of added datasets: `<workspace>/datasets.json`.

`datasets add` and the Datasets page write it; every process that resolves a dataset
name (the app, the CLI, a job's worker) reads it afresh, so a dataset added in one is
known to all of them at once, with no restart. One entry per name:

    {"version": 1, "datasets": {"NAME": {"kind": "folder"|"spider"|...,
                                         "location": "/abs/path", "how": "path"|"archive",
                                         "added": "2025-01-01T12:00:00Z"}}}

A folder added by path stays where it is (removing it only forgets it); an archive is
unpacked under `<workspace>/uploaded/NAME/`, which removing deletes. Writes are atomic
(a reader sees the old list or the new one) and serialised by a lock file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from target_core.errors import ConfigError

REGISTRY_FILE = "datasets.json"
UPLOAD_DIR = "uploaded"
"""Where archives are unpacked, one folder per added name (not scanned on its own)."""
_VERSION = 1


@dataclass(frozen=True)
class AddedDataset:
    """One added dataset: how it was added ("path": a folder left in place; "archive":
    unpacked into the workspace) and where it is."""

    name: str
    kind: str
    location: str
    how: str
    added: str

    def record(self) -> dict[str, str]:
        data = asdict(self)
        del data["name"]
        return data


def registry_path(workspace: Path) -> Path:
    return Path(workspace) / REGISTRY_FILE


def upload_dir(workspace: Path) -> Path:
    return Path(workspace) / UPLOAD_DIR


def read_added(workspace: Path) -> dict[str, AddedDataset]:
    """The added datasets by name ({} when none was ever added); a damaged file is a
    ConfigError naming it, not an empty list that would hide the datasets."""
    path = registry_path(workspace)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
        entries = data["datasets"]
        return {name: AddedDataset(name=name, kind=str(e["kind"]), location=str(e["location"]),
                                   how=str(e["how"]), added=str(e.get("added", "")))
                for name, e in entries.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ConfigError(f"{path} is damaged (expected {{\"datasets\": {{NAME: {{kind, "
                          f"location, how}}}}}}); fix or delete it") from None


@contextlib.contextmanager
def editing(workspace: Path) -> Iterator[dict[str, AddedDataset]]:
    """The added datasets, to change in place; written back atomically on exit, with
    other writers (another process adding a dataset) held off meanwhile."""
    path = registry_path(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            entries = read_added(workspace)
            yield entries
            data = {"version": _VERSION,
                    "datasets": {n: e.record() for n, e in sorted(entries.items())}}
            partial = path.with_suffix(f".{os.getpid()}.partial")
            partial.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                               encoding="utf-8")
            partial.replace(path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
