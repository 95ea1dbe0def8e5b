"""figures.warm, which the launcher runs in its background warm-up: after it, plotly has
its validators loaded, and the Overview's figures of several runs load none of their
own (in a fresh process: plotly keeps its validators per process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import pandas as pd
from plotly.validator_cache import ValidatorCache
from target_core.figures.recall import recall_at_k_curves
from target_core.figures.slices import slice_bars
from target_core.figures.warm import warm

assert ValidatorCache._json_cache is None, "validators loaded before warm()"
warm()
assert ValidatorCache._json_cache is not None
before = set(ValidatorCache._cache)
curves = pd.DataFrame({"label": ["bm25"] * 3 + ["tfidf"] * 3, "k": [1, 2, 3] * 2,
                       "recall": [0.2, 0.4, 0.5, 0.1, 0.3, 0.6]})
recall_at_k_curves(curves).to_dict()
slices = pd.DataFrame({"run": ["bm25", "tfidf"], "name": ["R@10", "R@10"],
                       "slice": ["easy", "hard"], "value": [0.5, 0.25]})
slice_bars(slices, "difficulty").to_dict()
print(sorted(map(str, set(ValidatorCache._cache) - before)))
"""


def test_after_warm_the_overview_figures_load_no_validator() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
