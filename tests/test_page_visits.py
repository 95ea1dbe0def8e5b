"""benchmarks/page_visits.py without a browser: its arguments, its timing rule on fake
script-state logs, and its pages-folder flash detector on fake sidebar logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.page_visits import (
    arguments,
    figures,
    finished_at,
    flash_seconds,
    page_specs,
    verdict,
)

RUNNING, IDLE = "running", "notRunning"


def test_arguments() -> None:
    demo = arguments(["--demo"])
    assert demo.demo and demo.scale is None and demo.repeats == 3 and demo.dataset == "demo-qa"
    assert demo.read == 2.0 and arguments(["--demo", "--read", "0"]).read == 0
    scale = arguments(["--scale", "/tmp/s", "--repeats", "5", "--json"])
    assert scale.scale == Path("/tmp/s") and scale.dataset == "synthetic" and scale.json
    assert arguments(["--demo", "--workspace", "/w"]).workspace == Path("/w")


@pytest.mark.parametrize("argv", [[], ["--demo", "--scale", "/s"], ["--scale", "/s",
                                  "--workspace", "/w"], ["--demo", "--repeats", "0"],
                                  ["--demo", "--read", "-1"]])
def test_bad_arguments_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        arguments(argv)


def test_a_click_is_not_over_before_the_script_ran() -> None:
    """Right after a click the previous run's notRunning still shows: not finished."""
    log = [(100.0, "initial"), (200.0, RUNNING), (900.0, IDLE)]
    assert finished_at(log, t0=5000.0, now=7000.0) is None
    log.append((5100.0, RUNNING))
    assert finished_at(log, t0=5000.0, now=7000.0) is None  # still running
    log.append((5600.0, IDLE))
    assert finished_at(log, t0=5000.0, now=6000.0) is None  # not quiet long enough yet
    assert finished_at(log, t0=5000.0, now=6500.0) == 600.0


def test_a_rerun_within_the_quiet_time_counts() -> None:
    """frame()'s reroute: the page runs twice; the visit ends after the second run."""
    log = [(50.0, "initial"), (300.0, RUNNING), (700.0, IDLE), (900.0, RUNNING),
           (1400.0, IDLE)]
    assert finished_at(log[:3], t0=0.0, now=1000.0, quiet_ms=800) is None
    assert finished_at(log, t0=0.0, now=2300.0, quiet_ms=800) == 1400.0


def test_flash_detector() -> None:
    real = ["Home", "Overview", "Query", "Benchmark builder"]
    assert flash_seconds([(0.0, []), (900.0, real)], end=3000.0) is None
    legacy = ["app", "home", "query", "benchmark builder"]
    assert flash_seconds([(0.0, []), (500.0, legacy), (2500.0, real)], end=4000.0) == 2.0
    assert flash_seconds([(0.0, ["benchmark_builder"])], end=1500.0) == 1.5  # never left


def test_deep_links_name_their_subjects() -> None:
    specs = page_specs("demo-qa", ["r1", "r2"], "q7")
    links = {s.title: s.link() for s in specs}
    assert links["Home"] == "/"
    assert links["Query"] == "/query?run=r1&query=q7"
    assert links["Compare"] == "/compare?dataset=demo-qa&runs=r1,r2"
    assert links["Datasets"] == "/datasets?dataset=demo-qa"
    assert len(specs) == 10


def test_the_deep_link_floor_splits_a_visit_at_the_first_run() -> None:
    """benchmarks/deep_link_floor.py: scripts until the last file loaded before the first
    run, then the session until the run starts, the run until it ends, then the drawing."""
    from benchmarks.deep_link_floor import phases

    log = [(10.0, None), (700.0, "notRunning"), (900.0, "running"), (1500.0, "notRunning")]
    split = phases(log, [120.0, 400.0, 1200.0], total=1.5)
    assert split == pytest.approx({"scripts": 0.4, "session": 0.5, "run": 0.6, "draw": 0.0,
                                   "total": 1.5})
    # a chart's code still loading after the run: the rest of the visit is drawing
    split = phases(log, [120.0, 400.0, 1200.0], total=2.7)
    assert split == pytest.approx({"scripts": 0.4, "session": 0.5, "run": 0.6, "draw": 1.2,
                                   "total": 2.7})


