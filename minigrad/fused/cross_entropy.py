"""Fused loss ops: cross-entropy, negative log-likelihood and binary cross-entropy, with PyTorch's layouts.

Scores come as (N, C), as (C,) for one sample, or as (N, C, d1, d2, ...) with the classes on dim 1 (an
image's pixels, say); targets are then (N,), (), or (N, d1, d2, ...). `class_rows` turns every layout into
(N, C) rows and (N,) targets, and `restore_layout` puts a gradient back. Each row's loss carries a weight
(the class weight of its target, 0 for an ignored row); "mean" divides the sum of the losses by the sum of
those weights, "sum" does not, "none" returns one loss per target. minigrad/functional.py exposes these.
Read next: layer_norm.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.fused.embedding import check_ids
from minigrad.fused.softmax import stable_log_softmax
from minigrad.kernels.select import compiled
from minigrad.tensor import ShapeError, Tensor


def class_rows(op: str, scores: Any, target: Any) -> tuple[Any, Any]:
    """(N, C) scores and (N,) targets from PyTorch's layouts, the classes on dim 1; a mismatch raises."""
    xp = get_array_module(scores)
    if scores.ndim == 0:
        raise ShapeError(f"{op}: input must have a class dimension, got a 0-d tensor")
    expected = () if scores.ndim == 1 else scores.shape[:1] + scores.shape[2:]
    if target.shape != expected:
        hint = ""
        if scores.ndim == 3 and target.shape == scores.shape[:2]:
            hint = ("; the classes are on dim 1, as in PyTorch: for (B, T, C) logits pass logits.reshape(-1, C) "
                    "and targets.reshape(-1), as nanoGPT does")
        raise ShapeError(f"{op}: input {scores.shape} needs target shape {expected}, got {target.shape}{hint}")
    num_classes = scores.shape[0] if scores.ndim == 1 else scores.shape[1]
    rows = scores.reshape(1, -1) if scores.ndim == 1 else xp.moveaxis(scores, 1, -1).reshape(-1, num_classes)
    return rows, target.reshape(-1)


def restore_layout(g: Any, shape: tuple[int, ...]) -> Any:
    """The inverse of class_rows for a gradient (N, C): back to the input's layout `shape`."""
    if len(shape) <= 2:
        return g.reshape(shape)
    xp = get_array_module(g)
    return xp.moveaxis(g.reshape(shape[:1] + shape[2:] + shape[1:2]), -1, 1)


def reduce_losses(losses: Any, total_weight: Any, reduction: str, target_shape: tuple[int, ...]) -> Any:
    """Per-row losses (N,) to the requested reduction. A mean over no counted rows is 0/0 = nan, as in PyTorch."""
    if reduction == "none":
        return losses.reshape(target_shape)
    total = losses.sum()
    return total / total_weight if reduction == "mean" else total


def row_scale(gy: Any, total_weight: Any, reduction: str, counted: Any) -> Any:
    """d(reduced loss) / d(row loss) times the upstream gradient, one value per row, as (N, 1).

    An ignored row (counted 0) gets 0 even when no row counts and the mean's scale is gy / 0, as in PyTorch.
    """
    xp = get_array_module(gy)
    if reduction == "none":
        return gy.reshape(-1, 1)
    return xp.where(counted[:, None] != 0, gy / total_weight if reduction == "mean" else gy, 0)


