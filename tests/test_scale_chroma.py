"""benchmarks/scale_chroma.py at a tiny size, in process: its precomputed embedder must
keep up with the Embedder protocol the dense retriever calls (a missing `load` broke the
1,000,000-vector measurement after the Chroma base was shared)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.scale_chroma import measure


def test_the_embedded_mode_measures_a_small_collection(tmp_path: Path) -> None:
    figures = measure("embedded", 300, 20, 16, keep=tmp_path)
    assert figures["vectors"] == 300 and figures["hit_at_10"] > 0.9
    assert figures["cached"] == 300 and figures["embedded_again"] == 0  # all reused
    assert figures["query_median_ms"] > 0
    assert (tmp_path / "chroma").is_dir()
