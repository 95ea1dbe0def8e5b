"""One read model per page: what a page shows, as frames and figures (no streamlit here)."""
