"""The code of every kind of element the pages draw, loaded once per browser tab as soon
as its first page is drawn, so that no page's first visit waits for it.

Why. Streamlit 1.67's frontend loads most elements' code (a selectbox, a metric, the
grid, a plotly chart) the first time a page in the tab draws one, and shows a grey
placeholder meanwhile; React then keeps that placeholder for at least 0.3 s even when
the file comes from the cache (its Suspense throttle). So each page's first visit in a
session was drawn 0.4-0.8 s later than its second (docs/speed.md), and plotly's code
(4.7 MB, a 1.3 s task in chromium here) came on top on the first page with a chart.

How. app.py calls preload() on every run, after the page (so the page's own elements
come first; a page that stops never gets there). Until the session has warmed, it puts
at the end of the page a hidden fragment with a hidden button and a script of ours. Once
the page is drawn (the script state settled and no placeholder in view) and the browser
is idle, the script imports plotly's code (the file Streamlit's charts import), and at
its next check, still drawn, clicks that button. The fragment's own run (the page's
script does not run again) then draws one element of each kind in WARMED, hidden; the
tab has their code from then on, and the next run draws none of this. The script is a
constant with no user or dataset text in it.
"""

from __future__ import annotations

import datetime
import functools
from pathlib import Path
from string import Template

import streamlit as st

from target_core.figures.style import empty

KEY = "element-code-preload"
WARMED_AT = "__elementCodeWarmedAt"  # window's: when the script clicked (performance.now())
_WARMED = "_target_element_code_warmed"

# The Streamlit commands whose element's code the frontend loads on first use, as the
# pages call them (tests/test_preload.py checks that the pages call no other).
WARMED = ("button", "checkbox", "code", "dataframe", "date_input", "download_button",
          "file_uploader", "html", "metric", "multiselect", "number_input", "page_link",
          "plotly_chart", "progress", "radio", "segmented_control", "selectbox", "table",
          "text_area", "text_input")
# Same element as one in WARMED: a toggle is a checkbox, a form's button a button, a
# data editor the grid.
SAME_CODE = {"toggle": "checkbox", "form_submit_button": "button", "data_editor": "dataframe",
             "pills": "segmented_control"}

_SCRIPT = Template("""<script>
(() => {
  if (window.$at) return;
  const drawn = () => {
    const app = document.querySelector("[data-testid='stApp']");
    return app && app.getAttribute("data-test-script-state") === "notRunning" &&
      !Array.from(document.querySelectorAll("[data-testid='stSkeleton']"))
        .some(e => e.checkVisibility());
  };
  const idle = window.requestIdleCallback || (f => setTimeout(f, 50));  // Safari: none
  const main = document.querySelector("script[type=module][src*='/static/js/index.']");
  let checks = 0, tries = 0;  // drawn at two checks in a row: not between two runs
  const warm = () => {
    const go = document.querySelector(".st-key-$key-go button");
    if (window.$at || ++tries > 400) return;  // done, or 40 s gone by
    checks = go && drawn() ? checks + 1 : 0;
    // plotly's code (a 1.3 s task) first: the sooner, the likelier before a click
    if (checks === 1 && main && "$chunk" && !window.__chartCodeImported) {
      window.__chartCodeImported = true;
      import(new URL("./$chunk", main.src).href).catch(() => {});
    }
    if (checks < 2) { setTimeout(() => idle(warm), 100); return; }
    window.$at = performance.now();
    go.click();
  };
  setTimeout(() => idle(warm), 100);
})();
</script>""")


def preload() -> None:
    """The hidden warm-up at the end of the page, until this session has run it."""
    if st.session_state.get(_WARMED):
        return
    script = _SCRIPT.substitute(key=KEY, at=WARMED_AT, chunk=plotly_chunk())
    with st.container(key=KEY):
        st.html(f"<style>.st-key-{KEY} {{display: none}}</style>")
        st.html(script, unsafe_allow_javascript=True)
        _warm_up()


@st.fragment
def _warm_up() -> None:
    if st.button("Load element code", key=f"{KEY}-go"):
        st.session_state[_WARMED] = True
        one_of_each()


@functools.cache
def plotly_chunk() -> str:
    """The file name of the pinned Streamlit's chart code (static/js/PlotlyChart.<hash>.js);
    empty unless there is exactly one."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(folder.glob("PlotlyChart.*.js"))
    return found[0].name if len(found) == 1 else ""


def one_of_each() -> None:
    """One element of every kind in WARMED, empty (their labels are never shown)."""
    k, frame = f"{KEY}-", {"a": [1]}
    st.checkbox("c", key=k + "checkbox")
    st.code("")
    st.dataframe(frame)
    st.date_input("d", value=datetime.date(2026, 1, 1), key=k + "date_input")
    st.download_button("d", data=b"", key=k + "download_button")
    st.file_uploader("f", key=k + "file_uploader")
    st.metric("m", 0)
    st.multiselect("m", ["a"], key=k + "multiselect")
    st.number_input("n", key=k + "number_input")
    st.page_link("pages/home.py", label="Home")
    st.plotly_chart(empty(), key=k + "plotly_chart")
    st.progress(0)
    st.radio("r", ["a"], key=k + "radio")
    st.segmented_control("s", ["a"], key=k + "segmented_control")
    st.selectbox("s", ["a"], key=k + "selectbox")
    st.table(frame)
    st.text_area("t", key=k + "text_area")
    st.text_input("t", key=k + "text_input")
