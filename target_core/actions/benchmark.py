"""The benchmark builder's actions (benchgen/): sampling a draft as a job (its templates
kept if uploaded) and exporting a draft's accepted pairs as a dataset. Reviewing pairs
writes through the draft itself (benchgen/draft.py's Draft, read_models/benchmark.py)."""

from __future__ import annotations

from target_core.benchgen.draft_jobs import DraftSpec, keep_upload, launch_draft
from target_core.benchgen.export import export_draft

__all__ = ["DraftSpec", "export_draft", "keep_upload", "launch_draft"]
