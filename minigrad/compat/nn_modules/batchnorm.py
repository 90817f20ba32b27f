"""`torch.nn.modules.batchnorm`'s path: `BatchNorm1d`, `LazyBatchNorm1d` (../../compat/batch_norm.py)."""

from minigrad.compat.batch_norm import BatchNorm1d, LazyBatchNorm1d

__all__ = ["BatchNorm1d", "LazyBatchNorm1d"]
