"""Every plotly figure of the project, and the one HTML report that embeds them: frames,
reports and dataclasses in (what analysis/ computes), `Figure` out; no streamlit here.
Read models hand these figures to the pages, which only call st.plotly_chart. No module
outside this package imports plotly (tests/test_architecture.py)."""
