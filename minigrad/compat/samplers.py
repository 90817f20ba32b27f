"""The samplers of `torch.utils.data`: which dataset indices a DataLoader visits, and in what order.

    sampler = RandomSampler(dataset, replacement=True, num_samples=10**10)   # makemore's endless stream
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)

`SequentialSampler` (0, 1, 2, ...), `RandomSampler` (a permutation each pass, or with replacement a stream of
draws, made lazily so that ten billion of them cost nothing up front) and `BatchSampler` (the indices in lists of
`batch_size`). Draws come from `generator` (a `mg.Generator`) or the global stream of `mg.manual_seed`: repeatable
within minigrad, not the order PyTorch draws for the same seed.
Read next: data.py (the DataLoader that takes them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized

from minigrad import random
from minigrad.random import Generator

CHUNK = 4096  # draws made at a time by a sampler with replacement


class Sampler:
    """Base class: subclasses define `__iter__` (the indices) and, when they know it, `__len__`."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices each pass; with `replacement`, `num_samples` independent draws."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        rng, n, left = random.rng_for(self.generator), len(self.data_source), self.num_samples
        while left > 0:
            draws = rng.integers(0, n, min(CHUNK, left)) if self.replacement else rng.permutation(n)[:left]
            yield from draws.tolist()
            left -= len(draws)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """The indices of `sampler` in lists of `batch_size` (the last one shorter unless `drop_last`)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler"]
