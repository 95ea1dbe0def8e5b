"""`python pages/_ui/launch.py [streamlit flags]`: `streamlit run app.py`, in this process,
with Streamlit's legacy `pages/` directory mode switched off before the first session.

Why: see shell.py's docstring. A fresh server decides on its first session whether the
app is a legacy `pages/` app; a deep link as that first session draws the pages folder's
file names as navigation and runs the page file alone until frame() reroutes it through
app.py, a few seconds later (the page's imports come first). Setting the flag here,
before any session exists, means no session ever sees the legacy mode. Plain
`streamlit run app.py` still works: frame() reroutes, with that flash. `make run` and
`python -m target_core serve` start the dashboard through this file; tests/test_shell.py
checks both ways against the pinned Streamlit.

It also imports, in a background thread while the server starts, every library module
the pages import (pandas, plotly and the read models behind them: a second or more on
a cold process), the scientific libraries target_core imports only inside functions
(LAZY_PACKAGES: scipy.stats alone took 1.5 s of the Failures page's first visit), and
loads the token counter and opens the datasets, so no user's first visit to a page
waits for them. Only
target_core modules and those libraries are warmed: the pages' own glue registers
Streamlit caches, which must be made inside the running server.
"""

from __future__ import annotations

import importlib
import logging
import re
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

APP = Path(__file__).resolve().parent.parent.parent / "app.py"
LAZY_PACKAGES = frozenset({"scipy", "sklearn"})
"""Pure computation libraries target_core imports inside functions (to keep the CLI's
start fast): warmed here too. Not the clients of servers or models (chromadb, openai,
xllamacpp), which the pages reach only when asked to."""
logger = logging.getLogger(__name__)


HOME_FILES = ("app.py", "pages/home.py", "pages/_ui/jobs.py", "pages/_ui/resources.py")
"""What the first page of a session after a start runs: warmed first."""
NEXT_FILES = ("pages/overview.py", "pages/_ui/slices.py")
"""The Overview, the sidebar's first link after Home: warmed next, with the pandas
Styler its leaderboard draws with (jinja2) and plotly's validators (figures.warm), before
the rest (scipy, scikit-learn, ...: 2 s), so a click on it soon after a start does not
wait for those."""
NEXT_LIBRARIES = ("pandas.io.formats.style",)


_IMPORT = re.compile(r"^(?P<indent>[ \t]*)(?:from[ \t]+(?P<module>[\w.]+)[ \t]+import\b"
                     r"|import[ \t]+(?P<modules>[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))", re.M)
"""An import statement's first line. Read with a pattern, not `ast`: CPython 3.11's
ast.parse is not safe beside another thread's (it raised "AST constructor recursion depth
mismatch" in a first page's script, which Streamlit parses, while this thread parsed
about 300 files), and it took 0.9 s where the pattern takes a few hundredths."""


def _imports(path: Path, *, indented: bool | None = None) -> set[str]:
    """The absolute module names `path` imports (`indented`: only those inside a block,
    such as a function's; False: only top-level ones; None: all)."""
    found: set[str] = set()
    for match in _IMPORT.finditer(path.read_text(encoding="utf-8")):
        if indented is not None and bool(match["indent"]) != indented:
            continue
        if match["module"]:
            found.add(match["module"])
        else:
            found.update(name.strip() for name in match["modules"].split(","))
    return found


def page_imports(root: Path = APP.parent, files: Sequence[str] | None = None) -> list[str]:
    """The target_core modules imported by `files` (paths under `root`; default: app.py
    and every file under pages/), sorted."""
    paths = ([root / "app.py", *sorted((root / "pages").rglob("*.py"))] if files is None
             else [root / name for name in files])
    found = set().union(*(_imports(path) for path in paths))
    return sorted(name for name in found if name.split(".")[0] == "target_core")


def lazy_imports(root: Path = APP.parent) -> list[str]:
    """The modules of LAZY_PACKAGES that target_core imports inside a block (a
    function's, mostly), sorted."""
    found = set().union(*(_imports(path, indented=True)
                          for path in sorted((root / "target_core").rglob("*.py"))))
    return sorted(name for name in found if name.split(".")[0] in LAZY_PACKAGES)


