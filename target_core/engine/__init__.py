"""The engine: runs (retrieval, then generation), the run store, exports and imports."""
