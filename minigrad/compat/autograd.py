"""`minigrad.autograd`, as `torch.autograd`: `grad`, `backward`, `Function`, `gradcheck`, `gradgradcheck`,
`detect_anomaly` and the grad-mode switches, at the path a PyTorch program reaches them by
(`torch.autograd.grad(...)`, `from torch.autograd import Function`, `import torch.autograd`).

The engine's own autograd is ../core/autograd.py (the backward walk) and its op class ../core/function.py, whose
`forward` and `backward` work on arrays. PyTorch's `torch.autograd.Function` is written differently, with static
methods on tensors and a context object, so `Function` here is PyTorch's kind, run by the engine as one op:

    class Exp(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, gy):
            y, = ctx.saved_tensors
            return gy * y

    Exp.apply(x)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minigrad.core import function
from minigrad.core.autograd import enable_grad, grad, no_grad, set_grad_enabled
from minigrad.core.grad_mode import grad_mode, inference_mode
from minigrad.tensor import Tensor
from minigrad.tools.anomaly import detect_anomaly
from minigrad.tools.gradcheck import gradcheck, gradgradcheck

__all__ = ["Function", "backward", "detect_anomaly", "enable_grad", "grad", "gradcheck", "gradgradcheck",
           "inference_mode", "no_grad", "set_grad_enabled"]


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """`tensors[i].backward(grad_tensors[i])` for each i, the gradients adding up in the leaves' `.grad`."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    grads = [grad_tensors] * len(tensors) if grad_tensors is None or isinstance(grad_tensors, Tensor) \
        else list(grad_tensors)
    for i, (tensor, gradient) in enumerate(zip(tensors, grads)):
        last = i == len(tensors) - 1  # the graphs may share ops: keep them until the last output's walk
        keep = retain_graph if retain_graph is not None else (create_graph or not last)
        tensor.backward(gradient, retain_graph=keep, create_graph=create_graph)


class FunctionCtx:
    """The `ctx` a custom Function's forward and backward share: what forward saved, and which inputs need a
    gradient."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.saved_tensors: tuple[Any, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Accepted: the outputs so marked simply receive no gradient here."""


class Function:
    """PyTorch's custom op: subclass it with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`, and
    call `YourFunction.apply(*args)`. forward runs on tensors without recording a graph; backward returns one
    gradient (or None) per argument of forward. One output tensor per call."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        raise NotImplementedError("a custom Function must define a static forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("a custom Function must define a static backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args: Any) -> Tensor:
        ctx = FunctionCtx(tuple(isinstance(a, Tensor) and a.requires_grad for a in args))
        with no_grad():
            out = cls.forward(ctx, *args)
        if not isinstance(out, Tensor):
            raise TypeError(f"{cls.__name__}.forward: minigrad's custom Functions return one Tensor, not "
                            f"{type(out).__name__}")
        inputs = [a for a in args if isinstance(a, Tensor)]
        if not (grad_mode.enabled and any(ctx.needs_input_grad)):
            return out
        return _CustomOp.apply(*inputs, user=cls, ctx=ctx, out=out.array, tensor_args=[isinstance(a, Tensor)
                                                                                          for a in args])


class _CustomOp(function.Function):
    """The engine's op for one call of a custom Function: forward hands on the output it already computed;
    backward asks the user's backward, on tensors, and keeps the gradients of the tensor arguments."""

    def forward(self, *xs: Any) -> Any:
        return self.out

    def backward(self, gy: Any) -> Any:
        grads = self.user.backward(self.ctx, Tensor._make(gy, False))
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(self.tensor_args):
            raise RuntimeError(f"function {self.user.__name__}Backward returned an incorrect number of gradients "
                               f"(expected {len(self.tensor_args)}, got {len(grads)})")
        kept = [g.array if isinstance(g, Tensor) else g for g, is_tensor in zip(grads, self.tensor_args) if is_tensor]
        return tuple(kept) if len(kept) > 1 else kept[0]

    @property
    def name(self) -> str:
        user = getattr(self, "user", None)  # released ops keep no attributes
        return "CustomFunction" if user is None else f"{user.__name__}Backward"


def __getattr__(name: str) -> object:
    """A torch.autograd name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse("minigrad.autograd", name)