def warm(names: list[str] | None = None) -> None:
    """What Home needs first: its modules (HOME_FILES' imports) and every local dataset
    opened as its list opens them (at 1,000,000 tables, reading the queries and checking
    their gold in the corpus index: 0.7 s); then the Overview's (NEXT_FILES,
    NEXT_LIBRARIES, plotly's validators); then `names` (default: page_imports() and
    lazy_imports(), found by reading about 300 source files, here and not before the
    server starts) and the token counter (the Datasets and Run pages count tokens; its
    encoding takes a second to load), and measures each large dataset's token sample if
    none is stored. Each step waits while a page's script runs (_after_pages): a page
    then imports what it needs itself, one import of each module, and does not run
    beside the warm-up at half speed (the Overview's first visit after a start, in 8
    alternating starts: median 2.0 s, was 2.6 s; Home's unchanged). Whatever fails is
    left for its page to report."""
    _import(page_imports(files=HOME_FILES))
    try:  # the registry keeps each dataset open for every page
        from target_core.datasets import list_datasets

        list_datasets()
    except Exception as exc:
        logger.debug("datasets not warmed: %s", exc)
    _import([*page_imports(files=NEXT_FILES), *NEXT_LIBRARIES])
    try:  # plotly's validators, loaded on a figure's first use (0.1-0.2 s)
        from target_core.figures.warm import warm as warm_figures

        warm_figures()
    except Exception as exc:
        logger.debug("figures not warmed: %s", exc)
    _import(page_imports() + lazy_imports() if names is None else names)
    _after_pages()
    try:
        from target_core.tokens import get_counter

        get_counter()
    except Exception as exc:
        logger.debug("token counter not warmed: %s", exc)
    _measure_samples()


def _measure_samples() -> None:
    """Each large dataset's token sample for the Datasets page (read_models.dataset_sizes:
    a corpus read through its index), under the page's default view, when none is stored
    yet: measured and stored now (0.8 s at 1,000,000 tables, once per corpus) rather
    than on that page's first visit ever."""
    try:
        from target_core.config import load_settings
        from target_core.datasets import discover, open_lookup
        from target_core.datasets.lookup import DatasetLookup
        from target_core.read_models.dataset_sizes import dataset_summary, sizes_path
        from target_core.table_view import VIEW_PRESETS
        from target_core.tokens import get_counter

        settings, view, counter = load_settings(), VIEW_PRESETS["default"], get_counter()
        for name, entry in discover(settings).items():
            if entry.kind == "hub" or not isinstance(found := open_lookup(name, settings),
                                                     DatasetLookup):
                continue
            if not any(sizes_path(settings.workspace, found, view, counter, sample=sample)
                       .is_file() for sample in (True, False)):
                dataset_summary(found, view, settings.workspace, counter)
    except Exception as exc:
        logger.debug("token samples not measured: %s", exc)


SCRIPT_THREAD = "ScriptRunner.scriptThread"
"""The name Streamlit gives the thread that runs a page (script_runner.py)."""


def _after_pages(limit_s: float = 5.0) -> None:
    """Wait (at most `limit_s`) while a page's script runs: the warm-up shares one
    interpreter with it, and a click soon after a start (the Overview's, right after
    Home) ran beside the warm-up's token counter and imports at half speed."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and any(
            t.name == SCRIPT_THREAD and t.is_alive() for t in threading.enumerate()):
        time.sleep(0.02)


def _import(names: list[str]) -> None:
    """Import `names`, each after any running page's script."""
    for name in names:
        _after_pages()
        try:
            importlib.import_module(name)
        except Exception as exc:  # the page that imports it shows the error
            logger.debug("not warmed: %s (%s)", name, exc)


def main(flags: list[str]) -> None:
    from streamlit import delta_generator
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False  # what app.py's st.navigation would set
    # The process's first element asks once whether Streamlit runs without `streamlit
    # run` (to warn), through inspect.stack() of the script thread: every frame's source
    # file looked up, 0.3-0.7 s of the first page after a start. It does run so here.
    delta_generator._use_warning_has_been_displayed = True
    sys.path.insert(0, str(APP.parent))  # as `streamlit run` puts the app's folder
    threading.Thread(target=warm, name="warm-imports", daemon=True).start()
    sys.argv = ["streamlit", "run", str(APP), *flags]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
