"""Datasets and batching, as `torch.utils.data`: `Dataset`, `TensorDataset`, `Subset`, `random_split`,
`DataLoader` and its `default_collate`.

    train, val = random_split(TensorDataset(X, Y), [0.9, 0.1], generator=mg.Generator().manual_seed(42))
    for xb, yb in DataLoader(train, batch_size=32, shuffle=True):
        ...

Loading happens in the calling process, one batch at a time: `num_workers` and `pin_memory` are accepted
and change nothing (the batches are the same as PyTorch's workers would give). Shuffling draws from
`generator` (a `mg.Generator`), or from the global stream of `mg.manual_seed`: reproducible within minigrad,
not the order PyTorch would draw for the same seed.
Read next: ../../minigpt/data.py (the batches minigpt draws for itself).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from minigrad import random
from minigrad.compat.samplers import BatchSampler, RandomSampler, SequentialSampler
from minigrad.functional import stack
from minigrad.random import Generator
from minigrad.tensor import Tensor


class Dataset:
    """A map-style dataset: subclasses define `__getitem__(index)` (one sample) and `__len__`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Sample i is (tensors[0][i], tensors[1][i], ...): e.g. inputs and targets of the same length."""

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors or any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Generator | None = None) -> list[Subset]:
    """Split `dataset` into non-overlapping random subsets of the given lengths, or fractions summing to 1 (then
    each gets floor(n * fraction) and the rest go one by one to the first subsets, as PyTorch does)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        sizes = [math.floor(n * fraction) for fraction in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = random.rng_for(generator).permutation(n).tolist()
    return [Subset(dataset, order[end - size:end]) for end, size in zip(itertools.accumulate(lengths), lengths)]


def default_collate(batch: Sequence[Any]) -> Any:
    """Samples into one batch, as PyTorch's default: tensors and arrays are stacked on a new first dim;
    Python floats become a float64 tensor, ints int64, bools bool; strings stay a list; dicts are collated
    key by key, and tuples and lists position by position (a tuple of batches comes back as a list)."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if isinstance(first, (np.ndarray, np.generic)):
        return stack([Tensor(np.asarray(sample), dtype=np.asarray(sample).dtype) for sample in batch])
    if isinstance(first, bool):
        return Tensor(np.array(batch, dtype=np.bool_))
    if isinstance(first, int):
        return Tensor(np.array(batch, dtype=np.int64))
    if isinstance(first, float):
        return Tensor(np.array(batch, dtype=np.float64), dtype=np.float64)
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple keeps its type
        return type(first)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(first, Sequence):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(samples)) for samples in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(first).__name__}")


# PyTorch's options about worker processes and memory: accepted, and without effect on the batches.
_IGNORED_OPTIONS = {"multiprocessing_context", "prefetch_factor", "persistent_workers", "pin_memory_device",
                    "in_order"}


class DataLoader:
    """Batches of a dataset: `DataLoader(dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
    drop_last=False, generator=None, collate_fn=default_collate)`. Each pass (`for batch in loader`) is one epoch;
    with `shuffle` every epoch draws a new order (a RandomSampler); a `sampler` chooses the indices instead
    (samplers.py). `len(loader)` is the number of batches."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = False,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable | None = None,
                 generator: Generator | None = None, **kwargs: Any) -> None:
        unknown = set(kwargs) - _IGNORED_OPTIONS
        if unknown:
            raise TypeError(f"DataLoader got unexpected keyword argument(s): {', '.join(sorted(unknown))}")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, bool(shuffle), drop_last
        self.num_workers, self.pin_memory, self.generator = num_workers, pin_memory, generator
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        if worker_init_fn is not None:  # called once per worker; the one "worker" here is this process
            worker_init_fn(0)
        if batch_sampler is not None:
            self.batch_size, self.batch_sampler = None, batch_sampler
        else:
            self.sampler = sampler if sampler is not None else RandomSampler(dataset, generator=generator) \
                if shuffle else SequentialSampler(dataset)
            self.batch_sampler = None if batch_size is None else BatchSampler(self.sampler, batch_size, drop_last)

    def __iter__(self) -> Iterator[Any]:
        if self.batch_sampler is None:  # no batching: one sample at a time, as PyTorch
            yield from (self.dataset[i] for i in self.sampler)
            return
        for indices in self.batch_sampler:  # drawn lazily: a sampler may be (nearly) endless
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        return len(self.sampler if self.batch_sampler is None else self.batch_sampler)

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "random_split"]
