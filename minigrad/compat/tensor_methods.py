"""PyTorch's Tensor methods beyond the engine's, attached to the Tensor class from above.

The Tensor a learner reads (../tensor/) has the engine's methods only and imports nothing from compat/. The rest
of PyTorch's everyday math as methods and operators (`x.log1p()`, `x // 2`, `2 % x`, `x.t()`, ...), the methods
of tensor_functions.py (`type_as`, `index_fill_`, `narrow`, ...), `.data`, `.shape` (a `Size`) and `.device` as
PyTorch's, its printing (printing.py), and the one-line refusal of a torch.Tensor name minigrad does not have are
gathered in `CompatMathMethods` here, and `attach_to(Tensor)` copies them onto the class, as DeZero's
`setup_variable` attaches the operators to `Variable`: minigrad/__init__.py calls it once, so every tensor has them
after `import minigrad`.
Read next: moremath.py (the functions these methods are).
"""

from __future__ import annotations

from typing import Any

import minigrad
from minigrad.compat.device import device, device_named
from minigrad.compat.moremath import (
    acosh,
    atanh,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clamp_max,
    clamp_min,
    cosh,
    div,
    exp2,
    expm1,
    floor,
    floor_divide,
    fmod,
    frac,
    hypot,
    lerp,
    log1p,
    log2,
    log10,
    logaddexp,
    logit,
    mm,
    mul,
    mv,
    nan_to_num,
    neg,
    negative,
    pow,
    reciprocal,
    remainder,
    repeat_interleave,
    round,
    sinh,
    sub,
    tan,
    trunc,
    xlogy,
)
from minigrad.compat.printing import tensor_repr
from minigrad.compat.size import Size, of_shape
from minigrad.compat.tensor_functions import CompatTensorMethods
from minigrad.core import backend


class CompatMathMethods(CompatTensorMethods):
    """These functions as Tensor methods and operators (attached to Tensor by `attach_to`): `x.log1p()`, `x // 2`."""

    __slots__ = ()
    log10, log2, exp2, log1p, expm1, logaddexp, xlogy, logit = log10, log2, exp2, log1p, expm1, logaddexp, xlogy, logit
    sinh, cosh, tan, acosh, atanh, arccosh, arctanh = sinh, cosh, tan, acosh, atanh, acosh, atanh
    trunc, floor, ceil, round, frac, reciprocal, neg, negative = trunc, floor, ceil, round, frac, reciprocal, \
        neg, negative
    sub, mul, div, pow, hypot, lerp, clamp_min, clamp_max, nan_to_num = sub, mul, div, pow, hypot, lerp, clamp_min, \
        clamp_max, nan_to_num
    subtract, multiply, divide, true_divide = sub, mul, div, div
    floor_divide, remainder, fmod, bitwise_and, bitwise_or, bitwise_not, bitwise_xor = floor_divide, remainder, \
        fmod, bitwise_and, bitwise_or, bitwise_not, bitwise_xor
    bitwise_left_shift, bitwise_right_shift = bitwise_left_shift, bitwise_right_shift
    mm, mv, repeat_interleave = mm, mv, repeat_interleave

    def matmul(self, other: Any) -> minigrad.Tensor:
        return self @ other

    def dot(self, other: Any) -> minigrad.Tensor:
        return minigrad.dot(self, other)

    def bmm(self, mat2: Any) -> minigrad.Tensor:
        return minigrad.bmm(self, mat2)

    def t(self) -> minigrad.Tensor:
        """The transpose of a tensor of at most 2 dims (a 0-d or 1-d tensor is itself), as torch.Tensor.t."""
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.transpose(0, 1) if self.ndim == 2 else self

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        return minigrad.allclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)

    @property
    def data(self) -> minigrad.Tensor:
        """PyTorch's `.data`: this tensor without its history, sharing its memory (a change through it is seen here
        and is not recorded for backward). The engine's own name for the raw backend array is `.array`."""
        return minigrad.Tensor._make(self.array, False)

    @data.setter
    def data(self, value: minigrad.Tensor) -> None:
        """`x.data = t`, as in PyTorch: x takes t's values (its shape and dtype too), its history untouched."""
        if not isinstance(value, minigrad.Tensor):
            raise TypeError(f"x.data = value: value must be a Tensor, not {type(value).__name__}")
        self.array = value.array

    @property
    def shape(self) -> Size:
        """The shape as PyTorch gives it: a `mg.Size`, the tuple of sizes that prints as `minigrad.Size([6, 2])`."""
        return of_shape(self.array.shape)

    @property
    def device(self) -> device:
        """Where the data lives: 'cpu', 'cuda', 'cuda:1', as a `mg.device` (a string with .type and .index)."""
        return device_named(backend.device_of(self.array))

    def __repr__(self) -> str:  # as PyTorch prints it: tensor([0.9544, 1.0000], grad_fn=<MulBackward0>)
        grad_fn = None if self._ctx is None else self._ctx.name
        return tensor_repr(self.numpy(), self.device, grad_fn, self.requires_grad)

    def __getattr__(self, name: str) -> Any:
        """A torch.Tensor name minigrad does not have: one line saying so, and what to use instead."""
        from minigrad.compat.missing import refuse

        raise refuse("minigrad.Tensor", name)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Any = None) -> minigrad.Tensor:
        return minigrad.multinomial(self, num_samples, replacement, generator=generator)
    __floordiv__, __mod__, __xor__, __lshift__, __rshift__ = floor_divide, remainder, bitwise_xor, \
        bitwise_left_shift, bitwise_right_shift

    def __rfloordiv__(self, other: Any) -> minigrad.Tensor:
        return floor_divide(other, self)

    def __rmod__(self, other: Any) -> minigrad.Tensor:
        return remainder(other, self)

    def __rxor__(self, other: Any) -> minigrad.Tensor:
        return bitwise_xor(other, self)

    def __rlshift__(self, other: Any) -> minigrad.Tensor:
        return bitwise_left_shift(other, self)

    def __rrshift__(self, other: Any) -> minigrad.Tensor:
        return bitwise_right_shift(other, self)


# The dunders of CompatMathMethods that are Tensor's operators (or its refusal of a missing name, or its format
# specs), to attach too.
OPERATORS = ("__floordiv__", "__mod__", "__xor__", "__lshift__", "__rshift__", "__rfloordiv__", "__rmod__",
             "__rxor__", "__rlshift__", "__rrshift__", "__getattr__", "__format__", "__repr__")


def attach_to(tensor_class: type) -> None:
    """Give the Tensor class CompatMathMethods' methods, from above (as DeZero's `setup_variable` attaches the
    operators to `Variable`): the engine's Tensor imports nothing from compat/, and minigrad/__init__.py calls this
    once, so `import minigrad` gives every tensor `x.log1p()`, `x // 2` and the one-line refusals."""
    for group in (CompatTensorMethods, CompatMathMethods):  # the base's methods first, as inheritance would
        for name, member in vars(group).items():
            if not name.startswith("__") or name in OPERATORS:
                setattr(tensor_class, name, member)
