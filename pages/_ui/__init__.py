"""The Streamlit shell around the pages, one module per job:

- text: plain(), dataset and model text made inert for Markdown
- resources: settings, the run store, cached dataset loads, summaries and estimates
- url: every read and write of the URL's query parameters
- widgets: the sidebar pickers, the table-view picker, grid heights
- shell: frame(), the first call of every page
- answer: the Query page's generated-answer section

Only Streamlit glue lives here; every computation is a target_core call. Pages import
the modules they use (`from pages._ui import resources, url, widgets`).
"""
