"""TARGET Explorer: `streamlit run app.py`. Navigation and the shared sidebar."""

from __future__ import annotations

import streamlit as st

from pages._ui import jobs, preload

st.set_page_config(page_title="TARGET Explorer", page_icon=":material/target:", layout="wide",
                   initial_sidebar_state=360)  # pixels: run labels need the room

# url_path must equal the file's stem: see pages/_ui/shell.py, frame(). The exception is
# Home: Streamlit serves the default page at / only (its url_path is reserved but does
# not resolve), so "home" belongs to a hidden page that sends /home to /.
PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="index",
            default=True),
    st.Page("pages/overview.py", title="Overview", icon=":material/leaderboard:",
            url_path="overview"),
    st.Page("pages/datasets.py", title="Datasets", icon=":material/dataset:",
            url_path="datasets"),
    st.Page("pages/run.py", title="Run", icon=":material/play_arrow:", url_path="run"),
    st.Page("pages/query.py", title="Query", icon=":material/manage_search:",
            url_path="query"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:",
            url_path="compare"),
    st.Page("pages/matrix.py", title="All runs", icon=":material/grid_on:", url_path="matrix"),
    st.Page("pages/ablations.py", title="Ablations", icon=":material/tune:",
            url_path="ablations"),
    st.Page("pages/failures.py", title="Failures", icon=":material/report:",
            url_path="failures"),
    st.Page("pages/benchmark_builder.py", title="Benchmark builder",
            icon=":material/construction:", url_path="benchmark_builder"),
]


def _home() -> None:
    st.switch_page(PAGES[0])


navigation = st.navigation([*PAGES, st.Page(_home, title="Home", url_path="home",
                                            visibility="hidden")])
st.sidebar.markdown("### :material/target: TARGET Explorer")
st.sidebar.caption("Find out why table retrieval fails.")
jobs.sidebar()  # before the page: a page may st.stop()
navigation.run()
preload.preload()  # after the page's elements; not reached when a page stops