def test_a_run_whose_running_state_was_never_drawn_ends_at_its_last_message() -> None:
    """A short run (Home's) can start and end within one render: no `running` is logged
    after the click, but the app's messages arrived; the visit ends at the last one,
    once quiet, and not while messages still come or the state is not notRunning."""
    log = [(100.0, "initial"), (200.0, RUNNING), (900.0, IDLE)]
    assert finished_at(log, t0=5000.0, now=9000.0, heard=[300.0, 950.0]) is None
    heard = [300.0, 950.0, 5040.0, 5120.0]
    assert finished_at(log, t0=5000.0, now=5500.0, heard=heard) is None  # not quiet yet
    assert finished_at(log, t0=5000.0, now=6000.0, heard=heard) == 120.0
    assert finished_at([*log, (5200.0, RUNNING)], t0=5000.0, now=9000.0,
                       heard=heard) is None  # drawn running: the state rule applies


def test_a_page_is_not_drawn_while_a_placeholder_shows() -> None:
    """A chart's or grid's grey placeholder can outlive the script's run (its code still
    loading): the visit ends when the last placeholder went, once quiet."""
    log = [(0.0, "initial"), (300.0, RUNNING), (1000.0, IDLE)]
    waiting = [(400.0, True), (900.0, False), (950.0, True)]
    assert finished_at(log, t0=0.0, now=5000.0, waiting=waiting) is None  # still shows
    waiting.append((2900.0, False))
    assert finished_at(log, t0=0.0, now=3500.0, waiting=waiting) is None  # not quiet yet
    assert finished_at(log, t0=0.0, now=3800.0, waiting=waiting) == 2900.0
    early = [(400.0, True), (700.0, False)]  # gone before the run ended: the run's end
    assert finished_at(log, t0=0.0, now=3800.0, waiting=early) == 1000.0


def test_the_element_code_warm_up_is_not_part_of_the_visit() -> None:
    """Once a page is drawn, the tab's first page runs the hidden element-code warm-up
    (pages/_ui/preload.py): left out of the visit when the page had been drawn a while
    before it started, counted when it started at once (between two of the page's own
    runs, say) or while a placeholder showed."""
    log = [(0.0, "initial"), (300.0, RUNNING), (1000.0, IDLE), (1250.0, RUNNING),
           (1400.0, IDLE)]
    assert finished_at(log, t0=0.0, now=3000.0, warmed_at=1240.0) == 1000.0
    assert finished_at(log, t0=0.0, now=1700.0, warmed_at=1240.0) is None  # not quiet
    assert finished_at(log, t0=0.0, now=3000.0, warmed_at=1050.0) == 1400.0  # too soon
    assert finished_at(log, t0=0.0, now=3000.0) == 1400.0  # no warm-up: the last run
    waiting = [(1100.0, True), (1200.0, False)]
    assert finished_at(log, t0=0.0, now=3000.0, waiting=waiting, warmed_at=1240.0) == 1400.0
    assert finished_at(log, t0=5000.0, now=9000.0, warmed_at=1240.0,
                       heard=[5100.0]) == 100.0  # a warm-up before the click: no matter


def test_the_target_is_for_a_pages_first_visit_in_a_session() -> None:
    """Issue 28's target holds for each page's first visit from Home; a new session's
    load (Home's, a deep link) is set against the bare app's median instead."""
    specs = page_specs("demo-qa", ["r1", "r2"], "q7")[:3]  # Home, Overview, Datasets
    visits = {"sidebar": {"Home": [(1.1, None)], "Overview": [(0.4, None), (0.6, None)],
                          "Datasets": [(1.2, None), (0.5, None)]},
              "link": {"Home": [(1.0, None)], "Overview": [(2.5, None)],
                       "Datasets": [(2.0, "Error: no such dataset")]},
              "link, cached": {s.title: [(0.9, None)] for s in specs}}
    rows = {(r.how, r.page): r for r in figures(specs, visits, [(0.8, None), (0.7, None)], 1.0)}
    assert verdict(rows["sidebar", "Overview"]) == "ok"
    assert verdict(rows["sidebar", "Datasets"]) == "MISSED"  # its first visit took 1.2 s
    assert verdict(rows["sidebar", "Home"]) == "+0.35 s on the bare app"
    assert verdict(rows["link", "Overview"]) == "+1.75 s on the bare app"
    assert rows["link", "Overview"].ok is None and rows["link", "Home"].over_floor == \
        pytest.approx(0.25)
    assert verdict(rows["link", "Datasets"]).startswith("ERROR (1): Error: no such")
    assert rows["link", "Datasets"].ok is False
    assert verdict(rows["link, cached", "Home"]) == "" and rows["link, cached", "Home"].floor \
        is None
    bare = rows["link", "bare Streamlit app"]
    assert bare.median == 0.75 and bare.target is None and verdict(bare) == ""
