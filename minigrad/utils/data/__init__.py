"""`minigrad.utils.data`, as `torch.utils.data`: the datasets and the DataLoader live in ../../compat/data.py; the
submodules dataloader.py and dataset.py give them PyTorch's longer paths too."""

from minigrad.compat.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split
from minigrad.utils.data import dataloader, dataset

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "dataloader", "dataset", "default_collate",
           "random_split"]


def __getattr__(name: str) -> object:
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
