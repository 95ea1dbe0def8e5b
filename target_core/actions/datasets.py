"""Adding and removing datasets (datasets/add.py): a folder on this server or an
uploaded archive, validated and registered; an added dataset forgotten."""

from __future__ import annotations

from target_core.datasets.add import Upload, add_dataset, remove_dataset

__all__ = ["Upload", "add_dataset", "remove_dataset"]
