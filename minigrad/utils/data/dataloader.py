"""`minigrad.utils.data.dataloader`, as `torch.utils.data.dataloader`: `DataLoader` and its `default_collate`
(written in ../../compat/data.py), at the path some programs import them from."""

from minigrad.compat.data import DataLoader, Dataset, default_collate

__all__ = ["DataLoader", "Dataset", "default_collate"]
