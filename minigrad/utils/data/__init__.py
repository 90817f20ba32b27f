"""`minigrad.utils.data`, as `torch.utils.data`: the datasets and the DataLoader live in ../../compat/data.py; the
samplers in ../../compat/samplers.py; the submodules dataloader.py, dataset.py and sampler.py give them PyTorch's
longer paths too."""

from minigrad.compat.data import DataLoader, Dataset, Subset, TensorDataset, default_collate, random_split
from minigrad.compat.samplers import BatchSampler, RandomSampler, Sampler, SequentialSampler
from minigrad.utils.data import dataloader, dataset, sampler

__all__ = ["BatchSampler", "DataLoader", "Dataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset",
           "TensorDataset", "dataloader", "dataset", "default_collate", "random_split", "sampler"]


def __getattr__(name: str) -> object:
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
