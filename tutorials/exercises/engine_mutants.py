"""Hand-written wrong engines: the mistakes an engine's author makes that one small edit of the syntax tree does not.

mutants.py makes its mistakes one node at a time (an axis flipped, a term dropped, a call left out). An engine
has mistakes of another shape, each a rewrite of a line or a function: a recursive topological order (right on
small graphs, a RecursionError past ~1,000 ops), a walk that overwrites a gradient instead of adding to it, a
leaf whose .grad is replaced on every backward call, a gather whose backward assigns (a repeated row gets one
gradient), the matrix product's backward without its transposes... Each is written here as (exercise, what it
is, a piece of tutorials/solutions/engine.py, what replaces it); mutants.py compiles the solution file so
changed and adds the result to that exercise's mutants, which its checker must reject like any other.
Read next: ../../tests/test_exercise_mutants.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

RECURSIVE_ORDER = '''def topological_order(root: Tensor) -> list:
    order, visited = [], set()

    def visit(tensor):
        if id(tensor) in visited:
            return
        visited.add(id(tensor))
        for x in tensor.op.inputs if tensor.op is not None else ():
            if x.requires_grad:
                visit(x)
        order.append(tensor)

    visit(root)
    return order
'''

# (exercise, what the mistake is, the piece of the solution it rewrites, the rewrite)
MISTAKES: list[tuple[str, str, str, str]] = [
    ("0.8", "an array copied into float64",
     'self.array = array if array.dtype.kind == "f" else array.astype(np.float64)',
     "self.array = array.astype(np.float64)"),
    ("0.8", "requires_grad always on", "self.requires_grad = requires_grad", "self.requires_grad = True"),
    ("0.9", "no_grad ignored", "if grad_enabled and any(x.requires_grad for x in inputs):",
     "if any(x.requires_grad for x in inputs):"),
    ("0.9", "every op recorded", "if grad_enabled and any(x.requires_grad for x in inputs):", "if grad_enabled:"),
    ("0.9", "tensors given to forward", "y = Tensor(op.forward(*[x.array for x in inputs]))",
     "y = Tensor(op.forward(*inputs))"),
    ("0.10", "recursive order", "def topological_order(root: Tensor) -> list:\n", RECURSIVE_ORDER),
    ("0.10", "no visited set", "        if id(tensor) in visited:\n            continue\n", ""),
    ("0.10", "constants in the order", "                if x.requires_grad and id(x) not in visited:",
     "                if id(x) not in visited:"),
    ("0.10", "inputs emitted after their output", "        stack.append((tensor, True))  # comes back",
     "        order.append(tensor)\n        stack.append((tensor, None))  # comes back"),
    ("0.11", "gradients overwritten, not added",
     "grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx", "grads[id(x)] = gx"),
    ("0.11", "leaf gradients replaced on each backward",
     "tensor.grad = Tensor(np.array(g)) if tensor.grad is None else Tensor(tensor.grad.array + g)",
     "tensor.grad = Tensor(np.array(g))"),
    ("0.11", "leaf gradients sharing memory", "Tensor(np.array(g)) if tensor.grad is None",
     "Tensor(g) if tensor.grad is None"),
    ("0.11", "walk in the forward order", "for tensor in reversed(topological_order(root)):",
     "for tensor in topological_order(root):"),
    ("0.11", "no sum_to", "gx = sum_to(gx, x.shape)  # a broadcast", "gx = gx  # a broadcast"),
    ("0.11", "every tensor gets a .grad", "        if tensor.op is None:  # a leaf",
     "        tensor.grad = Tensor(np.array(g))\n        if tensor.op is None:  # a leaf"),
    ("0.4", "sum_to over the leading axes only", "axis=tuple(range(lead)) + stretched", "axis=tuple(range(lead))"),
    ("0.4", "sum_to over the stretched axes only", "axis=tuple(range(lead)) + stretched", "axis=stretched"),
    ("0.19", "erf's gradient in float64", "(2 / np.pi**0.5)", "(2 / np.sqrt(np.pi))"),
    ("0.21", "max's gradient to every element", "return gy * winners / winners.sum(axis=self.axis, keepdims=True)",
     "return gy + 0 * self.x  # "),
    ("0.21", "max's ties not shared", "return gy * winners / winners.sum(axis=self.axis, keepdims=True)",
     "return gy * winners  # "),
    ("0.21", "max's ties counted in int64", ".astype(gy.dtype)  # ties share it", "  # ties share it"),
    ("0.24", "gather without scatter-add", "np.add.at(gx, self.index, gy)", "gx[self.index] += gy"),
    ("0.25", "masked positions passing the gradient", "return np.where(self.mask, 0, gy)", "return gy + 0"),
    ("0.26", "matmul without transposes", "return gy @ self.b.swapaxes(-1, -2), self.a.swapaxes(-1, -2) @ gy",
     "return gy @ self.b, self.a @ gy"),
    ("0.26", "matmul's products on the wrong side",
     "return gy @ self.b.swapaxes(-1, -2), self.a.swapaxes(-1, -2) @ gy",
     "return self.b.swapaxes(-1, -2) @ gy, gy @ self.a.swapaxes(-1, -2)"),
    ("0.26", "matmul's gradients swapped", "return gy @ self.b.swapaxes(-1, -2), self.a.swapaxes(-1, -2) @ gy",
     "return self.a.swapaxes(-1, -2) @ gy, gy @ self.b.swapaxes(-1, -2)"),
    ("0.20", "sum's axes not put back", "            gy = np.expand_dims(gy, self.axis)  # put back",
     "            gy = gy  # put back"),
]


def written(exercise: Any, filename: str) -> Iterator[tuple[str, str]]:
    """(description, the solution file's source with the mistake made) for each hand-written mistake of `exercise`."""
    if exercise.file != "engine":
        return
    source = Path(filename).read_text(encoding="utf-8")
    for number, what, old, new in MISTAKES:
        if number == exercise.number:
            if source.count(old) != 1:
                raise ValueError(f"engine_mutants: {what!r} ({number}) expects its piece once in {filename}")
            yield f"engine mistake: {what}", source.replace(old, new)
