"""The TargetError family: every failure a user can cause raises one of these.

Pages catch `TargetError` and show `st.error`; the CLI prints `str(error)` as a
one-line reason on stderr and exits non-zero.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class TargetError(Exception):
    """Base class for errors caused by input, configuration or environment."""


class DatasetError(TargetError):
    """A dataset file is malformed. The message names the file, line and field."""

    def __init__(
        self,
        reason: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.reason = reason
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or "dataset"
        if self.line is not None:
            where += f", line {self.line}"
        if self.field is not None:
            where += f", field '{self.field}'"
        return f"{where}: {self.reason}"


class UnknownNameError(TargetError, KeyError):
    """A name (dataset, retriever, view...) that no registry knows.

    The message lists the known names and suggests the closest one.
    """

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known)
        self.suggestion = closest(name, self.known)
        message = f"unknown {kind} '{name}'"
        if self.suggestion:
            message += f"; did you mean '{self.suggestion}'?"
        message += f" Known: {', '.join(self.known) if self.known else '(none)'}"
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.args[0]


class DatasetUnavailableError(TargetError):
    """A dataset exists in principle but cannot be fetched here (e.g. hub offline)."""


class ConfigError(TargetError):
    """A setting or option has an invalid value."""


class Cancelled(TargetError):
    """Work was cancelled on request (a job's cancel): what finished before is kept."""


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most similar to `name`, or None when nothing is close."""
    lowered = {k.lower(): k for k in known}
    matches = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[matches[0]] if matches else None
