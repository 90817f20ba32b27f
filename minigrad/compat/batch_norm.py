"""`nn.BatchNorm1d` and `nn.LazyBatchNorm1d`, as in PyTorch: F.batch_norm (functional_more.py) with its running
statistics kept as buffers under PyTorch's names (`running_mean`, `running_var`, `num_batches_tracked`), so that a
PyTorch state_dict loads. In train() mode each batch is normalised by its own statistics and moves the running
ones; in eval() mode the running ones are used. makemore's lecture keeps the same statistics by hand.

    bn = nn.BatchNorm1d(64)          # input (N, 64) or (N, 64, L)

Read next: lazy.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.compat.functional_more import batch_norm
from minigrad.core import backend
from minigrad.core.autograd import no_grad
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


class BatchNorm1d(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias per channel (dim 1), over the batch (and length).

    `momentum` weighs each batch in the running statistics (None: their plain average over all batches so far);
    `affine=False` drops weight and bias; `track_running_stats=False` normalises by the batch's statistics in
    eval() mode too."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *, bias: bool = True
                 ) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features), dtype=dtype, device=device) if affine else None
        self.bias = Parameter(np.zeros(num_features), dtype=dtype, device=device) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features), dtype=dtype, device=device))
            self.register_buffer("running_var", Tensor(np.ones(num_features), dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", Tensor(0, dtype=np.int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")
        if input.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm1d: the input has {input.shape[1]} channels (dim 1), this layer "
                             f"{self.num_features}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked += 1
            if self.momentum is None:  # the running statistics are the plain average of every batch so far
                momentum = 1.0 / self.num_batches_tracked.item()
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats  # PyTorch updates only tracked statistics
        return batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                          self.weight, self.bias, use_batch, momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class LazyBatchNorm1d(BatchNorm1d):
    """BatchNorm1d whose `num_features` is read from the first input's dim 1; its tensors are filled in then (the
    same objects, so an optimizer made earlier keeps them), and it becomes a BatchNorm1d, as in PyTorch."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *, bias: bool = True
                 ) -> None:
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim >= 2:
            self.num_features = input.shape[1]
            for tensor, fill in ((self.weight, 1), (self.bias, 0), (self.running_mean, 0), (self.running_var, 1)):
                if tensor is not None:
                    tensor.array = backend.get_array_module(tensor.array).full(input.shape[1], fill, tensor.dtype)
            self.__class__ = BatchNorm1d  # PyTorch's lazy modules become their ordinary class once filled in
        return BatchNorm1d.forward(self, input)
