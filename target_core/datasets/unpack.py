"""Unpack a dataset archive (zip, tar, tar.gz/bz2/xz) safely into a new folder.

An archive may come from anyone (the Datasets page takes uploads), so nothing in it
may write outside the folder or make the tool read outside it later:
- the archive is at most `max_bytes` and unpacks to at most UNPACK_FACTOR times that,
  in at most MAX_MEMBERS members (checked on the declared sizes first, then on the
  bytes actually written);
- a member's path is relative and has no `..`: no absolute path, no drive letter;
- members are regular files and folders only: no symbolic or hard links, no devices
  or pipes.
Each refusal is a DatasetError naming the archive and the member. Files are written by
streaming each member's bytes to a path built here, never by the archive modules'
extract functions. macOS's `__MACOSX/` and `.DS_Store` entries are skipped.
"""

from __future__ import annotations

import re
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO

from target_core.errors import DatasetError

UNPACK_FACTOR = 10
"""An archive may unpack to at most this many times its size limit (JSONL compresses
about 5 to 10 times)."""
MAX_MEMBERS = 100_000
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz",
                    ".txz")
_JUNK = re.compile(r"(^|/)(__MACOSX(/|$)|\.DS_Store$|\._[^/]*$)")
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Member:
    """One archive member as the checks see it, with a way to read its bytes."""

    name: str
    size: int
    kind: str  # "file" | "dir" | what it is when refused ("symbolic link", ...)
    reader: Callable[[], IO[bytes] | None]


def is_archive(path: Path) -> bool:
    """Whether `path` is a file this module unpacks (by its content, not its name)."""
    return path.is_file() and (zipfile.is_zipfile(path) or tarfile.is_tarfile(path))


def archive_stem(name: str) -> str:
    """The archive's file name without its archive suffix (`my-data.tar.gz` -> `my-data`)."""
    lowered = name.lower()
    for suffix in sorted(ARCHIVE_SUFFIXES, key=len, reverse=True):
        if lowered.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def _mb(n: int) -> str:
    return f"{n / 1_000_000:g} MB"


def _relative_parts(archive: Path, name: str) -> tuple[str, ...]:
    text = name.replace("\\", "/")
    if text.startswith("/") or _DRIVE.match(text):
        raise DatasetError(f"member '{name}' has an absolute path; refused", path=archive)
    parts = tuple(p for p in text.split("/") if p not in ("", "."))
    if ".." in parts:
        raise DatasetError(f"member '{name}' has '..' in its path (it would land outside "
                           "the folder); refused", path=archive)
    return parts


def _zip_members(handle: zipfile.ZipFile) -> Iterator[Member]:
    for info in handle.infolist():
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            kind = "symbolic link"
        elif info.is_dir():
            kind = "dir"
        elif stat.S_IFMT(mode) in (0, stat.S_IFREG):
            kind = "file"
        else:
            kind = "device or special file"
        yield Member(info.filename, info.file_size, kind,
                     partial(handle.open, info))


def _tar_members(handle: tarfile.TarFile) -> Iterator[Member]:
    for info in handle:
        kind = ("file" if info.isfile() else "dir" if info.isdir()
                else "symbolic link" if info.issym() else "hard link" if info.islnk()
                else "device or special file")
        yield Member(info.name, info.size if info.isfile() else 0, kind,
                     partial(handle.extractfile, info))


@contextmanager
def _members(archive: Path) -> Iterator[list[Member]]:
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zipped:
                yield list(_zip_members(zipped))
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive, "r:*") as tarred:
                yield list(_tar_members(tarred))
        else:
            raise DatasetError("not a zip or tar archive", path=archive)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        raise DatasetError(f"damaged archive: {exc}", path=archive) from None


def _check(archive: Path, members: list[Member], max_bytes: int
           ) -> list[tuple[tuple[str, ...], Member]]:
    """The members to write with their relative paths; raises on the first refusal."""
    if len(members) > MAX_MEMBERS:
        raise DatasetError(f"has {len(members):,} members, more than {MAX_MEMBERS:,}; "
                           "refused", path=archive)
    limit, total, kept = UNPACK_FACTOR * max_bytes, 0, []
    for member in members:
        parts = _relative_parts(archive, member.name)
        if _JUNK.search("/".join(parts)) or not parts:
            continue
        if member.kind not in ("file", "dir"):
            raise DatasetError(f"member '{member.name}' is a {member.kind}; only files and "
                               "folders are unpacked", path=archive)
        total += member.size
        if total > limit:
            raise DatasetError(f"unpacks to more than {_mb(limit)} (at member "
                               f"'{member.name}'); the limit is {UNPACK_FACTOR} times "
                               "TARGET_UPLOAD_MAX_MB", path=archive)
        kept.append((parts, member))
    if not any(m.kind == "file" for _, m in kept):
        raise DatasetError("the archive holds no files", path=archive)
    return kept


def _write(archive: Path, member: Member, target: Path, budget: int) -> int:
    """Stream one file's bytes to `target`; the bytes written (declared sizes may lie)."""
    written = 0
    try:
        source = member.reader()
        if source is None:
            raise OSError("no data")
        with source, open(target, "xb") as out:
            while chunk := source.read(1 << 20):
                written += len(chunk)
                if written > budget:
                    raise DatasetError(f"member '{member.name}' unpacks to more than it "
                                       "declares or than the limit allows; refused",
                                       path=archive)
                out.write(chunk)
    except FileExistsError:
        raise DatasetError(f"member '{member.name}' appears twice", path=archive) from None
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, RuntimeError, OSError) as exc:
        raise DatasetError(f"member '{member.name}' cannot be unpacked: {exc}",
                           path=archive) from None
    return written


def unpack(archive: Path, dest: Path, max_bytes: int) -> Path:
    """Unpack `archive` into the new folder `dest` and return the dataset's folder: the
    archive's one top folder, or `dest` when the files sit at the archive's root.
    On any refusal `dest` is removed and a DatasetError names the member."""
    archive = Path(archive)
    size = archive.stat().st_size
    if size > max_bytes:
        raise DatasetError(f"is {_mb(size)}, over the {_mb(max_bytes)} limit "
                           "(TARGET_UPLOAD_MAX_MB)", path=archive)
    dest.mkdir(parents=True)
    try:
        with _members(archive) as members:
            budget = UNPACK_FACTOR * max_bytes
            for parts, member in _check(archive, members, max_bytes):
                target = dest.joinpath(*parts)
                try:
                    (target if member.kind == "dir" else target.parent).mkdir(
                        parents=True, exist_ok=True)
                except OSError as exc:
                    raise DatasetError(f"member '{member.name}' cannot be unpacked: "
                                       f"{exc.strerror}", path=archive) from None
                if member.kind == "dir":
                    continue
                budget -= _write(archive, member, target, budget)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    top = list(dest.iterdir())
    return top[0] if len(top) == 1 and top[0].is_dir() else dest


def copy_limited(source: IO[bytes], target: Path, max_bytes: int, label: str) -> None:
    """Save an uploaded stream to `target`, refusing it past `max_bytes`."""
    written = 0
    with open(target, "xb") as out:
        while chunk := source.read(1 << 20):
            written += len(chunk)
            if written > max_bytes:
                out.close()
                target.unlink(missing_ok=True)
                raise DatasetError(f"is over the {_mb(max_bytes)} limit "
                                   "(TARGET_UPLOAD_MAX_MB)", path=label)
            out.write(chunk)
