"""`minigrad.utils.data.sampler`, as `torch.utils.data.sampler`: the samplers (written in
../../compat/samplers.py), at the path some programs import them from."""

from minigrad.compat.samplers import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler"]
