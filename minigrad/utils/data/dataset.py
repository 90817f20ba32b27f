"""`minigrad.utils.data.dataset`, as `torch.utils.data.dataset`: `Dataset`, `TensorDataset`, `Subset` and
`random_split` (written in ../../compat/data.py), at the path some programs import them from."""

from minigrad.compat.data import Dataset, Subset, TensorDataset, random_split

__all__ = ["Dataset", "Subset", "TensorDataset", "random_split"]
