"""Whether a job's worker process is still running, told by its pid and its start time
(a pid the system reused for another process is not the worker): what the job table
(engine/jobs.py) records when a worker starts and checks when it reaps lost jobs."""

from __future__ import annotations

import os
from pathlib import Path


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux /proc), which tells a
    reused pid from the worker; None where /proc is not available."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def pid_alive(pid: int | None, started: str | None) -> bool:
    """The worker `pid` (started at `started`) is still running: not gone, not a zombie,
    not another process that got its pid."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, under another user: surely not our worker unless start matches
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return True  # no /proc: trust the signal check
    if fields[0] in ("Z", "X"):
        return False
    return started is None or fields[19] == started
