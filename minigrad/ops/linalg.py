"""Matrix multiplication, the op where a neural network spends most of its time.

For y = a @ b on matrices, dL/da = dL/dy @ b.T and dL/db = a.T @ dL/dy: each input's gradient is the
upstream gradient multiplied by the other input, transposed. Batched operands broadcast over the
leading axes as in NumPy; 1-D operands are treated as a row (left) or a column (right) vector.
`einsum` (Einsum) writes any such contraction in one line: `bhqd,bhkd->bhqk` is attention's q @ k^T.
Read next: ../core/higher_order.py (double backward), then ../fused/softmax.py.
"""

from __future__ import annotations

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function, Tensors, check_broadcast, shapes_refused
from minigrad.kernels import blas
from minigrad.tensor import ShapeError


class MatMul(Function):
    """y = a @ b;  ga = gy @ b^T,  gb = a^T @ gy  (summed over broadcast batch axes)."""

    double_backward = Tensors(a=0, b=1)

    def forward(self, a, b):
        if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise ShapeError(f"matmul: {a.shape} @ {b.shape}")
        check_broadcast("MatMul", a, b, core=2)  # the batch axes
        self.a, self.b = a, b
        if a.ndim > 2 and b.ndim == 2:
            # (..., K) @ (K, N): one large matrix product instead of one per batch element.
            return (a.reshape(-1, a.shape[-1]) @ b).reshape(*a.shape[:-1], b.shape[-1])
        return a @ b

    def backward(self, gy):
        xp = get_array_module(gy)
        a, b = self.a, self.b
        if a.ndim > 2 and b.ndim == 2:
            # The weight's gradient sums over every row of every batch element: one product.
            gy2d = gy.reshape(-1, gy.shape[-1])
            ga = (gy2d @ b.T).reshape(a.shape) if self.needs_input_grad[0] else None
            gb = a.reshape(-1, a.shape[-1]).T @ gy2d if self.needs_input_grad[1] else None
            return ga, gb
        a2 = a if a.ndim > 1 else a[None, :]  # (1, K): a row vector
        b2 = b if b.ndim > 1 else b[:, None]  # (K, 1): a column vector
        # Give gy the axes the vectors lost: column first, so that a 0-d gy (vector @ vector) becomes (1, 1).
        if b.ndim == 1:
            gy = xp.expand_dims(gy, -1)
        if a.ndim == 1:
            gy = xp.expand_dims(gy, -2)
        ga = gy @ xp.swapaxes(b2, -1, -2) if self.needs_input_grad[0] else None
        gb = xp.swapaxes(a2, -1, -2) @ gy if self.needs_input_grad[1] else None
        if a.ndim == 1 and ga is not None:
            ga = ga[..., 0, :]
        if b.ndim == 1 and gb is not None:
            gb = gb[..., :, 0]
        return ga, gb


class Linear(Function):
    """y = x @ w^T + b for x (..., in), w (out, in), b (out,), as `torch.nn.functional.linear`.

    gx = gy @ w;  gw = gy^T @ x and gb = sum of gy, both over every row of every batch element.
    One op instead of Transpose, MatMul and Add: fewer graph nodes, and gw comes out in w's own
    (out, in) layout rather than as the transpose of a (in, out) product.
    """

    double_backward = Tensors(w=1)

    def forward(self, x, w, b=None):
        if x.ndim == 0 or x.shape[-1] != w.shape[1]:
            raise ShapeError(f"linear: input {x.shape} does not fit weight {w.shape} (out_features, in_features)")
        self.x2d, self.w, self.has_bias = x.reshape(-1, x.shape[-1]), w, b is not None  # (N, in)
        y = self.x2d @ w.T  # (N, out): one large product over all rows
        if b is not None:
            y += b
        return y.reshape(*x.shape[:-1], w.shape[0])

    def backward(self, gy):
        gy2d = gy.reshape(-1, gy.shape[-1])  # (N, out)
        gx = (gy2d @ self.w).reshape(*gy.shape[:-1], self.w.shape[1]) if self.needs_input_grad[0] else None
        gw = gy2d.T @ self.x2d if self.needs_input_grad[1] else None  # (out, in)
        if not self.has_bias:
            return gx, gw
        return gx, gw, blas.column_sum(gy2d)

    def recompute(self, x, w, b=None, *, y):
        return {"x2d": x.reshape(-1, x.shape[-1])}  # for a backward on tensors (higher_order.py)


def parse_einsum(equation: str, n_operands: int) -> tuple[list[str], str]:
    """The subscripts of each operand and of the output, with the output made explicit as NumPy makes it
    (`...` first, then the letters used once, sorted). Repeated letters within one operand (a diagonal or a
    trace, `ii->i`) are refused: their backward would need a diagonal write that minigrad does not have."""
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    subscripts = inputs.split(",")
    if len(subscripts) != n_operands:
        raise ValueError(f"einsum: the equation {equation!r} names {len(subscripts)} operands, {n_operands} given")
    letters = "".join(subscripts).replace("...", "")
    if not arrow:
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(once)
    for sub in [*subscripts, output]:
        plain = sub.replace("...", "")
        if len(set(plain)) != len(plain) or not plain.isalpha() and plain:
            raise NotImplementedError(
                f"einsum: minigrad does not support the subscripts {sub!r} in {equation!r}: each letter (a-z, A-Z) "
                "may appear once per operand; for a diagonal or a trace, multiply by mg.eye(n) and sum")
    return subscripts, output


class Einsum(Function):
    """y = einsum(equation, x_1, ..., x_n);  gx_k = einsum(out, the other operands -> x_k's subscripts) of gy.

    Each operand's gradient is the same contraction with gy in its place: for y = a @ b (`ij,jk->ik`),
    ga = einsum(`ik,jk->ij`, gy, b) = gy @ b^T. A letter only x_k has (summed over in x_k alone) is brought back
    by a ones-shaped operand, which broadcasts gy along it.
    """

    subscripts: list[str]
    output: str
    double_backward = Tensors()

    def forward(self, *xs):
        self.xs = xs
        with shapes_refused("Einsum", *xs):
            return get_array_module(xs[0]).einsum(f"{','.join(self.subscripts)}->{self.output}", *xs)

    def backward(self, gy):
        xp = get_array_module(gy)
        gxs = []
        for k, (x, sub) in enumerate(zip(self.xs, self.subscripts)):
            if not self.needs_input_grad[k]:
                gxs.append(None)
                continue
            subs, operands = [self.output], [gy]
            for other, other_sub in zip(self.xs[:k] + self.xs[k + 1:], self.subscripts[:k] + self.subscripts[k + 1:]):
                subs.append(other_sub)
                operands.append(other)
            if not set(sub.replace("...", "")) <= set("".join(subs)):
                subs.append(sub)
                operands.append(xp.ones_like(x))
            gxs.append(xp.einsum(f"{','.join(subs)}->{sub}", *operands))
        return tuple(gxs)

    def recompute(self, *xs, y):
        """The operands, as the input tensors (they are saved as one tuple, not one name each)."""
        return {"xs": xs}