class CrossEntropy(Function):
    """loss_i = -sum_c q_ic log softmax(z_i)_c, where q_i is row i's target distribution:
    q_ic = w_t (1 - eps) [c = t_i] + w_c eps / C (w the class weights or 1, eps the label smoothing, 0 for
    an ignored row);  gz_i = softmax(z_i) * sum_c q_ic - q_i, times the reduction's scale.
    With the compiled kernels (kernels/select.py) each row is one pass each way (kernels/numba_cross_entropy.py).
    """

    targets: Any
    weight: Any  # (C,) class weights, or None
    ignore_index: int
    reduction: str
    label_smoothing: float

    def forward(self, logits):
        xp = get_array_module(logits)
        z, t = class_rows("cross_entropy", logits, self.targets)  # (N, C), (N,)
        num_classes, eps = z.shape[1], self.label_smoothing
        counted = t != self.ignore_index
        check_ids("cross_entropy", "target", t[counted], num_classes)
        t = xp.where(counted, t, 0)  # any valid class for the ignored rows; their weight is 0
        rows = xp.arange(t.shape[0])
        counted = counted.astype(z.dtype)  # 1 or 0 (a bool array would turn Python floats into float64)
        weight = None if self.weight is None else self.weight.astype(z.dtype)
        w_t = counted if weight is None else weight[t] * counted  # (N,)
        fast = compiled("cross_entropy", z, w_t, weight)  # kernels/numba_cross_entropy.py, or None: NumPy
        if fast:
            losses, probs = fast.cross_entropy_forward(z, t, w_t, counted, weight, eps)
        else:
            log_probs = stable_log_softmax(z, axis=-1)
            losses = -(1 - eps) * w_t * log_probs[rows, t]
            if eps:
                every_class = log_probs.sum(axis=-1) if weight is None else log_probs @ weight  # (N,)
                losses -= (eps / num_classes) * every_class * counted
            probs = xp.exp(log_probs)
        self.total_weight = w_t.sum()
        self.probs, self.t, self.rows, self.w_t, self.counted, self.cast_weight = (
            probs, t, rows, w_t, counted, weight)
        self.shape = logits.shape
        return reduce_losses(losses, self.total_weight, self.reduction, self.targets.shape)

    def backward(self, gy):
        eps, num_classes = self.label_smoothing, self.probs.shape[1]
        scale = row_scale(gy, self.total_weight, self.reduction, self.counted)  # (N, 1)
        fast = compiled("cross_entropy", gy, self.probs)
        if fast:
            gz = fast.cross_entropy_backward(self.probs, self.t, self.w_t, self.counted, self.cast_weight, eps, scale)
            return restore_layout(gz, self.shape)
        all_weights = num_classes if self.cast_weight is None else self.cast_weight.sum()
        q_sum = (1 - eps) * self.w_t + (eps / num_classes) * all_weights * self.counted  # sum_c q_ic, (N,)
        gz = self.probs * q_sum[:, None]
        gz[self.rows, self.t] -= (1 - eps) * self.w_t
        if eps:
            class_weights = 1 if self.cast_weight is None else self.cast_weight[None, :]
            gz -= (eps / num_classes) * class_weights * self.counted[:, None]
        gz *= scale
        return restore_layout(gz, self.shape)

    def composed(self, logits):
        """The same loss from primitive ops, whose graph gives double backward (higher_order.py)."""
        from minigrad.fused import twins  # (it imports the ops)

        weight = None if self.cast_weight is None else Tensor._make(self.cast_weight, False)
        return twins.cross_entropy(logits, self.targets, weight, self.ignore_index, self.reduction,
                                       self.label_smoothing)


class NLLLoss(Function):
    """loss_i = -w_t x_i[t_i] for log-probabilities x (0 for an ignored row);  gx_i[t_i] = -w_t, 0 elsewhere,
    times the reduction's scale."""

    targets: Any
    weight: Any
    ignore_index: int
    reduction: str
    is_linear = True  # y = A x: for double backward its backward runs as an op (higher_order.py)

    def forward(self, log_probs):
        xp = get_array_module(log_probs)
        x, t = class_rows("nll_loss", log_probs, self.targets)
        counted = t != self.ignore_index
        check_ids("nll_loss", "target", t[counted], x.shape[1])
        t = xp.where(counted, t, 0)
        rows = xp.arange(t.shape[0])
        w_t = counted.astype(x.dtype) if self.weight is None else self.weight.astype(x.dtype)[t] * counted
        self.total_weight, self.t, self.rows, self.w_t, self.shape = w_t.sum(), t, rows, w_t, log_probs.shape
        self.counted = counted
        self.rows_shape = x.shape
        return reduce_losses(-w_t * x[rows, t], self.total_weight, self.reduction, self.targets.shape)

    def backward(self, gy):
        gx = get_array_module(gy).zeros(self.rows_shape, dtype=gy.dtype)
        gx[self.rows, self.t] = -self.w_t
        gx *= row_scale(gy, self.total_weight, self.reduction, self.counted)
        return restore_layout(gx, self.shape)


class BinaryCrossEntropy(Function):
    """loss = -(t log(x) + (1 - t) log(1 - x)) for probabilities x, each log clamped at -100 as in PyTorch;
    dloss/dx = (x - t) / max(x (1 - x), 1e-12),  dloss/dt = log(1 - x) - log(x) (the clamped logs)."""

    def forward(self, x, t):
        xp = get_array_module(x)
        if x.size and bool(((x < 0) | (x > 1)).any()):  # one scalar read, as PyTorch's own check
            raise RuntimeError("binary_cross_entropy: every input must be a probability between 0 and 1 "
                               "(for raw scores use binary_cross_entropy_with_logits)")
        self.x, self.t = x, t
        self.log_x = xp.maximum(xp.log(x), -100)
        self.log_1mx = xp.maximum(xp.log1p(-x), -100)
        return -(t * self.log_x + (1 - t) * self.log_1mx)

    def backward(self, gy):
        xp = get_array_module(gy)
        x, t = self.x, self.t
        gx = gy * (x - t) / xp.maximum(x * (1 - x), 1e-12)
        gt = gy * (self.log_1mx - self.log_x) if self.needs_input_grad[1] else None
        return gx, gt

    def recompute(self, x, t, *, y):
        """The clamped logs, for a backward on tensors (higher_order.py)."""
        return {"log_x": x.log().clamp(min=-100), "log_1mx": (1 - x).log().clamp(min=-100)}
