"""Tensor, as one package: the engine's first class and its method groups, one file each.

Its files (README.md's reading order starts at tensor.py; the others are read when a method is looked up):
- tensor.py: the class itself (making a tensor, its attributes, `backward`, the operators, indexing);
- math.py: its elementwise functions, reductions, softmax and comparisons, each a front for one op;
- shape.py: reshape, permute, transpose, squeeze, expand, split, gather, ...;
- convert.py: to another dtype or device, to Python values, to NumPy (and backward's seed gradient);
- inplace.py: `w -= lr * w.grad`, `zero_()`, ... and versions.py, the version counter backward checks;
- hooks.py: register_hook and retain_grad, the gradient hooks backward calls;
- xp.py: NumPy's names on tensors, for an op's backward run on tensors (create_graph, higher_order.py).

`from minigrad.tensor import Tensor` is the one import the rest of the engine needs.
Read next: ../core/function.py (Function, one op), then ../core/autograd.py (the backward pass).
"""

from minigrad.core import backend
from minigrad.tensor.tensor import FLOAT_DTYPES, ShapeError, Tensor, _is_backend_array, _raw

__all__ = ["FLOAT_DTYPES", "ShapeError", "Tensor", "_is_backend_array", "_raw"]

# The ops import Tensor (above) from this package, and Tensor's methods call them: so they come next. Then xp.py,
# NumPy's names on tensors (built from ops), which get_array_module gives an op's backward run on tensors
# (create_graph): backend.py knows devices only, so this package registers it there.
from minigrad import fused, ops  # noqa: E402, F401, I001
from minigrad.tensor import xp  # noqa: E402

backend.register_array_module(Tensor, xp)
