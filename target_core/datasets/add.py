"""Add a dataset to the workspace, or remove one: what `datasets add|remove` and the
Datasets page call.

A folder (folder format or Spider layout) is registered where it is. An archive (a path
on this machine, or an upload) is unpacked safely into `<workspace>/uploaded/NAME/`
(datasets/unpack.py). Either way the dataset is loaded, so validated with the loaders'
file/line/field errors, BEFORE it is registered: a dataset that does not load is never
listed, and nothing of it stays in the workspace. The name is `--name`, else the
`name` in its dataset.json, else its folder's (or the archive's) name.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from target_core.config import Settings
from target_core.datasets.added import AddedDataset, editing, now, read_added, upload_dir
from target_core.datasets.registry import (
    DatasetEntry,
    DatasetInfo,
    dataset_info,
    discover,
    load_entry,
    resolve,
)
from target_core.datasets.unpack import archive_stem, copy_limited, is_archive, unpack
from target_core.errors import ConfigError, DatasetError, UnknownNameError

log = logging.getLogger(__name__)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")
_NOT_A_DATASET = ("holds no dataset: expected corpus.jsonl or documents.jsonl (folder "
                  "format) or tables.json with dev.json (Spider layout), at the archive's "
                  "root or in its one top folder")


@dataclass(frozen=True)
class Upload:
    """An uploaded archive: its file name (for messages and the default name) and bytes."""

    filename: str
    stream: IO[bytes]


def check_dataset_name(name: object, what: str = "dataset") -> str:
    """`name` when it is a valid dataset name, which is safe as a file name; ConfigError
    naming it (as a `what` name) otherwise. The one rule: a benchmark draft, exported as
    a dataset, is named by it too (benchgen/draft.py)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"{what} name {name!r}: use letters, digits, '_', '-' or '.', "
                          "starting with a letter or digit (at most 80 characters)")
    return name


def _check_free(name: str, settings: Settings) -> None:
    known = discover(settings).get(name)
    if known is not None:
        raise ConfigError(f"dataset name '{name}' is taken by {known.location} "
                          f"({known.source or known.kind}); pick another with --name")


def _max_bytes(settings: Settings) -> int:
    return settings.upload_max_mb * 1_000_000


def _register(entry: DatasetEntry, how: str, settings: Settings) -> None:
    with editing(settings.workspace) as entries:
        if entry.name in entries:  # another process added it meanwhile
            raise ConfigError(f"dataset name '{entry.name}' is taken by "
                              f"{entries[entry.name].location}; pick another with --name")
        entries[entry.name] = AddedDataset(entry.name, entry.kind, entry.location, how, now())


def add_dataset(source: str | Path | Upload, settings: Settings, *,
                name: str | None = None) -> DatasetInfo:
    """Validate and register a dataset folder, an archive on this machine or an
    uploaded archive; its counts. Raises DatasetError (naming the file, line and field,
    or the archive member) or ConfigError (a name taken or malformed)."""
    if name is not None:
        check_dataset_name(name)
    if isinstance(source, Upload):
        return _add_upload(source, settings, name)
    path = Path(source).expanduser()
    if not path.exists():
        raise DatasetError("no such folder or file", path=path)
    if path.is_file():
        if not is_archive(path):
            raise DatasetError("not a dataset folder, nor a zip or tar archive", path=path)
        return _add_archive(path, str(path), settings, name, how="archive")
    return _add_folder(path.resolve(), settings, name)


def _add_folder(path: Path, settings: Settings, name: str | None) -> DatasetInfo:
    for entry in discover(settings).values():
        if entry.kind != "hub" and Path(entry.location).resolve() == path:
            raise ConfigError(f"{path} is already dataset '{entry.name}' "
                              f"({entry.source or entry.kind})")
    found = resolve(str(path), settings)  # DatasetError when no loader takes the folder
    final = check_dataset_name(name or found.name)
    _check_free(final, settings)
    entry = DatasetEntry(final, found.kind, str(path), "added")
    dataset = load_entry(entry, settings)
    _register(entry, "path", settings)
    log.info("added dataset %s from %s", final, path)
    return dataset_info(dataset, entry)


def _add_upload(upload: Upload, settings: Settings, name: str | None) -> DatasetInfo:
    folder = upload_dir(settings.workspace)
    folder.mkdir(parents=True, exist_ok=True)
    saved = folder / f".upload-{uuid.uuid4().hex}"
    try:
        copy_limited(upload.stream, saved, _max_bytes(settings), upload.filename)
        if not is_archive(saved):
            raise DatasetError("not a zip or tar archive", path=upload.filename)
        return _add_archive(saved, upload.filename, settings, name, how="upload")
    finally:
        saved.unlink(missing_ok=True)


def _in_archive(exc: DatasetError, root: Path, label: str) -> DatasetError:
    """The loader's error with the file named inside the archive, not in the workspace."""
    if exc.path and Path(exc.path).is_relative_to(root):
        relative = Path(exc.path).relative_to(root).as_posix()
        return DatasetError(exc.reason, path=f"{label}:{relative}", line=exc.line,
                            field=exc.field)
    return exc


def _add_archive(archive: Path, label: str, settings: Settings, name: str | None, *,
                 how: str) -> DatasetInfo:
    folder = upload_dir(settings.workspace)
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=folder, prefix=".unpack-"))
    try:
        unpacked = scratch / "archive"
        try:
            root = unpack(archive, unpacked, _max_bytes(settings))
        except DatasetError as exc:
            raise DatasetError(exc.reason, path=label) from None
        try:
            found = resolve(str(root), settings)
        except DatasetError:
            raise DatasetError(_NOT_A_DATASET, path=label) from None
        default = found.name
        if default == root.name == unpacked.name:  # files at the root, no dataset.json name
            default = archive_stem(Path(label).name)
        final = check_dataset_name(name or default)
        _check_free(final, settings)
        target = folder / final
        if target.exists():
            raise ConfigError(f"{target} exists but is no added dataset; remove it or pick "
                              "another name with --name")
        root.rename(target)
        entry = DatasetEntry(final, found.kind, str(target), "added")
        try:
            dataset = load_entry(entry, settings)
            _register(entry, how, settings)
        except DatasetError as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise _in_archive(exc, target, label) from None
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    log.info("added dataset %s from %s", final, label)
    return dataset_info(dataset, entry)


def remove_dataset(name: str, settings: Settings) -> AddedDataset:
    """Forget an added dataset; an unpacked archive's folder is deleted with it, a folder
    added by path is left as it is. Demo, workspace and TARGET_DATASETS datasets are not
    removable here (ConfigError); an unknown name is an UnknownNameError."""
    workspace = settings.workspace
    with editing(workspace) as entries:
        if name not in entries:
            known = discover(settings).get(name)
            if known is not None:
                raise ConfigError(f"dataset '{name}' is not an added one ({known.source}: "
                                  f"{known.location}); only datasets added with `datasets "
                                  "add` or the Datasets page can be removed")
            raise UnknownNameError("added dataset", name, entries)
        gone = entries.pop(name)
    location = Path(gone.location)
    if gone.how != "path" and location.resolve().is_relative_to(upload_dir(workspace).resolve()):
        shutil.rmtree(location, ignore_errors=True)
    log.info("removed dataset %s (%s)", name, gone.location)
    return gone


def added_names(settings: Settings) -> list[str]:
    """The names `remove_dataset` accepts."""
    return sorted(read_added(settings.workspace))
