"""`minigrad.utils.data`, as `torch.utils.data`: the datasets and the DataLoader live in ../compat/data.py."""

from minigrad.compat.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "random_split"]
