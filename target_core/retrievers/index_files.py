"""A lexical index kept on disk (workspace/cache/lexical/), memory-mapped when loaded, so
a restart or a second run over the same texts does not build it again.

One folder per index, named by a digest of what decides its content (the kind, the
corpus key and the texts' fingerprint, the parameters, the tokenizer's version): numpy
arrays (`NAME.npy`), the vocabulary in row order (`terms.txt`, one term a line: tokens
never hold a newline) and `meta.json`, which lists every array's shape and dtype. A
folder is written under a temporary name and renamed into place when complete, so a
reader never sees half an index; one that does not load whole and as listed (truncated,
edited, another format) is removed and the index is built again, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

FORMAT = 1
"""Bump when the files' layout changes: older folders are then rebuilt."""
TERMS_FILE = "terms.txt"
META_FILE = "meta.json"


def index_folder(cache_dir: Path, kind: str, key: Mapping[str, Any]) -> Path:
    """Where the index of `kind` identified by `key` (JSON-able values) lives."""
    digest = hashlib.sha256(json.dumps({"kind": kind, "format": FORMAT} | dict(key),
                                       sort_keys=True).encode()).hexdigest()[:32]
    return Path(cache_dir) / f"{kind}-{digest}"


def save_index(folder: Path, arrays: Mapping[str, np.ndarray], terms: Sequence[str],
               meta: Mapping[str, Any]) -> bool:
    """Write the index atomically; False (logged) when it could not be written or another
    process wrote it first. The cache is an optimisation: failing to write is not an
    error."""
    folder = Path(folder)
    temporary = folder.parent / f".{folder.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    try:
        temporary.mkdir(parents=True)
        for name, array in arrays.items():
            np.save(temporary / f"{name}.npy", np.ascontiguousarray(array),
                    allow_pickle=False)
        (temporary / TERMS_FILE).write_text("\n".join(terms), encoding="utf-8")
        listed = {name: [list(a.shape), a.dtype.str] for name, a in arrays.items()}
        (temporary / META_FILE).write_text(json.dumps(
            dict(meta) | {"format": FORMAT, "n_terms": len(terms), "arrays": listed}))
        os.rename(temporary, folder)
        return True
    except OSError as exc:  # e.g. a full disk, or the folder exists: someone was faster
        logger.info("lexical index not saved to %s: %s", folder, exc)
        shutil.rmtree(temporary, ignore_errors=True)
        return False


def load_index(folder: Path, expected: Mapping[str, Any]
               ) -> tuple[dict[str, np.ndarray], list[str], dict[str, Any]] | None:
    """The arrays (memory-mapped, read-only), the terms and the meta of the index in
    `folder`, or None when there is none; an index that does not match `expected` (meta
    values) or does not load as its meta lists is removed (logged) and None returned."""
    folder = Path(folder)
    if not (folder / META_FILE).is_file():
        return None
    try:
        meta = json.loads((folder / META_FILE).read_text())
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, expected {FORMAT}")
        for name, value in expected.items():
            if meta.get(name) != value:
                raise ValueError(f"{name} is {meta.get(name)!r}, expected {value!r}")
        arrays = {}
        for name, (shape, dtype) in meta["arrays"].items():
            path = folder / f"{name}.npy"
            array = (np.load(path, mmap_mode="r", allow_pickle=False) if int(np.prod(shape))
                     else np.load(path, allow_pickle=False))  # no mmap of zero bytes
            if list(array.shape) != shape or array.dtype.str != dtype:
                raise ValueError(f"{name}.npy is {array.dtype.str}{list(array.shape)}, "
                                 f"expected {dtype}{shape}")
            arrays[name] = np.asarray(array)  # a plain view: no memmap subclass per slice
        text = (folder / TERMS_FILE).read_text(encoding="utf-8")
        terms = text.split("\n") if text else []
        if len(terms) != meta["n_terms"]:
            raise ValueError(f"{len(terms)} terms, expected {meta['n_terms']}")
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        logger.warning("lexical index %s is unreadable (%s): building it again", folder, exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return arrays, terms, meta
