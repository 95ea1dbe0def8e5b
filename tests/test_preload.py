"""pages/_ui/preload.py: the warm-up draws every kind of element whose code the pinned
Streamlit loads on first use and the pages draw (tests/test_browser.py checks in
chromium that no page then waits for code)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import streamlit as st

from pages._ui import preload

ROOT = Path(__file__).resolve().parent.parent
# The Streamlit commands whose element code the pinned frontend loads on first use, with
# the file it loads (static/js/<name>.<hash>.js; checked against the installed one).
LAZY = {"area_chart": "ArrowVegaLiteChart", "altair_chart": "ArrowVegaLiteChart",
        "audio": "Audio", "audio_input": "AudioInput", "balloons": "Balloons",
        "bar_chart": "ArrowVegaLiteChart", "button": "Button", "camera_input": "CameraInput",
        "chat_input": "ChatInput", "checkbox": "Checkbox", "code": "StreamlitSyntaxHighlighter",
        "color_picker": "ColorPicker", "data_editor": "DataFrame", "dataframe": "DataFrame",
        "date_input": "DateInput", "download_button": "DownloadButton",
        "feedback": "Feedback", "file_uploader": "FileUploader",
        "form_submit_button": "Button", "graphviz_chart": "GraphVizChart", "html": "Html",
        "image": "ImageList", "json": "Json", "line_chart": "ArrowVegaLiteChart",
        "link_button": "LinkButton", "metric": "Metric", "multiselect": "Multiselect",
        "number_input": "NumberInput", "page_link": "PageLink", "pills": "ButtonGroup",
        "plotly_chart": "PlotlyChart", "progress": "Progress",
        "pydeck_chart": "DeckGlJsonChart", "radio": "Radio", "scatter_chart":
        "ArrowVegaLiteChart", "segmented_control": "ButtonGroup", "select_slider": "Slider",
        "selectbox": "Selectbox", "slider": "Slider", "snow": "Snow", "spinner": "Spinner",
        "table": "Table", "text_area": "TextArea", "text_input": "TextInput",
        "time_input": "TimeInput", "toast": "Toast", "toggle": "Checkbox",
        "vega_lite_chart": "ArrowVegaLiteChart", "video": "Video"}
# Drawn only while work runs (st.spinner): its code cannot come first, nor need it.
NOT_WARMED = {"spinner"}


def _calls(path: Path) -> set[str]:
    """The attribute names called in `path` (st.selectbox, cols[0].metric, ...)."""
    return {node.func.attr for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}


def _page_files() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")),
            *sorted((ROOT / "pages" / "_ui").glob("*.py"))]


def test_the_lazy_commands_are_the_pinned_frontends() -> None:
    """Every file named in LAZY is one the installed Streamlit's frontend imports
    lazily: an upgrade that changes this fails here, not silently."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    index = next(p for p in folder.glob("index.*.js")
                 if "lazy)(()=>" in p.read_text(encoding="utf-8"))
    lazies = set(re.findall(r"lazy\)\(\(\)=>\w+\(\(\)=>import\(`\./(\w+)\.",
                            index.read_text(encoding="utf-8")))
    assert set(LAZY.values()) <= lazies, sorted(set(LAZY.values()) - lazies)


def test_every_lazy_element_the_pages_draw_is_warmed() -> None:
    called = set().union(*map(_calls, _page_files())) & set(LAZY)
    warmed = set(preload.WARMED) | set(preload.SAME_CODE)
    assert called - NOT_WARMED <= warmed, sorted(called - NOT_WARMED - warmed)
    assert all(LAZY[same] == LAZY[kind] for same, kind in preload.SAME_CODE.items())
    assert set(preload.WARMED) <= set(LAZY)


def test_one_of_each_draws_every_warmed_kind() -> None:
    """one_of_each draws each kind in WARMED but the button and the html, which the
    warm-up itself draws (its button, its script)."""
    tree = ast.parse(Path(preload.__file__).read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.FunctionDef)
                and n.name == "one_of_each")
    drawn = {node.func.attr for node in ast.walk(body) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
             and node.func.value.id == "st"}
    assert drawn == set(preload.WARMED) - {"button", "html"}


def test_the_chart_code_is_one_file_of_the_pinned_streamlit() -> None:
    """The warm-up imports plotly's code by its file name (found in the installed
    Streamlit) at once: an upgrade that renames or splits it fails here, not silently
    (the chart in one_of_each would still load it, only later)."""
    chunk = preload.plotly_chunk()
    assert chunk.startswith("PlotlyChart.") and chunk.endswith(".js")
