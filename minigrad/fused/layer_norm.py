"""LayerNorm, fused: normalise each row over its last axis, then scale and shift; the backward derived by hand.

The twin (twins.layer_norm) is six primitive ops; this op keeps one normalised array for backward and computes
the row means with BLAS (kernels/blas.py).
Read next: gelu.py.
"""

from __future__ import annotations

import numpy as np

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.kernels import blas
from minigrad.kernels.select import compiled


class LayerNorm(Function):
    """y = xhat * w + b,  xhat = (x - mean) / sqrt(var + eps), over the last axis.

    gxhat = gy * w;  gx = (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) / sqrt(var + eps);
    gw = sum(gy * xhat), gb = sum(gy) over every axis but the last.
    float16 input is normalised in float32, as PyTorch does: its variance easily overflows float16's 65504
    (a spread of 256 is enough), and 1 / sqrt(inf) would silently turn the whole row into zeros.
    With the compiled kernels (kernels/select.py) both directions run as two passes per row instead
    (kernels/numba_layernorm.py), saving the same xhat and rstd.
    """

    eps: float

    def forward(self, x, weight=None, bias=None):
        xp = get_array_module(x)
        self.dtype = x.dtype
        fast = compiled("layernorm", x, weight, bias) if x.size else None  # kernels/numba_layernorm.py, or None
        if fast:
            self.weight, self.has_bias = weight, bias is not None
            y, self.xhat, self.rstd = fast.layer_norm_forward(x, weight, bias, self.eps)
            return y
        x, weight, bias = (None if a is None else a.astype(np.float32) if a.dtype == np.float16 else a
                           for a in (x, weight, bias))
        xhat = x - blas.row_mean(x)  # centred here, normalised in place below
        self.rstd = 1 / xp.sqrt(blas.row_mean(xhat * xhat) + self.eps)
        xhat *= self.rstd
        self.xhat, self.weight, self.has_bias = xhat, weight, bias is not None
        y = xhat * weight if weight is not None else xhat.copy()  # a copy: xhat is saved for backward
        if bias is not None:
            y += bias
        return y.astype(self.dtype, copy=False)

    def backward(self, gy):
        fast = compiled("layernorm", gy, self.xhat, self.weight) if gy.size else None
        if fast:
            gx, gw, gb = fast.layer_norm_backward(gy, self.xhat, self.rstd, self.weight, self.has_bias)
            return tuple(g for g in (gx, gw, gb) if g is not None)
        xhat, width = self.xhat, self.xhat.shape[-1]
        gy = gy.astype(xhat.dtype, copy=False)  # float16: the gradients are computed in float32 too
        grads = []
        if self.weight is not None:
            grads.append(blas.column_sum((gy * xhat).reshape(-1, width)))
        if self.has_bias:
            grads.append(blas.column_sum(gy.reshape(-1, width)))
        gxhat = gy if self.weight is None else gy * self.weight
        # gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)), built in one new array:
        gx = xhat * blas.row_mean(gxhat * xhat)
        gx += blas.row_mean(gxhat)
        get_array_module(gy).subtract(gxhat, gx, out=gx)
        gx *= self.rstd
        return tuple(g.astype(self.dtype, copy=False) for g in (gx, *grads))

    def composed(self, x, weight=None, bias=None):
        """The same function from primitive ops, whose graph gives double backward (higher_order.py)."""
        from minigrad.fused import twins  # (it imports the ops)

        inputs = (t if t is None or t.dtype != np.float16 else t.float() for t in (x, weight, bias))
        return twins.layer_norm(*inputs, eps=self.eps).to(self.dtype)
