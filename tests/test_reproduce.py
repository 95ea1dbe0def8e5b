"""TARGET's Table 2 reproduced: the paper's figures as typed in equal the seed's table,
the baselines run in the paper's settings, and each of our figures stands beside the
paper's with the difference (CLI and the Overview's reproduction mode)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from target_core.analysis.paper import PAPER_DATASETS, PAPER_METHODS, PAPER_TABLE2
from target_core.cli import main
from target_core.config import load_settings
from target_core.errors import UnknownNameError
from target_core.experiments.reproduce import OTTQA_VIEW, baselines, reproduce, reproduction_configs
from target_core.read_models.reproduce import paper_dataset, reproduction_frame

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_70fa2b7d70bff6b1.txt"


def _seed_rows() -> dict[str, list[str]]:
    """Table 2's rows as printed in seed 000, tab-separated, "w/o table title" and
    "header only" rows named after the method above them."""
    lines = SEED.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Method\t"))
    rows, last = {}, ""
    for line in lines[start + 3:]:  # two header lines below `Method`
        if not line.strip():
            break
        cells = line.split("\t")
        name = re.sub(r"</?i>", "", cells[0]).strip()
        if name in ("w/o table title", "header only"):
            name = f"{last} {name}"
        else:
            last = name
        rows[name] = [re.sub(r"</?u>|\*", "", c).strip() for c in cells[1:]]
    return rows


@pytest.mark.skipif(not SEED.exists(), reason="the seed papers are not beside the repo")
def test_typed_in_figures_equal_the_seed_table() -> None:
    rows = _seed_rows()
    assert list(rows) == list(PAPER_METHODS)
    for method, cells in rows.items():
        for i, dataset in enumerate(("OTTQA", "FeTaQA", "TabFact", "Spider", "BIRD")):
            recall, seconds, answers = cells[3 * i:3 * i + 3]
            cell = PAPER_TABLE2[method][dataset]
            assert cell.recall == (None if recall == "-" else float(recall)), (method, dataset)
            assert cell.seconds == (None if seconds == "-" else float(seconds))
            assert cell.downstream == tuple(float(v) for v in answers.split("/"))


def test_paper_datasets_and_unknown_names() -> None:
    assert set(PAPER_DATASETS) == {"OTTQA", "FeTaQA", "TabFact", "Spider", "BIRD"}
    with pytest.raises(UnknownNameError, match="did you mean 'Spider'"):
        paper_dataset("spider")


def test_configs_follow_the_papers_settings() -> None:
    configs = dict((b.method, c) for b, c in reproduction_configs("demo-qa"))
    assert "No context" not in configs  # measures a generator alone
    assert all(c.top_k == 10 for c in configs.values())
    # TARGET's code: DrQA's retriever over `table id | section title | header`, and
    # w/o table title only the id goes (TARGET's withtitle=False keeps the section)
    assert configs["OTT-QA BM25"].retriever == "ottqa:bm25"
    assert configs["OTT-QA BM25"].view == OTTQA_VIEW
    assert configs["OTT-QA TF-IDF w/o table title"].retriever == "ottqa:tfidf"
    no_title = configs["OTT-QA BM25 w/o table title"].view
    assert (no_title.table_id, no_title.section_title, no_title.format) == \
        (False, True, "ottqa")
    # TARGET's embedding text is its markdown table with no title at all
    for method, rows in (("OpenAI embedding", 100), ("OpenAI embedding header only", 0)):
        view = configs[method].view
        assert (view.rows, view.format, view.title, view.section_title) == \
            (rows, "target-markdown", False, False)
    follows = {b.method: b for b in baselines()}
    assert "OTTQARetriever(encoding='bm25', withtitle=False)" in \
        follows["OTT-QA BM25 w/o table title"].follows
    # our stronger settings are rows of their own, beside no figure of the paper
    assert all(b.paper_row for b in baselines())  # ours only when asked
    ours = [b for b in baselines(ours=True) if b.paper_row is None]
    assert [b.method for b in ours] == [
        "ours: bm25 over cells", "ours: tfidf over cells", "ours: embedding with titles",
        "ours: embedding header only with titles"]
    with_ours = dict((b.method, c) for b, c in reproduction_configs("demo-qa", ours=True))
    assert with_ours["ours: bm25 over cells"].retriever == "bm25"
    with_generator = dict((b.method, c) for b, c in reproduction_configs("demo-qa",
                                                                         generator="heuristic"))
    assert with_generator["No context"].retriever == "no-context"


def test_frame_sets_ours_beside_the_papers(tmp_path: Path) -> None:
    done = reproduce(load_settings(tmp_path), "demo-sql", generator="heuristic", limit=30,
                     ours=True)
    frame = reproduction_frame(done, "Spider").set_index("method")
    runs = {b.method: r for b, r in done}
    bm25 = runs["OTT-QA BM25"]
    assert frame.loc["OTT-QA BM25", "ours R"] == bm25.metrics["db_hit@1"]  # database level
    assert frame.loc["OTT-QA BM25", "paper R"] == 0.635
    assert frame.loc["OTT-QA BM25", "Δ R"] == pytest.approx(bm25.metrics["db_hit@1"] - 0.635)
    assert frame.loc["OTT-QA BM25", "paper ms"] == pytest.approx(1.0)
    assert frame.loc["OTT-QA BM25", "Δ answers"] == pytest.approx(
        bm25.metrics["execution_accuracy"] - 0.385)
    assert "minilm" in frame.loc["OpenAI embedding", "note"]
    assert frame.loc["No context", "paper answers"] == "0"
    assert frame["ours R"].isna()["No context"]
    assert "OTTQARetriever(encoding='bm25', withtitle=True)" in \
        frame.loc["OTT-QA BM25", "follows"]
    # our own settings: a figure of ours, none of the paper's
    ours = frame.loc["ours: bm25 over cells"]
    assert ours["ours R"] == runs["ours: bm25 over cells"].metrics["db_hit@1"]
    assert ours[["paper R", "Δ R", "paper ms"]].isna().all() and ours["paper answers"] == ""


def test_cli_reproduce_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On demo-sql: its 43 tables embed in seconds (demo-qa's 440 took half a minute)."""
    assert main(["reproduce", "--dataset", "demo-sql", "--paper", "Spider", "--limit", "20",
                 "--workspace", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["paper"] == "Spider" and "40 databases (1K tables)" in data["note"]
    assert [r["method"] for r in data["rows"]] == list(PAPER_METHODS[1:])
    assert all(r["paper R"] == PAPER_TABLE2[r["method"]]["Spider"].recall
               for r in data["rows"])
    assert main(["reproduce", "--dataset", "demo-sql", "--paper", "WikiSQL",
                 "--workspace", str(tmp_path)]) != 0
    assert "unknown paper dataset 'WikiSQL'" in capsys.readouterr().err


def test_overview_reproduction_mode(app, tmp_path: Path) -> None:
    at = app("pages/overview.py", mode="reproduce")
    assert at.radio(key="overview-mode").value == "reproduce"
    at.selectbox(key="repro-dataset").set_value("demo-fact").run()
    at.number_input(key="repro-limit").set_value(20).run()
    assert at.selectbox(key="repro-paper-demo-fact").value == "TabFact"
    at.button(key="repro-run").click().run()
    assert not at.exception and not at.error
    # each baseline is a job in a worker process; the page shows them all once they end
    from jobs_support import wait_for_jobs

    jobs = wait_for_jobs(tmp_path / "ws")
    assert len(jobs) == len(PAPER_METHODS) - 1 and {j.status for j in jobs} == {"done"}
    at.run()
    table = at.dataframe[0].value
    assert len(table) == len(PAPER_METHODS) - 1 and "paper R" in table.columns
    assert any("1.7K tables" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 1  # Figure 2 on our data
