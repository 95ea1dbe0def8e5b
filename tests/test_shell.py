"""pages/_ui/shell.py, frame(): the workaround for Streamlit's legacy `pages/` directory
mode rests on a private class attribute, PagesManager.uses_pages_directory. These tests
pin what that attribute means in the installed Streamlit, show that the legacy fallback
still happens without frame() (the day it stops, the workaround can go), and check that
a deep link into a freshly started server runs through app.py's navigation.

A failure here after a Streamlit upgrade means the workaround needs a second look: read
the module docstring of pages/_ui/shell.py before changing anything else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import require_chromium, screenshots
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
MARKER = "FRAME-MARKER"  # what the entrypoint of the small app writes to its sidebar


@pytest.fixture(autouse=True)
def _keep_the_flag() -> Iterator[None]:
    """The flag is process-wide: put back whatever the other tests left in it."""
    saved = PagesManager.uses_pages_directory
    yield
    PagesManager.uses_pages_directory = saved


@pytest.fixture
def small_app(tmp_path: Path) -> Path:
    """An st.navigation app with its page files in `pages/`, and no frame() in them."""
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text(
        "import streamlit as st\n"
        "page = st.navigation([st.Page('pages/home.py', default=True),\n"
        "                      st.Page('pages/other.py')])\n"
        f"st.sidebar.markdown('{MARKER}')\n"
        "page.run()\n", encoding="utf-8")
    for name in ("home", "other"):
        (tmp_path / "pages" / f"{name}.py").write_text(
            f"import streamlit as st\nst.title('{name} page')\n", encoding="utf-8")
    return tmp_path


def test_the_flag_is_decided_by_a_pages_folder_beside_the_main_script(tmp_path: Path) -> None:
    assert "uses_pages_directory" in vars(PagesManager), \
        "PagesManager.uses_pages_directory is gone: see pages/_ui/shell.py"
    PagesManager.uses_pages_directory = None
    PagesManager(str(ROOT / "app.py"))
    assert PagesManager.uses_pages_directory is True  # the first session of a process
    PagesManager.uses_pages_directory = None
    (tmp_path / "app.py").write_text("", encoding="utf-8")
    PagesManager(str(tmp_path / "app.py"))
    assert PagesManager.uses_pages_directory is False
    PagesManager(str(ROOT / "app.py"))
    assert PagesManager.uses_pages_directory is False  # decided once, then left alone


def test_a_page_alone_runs_without_the_entrypoint_while_the_flag_is_set(
        small_app: Path) -> None:
    """The fallback that frame() undoes: AppTest, like a fresh server, starts with the
    flag unset, so a session opened on a page runs that page file without app.py."""
    at = AppTest.from_file(str(small_app / "app.py"))
    at.switch_page("pages/other.py")
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["other page"]
    assert MARKER not in [m.value for m in at.sidebar.markdown], \
        "Streamlit ran app.py for a page in pages/: the fallback may be gone upstream"
    assert PagesManager.uses_pages_directory is True


def test_st_navigation_turns_the_flag_off(small_app: Path) -> None:
    at = AppTest.from_file(str(small_app / "app.py"))
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["home page"]
    assert MARKER in [m.value for m in at.sidebar.markdown]
    assert PagesManager.uses_pages_directory is False


def test_frame_routes_a_page_through_app_py(app) -> None:
    """The dashboard's pages call frame() first: opened alone, they end up in app.py's
    navigation (the `app` fixture opens one page in a fresh AppTest)."""
    at = app("pages/home.py")
    assert "TARGET Explorer" in "".join(m.value for m in at.sidebar.markdown)
    assert PagesManager.uses_pages_directory is False


# Every link text the sidebar's navigation ever shows, recorded in the page from its
# first paint (a MutationObserver), so a navigation drawn for a moment is caught too.
_RECORD_NAV = r"""
window.__navTexts = new Set();
new MutationObserver(() => {
  for (const a of document.querySelectorAll("[data-testid='stSidebarNav'] a"))
    window.__navTexts.add(a.innerText.trim().split("\n").pop());  // icon name first
}).observe(document, {subtree: true, childList: true, characterData: true});
"""
PAGE_FILES = {path.stem for path in (ROOT / "pages").glob("*.py")} | {"app"}
"""The names Streamlit's legacy mode gives its navigation: the pages folder's file stems
(these are not titles of app.py's pages, which are words like "All runs")."""


def _cold_deep_link(page, base: str, target: str) -> tuple[str, str, set[str]]:
    """Open `target` as the first request to a fresh server; its heading, its sidebar,
    and every navigation link text drawn on the way."""
    screenshots.visit(page, f"{base}/{target}")
    assert page.locator("[data-testid='stException']").count() == 0, target
    assert "Page not found" not in page.locator("body").inner_text(), target
    sidebar = page.locator("[data-testid='stSidebar']")
    return (page.locator("h1").first.inner_text().strip(),
            sidebar.inner_text() if sidebar.count() else "",
            set(page.evaluate("() => [...window.__navTexts]")))


def test_deep_link_into_a_fresh_server(tmp_path: Path) -> None:
    """The real thing, in chromium, on the dashboard: under plain `streamlit run`, a deep
    link as a fresh server's first request draws the legacy navigation (file names) until
    frame() reroutes through app.py (the day it does not, the workaround can go); started
    as `make run` starts it (pages/_ui/launch.py), no file name is ever drawn."""
    require_chromium()
    env = {"TARGET_WORKSPACE": str(tmp_path / "ws")}
    with screenshots.browser_page(height=900) as page:
        page.add_init_script(_RECORD_NAV)
        with screenshots.serve_app(env, plain=True) as base:
            heading, sidebar, drawn = _cold_deep_link(page, base, "query")
            assert heading == "Query"
            assert "TARGET Explorer" in sidebar, "frame() did not reroute /query via app.py"
            assert drawn & PAGE_FILES, \
                f"no legacy navigation drawn ({drawn}): the fallback may be gone upstream"
        with screenshots.serve_app(env) as base:
            heading, sidebar, drawn = _cold_deep_link(page, base, "query?run=nope")
            assert heading == "Query"
            assert "TARGET Explorer" in sidebar, "app.py did not run for /query"
            assert page.url.split("?")[0].endswith("/query")
            assert not drawn & PAGE_FILES, f"legacy navigation drawn: {drawn & PAGE_FILES}"
            assert "Overview" in drawn


def test_the_launcher_warms_every_library_module_the_pages_import() -> None:
    """launch.py imports, while the server starts, what the pages import of target_core
    (found by reading app.py and pages/); each is a real module, and one that cannot be
    imported is left for its page to report."""
    import importlib.util

    from pages._ui import launch

    names = launch.page_imports()
    assert {"target_core.read_models.compare", "target_core.read_models.overview",
            "target_core.actions.runs"} <= set(names)
    assert all(importlib.util.find_spec(name) for name in names)
    home = launch.page_imports(files=launch.HOME_FILES)  # warmed first
    assert "target_core.read_models.home" in home and set(home) < set(names)
    overview = launch.page_imports(files=launch.NEXT_FILES)  # then the Overview's
    assert "target_core.read_models.overview" in overview and set(overview) < set(names)
    assert all(importlib.util.find_spec(name) for name in launch.NEXT_LIBRARIES)
    from target_core.datasets import registry

    registry._cache.clear()
    registry._lookups.clear()
    launch.warm(["target_core.no_such_module"])  # no exception
    assert "demo-qa" in {d.name for d in registry._cache.values()}  # Home's list opened


def test_the_launcher_warms_the_science_target_core_imports_lazily() -> None:
    """scipy.stats, imported inside analysis/attribution.py, took 1.5 s of the Failures
    page's first visit: the launcher finds such imports by reading target_core."""
    from pages._ui import launch

    names = launch.lazy_imports()
    assert {"scipy.stats", "sklearn.decomposition"} <= set(names)
    assert all(name.split(".")[0] in launch.LAZY_PACKAGES for name in names)
    assert "chromadb" not in {name.split(".")[0] for name in names}


def test_the_launchers_second_private_flag_skips_streamlits_repl_check(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """pages/_ui/launch.py sets delta_generator._use_warning_has_been_displayed: with it
    set, Streamlit's first element of the process no longer calls env_util.is_repl
    (inspect.stack() of the script thread, 0.3-0.7 s of the first page after a start).
    A failure after an upgrade: the flag went or means something else; drop it there."""
    from streamlit import delta_generator, env_util

    def no_stack_walk() -> bool:
        raise AssertionError("is_repl was called")

    monkeypatch.setattr(env_util, "is_repl", no_stack_walk)
    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)
    with pytest.raises(AssertionError, match="is_repl was called"):
        delta_generator._maybe_print_use_warning()  # the check the flag skips
    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", True)
    delta_generator._maybe_print_use_warning()


def test_the_launcher_finds_imports_without_ast_as_ast_finds_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up thread reads imports with a pattern: CPython 3.11's ast.parse beside a
    first page's (Streamlit parses page scripts) raised "AST constructor recursion depth
    mismatch" on a fresh server's first deep link. The pattern finds what ast finds."""
    import ast

    from pages._ui import launch

    def by_ast(paths: list[Path], inside_functions: bool) -> set[str]:
        found: set[str] = set()
        for path in paths:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            scopes = ([n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
                      if inside_functions else [tree])
            for scope in scopes:
                for node in ast.walk(scope):
                    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                        found.add(node.module)
                    elif isinstance(node, ast.Import):
                        found.update(alias.name for alias in node.names)
        return found

    pages = [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py"))]
    assert set(launch.page_imports()) == {
        n for n in by_ast(pages, False) if n.startswith("target_core")}
    library = sorted((ROOT / "target_core").rglob("*.py"))
    assert set(launch.lazy_imports()) == {
        n for n in by_ast(library, True) if n.split(".")[0] in launch.LAZY_PACKAGES}

    def no_ast(*args: object, **kwargs: object) -> None:
        raise AssertionError("ast.parse in the warm-up")

    monkeypatch.setattr(ast, "parse", no_ast)
    launch.warm()  # reads every import line, imports, opens the datasets: no ast.parse


def test_the_warm_up_waits_while_a_page_runs() -> None:
    """The warm-up yields to a page's script (a thread named as the pinned Streamlit
    names it), and never waits past its limit."""
    import inspect
    import threading
    import time

    from streamlit.runtime.scriptrunner import script_runner

    from pages._ui import launch

    assert f'name="{launch.SCRIPT_THREAD}"' in inspect.getsource(script_runner)

    done = threading.Event()
    page = threading.Thread(target=done.wait, name=launch.SCRIPT_THREAD)
    page.start()
    threading.Timer(0.3, done.set).start()
    started = time.monotonic()
    launch._after_pages()
    assert not page.is_alive() and time.monotonic() - started >= 0.25
    stuck = threading.Event()
    other = threading.Thread(target=stuck.wait, name=launch.SCRIPT_THREAD)
    other.start()
    started = time.monotonic()
    launch._after_pages(limit_s=0.2)
    assert time.monotonic() - started < 1.0 and other.is_alive()
    stuck.set()
    other.join()
