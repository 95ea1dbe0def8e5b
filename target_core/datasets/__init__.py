"""Datasets: loaders for the folder format, Spider's layout and TARGET's hub datasets."""

from target_core.datasets.registry import (
    DatasetEntry,
    DatasetInfo,
    discover,
    list_datasets,
    load_dataset,
    open_lookup,
    registered_name,
    resolve,
)

__all__ = ["DatasetEntry", "DatasetInfo", "discover", "list_datasets", "load_dataset",
           "open_lookup", "registered_name", "resolve"]
