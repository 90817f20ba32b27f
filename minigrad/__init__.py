"""minigrad: a tensor reverse-mode autograd engine on NumPy (and CuPy on a GPU), written to be read.

    import minigrad as mg
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad  # tensor([2., 4., 6.])

The package in bands, each a folder; the imports point down (tests/test_bands.py) and the sizes are budgeted
(tests/test_code_size.py). The engine: tensor/ (Tensor, an array that remembers how it was computed), core/
(Function, the backward walk, double backward), ops/ (the primitives, one class per op); README.md gives the one
reading order through them. Then, built on it: fused/ (softmax, cross-entropy, layer norm, GELU, attention:
derived by hand, each beside its composed twin in fused/twins.py), functional.py (F), nn/, optim/, viz/ (drawing
graphs), distributed/.
Where to stop: kernels/ (faster second implementations of array steps: BLAS, compiled numba kernels, threads)
and compat/ (names that exist so PyTorch programs run: torch.* aliases, scheduler objects, utils.data, ...)
teach no backprop. tools/ holds gradcheck, detect_anomaly and save/load; testing/ the hypothesis strategies.
"""

import sys
from math import e, inf, nan, pi  # torch.inf, torch.pi, ...: Python's own floats, as PyTorch's are

from minigrad import distributed, nn, optim, utils, viz
from minigrad.compat import autograd, cuda, legacy_types, mathops, moremath, tensor_functions
from minigrad.compat import tensor_methods as _tensor_methods
from minigrad.compat.device import device
from minigrad.compat.legacy_types import *  # noqa: F403  (mg.FloatTensor, mg.LongTensor, ...: the legacy types)
from minigrad.compat.mathops import *  # noqa: F403  (mg.exp, mg.sum, mg.maximum, ...: the torch.* functions)
from minigrad.compat.missing import register_refused_modules as _register_refused_modules
from minigrad.compat.moremath import *  # noqa: F403  (mg.log1p, mg.round, mg.floor_divide, ...)
from minigrad.compat.size import Size
from minigrad.compat.tensor_functions import *  # noqa: F403  (mg.nonzero, mg.meshgrid)
from minigrad.core import dtypes as _dtypes
from minigrad.core.autograd import enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.core.dtypes import (
    double,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from minigrad.core.function import Function
from minigrad.core.grad_mode import inference_mode
from minigrad.factories import (
    arange,
    bernoulli,
    eye,
    full,
    full_like,
    linspace,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from minigrad.functional import cat, concat, stack, where
from minigrad.kernels import get_num_threads, keep_freed_host_memory, set_num_threads
from minigrad.random import Generator, manual_seed
from minigrad.tensor import ShapeError, Tensor
from minigrad.tools.anomaly import AnomalyError, detect_anomaly
from minigrad.tools.gradcheck import GradcheckError, gradcheck, gradgradcheck
from minigrad.tools.serialization import CheckpointError, load, load_metadata, save

__all__ = [
    "AnomalyError", "CheckpointError", "Function", "GradcheckError", "ShapeError", "Tensor", "arange", "autograd",
    "cat", "concat", "cuda", "detect_anomaly", "distributed", "enable_grad", "eye", "full", "full_like",
    "get_num_threads", "grad", "gradcheck", "gradgradcheck", "is_grad_enabled", "linspace",
    "load", "load_metadata", "manual_seed", "nn", "no_grad", "ones", "ones_like", "optim", "randn", "randn_like",
    "save", "set_grad_enabled", "set_num_threads", "stack", "tensor", "viz", "where", "zeros", "zeros_like",
]
__all__ += mathops.__all__ + moremath.__all__
__all__ += ["Size", "device", "e", "inf", "nan", "pi"] + legacy_types.__all__ + tensor_functions.__all__
__all__ += [
    "Generator", "bernoulli", "double", "dtype", "finfo", "float16", "float32", "float64", "get_default_dtype", "half",
    "iinfo", "inference_mode", "int8", "int16", "int32", "int64", "long", "multinomial", "normal", "rand", "randint",
    "randperm", "set_default_dtype", "short", "uint8", "utils",
]

# PyTorch's dtype aliases that share a name with a Python builtin: attributes of the package (mg.float, mg.int,
# mg.bool), kept out of __all__ so that `from minigrad import *` never shadows float, int or bool.
float = float32  # noqa: A001
int = int32  # noqa: A001
bool = _dtypes.bool_  # noqa: A001
__version__ = "0.1.0"

# PyTorch's further math as Tensor methods (x.log1p(), x // 2, ...), attached from above: see compat/moremath.py.
_tensor_methods.attach_to(Tensor)

# torch.autograd and torch.cuda live in compat/; registered under their PyTorch paths too, so that `import
# minigrad.autograd` and `from minigrad.cuda import ...` find these module objects (as os.path is registered).
sys.modules[__name__ + ".autograd"] = autograd
sys.modules[__name__ + ".cuda"] = cuda
_register_refused_modules()  # minigrad.onnx, minigrad.linalg, ...: importable, each name refused in one line

# Freed arrays stay in the heap for the next step instead of costing page faults (see kernels/memory.py).
keep_freed_host_memory()


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
